#include "trainer/eval/watch.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "base/file_write.h"
#include "base/holder_lock.h"
#include "base/logging.h"
#include "launch/ranks.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/finished_marker.h"
#include "trainer/eval/checkpoint_average.h"

namespace eval {

namespace fs = std::filesystem;

namespace {

constexpr char kHeader[] =
    "step\tloss\tppl\tbleu\tchrf\texact_match\taccuracy\tseconds\tcheckpoint";

// Checkpoint directories already in the table (its last column).
std::set<std::string> scored(const fs::path& table) {
  std::set<std::string> done;
  std::ifstream in(table);
  for (std::string line; std::getline(in, line);)
    if (line != kHeader && !line.empty()) done.insert(line.substr(line.rfind('\t') + 1));
  return done;
}

void append_row(const fs::path& table, const nlohmann::json& r) {
  const bool fresh = !fs::exists(table);
  errno = 0;
  std::ofstream out(table, std::ios::app);
  if (fresh) out << kHeader << "\n";
  auto value = [&](const char* key) { return r.contains(key) ? r[key].dump() : std::string("-"); };
  const std::string bleu = r.contains("bleu") ? r["bleu"]["score"].dump() : "-";
  const std::string chrf = r.contains("chrf") ? r["chrf"]["score"].dump() : "-";
  out << r["step"] << "\t" << value("loss") << "\t" << value("ppl") << "\t" << bleu << "\t" << chrf
      << "\t" << value("exact_match") << "\t" << value("accuracy") << "\t" << value("seconds")
      << "\t" << r["checkpoints"][0].get<std::string>() << "\n";
  base::check_written(out, table);
}

// Rank 0's decision for this poll: a checkpoint to score, "" to wait, or "finished".
std::string next_action(const std::string& run_dir, const fs::path& table) {
  const bool finished =
      checkpoint::is_finished(run_dir);  // read before listing: no checkpoint missed
  const std::set<std::string> done = scored(table);
  for (const auto& dir : checkpoint::Checkpoints(run_dir).list())
    if (!done.count(dir)) return dir;
  return finished ? "finished" : "";
}

}  // namespace

void watch_run(const WatchOptions& watch, EvalOptions options, const launch::Ranks& ranks,
               const launch::ProcessInfo& process) {
  const fs::path eval_dir = fs::path(watch.run_dir) / "eval";
  const fs::path table = eval_dir / ("watch-" + options.split + ".tsv");
  // One watcher per run and split: two would score every checkpoint twice
  // into one table. Rank 0 holds the lock; a refusal ends every rank alike.
  std::unique_ptr<base::HolderLock> lock;
  launch::together(ranks, [&] {
    if (ranks.rank() != 0) return;
    base::make_directories(eval_dir, "the evaluation directory");
    const fs::path lock_file = eval_dir / (".watch-" + options.split + ".lock");
    try {
      lock = std::make_unique<base::HolderLock>(
          lock_file.string(), "a second watcher of this run and split would not be detected");
    } catch (const base::HolderLock::Held& held) {
      throw std::runtime_error(
          table.string() + " is being written by another evaluate --watch (" + held.holder +
          ", holding " + lock_file.string() +
          "): one watcher per run and split; stop that one, or watch another --split (a "
          "holder that died releases the lock when its node's lock lease ends)");
    }
  });
  logging::info("watching {} for checkpoints; results table {}", watch.run_dir, table.string());
  for (;;) {
    const std::string local = ranks.rank() == 0 ? next_action(watch.run_dir, table) : "";
    const std::string action = ranks.broadcast(local);
    if (action == "finished") break;
    if (action.empty()) {
      std::this_thread::sleep_for(std::chrono::duration<double>(watch.poll_s));
      continue;
    }
    // Rank 0 verifies and reads the checkpoint, the others receive its
    // weights; all go on only if all succeeded.
    std::optional<EvalModel> m;
    std::string error;
    try {
      m = load_eval_model(
          watch.run_dir, watch.data_dir,
          select_checkpoints(watch.run_dir, checkpoint::CheckpointChoice::directory(action), 1,
                             ranks),
          ranks, watch.device);
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::string first_error;
    for (const auto& e : ranks.allgather(error))
      if (first_error.empty()) first_error = e;
    const std::string name = fs::path(action).filename().string();
    if (!first_error.empty()) {
      // Gone from the run's listing: pruned while it was read (training
      // renames it away in one step). Still listed: a real fault. Rank 0
      // looks, all follow; what the listing says, not whether a cached path
      // still resolves (NFS).
      int64_t pruned = 0;
      if (ranks.rank() == 0) {
        const auto listed = checkpoint::Checkpoints(watch.run_dir).list();
        pruned = std::find(listed.begin(), listed.end(), action) == listed.end();
      }
      if (ranks.broadcast(pruned) == 0) throw std::runtime_error(first_error);
      logging::warn("{} was removed before it was scored (train.keep_last); skipped", name);
      if (ranks.rank() == 0) append_row(table, {{"step", name}, {"checkpoints", {action}}});
      continue;
    }
    options.out_dir = (eval_dir / (options.split + "-" + name)).string();
    const nlohmann::json results = evaluate_split(*m, options, ranks, process);
    if (ranks.rank() == 0) append_row(table, results);
  }
  logging::info("the run is finished and every checkpoint is scored; table {}", table.string());
}

}  // namespace eval
