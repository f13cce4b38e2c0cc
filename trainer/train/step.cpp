#include "trainer/train/step.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>

#include <limits>
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

// Layout of a step's outcome: first what the ranks allreduce (loss sums, the
// gradients' squared norm, the flags every rank must agree on), then what the
// device decided from it.
enum Field {
  kSmoothed,
  kNll,
  kTokens,
  kSquares,
  kPreempt,
  kSaveTime,
  kNumSums,
  kNorm = kNumSums,
  kSkipped,
  kOverflowed,
  kLossScale,
  kNumFields
};

}  // namespace

StepRecord::StepRecord(int64_t step, const torch::Tensor& outcome) : step_(step) {
  if (outcome.device().is_cpu()) {  // computed already
    host_ = outcome;
    return;
  }
  host_ = torch::empty({kNumFields}, torch::dtype(torch::kDouble).pinned_memory(true));
  host_.copy_(outcome, /*non_blocking=*/true);
  const c10::Device device = outcome.device();
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
  r.preempt = v[kPreempt] > 0;
  r.save_due = v[kSaveTime] > 0;
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
  auto sums = torch::zeros({kNumSums}, torch::dtype(torch::kDouble).device(device_));
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
    sums[kSmoothed] += s.smoothed.detach().to(torch::kDouble);
    sums[kNll] += s.nll.to(torch::kDouble);
    sums[kTokens] += s.tokens.to(torch::kDouble);
  }
  const StepFlags mine = flags();
  if (mine.preempt_requested) sums[kPreempt] += 1.0;
  if (mine.save_time_due) sums[kSaveTime] += 1.0;

  // The global batch: sum over ranks, divide once by its target tokens.
  {
    auto phase = phases_.enter(Phase::kCommWait, n);
    grad_sync_.synchronize();  // first: the gradient buckets' collectives come in a fixed order
  }
  {
    auto phase = phases_.enter(Phase::kUpdate, n);
    sums[kSquares] += grad_sync_.sum_of_squares();  // this rank's part of the gradients' norm
  }
  {
    auto phase = phases_.enter(Phase::kCommWait, n);
    comm_.allreduce_sum(sums);
  }
  torch::Tensor outcome;
  {
    auto phase = phases_.enter(Phase::kUpdate, n);
    // Whether and how the update runs, decided on the device from the sums.
    const torch::Tensor tokens = sums[kTokens];
    const torch::Tensor loss = sums[kSmoothed] / tokens;
    const double max_norm =
        options_.clip_norm > 0 ? options_.clip_norm : std::numeric_limits<double>::infinity();
    const distributed::GradScale scale =
        distributed::clip_scale(sums[kSquares], tokens * loss_scaler_.scale(), max_norm);
    const torch::Tensor overflowed = loss_scaler_.absorb_overflow(loss, scale.norm);
    const torch::Tensor skipped = (loss.isfinite() & scale.norm.isfinite()).logical_not();
    optimizer_.step(schedule_.at(n), scale.factor, skipped);
    outcome =
        torch::cat({sums, torch::stack({scale.norm, skipped.to(torch::kDouble),
                                        overflowed.to(torch::kDouble), loss_scaler_.scale()})});
  }
  if (grad_sync_.sharded()) {  // every rank's updated shard to all ranks (unchanged if skipped)
    auto phase = phases_.enter(Phase::kCommWait, n);
    grad_sync_.gather_parameters();
  }
  return StepRecord(n, outcome);
}

}  // namespace train
