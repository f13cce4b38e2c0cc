#include "trainer/runtime/device.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "base/logging.h"
#include "trainer/distributed/make_communicator.h"
#include "trainer/runtime/cuda_devices.h"

namespace runtime {
namespace {

std::string join(const std::vector<int>& ranks) {
  std::string text;
  for (int r : ranks) {
    if (!text.empty()) text += ',';
    text += std::to_string(r);
  }
  return text;
}

std::string where(const std::vector<RankView>& ranks, int r) {
  return "rank " + std::to_string(r) + " on node " + ranks[r].node;
}

// Every rank's device type and backend, the same for all.
DeviceChoice common_choice(const DeviceRequest& request, const std::vector<RankView>& ranks,
                           bool& gpu) {
  int with_gpu = -1, without_gpu = -1;
  for (size_t r = 0; r < ranks.size(); ++r)
    (ranks[r].gpus.empty() ? without_gpu : with_gpu) = static_cast<int>(r);
  gpu = request.device == choices::Device::kCuda ||
        (request.device == choices::Device::kAuto && with_gpu >= 0);
  if (gpu && without_gpu >= 0) {
    const std::string missing = where(ranks, without_gpu) + " sees no GPU";
    if (request.device == choices::Device::kCuda)
      throw std::invalid_argument("train.device = cuda, but " + missing);
    throw std::invalid_argument(
        "train.device = auto: " + missing + " while " + where(ranks, with_gpu) + " sees " +
        std::to_string(ranks[with_gpu].gpus.size()) +
        ": every rank computes on the same kind of device (launch all ranks on GPU nodes, or "
        "set train.device = \"cpu\")");
  }
  DeviceChoice choice;
  choice.backend = request.backend != choices::Backend::kAuto ? request.backend
                   : gpu && request.nccl_built                ? choices::Backend::kNccl
                                                              : choices::Backend::kMpi;
  if (choice.backend == choices::Backend::kNccl && !gpu)
    throw std::invalid_argument("dist.backend = nccl needs a CUDA device; " + where(ranks, 0) +
                                " computes on the CPU");
  return choice;
}

// Per node, the ranks that see the same set of GPUs (by identity), in rank order.
std::vector<std::vector<int>> groups_by_gpu_set(const std::vector<RankView>& ranks) {
  std::map<std::pair<std::string, std::set<std::string>>, std::vector<int>> groups;
  std::vector<std::vector<int>*> order;  // groups in the order of their first rank
  for (size_t r = 0; r < ranks.size(); ++r) {
    const std::set<std::string> set(ranks[r].gpus.begin(), ranks[r].gpus.end());
    auto [it, fresh] = groups.try_emplace({ranks[r].node, set});
    if (fresh) order.push_back(&it->second);
    it->second.push_back(static_cast<int>(r));
  }
  std::vector<std::vector<int>> result;
  for (auto* group : order) result.push_back(*group);
  return result;
}

}  // namespace

std::vector<DeviceChoice> choose_devices(const DeviceRequest& request,
                                         const std::vector<RankView>& ranks) {
  bool gpu = false;
  const DeviceChoice common = common_choice(request, ranks, gpu);
  std::vector<DeviceChoice> choices(ranks.size(), common);
  if (!gpu) return choices;

  const bool nccl = common.backend == choices::Backend::kNccl;
  for (const std::vector<int>& group : groups_by_gpu_set(ranks)) {
    const std::vector<std::string>& set = ranks[group.front()].gpus;  // the first rank's order
    if (nccl && group.size() > set.size())
      throw std::invalid_argument(
          "node " + ranks[group.front()].node + ": ranks " + join(group) + " see the same " +
          std::to_string(set.size()) +
          " GPU(s): NCCL needs one GPU per rank (fewer ranks per node, one GPU per task: "
          "srun --gpus-per-task=1, or dist.backend = \"mpi\" to share GPUs)");
    for (size_t j = 0; j < group.size(); ++j) {
      DeviceChoice& choice = choices[group[j]];
      choice.gpu = set[j % set.size()];
      const auto& own = ranks[group[j]].gpus;  // the same GPU in this rank's numbering
      const auto index = std::find(own.begin(), own.end(), choice.gpu) - own.begin();
      choice.device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
    }
  }

  std::map<std::string, std::vector<int>> users;  // GPU identity -> ranks on it
  for (size_t r = 0; r < choices.size(); ++r) users[choices[r].gpu].push_back(static_cast<int>(r));
  for (const auto& [gpu_id, on_it] : users) {
    if (on_it.size() < 2) continue;
    if (nccl)
      throw std::invalid_argument("node " + ranks[on_it.front()].node + ": ranks " + join(on_it) +
                                  " would all use GPU " + gpu_id +
                                  " (their visible GPUs overlap): NCCL needs one GPU per rank; "
                                  "bind one GPU per task (srun --gpus-per-task=1)");
    for (int r : on_it)
      for (int other : on_it)
        if (other != r) choices[r].shares.push_back(other);
  }
  return choices;
}

std::vector<std::string> describe_layout(const std::vector<RankView>& ranks,
                                         const std::vector<DeviceChoice>& choices) {
  std::vector<std::string> nodes;  // in the order of their first rank
  std::map<std::string, std::vector<int>> members;
  for (size_t r = 0; r < ranks.size(); ++r) {
    auto& m = members[ranks[r].node];
    if (m.empty()) nodes.push_back(ranks[r].node);
    m.push_back(static_cast<int>(r));
  }
  std::vector<std::string> lines;
  for (const std::string& node : nodes) {
    std::ostringstream line;
    const std::vector<int>& m = members[node];
    line << "node " << node << ": rank(s) " << join(m) << " (local 0-" << m.size() - 1 << ")";
    for (size_t local = 0; local < m.size(); ++local) {
      const int r = m[local];
      line << (local == 0 ? "; " : ", ") << "rank " << r << ": " << ranks[r].threads
           << " thread(s), " << choices[r].device.str();
      if (!choices[r].gpu.empty()) line << " " << choices[r].gpu;
      if (!choices[r].shares.empty()) line << " shared with rank(s) " << join(choices[r].shares);
    }
    lines.push_back(line.str());
  }
  return lines;
}

namespace {

std::string settings(const DeviceRequest& request) {
  return "train.device = " + settings::name_of(choices::kDeviceNames, request.device) +
         ", dist.backend = " + settings::name_of(choices::kBackendNames, request.backend);
}

// A rank's settings and view as one line of text for the gather: settings,
// node, threads, GPUs (tab-separated).
std::string encode(const DeviceRequest& request, const RankView& view) {
  std::string text = settings(request) + "\t" + view.node + "\t" + std::to_string(view.threads);
  for (const auto& gpu : view.gpus) text += "\t" + gpu;
  return text;
}

RankView decode(const std::string& text, std::string& settings) {
  RankView view;
  std::istringstream fields(text);
  std::string threads, gpu;
  std::getline(fields, settings, '\t');
  std::getline(fields, view.node, '\t');
  std::getline(fields, threads, '\t');
  view.threads = std::stoi(threads);
  while (std::getline(fields, gpu, '\t')) view.gpus.push_back(gpu);
  return view;
}

}  // namespace

DeviceChoice agree_on_device(const launch::ProcessInfo& process, choices::Device device,
                             choices::Backend backend, const launch::Ranks& ranks) {
  DeviceRequest request{device, backend, distributed::nccl_built()};
  // A rank told to compute on the CPU never asks CUDA (no context, no driver needed).
  const RankView mine{
      process.node, static_cast<int>(torch::get_num_threads()),
      device == choices::Device::kCpu ? std::vector<std::string>{} : visible_gpu_uuids()};
  std::vector<RankView> views;
  std::vector<std::string> given(ranks.size());  // each rank's settings
  for (const std::string& text : ranks.allgather(encode(request, mine)))
    views.push_back(decode(text, given[views.size()]));
  std::string mismatch;  // ranks given other settings than rank 0 (mpirun's per-rank arguments)
  for (size_t r = 1; r < given.size(); ++r)
    if (given[r] != given[0]) mismatch += "; rank " + std::to_string(r) + ": " + given[r];
  if (!mismatch.empty())
    throw std::runtime_error(
        "cannot choose the ranks' devices: the ranks were given different "
        "settings: rank 0: " +
        given[0] + mismatch);

  std::vector<DeviceChoice> choices;
  try {
    choices = choose_devices(request, views);
  } catch (const std::invalid_argument& e) {  // the same on every rank: all stop
    throw std::runtime_error(std::string("cannot choose the ranks' devices: ") + e.what());
  }
  if (ranks.is_main())
    for (const std::string& line : describe_layout(views, choices)) logging::info("{}", line);
  const DeviceChoice& choice = choices[process.rank];
  if (!choice.shares.empty())
    logging::warn("{} shares its GPU {} with rank(s) {} (dist.backend = mpi)", choice.device.str(),
                  choice.gpu, join(choice.shares));
  make_current(choice.device);
  logging::info("every rank computes on {} with {}", choice.device.is_cuda() ? "cuda" : "cpu",
                settings::name_of(choices::kBackendNames, choice.backend));
  return choice;
}

}  // namespace runtime
