// The steps' outcomes, read a step late (train/step.h): a step's record is
// read once the next step is queued, so that on a GPU the host stays a step
// ahead of the device. settle() reads the last one where something needs the
// model as of that step (a log line, a check, validation, a checkpoint).
// Each result read goes to the numerics guard (or, an fp16 overflow, to the
// log as a message) and to the log interval's sums; the flags the ranks
// agreed on accumulate until acted on.
#pragma once
#include <optional>

#include "trainer/train/interval_log.h"
#include "trainer/train/numerics_guard.h"
#include "trainer/train/step.h"
#include "trainer/train/watchdog.h"

namespace train {

class StepOutcomes {
 public:
  StepOutcomes(Watchdog& watchdog, NumericsGuard& guard, IntervalLog& log);

  void queue(StepRecord record);  // reads the one queued before it
  void settle();                  // reads the last one queued, if not yet
  // What the ranks agreed on in the steps read so far (any rank's flag), kept
  // until acted on; checkpoint_writing: as the last step read since the save
  // in flight began says.
  const StepFlags& agreed() const { return agreed_; }
  // A checkpoint began: the timed save is done, and whether its files are
  // written is asked anew of the steps after it.
  void checkpoint_began() {
    agreed_.save_time = false;
    agreed_.checkpoint_writing = true;
  }

 private:
  void read(const StepRecord& record);

  Watchdog& watchdog_;
  NumericsGuard& guard_;
  IntervalLog& log_;
  std::optional<StepRecord> unread_;
  StepFlags agreed_;
};

}  // namespace train
