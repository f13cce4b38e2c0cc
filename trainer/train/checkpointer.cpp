#include "trainer/train/checkpointer.h"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <vector>

#include "base/logging.h"
#include "base/seconds.h"
#include "base/text_format.h"
#include "trainer/train/diverged_weights.h"
#include "trainer/train/exit_codes.h"

namespace train {

Checkpointer::Checkpointer(const checkpoint::Checkpoints& checkpoints, const launch::Ranks& ranks,
                           Options options, int64_t last_saved_step, torch::nn::Module& model,
                           RankPart rank_part, StepOutcomes& outcomes, Watchdog& watchdog,
                           PreemptionSignals& signals, SurvivorSave& survivor)
    : checkpoints_(checkpoints),
      ranks_(ranks),
      lr_(options.lr),
      schedule_(options.every_steps, options.every_minutes, options.start),
      saver_(checkpoints, ranks, &survivor),
      last_saved_step_(last_saved_step),
      model_(model),
      rank_part_(std::move(rank_part)),
      outcomes_(outcomes),
      watchdog_(watchdog),
      signals_(signals),
      survivor_(survivor) {}

bool Checkpointer::clock_due(Clock::time_point now) const {
  return ranks_.is_main() && schedule_.clock_due(now);
}

void Checkpointer::in_flight(int64_t step) {
  if (outcomes_.agreed().checkpoint_failed) finish_writing(step);  // throws on every rank
  if (saver_.awaiting_commit() && !outcomes_.agreed().checkpoint_writing) {
    watchdog_.beat(step, "checkpoint commit");
    saver_.commit();
  }
}

bool Checkpointer::after_step(checkpoint::TrainState& state) {
  if (schedule_.due(state.step, outcomes_.agreed())) {
    outcomes_.settle();
    save(state, /*best=*/false);
  }
  return outcomes_.agreed().preempt;
}

void Checkpointer::save_best(checkpoint::TrainState& state) { save(state, /*best=*/true); }

void Checkpointer::finish(checkpoint::TrainState& state) {
  const SurvivorSave::Keeping keeping(survivor_);  // the last checkpoint: of the replica's step
  outcomes_.settle();
  if (last_saved_step_ != state.step) write(state, /*best=*/false);
  finish_writing(state.step);
}

// A checkpoint of this step (once). The stop's own (the ranks agreed to stop
// for a preemption) holds a second signal until it is written and settles
// the exit code to kExitPreempted (preemption.h).
void Checkpointer::save(checkpoint::TrainState& state, bool best) {
  const bool saved = last_saved_step_ == state.step;
  if (!outcomes_.agreed().preempt) {
    if (!saved) write(state, best);
    return;
  }
  // The stop's own checkpoint is of the replica's step: no survivor writes
  // it beside (BackgroundSave lends the replica in its collectives).
  const SurvivorSave::Keeping keeping(survivor_);
  signals_.begin_save();
  try {
    if (!saved) write(state, best);
    finish_writing(state.step);  // the stop's checkpoint is on disk before the exit
  } catch (...) {
    signals_.end_save(-1);
    throw;
  }
  const int held = signals_.end_save(kExitPreempted);  // a signal from here on exits 75
  if (held != 0)
    logging::warn(
        "signal {} arrived while the checkpoint of step {} was written: held until it was", held,
        state.step);
}

// Every rank takes a snapshot of what it writes (rank 0 the weights and
// state, each rank its optimizer file: checkpoint/background_save.h), which
// a thread writes while the next steps train: what the save costs the
// training is the copy. The save before it is committed first, on every
// rank alike; this one is committed once the ranks agree in a step that
// all its files are written (after_step()), or at the next save or the end.
void Checkpointer::write(checkpoint::TrainState& state, bool best) {
  watchdog_.beat(state.step, "checkpoint");
  outcomes_.settle();  // no step from before this save may say its files are written
  finish_writing(state.step);
  refuse_diverged(state.step);
  const checkpoint::CheckpointPart part = rank_part_(state);
  const auto begin = Clock::now();
  saver_.begin(state.step);
  saver_.write(part, best);
  logging::info("checkpoint of step {}: snapshot in {:.2f} s, written beside training", state.step,
                base::seconds_since(begin));
  last_saved_step_ = state.step;
  schedule_.saved(Clock::now());
  outcomes_.checkpoint_began();
}

// The save in flight, committed (collective); a failure of any rank's write
// or of the commit ends the run on every rank alike, naming the step, the
// directory and the rank, the previous checkpoint still the `latest`.
void Checkpointer::finish_writing(int64_t step) {
  watchdog_.beat(step, "checkpoint write");
  saver_.finish();
}

// Weights of a diverged run (diverged_weights.h) end the run instead. The
// parameters are the same on every rank (the replica check), so every rank
// decides alike and ends alike.
void Checkpointer::refuse_diverged(int64_t step) const {
  const std::optional<DivergedParameter> diverged = first_diverged(model_);
  if (!diverged) return;
  const std::vector<std::string> saved = checkpoints_.list();
  throw std::runtime_error(text::format(
      "step {}: the run diverged: parameter {} holds {} (max |w| = {:g}); its checkpoint is "
      "not saved, {}. Lower optim.lr (now {:g}) or raise optim.warmup_steps, then {}",
      step, diverged->name,
      std::isfinite(diverged->largest) ? "exploded weights" : "non-finite weights",
      diverged->largest,
      saved.empty() ? std::string("and the run has no earlier one")
                    : "and the run's latest checkpoint stays " + saved.back(),
      lr_, saved.empty() ? "start it again" : "resume from that one"));
}

}  // namespace train
