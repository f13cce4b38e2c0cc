// A long job's progress line (base/progress.h): counts,
// percent, rate and ETA, worked out by hand.
#include <gtest/gtest.h>

#include "base/progress.h"

namespace {

// 1200 of 3000 in 40 s: 30 sentences/s, the other 1800 take 60 s.
TEST(Progress, RateAndEta) {
  EXPECT_EQ(base::progress_line("evaluating test", 1200, 3000, "sentences", 40.0),
            "evaluating test: 1200 / 3000 sentences (40.0%), 30.0 sentences/s, ETA 0:01:00");
}

// 1 of 10000 in 1 s: 9999 s = 2 h 46 min 39 s left.
TEST(Progress, EtaInHoursMinutesSeconds) {
  EXPECT_EQ(base::progress_line("evaluating valid", 1, 10000, "examples", 1.0),
            "evaluating valid: 1 / 10000 examples (0.0%), 1.0 examples/s, ETA 2:46:39");
}

TEST(Progress, NoRateYetAndDone) {
  EXPECT_EQ(base::progress_line("evaluating test", 0, 50, "sentences", 0.0),
            "evaluating test: 0 / 50 sentences (0.0%), 0.0 sentences/s, ETA ?");
  EXPECT_EQ(base::progress_line("evaluating test", 50, 50, "sentences", 2.0),
            "evaluating test: 50 / 50 sentences (100.0%), 25.0 sentences/s, ETA 0:00:00");
}

}  // namespace
