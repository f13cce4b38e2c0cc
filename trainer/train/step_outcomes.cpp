#include "trainer/train/step_outcomes.h"

#include "base/logging.h"

namespace train {

StepOutcomes::StepOutcomes(Watchdog& watchdog, NumericsGuard& guard, IntervalLog& log)
    : watchdog_(watchdog), guard_(guard), log_(log) {}

void StepOutcomes::queue(StepRecord record) {
  if (unread_) read(*unread_);  // done on the device by now, or nearly
  unread_ = std::move(record);
}

void StepOutcomes::settle() {
  if (!unread_) return;
  read(*unread_);
  unread_.reset();
}

void StepOutcomes::read(const StepRecord& record) {
  watchdog_.beat(record.step(), "the device's work");
  const StepResult r = record.read();
  if (r.overflowed)
    logging::info("step {}: fp16 gradients overflowed: step skipped, loss scale now {}", r.step,
                  r.loss_scale);
  else  // the device applied the step by the guard's own rule: finite loss and norm
    guard_.accept(r.step, r.smoothed_sum / r.tokens, r.grad_norm);
  log_.add(r);
  agreed_.preempt = agreed_.preempt || r.flags.preempt;
  agreed_.save_time = agreed_.save_time || r.flags.save_time;
  agreed_.checkpoint_writing = r.flags.checkpoint_writing;  // a rank's write, once done, stays done
  agreed_.checkpoint_failed = agreed_.checkpoint_failed || r.flags.checkpoint_failed;
}

}  // namespace train
