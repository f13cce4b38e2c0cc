// The fused attention kernel (LibTorch's scaled_dot_product_attention,
// train.attention = fused / auto on GPUs) against the paper's explicit
// matmul-softmax-matmul: the same outputs and gradients, with padding and
// causal masks, in one attention module and in the whole encoder-decoder;
// the masks as training builds them (masks.h: the source's only where a row
// is padded, the target's causal alone) against the full boolean ones of
// the Annotated Transformer; and incremental decoding, which passes no mask.
// Needs LibTorch >= 2.0 (the GPU flavour's); skipped, and reported as
// skipped, on Debian's 1.13.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "trainer/model/attention.h"
#include "trainer/model/masks.h"
#include "trainer/model/transformer.h"

namespace {

using model::AttentionKernel;

constexpr bool kHasFusedAttention = TORCH_VERSION_MAJOR >= 2;

// Same weights, the other kernel.
template <typename Module>
void copy_parameters(const Module& from, Module& to) {
  torch::NoGradGuard no_grad;
  auto src = from->parameters(), dst = to->parameters();
  ASSERT_EQ(src.size(), dst.size());
  for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
}

TEST(AttentionKernels, FusedEqualsExplicitWithPaddingAndCausalMasks) {
  if (!kHasFusedAttention) GTEST_SKIP() << "fused attention needs LibTorch >= 2.0";
  torch::manual_seed(5);
  model::MultiHeadedAttention plain(32, 4, 0.0, AttentionKernel::kExplicit);
  model::MultiHeadedAttention fused(32, 4, 0.0, AttentionKernel::kFused);
  copy_parameters(plain, fused);
  const auto tokens = torch::tensor({{5, 6, 7, 8, 9, 3}, {5, 6, 7, 0, 0, 0}});  // 0 = pad
  const auto pad_mask = model::make_src_mask(tokens, 0);                        // [B, 1, 1, T]
  const auto causal_mask = model::make_tgt_mask(tokens, 0);                     // [B, 1, T, T]
  for (const auto& mask : {pad_mask, causal_mask}) {
    const auto x = torch::randn({2, 6, 32}, torch::requires_grad());
    const auto x2 = x.detach().clone().requires_grad_();
    const auto a = plain->forward_self(x, mask), b = fused->forward_self(x2, mask);
    EXPECT_TRUE(torch::allclose(a, b, 1e-5, 1e-5)) << (a - b).abs().max();
    a.pow(2).sum().backward();
    b.pow(2).sum().backward();
    EXPECT_TRUE(torch::allclose(x.grad(), x2.grad(), 1e-4, 1e-5));
    const auto wa = plain->parameters(), wb = fused->parameters();
    for (size_t i = 0; i < wa.size(); ++i)
      EXPECT_TRUE(torch::allclose(wa[i].grad(), wb[i].grad(), 1e-4, 1e-5)) << "parameter " << i;
  }
}

TEST(AttentionKernels, TheEncoderDecoderGivesTheSameLogits) {
  if (!kHasFusedAttention) GTEST_SKIP() << "fused attention needs LibTorch >= 2.0";
  model::ModelConfig c;
  c.src_vocab = c.tgt_vocab = 19;
  c.d_model = 32, c.heads = 4, c.d_ff = 64, c.encoder_layers = c.decoder_layers = 2;
  c.dropout = 0.0, c.max_positions = 16;
  torch::manual_seed(7);
  model::EncoderDecoder plain(c);
  c.attention = AttentionKernel::kFused;
  model::EncoderDecoder fused(c);
  copy_parameters(plain, fused);
  const auto src = torch::tensor({{4, 5, 6, 7, 3}, {4, 9, 3, 0, 0}});
  const auto tgt = torch::tensor({{1, 8, 9, 10}, {1, 11, 0, 0}});
  const auto src_mask = model::make_src_mask(src, 0), tgt_mask = model::make_tgt_mask(tgt, 0);
  const auto a = plain->logits(src, tgt, src_mask, tgt_mask);
  const auto b = fused->logits(src, tgt, src_mask, tgt_mask);
  EXPECT_TRUE(torch::allclose(a, b, 1e-4, 1e-5)) << (a - b).abs().max();
}

// The model of these tests, with one attention kernel or the other, same weights.
struct TwoKernels {
  model::EncoderDecoder plain{nullptr}, fused{nullptr};
};
TwoKernels two_kernels() {
  model::ModelConfig c;
  c.src_vocab = c.tgt_vocab = 19;
  c.d_model = 32, c.heads = 4, c.d_ff = 64, c.encoder_layers = c.decoder_layers = 2;
  c.dropout = 0.0, c.max_positions = 16;
  torch::manual_seed(7);
  TwoKernels m{model::EncoderDecoder(c), nullptr};
  c.attention = AttentionKernel::kFused;
  m.fused = model::EncoderDecoder(c);
  copy_parameters(m.plain, m.fused);
  return m;
}

// Training's masks (a causal target mask without the target's padding; no
// source mask for an unpadded batch) give, at every real target position,
// the logits of the Annotated Transformer's boolean masks, with either kernel.
TEST(AttentionKernels, TrainingMasksGiveTheAnnotatedTransformersLogits) {
  if (!kHasFusedAttention) GTEST_SKIP() << "fused attention needs LibTorch >= 2.0";
  auto m = two_kernels();
  const auto tgt = torch::tensor({{1, 8, 9, 10}, {1, 11, 0, 0}});
  const auto real = (tgt != 0).unsqueeze(-1);  // [B, T, 1]
  for (const bool padded : {true, false}) {
    const auto src = padded ? torch::tensor({{4, 5, 6, 7, 3}, {4, 9, 3, 0, 0}})
                            : torch::tensor({{4, 5, 6, 7, 3}, {4, 9, 12, 13, 3}});
    const auto annotated =
        m.plain->logits(src, tgt, model::make_src_mask(src, 0), model::make_tgt_mask(tgt, 0));
    const auto src_mask = model::source_mask(src, 0, padded);
    EXPECT_EQ(src_mask.empty(), !padded);
    for (auto* kernel : {&m.plain, &m.fused}) {
      const auto logits = (*kernel)->logits(src, tgt, src_mask, model::target_mask());
      const auto diff = (logits - annotated).masked_fill(real.logical_not(), 0).abs().max();
      // The explicit kernel computes every real position from the same
      // numbers as before (only the pad rows' keys differ): bitwise equal.
      const double tolerance = kernel == &m.plain ? 0.0 : 1e-4;
      EXPECT_LE(diff.item<double>(), tolerance)
          << (kernel == &m.plain ? "explicit" : "fused")
          << (padded ? ", padded source" : ", unpadded source");
    }
  }
}

// Incremental decoding (decoder_cache.h: the self-attention of one new
// position over the cache, no mask) runs through the fused kernel and gives
// the explicit one's hidden states.
TEST(AttentionKernels, IncrementalDecodingAgrees) {
  if (!kHasFusedAttention) GTEST_SKIP() << "fused attention needs LibTorch >= 2.0";
  auto m = two_kernels();
  m.plain->eval(), m.fused->eval();
  torch::NoGradGuard no_grad;
  const auto src = torch::tensor({{4, 5, 6, 7, 3}, {4, 9, 3, 0, 0}});
  const model::AttentionMask src_mask(model::make_src_mask(src, 0));
  auto plain_cache = m.plain->start_decoding(m.plain->encode(src, src_mask));
  auto fused_cache = m.fused->start_decoding(m.fused->encode(src, src_mask));
  for (const int64_t token : {1, 8, 9}) {
    const auto tokens = torch::full({2, 1}, token, torch::kLong);
    const auto a = m.plain->decode_step(tokens, src_mask, plain_cache);
    const auto b = m.fused->decode_step(tokens, src_mask, fused_cache);
    EXPECT_TRUE(torch::allclose(a, b, 1e-4, 1e-5)) << (a - b).abs().max();
  }
}

}  // namespace
