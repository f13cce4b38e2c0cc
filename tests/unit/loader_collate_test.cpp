// collate(): hand-built batches (seq2seq and classification) checked element by element.
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "data_pipeline/loader/collate.h"

namespace {

torch::Tensor rows(const std::vector<std::vector<int64_t>>& values) {
  std::vector<torch::Tensor> tensors;
  for (const auto& row : values) tensors.push_back(torch::tensor(row, torch::kInt64));
  return torch::stack(tensors);
}

TEST(DataCollate, TwoExamplesWithPadding) {
  const data::SpecialIds special;  // pad 0, bos 1, eos 2
  const std::vector<data::Example> examples = {{7, {5, 6, 7}, {8, 9}}, {3, {10}, {11, 12, 13}}};
  const auto batch = data::collate(examples, special);

  EXPECT_EQ(batch.src.dtype(), torch::kInt64);
  EXPECT_TRUE(torch::equal(batch.src, rows({{5, 6, 7, 2}, {10, 2, 0, 0}})));
  EXPECT_TRUE(torch::equal(batch.tgt_in, rows({{1, 8, 9, 0}, {1, 11, 12, 13}})));
  EXPECT_TRUE(torch::equal(batch.tgt_out, rows({{8, 9, 2, 0}, {11, 12, 13, 2}})));
  EXPECT_EQ(batch.num_src_tokens, 4 + 2);
  EXPECT_EQ(batch.num_tgt_tokens, 3 + 4);
  EXPECT_EQ(batch.ids, (std::vector<int64_t>{7, 3}));
  EXPECT_FALSE(batch.labels.defined());  // seq2seq: no labels
}

TEST(DataCollate, ClassificationBatchHasLabels) {
  const data::SpecialIds special;
  std::vector<data::Example> examples = {
      {4, {5, 6}, {}, 2}, {9, {7, 8, 9}, {}, 0}, {1, {10}, {}, 2}};
  const auto batch = data::collate(examples, special);

  EXPECT_EQ(batch.labels.dtype(), torch::kInt64);
  EXPECT_TRUE(torch::equal(batch.labels, torch::tensor({2, 0, 2}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(batch.src, rows({{5, 6, 2, 0}, {7, 8, 9, 2}, {10, 2, 0, 0}})));
  EXPECT_TRUE(torch::equal(batch.tgt_in, rows({{1}, {1}, {1}})));
  EXPECT_TRUE(torch::equal(batch.tgt_out, rows({{2}, {2}, {2}})));
  EXPECT_EQ(batch.num_tgt_tokens, 3);  // one per example
  EXPECT_EQ(batch.ids, (std::vector<int64_t>{4, 9, 1}));
  EXPECT_TRUE(torch::equal(batch.to(torch::kCPU).labels, batch.labels));

  examples[1].label = -1;  // one example without a label among labelled ones
  EXPECT_THROW(data::collate(examples, special), std::invalid_argument);
}

TEST(DataCollate, EmptyListGivesEmptyBatch) {
  const auto batch = data::collate({}, data::SpecialIds{});
  EXPECT_EQ(batch.src.sizes(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(batch.tgt_in.sizes(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(batch.tgt_out.sizes(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(batch.num_src_tokens, 0);
  EXPECT_EQ(batch.num_tgt_tokens, 0);
  EXPECT_TRUE(batch.ids.empty());
  EXPECT_EQ(batch.labels.sizes(), (std::vector<int64_t>{0}));  // an empty classification step too
}

}  // namespace
