// Accuracy and macro F1 (trainer/eval/metrics/classification_metrics.h)
// against values worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "trainer/eval/metrics/classification_metrics.h"

namespace {

// ---- accuracy and macro F1: by hand ----------------------------------------------

TEST(EvalMetricsClassification, AccuracyAndMacroF1ByHand) {
  // refs  0 0 1 1 2 2, preds 0 1 1 1 2 0: 4 of 6 right.
  //   class 0: TP 1, FP 1 (pred 0 at ref 2), FN 1 (ref 0 pred 1) -> F1 = 2/(2+1+1) = 0.5
  //   class 1: TP 2, FP 1, FN 0 -> 4/5 = 0.8
  //   class 2: TP 1, FP 0, FN 1 -> 2/3
  //   macro F1 = (0.5 + 0.8 + 2/3) / 3 = 0.655555...
  const std::vector<int64_t> refs = {0, 0, 1, 1, 2, 2}, preds = {0, 1, 1, 1, 2, 0};
  EXPECT_DOUBLE_EQ(eval::metrics::accuracy(refs, preds), 4.0 / 6.0);
  EXPECT_NEAR(eval::metrics::macro_f1(refs, preds), (0.5 + 0.8 + 2.0 / 3.0) / 3.0, 1e-12);

  // A class only predicted (7) joins the average with F1 0, like sklearn's:
  //   class 0: TP 1, FP 0, FN 1 -> 2/3;  class 7: TP 0, FP 1, FN 0 -> 0
  //   macro F1 = (2/3 + 0) / 2 = 1/3;  accuracy 1/2
  EXPECT_NEAR(eval::metrics::macro_f1({0, 0}, {0, 7}), 1.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(eval::metrics::accuracy({0, 0}, {0, 7}), 0.5);

  // All right: 1 and 1.
  EXPECT_DOUBLE_EQ(eval::metrics::macro_f1({3, 5, 3}, {3, 5, 3}), 1.0);
  EXPECT_DOUBLE_EQ(eval::metrics::accuracy({3, 5, 3}, {3, 5, 3}), 1.0);

  EXPECT_THROW(eval::metrics::accuracy({}, {}), std::invalid_argument);
  EXPECT_THROW(eval::metrics::macro_f1({1, 2}, {1}), std::invalid_argument);
}

}  // namespace
