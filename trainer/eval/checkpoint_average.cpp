#include "trainer/eval/checkpoint_average.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_files.h"
#include "trainer/checkpoint/state_dict.h"

namespace eval {

namespace fs = std::filesystem;

std::vector<std::string> select_checkpoints(const std::string& run_dir,
                                            const checkpoint::CheckpointChoice& which,
                                            int64_t average_last) {
  if (average_last < 1) throw std::invalid_argument("--average-last must be at least 1");
  const checkpoint::Checkpoints checkpoints(run_dir);
  const std::string last = fs::weakly_canonical(checkpoints.resolve(which)).string();
  std::vector<std::string> chosen = {last};
  if (average_last > 1) {
    const std::vector<std::string> all = checkpoints.list();
    const auto end = std::find(all.begin(), all.end(), last);
    if (end == all.end() && !fs::exists(last)) throw std::runtime_error(removed_while_read(last));
    if (end == all.end())
      throw std::runtime_error("--average-last: " + last + " is not a checkpoint of " +
                               checkpoints.dir());
    const int64_t available = end - all.begin() + 1;
    // `latest` resolved, yet newer checkpoints listed: the run saved and
    // pruned between the two reads, so the older ones went while read.
    if (which.kind == checkpoint::CheckpointChoice::Kind::kLatest && available < average_last &&
        end + 1 != all.end())
      throw std::runtime_error(
          removed_while_read("before " + last + " (" + std::to_string(average_last) + " wanted)"));
    if (available < average_last)
      throw std::runtime_error("--average-last " + std::to_string(average_last) + ": only " +
                               std::to_string(available) + " checkpoints up to " + last + " in " +
                               checkpoints.dir());
    chosen.assign(end + 1 - average_last, end + 1);
  }
  return chosen;
}

std::vector<std::string> select_checkpoints(const std::string& run_dir,
                                            const checkpoint::CheckpointChoice& which,
                                            int64_t average_last, const launch::Ranks& ranks) {
  std::string chosen;  // each path ended by a NUL, the one byte no path holds (a newline can be)
  launch::on_main(ranks, [&] {
    for (const auto& dir : select_checkpoints(run_dir, which, average_last)) chosen += dir + '\0';
  });
  std::vector<std::string> checkpoints;
  std::istringstream paths(ranks.broadcast(chosen));
  for (std::string path; std::getline(paths, path, '\0');) checkpoints.push_back(path);
  return checkpoints;
}

void throw_if_removed(const std::vector<std::string>& checkpoints) {
  for (const auto& dir : checkpoints)
    if (!fs::exists(dir)) throw std::runtime_error(removed_while_read(dir));
}

std::string removed_while_read(const std::string& checkpoint_dir) {
  return "checkpoint " + checkpoint_dir +
         " was removed while it was read: its training run keeps only its last "
         "train.keep_last checkpoints (and the best). Evaluate a copy, or let --watch score each "
         "as it is saved";
}

namespace {

void average(torch::nn::Module& model, const std::vector<std::string>& checkpoints) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> state;  // parameters then buffers, as load_state_dict fills them
  for (const auto& p : model.parameters()) state.push_back(p);
  for (const auto& b : model.buffers()) state.push_back(b);

  std::vector<torch::Tensor> sum(state.size());  // float64 sums of the floating-point tensors
  for (const auto& dir : checkpoints) {
    const checkpoint::CheckpointFiles files(dir);
    const std::string path = files.path("model.pt");
    checkpoint::copy_state_dict(model, checkpoint::parse_tensors(files.read("model.pt"), path),
                                path);
    if (checkpoints.size() == 1) return;
    for (size_t i = 0; i < state.size(); ++i) {
      if (!state[i].is_floating_point()) continue;  // integer buffers: kept from the last file
      if (sum[i].defined())
        sum[i].add_(state[i]);
      else
        sum[i] = state[i].to(torch::kDouble, /*non_blocking=*/false, /*copy=*/true);
    }
  }
  for (size_t i = 0; i < state.size(); ++i)
    if (sum[i].defined()) state[i].copy_(sum[i] / static_cast<double>(checkpoints.size()));
}

}  // namespace

void load_averaged(torch::nn::Module& model, const std::vector<std::string>& checkpoints) {
  reading(checkpoints, [&] { average(model, checkpoints); });
}

}  // namespace eval
