// The encoder classifier: scores [B, num_labels]; padding does not change a
// row's scores (the pooling averages non-padding positions only); a row's
// scores do not depend on the other rows of its batch.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "small_model_config.h"
#include "trainer/model/classifier.h"

namespace {

constexpr int64_t kPad = 0;  // small_model_config's pad id

model::ModelConfig small_config() { return small_model_config(19, 19); }

TEST(TransformerClassifier, ScoresShapeAndPaddingInvariance) {
  torch::manual_seed(2);
  model::TransformerClassifier classifier(small_config(), 5);
  classifier->eval();
  const auto tokens = torch::randint(1, 19, {3, 6}, torch::kLong);
  const auto padded = torch::cat({tokens, torch::full({3, 4}, kPad, torch::kLong)}, 1);  // [3, 10]
  const auto a = classifier->forward(tokens), b = classifier->forward(padded);
  ASSERT_EQ(a.sizes(), (std::vector<int64_t>{3, 5}));
  EXPECT_LE((a - b).abs().max().item<double>(), 1e-5);
}

TEST(TransformerClassifier, RowsAreIndependentOfEachOther) {
  torch::manual_seed(3);
  model::TransformerClassifier classifier(small_config(), 3);
  classifier->eval();
  auto batch = torch::randint(1, 19, {4, 7}, torch::kLong);
  batch[1].slice(0, 3) = kPad;  // a shorter row
  const auto together = classifier->forward(batch);
  for (int64_t r = 0; r < 4; ++r) {
    const auto row = batch[r].unsqueeze(0);
    const auto length = row.ne(kPad).sum().item<int64_t>();
    const auto alone = classifier->forward(row.slice(1, 0, length));
    EXPECT_LE((together[r] - alone[0]).abs().max().item<double>(), 1e-5) << "row " << r;
  }
}

TEST(TransformerClassifier, RejectsFewerThanTwoLabels) {
  EXPECT_THROW(model::TransformerClassifier(small_config(), 1), std::invalid_argument);
}

}  // namespace
