#include "trainer/train/step.h"

#include <limits>

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

// Layout of the step's allreduce: loss sums and the flags every rank must agree on.
enum StepSum { kSmoothed, kNll, kTokens, kSquares, kPreempt, kSaveTime, kNumStepSums };

}  // namespace

TrainStep::TrainStep(Objective& objective, Optimizer& optimizer, distributed::GradSync& grad_sync,
                     distributed::Communicator& comm, const LrSchedule& schedule,
                     LossScaler& loss_scaler, NumericsGuard& guard, PhaseTimer& phases,
                     const torch::Device& device, Options options)
    : objective_(objective),
      optimizer_(optimizer),
      grad_sync_(grad_sync),
      comm_(comm),
      schedule_(schedule),
      loss_scaler_(loss_scaler),
      guard_(guard),
      phases_(phases),
      device_(device),
      options_(options) {}

StepResult TrainStep::run(const data::LoadedStep& step, const std::function<StepFlags()>& flags) {
  const int64_t n = step.plan.step;
  grad_sync_.zero_grad();
  auto sums = torch::zeros({kNumStepSums}, torch::dtype(torch::kDouble).device(device_));
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
    LossSums s;
    {
      auto phase = phases_.enter(Phase::kForward, n);
      runtime::AutocastScope autocast(options_.precision, device_);
      s = objective_.loss(batch);
    }
    auto phase = phases_.enter(Phase::kBackward, n);
    (s.smoothed * loss_scaler_.scale()).backward();
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
  StepResult r;
  {
    auto phase = phases_.enter(Phase::kUpdate, n);
    // The step's one read from the device: sums, flags and the gradients'
    // squared norm, which decide whether and how the update runs.
    const torch::Tensor host = sums.cpu();
    const auto v = host.accessor<double, 1>();
    r.smoothed_sum = v[kSmoothed];
    r.nll_sum = v[kNll];
    r.tokens = v[kTokens];
    r.preempt = v[kPreempt] > 0;
    r.save_due = v[kSaveTime] > 0;
    const double max_norm =
        options_.clip_norm > 0 ? options_.clip_norm : std::numeric_limits<double>::infinity();
    const distributed::GradScale scale =
        distributed::clip_scale(v[kSquares], r.tokens * loss_scaler_.scale(), max_norm);
    r.grad_norm = scale.norm;
    const double loss = r.smoothed_sum / r.tokens;
    r.updated =
        !loss_scaler_.absorb_overflow(loss, r.grad_norm) && guard_.accept(n, loss, r.grad_norm);
    if (r.updated) optimizer_.step(schedule_.at(n), scale.factor);
  }
  if (r.updated && grad_sync_.sharded()) {  // every rank's updated shard to all ranks
    auto phase = phases_.enter(Phase::kCommWait, n);
    grad_sync_.gather_parameters();
  }
  return r;
}

}  // namespace train
