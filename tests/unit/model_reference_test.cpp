// Our attention and layers against LibTorch's own modules, given the same
// weights: torch::nn::MultiheadAttention, TransformerEncoderLayer and
// TransformerDecoderLayer (sequence-first [T, B, D], masks built here
// independently: key-padding bool with true = ignore, additive float causal).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "trainer/model/attention.h"
#include "trainer/model/decoder.h"
#include "trainer/model/encoder.h"
#include "trainer/model/masks.h"

namespace {

constexpr int64_t kPad = 0;
constexpr double kTolerance = 1e-5;

using NameMap = std::vector<std::pair<std::string, std::string>>;  // our prefix -> reference prefix

// Random reference weights (LayerNorm gains and biases too), copied into ours.
void copy_weights(torch::nn::Module& reference, torch::nn::Module& ours, const NameMap& prefixes) {
  torch::NoGradGuard no_grad;
  auto from = reference.named_parameters();
  for (auto& p : from) p->uniform_(-0.5, 0.5);
  auto to = ours.named_parameters();
  ASSERT_EQ(to.size(), from.size());
  for (auto& p : to) {
    std::string name = p.key();
    for (const auto& [mine, theirs] : prefixes) {
      if (name.rfind(mine, 0) == 0) {
        name = theirs + name.substr(mine.size());
        break;
      }
    }
    const torch::Tensor* source = from.find(name);
    ASSERT_NE(source, nullptr) << "no reference parameter " << name << " for " << p.key();
    p->copy_(*source);
  }
}

// Token ids in [1, 10) with the last positions of each row padding.
torch::Tensor tokens(const std::vector<int64_t>& lengths, int64_t max_length) {
  auto t = torch::randint(1, 10, {static_cast<int64_t>(lengths.size()), max_length}, torch::kLong);
  for (size_t b = 0; b < lengths.size(); ++b) t[b].slice(0, lengths[b]).fill_(kPad);
  return t;
}

torch::Tensor key_padding(const torch::Tensor& tokens) {
  return tokens == kPad;
}  // [B, S], true = ignore

torch::Tensor additive_causal(int64_t size) {  // [T, T]: -inf above the diagonal
  return torch::full({size, size}, -std::numeric_limits<float>::infinity()).triu(1);
}

void expect_close(const torch::Tensor& actual, const torch::Tensor& expected) {
  ASSERT_EQ(actual.sizes(), expected.sizes());
  EXPECT_LE((actual - expected).abs().max().item<double>(), kTolerance);
}

torch::Tensor seq_first(const torch::Tensor& x) { return x.transpose(0, 1); }

class ReferenceTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::manual_seed(7); }
  static constexpr int64_t kDModel = 16, kHeads = 4, kFF = 32, kBatch = 3;
};

model::ModelConfig post_norm_config() {
  model::ModelConfig c;
  c.src_vocab = c.tgt_vocab = 10;
  c.d_model = 16;
  c.heads = 4;
  c.d_ff = 32;
  c.dropout = 0.0;
  c.norm = model::NormPlacement::kPost;
  return c;
}

TEST_F(ReferenceTest, SelfAttentionWithKeyPaddingMatchesMultiheadAttention) {
  torch::nn::MultiheadAttention reference(kDModel, kHeads);
  model::MultiHeadedAttention ours(kDModel, kHeads, 0.0);
  copy_weights(*reference, *ours, {});
  auto src = tokens({7, 5, 3}, 7);
  auto x = torch::randn({kBatch, 7, kDModel});

  auto expected =
      std::get<0>(reference(seq_first(x), seq_first(x), seq_first(x), key_padding(src), false));
  auto actual = ours->forward_self(x, model::make_src_mask(src, kPad));
  expect_close(actual, seq_first(expected));
}

TEST_F(ReferenceTest, CausalSelfAttentionMatchesMultiheadAttention) {
  torch::nn::MultiheadAttention reference(kDModel, kHeads);
  model::MultiHeadedAttention ours(kDModel, kHeads, 0.0);
  copy_weights(*reference, *ours, {});
  const int64_t length = 6;
  auto x = torch::randn({kBatch, length, kDModel});

  auto expected = std::get<0>(reference(seq_first(x), seq_first(x), seq_first(x), torch::Tensor(),
                                        false, additive_causal(length)));
  auto actual = ours->forward_self(x, model::subsequent_mask(length));
  expect_close(actual, seq_first(expected));
}

TEST_F(ReferenceTest, CrossAttentionWithKeyPaddingMatchesMultiheadAttention) {
  torch::nn::MultiheadAttention reference(kDModel, kHeads);
  model::MultiHeadedAttention ours(kDModel, kHeads, 0.0);
  copy_weights(*reference, *ours, {});
  auto src = tokens({8, 4, 6}, 8);
  auto x = torch::randn({kBatch, 5, kDModel});       // Tq = 5
  auto memory = torch::randn({kBatch, 8, kDModel});  // Tk = 8

  auto expected = std::get<0>(
      reference(seq_first(x), seq_first(memory), seq_first(memory), key_padding(src), false));
  auto actual = ours->forward_cross(x, memory, model::make_src_mask(src, kPad));
  EXPECT_EQ(actual.sizes(), torch::IntArrayRef({kBatch, 5, kDModel}));
  expect_close(actual, seq_first(expected));
}

TEST_F(ReferenceTest, PostNormEncoderLayerMatchesTransformerEncoderLayer) {
  const auto config = post_norm_config();
  torch::nn::TransformerEncoderLayer reference(
      torch::nn::TransformerEncoderLayerOptions(kDModel, kHeads)
          .dim_feedforward(kFF)
          .dropout(0.0)
          .activation(torch::kReLU));
  for (auto norm : {reference->norm1, reference->norm2}) norm->options.eps(config.layer_norm_eps);
  model::EncoderLayer ours(config);
  copy_weights(*reference, *ours,
               {{"feed_forward.w_1.", "linear1."},
                {"feed_forward.w_2.", "linear2."},
                {"self_attn_sublayer.norm.", "norm1."},
                {"feed_forward_sublayer.norm.", "norm2."}});
  auto src = tokens({6, 2, 4}, 6);
  auto x = torch::randn({kBatch, 6, kDModel});

  auto expected = reference(seq_first(x), torch::Tensor(), key_padding(src));
  auto actual = ours(x, model::make_src_mask(src, kPad));
  expect_close(actual, seq_first(expected));
}

TEST_F(ReferenceTest, PostNormDecoderLayerMatchesTransformerDecoderLayer) {
  const auto config = post_norm_config();
  torch::nn::TransformerDecoderLayer reference(
      torch::nn::TransformerDecoderLayerOptions(kDModel, kHeads)
          .dim_feedforward(kFF)
          .dropout(0.0)
          .activation(torch::kReLU));
  for (auto norm : {reference->norm1, reference->norm2, reference->norm3})
    norm->options.eps(config.layer_norm_eps);
  model::DecoderLayer ours(config);
  copy_weights(*reference, *ours,
               {{"src_attn.", "multihead_attn."},
                {"feed_forward.w_1.", "linear1."},
                {"feed_forward.w_2.", "linear2."},
                {"self_attn_sublayer.norm.", "norm1."},
                {"src_attn_sublayer.norm.", "norm2."},
                {"feed_forward_sublayer.norm.", "norm3."}});
  auto src = tokens({7, 3, 5}, 7);
  auto tgt = tokens({5, 5, 2}, 5);
  auto x = torch::randn({kBatch, 5, kDModel});
  auto memory = torch::randn({kBatch, 7, kDModel});

  auto expected = reference(seq_first(x), seq_first(memory), additive_causal(5), torch::Tensor(),
                            key_padding(tgt), key_padding(src));
  auto actual = ours(x, memory, model::make_src_mask(src, kPad), model::make_tgt_mask(tgt, kPad));
  expect_close(actual, seq_first(expected));
}

}  // namespace
