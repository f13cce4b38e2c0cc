#include "data_pipeline/loader/collate.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace data {

namespace {

// Writes `tokens` into row `row` of `out` from column `column`.
void put(torch::TensorAccessor<int64_t, 2>& out, int64_t row, int64_t column,
         const std::vector<int32_t>& tokens) {
  for (const int32_t token : tokens) out[row][column++] = token;
}

// [B] class ids, or undefined when no example has a label (seq2seq).
torch::Tensor collate_labels(const std::vector<Example>& examples) {
  const auto labelled = std::count_if(examples.begin(), examples.end(),
                                      [](const Example& example) { return example.label >= 0; });
  if (labelled == 0 && !examples.empty()) return {};
  if (labelled != static_cast<int64_t>(examples.size())) {
    throw std::invalid_argument("collate: " + std::to_string(labelled) + " of " +
                                std::to_string(examples.size()) + " examples have a label");
  }
  auto labels = torch::empty({static_cast<int64_t>(examples.size())}, torch::kInt64);
  auto out = labels.accessor<int64_t, 1>();
  for (size_t row = 0; row < examples.size(); ++row) out[row] = examples[row].label;
  return labels;
}

}  // namespace

Batch collate(const std::vector<Example>& examples, const SpecialIds& special) {
  const auto rows = static_cast<int64_t>(examples.size());
  size_t longest_src = 0;
  size_t longest_tgt = 0;
  for (const auto& example : examples) {
    longest_src = std::max(longest_src, example.src.size());
    longest_tgt = std::max(longest_tgt, example.tgt.size());
  }
  const int64_t S = rows == 0 ? 0 : static_cast<int64_t>(longest_src) + 1;
  const int64_t T = rows == 0 ? 0 : static_cast<int64_t>(longest_tgt) + 1;

  Batch batch;
  batch.src = torch::full({rows, S}, special.pad, torch::kInt64);
  batch.tgt_in = torch::full({rows, T}, special.pad, torch::kInt64);
  batch.tgt_out = torch::full({rows, T}, special.pad, torch::kInt64);
  auto src = batch.src.accessor<int64_t, 2>();
  auto tgt_in = batch.tgt_in.accessor<int64_t, 2>();
  auto tgt_out = batch.tgt_out.accessor<int64_t, 2>();
  for (int64_t row = 0; row < rows; ++row) {
    const Example& example = examples[row];
    const auto src_len = static_cast<int64_t>(example.src.size());
    const auto tgt_len = static_cast<int64_t>(example.tgt.size());
    put(src, row, 0, example.src);
    src[row][src_len] = special.eos;
    tgt_in[row][0] = special.bos;
    put(tgt_in, row, 1, example.tgt);
    put(tgt_out, row, 0, example.tgt);
    tgt_out[row][tgt_len] = special.eos;
    batch.num_src_tokens += src_len + 1;
    batch.num_tgt_tokens += tgt_len + 1;
    batch.ids.push_back(example.id);
  }
  batch.labels = collate_labels(examples);
  return batch;
}

template <typename F>
Batch Batch::with_tensors(F f) const {
  Batch out = *this;
  out.src = f(src);
  out.tgt_in = f(tgt_in);
  out.tgt_out = f(tgt_out);
  if (labels.defined()) out.labels = f(labels);
  return out;
}

Batch Batch::to(const torch::Device& device) const {
  return with_tensors([&](const torch::Tensor& t) { return t.to(device, /*non_blocking=*/true); });
}

Batch Batch::pinned() const {
  return with_tensors([](const torch::Tensor& t) { return t.pin_memory(); });
}

}  // namespace data
