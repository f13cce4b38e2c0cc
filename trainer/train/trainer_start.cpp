// The Trainer's start (train/trainer.h): the run directory locked before
// anything is written there, then the state resumed from a checkpoint (its
// weights and Adam's moments, read by rank 0 alone) or a fresh one, the same
// on every rank.
#include "trainer/train/trainer.h"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data_pipeline/dataset_identity.h"
#include "base/file_write.h"
#include "base/logging.h"
#include "base/seconds.h"
#include "launch/shared_directory.h"
#include "trainer/checkpoint/finished_marker.h"
#include "trainer/checkpoint/optimizer_state.h"
#include "trainer/checkpoint/state_dict.h"
#include "trainer/train/resume.h"

namespace train {

// The run directory's lock before anything is written there; all ranks stop if it is held.
std::unique_ptr<RunLock> Trainer::lock_run_directory() {
  std::unique_ptr<RunLock> lock;
  launch::on_main(ranks_, [&] {
    base::make_directories(run_dir_, "the run directory (run.out_dir / run.name)");
    lock = std::make_unique<RunLock>(run_dir_.string());
  });
  // Before any training: a run directory only rank 0's node sees would fail
  // only at the first resume, on the other nodes.
  launch::require_shared_directory(ranks_, process_.node, run_dir_.string(),
                                   "the run directory (run.out_dir / run.name)");
  return lock;
}

Trainer::Start Trainer::start_or_resume(const checkpoint::CheckpointChoice& resume) {
  Start start;
  // Rank 0 alone picks the checkpoint and reads it, each file once and
  // checked as it is read: its state.json goes to the other ranks as text,
  // its weights and Adam's state by the broadcasts below (train/resume.h).
  const auto begin = Clock::now();
  std::string chosen, saved_text;
  launch::on_main(ranks_, [&] {  // a refusal ends every rank alike (exit 1), not MPI_Abort
    checkpoints_.remove_temporaries();
    chosen = resume_from(checkpoints_, resume, [&](const checkpoint::CheckpointFiles& files) {
      const nlohmann::json saved =
          checkpoint::parse_checkpoint_state(files.read("state.json"), files.path("state.json"));
      const checkpoint::CheckpointState resumed = checkpoint::CheckpointState::from_json(saved);
      // A checkpoint from before content ids named its dataset by the manifest's sha256.
      const bool same_manifest = data::names_manifest(cfg_.data.dir, resumed.run.dataset_id);
      check_resume_compatible(files.dir(), saved, resolved_toml_,
                              same_manifest ? resumed.run.dataset_id : identity_.dataset_id);
      // Every file read and checked before the model or Adam changes: one
      // that fails leaves them for the next checkpoint, or a fresh start.
      // (state.json is checked first, and the compatibility with it: a
      // checkpoint refused there is not looked at further.)
      files.check_unloaded();
      auto weights = checkpoint::parse_tensors(files.read("model.pt"), files.path("model.pt"));
      checkpoint::load_optimizer_state(adam_, model_.module(), files);
      checkpoint::copy_state_dict(model_.module(), std::move(weights), files.path("model.pt"));
      saved_text = saved.dump();
    });
  });
  chosen = ranks_.broadcast(chosen);
  saved_text = ranks_.broadcast(saved_text);
  // Rank 0's weights (and buffers, which load_state_dict fills too): loaded,
  // or its initialisation on a fresh start.
  std::vector<torch::Tensor> weights = params_;
  for (const auto& buffer : model_.module().buffers()) weights.push_back(buffer);
  distributed::broadcast_parameters(weights, *comm_);
  if (!chosen.empty()) {
    share_adam_state(adam_, params_, *comm_);
    const checkpoint::CheckpointState resumed =
        checkpoint::CheckpointState::from_json(nlohmann::json::parse(saved_text));
    start = {resumed.train, resumed.train.step};
    logging::info(
        "resuming from {} (step {}, epoch {}, batch {} of the epoch; saved by {} ranks "
        "x {} accumulation steps; read by rank 0 and shared in {:.1f} s)",
        chosen, start.state.step, start.state.epoch, start.state.cursor, resumed.run.world_size,
        resumed.run.accum_steps, base::seconds_since(begin));
    if (start.state.window < 0)
      logging::warn(
          "{} was saved before batches came from windows of the shuffled split: the rest of "
          "epoch {} skips its first {} batches of the new order, which is not the order it "
          "began with (some examples of the epoch are seen twice, others not)",
          chosen, start.state.epoch, start.state.cursor);
  }
  // The start is settled and fits: only now is the run directory changed.
  launch::on_main(ranks_, [&] {
    const int64_t chosen_step = start.checkpoint_step;
    const std::string aside = checkpoints_.set_aside_after(chosen_step);
    if (!aside.empty())
      logging::warn("training from {}: the run's checkpoints of later steps moved to {}",
                    chosen_step >= 0 ? "step " + std::to_string(chosen_step) : "the start", aside);
    base::write_file(run_dir_ / "config.toml", resolved_toml_);
    checkpoint::clear_finished(run_dir_.string());
  });
  return start;
}

}  // namespace train
