#include "trainer/train/step.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>

#include <limits>
#include <optional>
#include <thread>

#include "data_pipeline/random.h"

namespace train {
namespace {

// Dropout masks depend on (seed, step, micro-batch part) only: the same part
// of the same step draws the same masks whichever rank trains it, and a
// resumed run needs no generator state to replay them.
void seed_dropout(uint64_t seed, int64_t step, int64_t part) {
  torch::manual_seed(data::mix_seed(data::mix_seed(seed, static_cast<uint64_t>(step)),
                                    static_cast<uint64_t>(part)));
}

// Where each number of a step's outcome sits: first what the ranks sum in
// the allreduce (StepSums::all), then what the device decided from it. The
// record copies them to the host as one tensor.
enum Field {
  kSmoothed,
  kNll,
  kTokens,
  kSquares,
  kPreempt,
  kSaveTime,
  kCheckpointWriting,
  kCheckpointFailed,
  kNumSums,
  kNorm = kNumSums,
  kSkipped,
  kOverflowed,
  kLossScale,
  kNumFields
};

torch::Tensor packed(const StepOutcome& o) {  // float64 [kNumFields]
  torch::Tensor numbers = torch::empty({kNumFields}, o.sums.all.options());
  numbers.slice(0, 0, kNumSums).copy_(o.sums.all);
  numbers[kNorm].copy_(o.grad_norm);
  numbers[kSkipped].copy_(o.skipped);
  numbers[kOverflowed].copy_(o.overflowed);
  numbers[kLossScale].copy_(o.loss_scale);
  return numbers;
}

}  // namespace

StepSums::StepSums(const torch::Device& device)
    : all(torch::zeros({kNumSums}, torch::dtype(torch::kDouble).device(device))),
      smoothed(all[kSmoothed]),
      nll(all[kNll]),
      tokens(all[kTokens]),
      squares(all[kSquares]),
      preempt(all[kPreempt]),
      save_time(all[kSaveTime]),
      checkpoint_writing(all[kCheckpointWriting]),
      checkpoint_failed(all[kCheckpointFailed]) {}

StepRecord::StepRecord(int64_t step, const StepOutcome& outcome) : step_(step) {
  const torch::Tensor numbers = packed(outcome);  // float64 [kNumFields]
  if (numbers.device().is_cpu()) {                // computed already
    host_ = numbers;
    return;
  }
  host_ = torch::empty({kNumFields}, torch::dtype(torch::kDouble).pinned_memory(true));
  host_.copy_(numbers, /*non_blocking=*/true);
  const c10::Device device = numbers.device();
  ready_ = std::make_shared<c10::Event>(device.type());
  ready_->record(c10::impl::getDeviceGuardImpl(device.type())->getStream(device));
}

StepResult StepRecord::read() const {
  if (ready_) {
#if TORCH_VERSION_MAJOR >= 2
    ready_->synchronize();
#else
    while (!ready_->query()) std::this_thread::yield();  // no Event::synchronize in LibTorch 1
#endif
  }
  const auto v = host_.accessor<double, 1>();
  StepResult r;
  r.step = step_;
  r.smoothed_sum = v[kSmoothed];
  r.nll_sum = v[kNll];
  r.tokens = v[kTokens];
  r.grad_norm = v[kNorm];
  r.updated = v[kSkipped] == 0;
  r.overflowed = v[kOverflowed] != 0;
  r.loss_scale = v[kLossScale];
  r.flags = {v[kPreempt] > 0, v[kSaveTime] > 0, v[kCheckpointWriting] > 0,
             v[kCheckpointFailed] > 0};
  return r;
}

TrainStep::TrainStep(task::Objective& objective, Optimizer& optimizer,
                     distributed::GradSync& grad_sync, distributed::Communicator& comm,
                     const LrSchedule& schedule, LossScaler& loss_scaler, PhaseTimer& phases,
                     const torch::Device& device, Options options)
    : objective_(objective),
      optimizer_(optimizer),
      grad_sync_(grad_sync),
      comm_(comm),
      schedule_(schedule),
      loss_scaler_(loss_scaler),
      phases_(phases),
      device_(device),
      options_(options) {}

StepRecord TrainStep::run(const data::LoadedStep& step, const std::function<StepFlags()>& flags) {
  const int64_t n = step.plan.step;
  grad_sync_.zero_grad();
  StepSums sums(device_);
  const size_t parts = step.batches.size();
  for (size_t a = 0; a < parts; ++a) {
    data::Batch batch;
    {
      auto phase = phases_.enter(Phase::kData, n);
      batch = step.batches[a].to(device_);
    }
    grad_sync_.prepare(a + 1 == parts);
    if (batch.num_tgt_tokens == 0) continue;  // an empty part adds nothing
    seed_dropout(options_.seed, n, step.plan.micro_batches[a].part);
    task::LossSums s;
    {
      auto phase = phases_.enter(Phase::kForward, n);
      runtime::AutocastScope autocast(options_.precision, device_);
      s = objective_.loss(batch);
    }
    auto phase = phases_.enter(Phase::kBackward, n);
    (s.smoothed * loss_scaler_.scale().to(s.smoothed.scalar_type())).backward();  // exact: 2^k
    sums.smoothed += s.smoothed.detach().to(torch::kDouble);
    sums.nll += s.nll.to(torch::kDouble);
    sums.tokens += s.tokens.to(torch::kDouble);
  }
  const StepFlags mine = flags();
  if (mine.preempt) sums.preempt += 1.0;
  if (mine.save_time) sums.save_time += 1.0;
  if (mine.checkpoint_writing) sums.checkpoint_writing += 1.0;
  if (mine.checkpoint_failed) sums.checkpoint_failed += 1.0;

  // The global batch: sum over ranks, divide once by its target tokens.
  {
    auto phase = phases_.enter(Phase::kCommWait, n);
    grad_sync_.synchronize();  // first: the gradient buckets' collectives come in a fixed order
  }
  {
    auto phase = phases_.enter(Phase::kUpdate, n);
    sums.squares += grad_sync_.sum_of_squares();  // this rank's part of the gradients' norm
  }
  {
    auto phase = phases_.enter(Phase::kCommWait, n);
    comm_.allreduce_sum(sums.all);
  }
  std::optional<StepOutcome> outcome;
  {
    auto phase = phases_.enter(Phase::kUpdate, n);
    // Whether and how the update runs, decided on the device from the sums.
    const torch::Tensor loss = sums.smoothed / sums.tokens;
    const double max_norm =
        options_.clip_norm > 0 ? options_.clip_norm : std::numeric_limits<double>::infinity();
    const distributed::GradScale scale =
        distributed::clip_scale(sums.squares, sums.tokens * loss_scaler_.scale(), max_norm);
    const torch::Tensor overflowed = loss_scaler_.absorb_overflow(loss, scale.norm);
    const torch::Tensor skipped = (loss.isfinite() & scale.norm.isfinite()).logical_not();
    optimizer_.step(schedule_.at(n), scale.factor, skipped);
    outcome = StepOutcome{sums, scale.norm, skipped.to(torch::kDouble),
                          overflowed.to(torch::kDouble), loss_scaler_.scale()};
  }
  if (grad_sync_.sharded()) {  // every rank's updated shard to all ranks (unchanged if skipped)
    auto phase = phases_.enter(Phase::kCommWait, n);
    grad_sync_.gather_parameters();
  }
  return StepRecord(n, *outcome);
}

}  // namespace train
