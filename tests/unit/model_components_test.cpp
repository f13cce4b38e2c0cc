// The small components, each against values written out or computed here:
// masks, positional encoding, embeddings, feed-forward, sublayer, generator.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "trainer/model/attention.h"
#include "trainer/model/embeddings.h"
#include "trainer/model/feed_forward.h"
#include "trainer/model/generator.h"
#include "trainer/model/masks.h"
#include "trainer/model/positional_encoding.h"
#include "trainer/model/sublayer.h"

namespace {

torch::Tensor bools(std::initializer_list<int> values) {
  return torch::tensor(std::vector<int>(values)).to(torch::kBool);
}

TEST(Masks, SourceMaskHidesPadding) {
  auto src = torch::tensor({5, 3, 0, 0, 7, 0, 0, 0}, torch::kLong).view({2, 4});
  auto mask = model::make_src_mask(src, 0);
  EXPECT_EQ(mask.dtype(), torch::kBool);
  EXPECT_EQ(mask.sizes(), torch::IntArrayRef({2, 1, 1, 4}));
  EXPECT_TRUE(torch::equal(mask.view({2, 4}), bools({1, 1, 0, 0, 1, 0, 0, 0}).view({2, 4})));
}

TEST(Masks, SubsequentMaskIsLowerTriangular) {
  auto mask = model::subsequent_mask(3);
  EXPECT_EQ(mask.sizes(), torch::IntArrayRef({1, 1, 3, 3}));
  EXPECT_TRUE(torch::equal(mask.view({3, 3}), bools({1, 0, 0,  //
                                                     1, 1, 0,  //
                                                     1, 1, 1})
                                                  .view({3, 3})));
}

TEST(Masks, TargetMaskCombinesPaddingAndFuture) {
  auto tgt = torch::tensor({4, 6, 0}, torch::kLong).view({1, 3});
  auto mask = model::make_tgt_mask(tgt, 0);
  EXPECT_EQ(mask.sizes(), torch::IntArrayRef({1, 1, 3, 3}));
  EXPECT_TRUE(torch::equal(mask.view({3, 3}), bools({1, 0, 0,  //
                                                     1, 1, 0,  //
                                                     1, 1, 0})
                                                  .view({3, 3})));
}

TEST(PositionalEncoding, MatchesSinusoidsComputedByHand) {
  const int64_t d_model = 8;
  model::PositionalEncoding pe(d_model, 0.0, 64);
  auto table = pe(torch::zeros({1, 64, d_model})).squeeze(0);  // PE itself: x = 0
  for (int pos : {0, 1, 5, 63}) {
    for (int i = 0; i < d_model / 2; ++i) {
      const double angle = pos / std::pow(10000.0, 2.0 * i / d_model);
      EXPECT_NEAR(table[pos][2 * i].item<double>(), std::sin(angle), 1e-6)
          << "pos " << pos << " i " << i;
      EXPECT_NEAR(table[pos][2 * i + 1].item<double>(), std::cos(angle), 1e-6)
          << "pos " << pos << " i " << i;
    }
  }
}

TEST(PositionalEncoding, AddsToEveryBatchRowAndKeepsDtype) {
  model::PositionalEncoding pe(6, 0.0, 16);
  auto x = torch::randn({3, 5, 6}, torch::kDouble);
  auto y = pe(x);
  EXPECT_EQ(y.dtype(), torch::kDouble);
  auto added = y - x;
  EXPECT_TRUE(torch::allclose(added[0], added[2]));
  EXPECT_NEAR(added[1][3][1].item<double>(), std::cos(3.0), 1e-6);
}

TEST(PositionalEncoding, SequenceLongerThanMaxPositionsIsAClearError) {
  model::PositionalEncoding pe(4, 0.0, 10);
  try {
    pe(torch::zeros({1, 11, 4}));
    FAIL() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("max_positions = 10"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("length 11"), std::string::npos) << e.what();
  }
}

TEST(PositionalEncoding, IsNotPartOfTheSavedState) {
  model::PositionalEncoding pe(4, 0.1, 10);
  EXPECT_TRUE(pe->parameters().empty());
  EXPECT_TRUE(pe->buffers().empty());
}

TEST(Embeddings, LookUpScaledBySqrtDModel) {
  model::Embeddings embed(11, 9);
  auto tokens = torch::tensor({3, 0, 10}, torch::kLong).view({1, 3});
  auto out = embed(tokens);
  EXPECT_EQ(out.sizes(), torch::IntArrayRef({1, 3, 9}));
  EXPECT_TRUE(torch::allclose(out[0][2], embed->weight()[10] * 3.0));
  EXPECT_TRUE(torch::allclose(out[0][0], embed->weight()[3] * 3.0));
}

TEST(FeedForward, IsReluBetweenTwoAffineMaps) {
  model::PositionwiseFeedForward ffn(4, 10, 0.0);
  auto params = ffn->named_parameters();
  auto x = torch::randn({2, 3, 4});
  auto hidden = torch::clamp_min(x.matmul(params["w_1.weight"].t()) + params["w_1.bias"], 0.0);
  auto expected = hidden.matmul(params["w_2.weight"].t()) + params["w_2.bias"];
  EXPECT_TRUE(torch::allclose(ffn(x), expected, 1e-5, 1e-6));
}

TEST(Attention, MaskedScoresStayFiniteInBFloat16) {
  model::MultiHeadedAttention attention(8, 2, 0.0);
  attention->to(torch::kBFloat16);
  auto x = torch::randn({2, 3, 8}).to(torch::kBFloat16);
  auto mask = bools({1, 1, 0, 0, 0, 0}).view({2, 1, 1, 3});  // row 1: all masked
  auto out = attention->forward_self(x, mask);
  EXPECT_EQ(out.dtype(), torch::kBFloat16);
  EXPECT_TRUE(torch::isfinite(out).all().item<bool>());
}

model::ModelConfig sublayer_config(model::NormPlacement norm) {
  model::ModelConfig c;
  c.d_model = 6;
  c.dropout = 0.0;
  c.layer_norm_eps = 1e-6;
  c.norm = norm;
  return c;
}

// LayerNorm with unit gain and zero bias, written out.
torch::Tensor normalise(const torch::Tensor& x) {
  auto mean = x.mean(-1, true);
  auto var = (x - mean).pow(2).mean(-1, true);
  return (x - mean) / torch::sqrt(var + 1e-6);
}

TEST(SublayerConnection, PostNormIsNormOfResidualSum) {
  model::SublayerConnection sublayer(sublayer_config(model::NormPlacement::kPost));
  auto x = torch::randn({2, 3, 6});
  auto f = [](const torch::Tensor& y) { return 2.0 * y + 1.0; };
  EXPECT_TRUE(torch::allclose(sublayer(x, f), normalise(x + f(x)), 1e-5, 1e-5));
}

TEST(SublayerConnection, PreNormAddsSublayerOfNorm) {
  model::SublayerConnection sublayer(sublayer_config(model::NormPlacement::kPre));
  auto x = torch::randn({2, 3, 6});
  auto f = [](const torch::Tensor& y) { return y.pow(2); };
  EXPECT_TRUE(torch::allclose(sublayer(x, f), x + f(normalise(x)), 1e-5, 1e-5));
}

TEST(SublayerConnection, FinalNormOnlyForPreNorm) {
  EXPECT_FALSE(model::make_final_norm(sublayer_config(model::NormPlacement::kPost)));
  EXPECT_TRUE(model::make_final_norm(sublayer_config(model::NormPlacement::kPre)));
}

TEST(Generator, LogSoftmaxOfAffineMap) {
  model::Generator generator(4, 7);
  auto x = torch::randn({2, 3, 4});
  auto logits = x.matmul(generator->weight().t()) + generator->named_parameters()["bias"];
  EXPECT_TRUE(torch::allclose(generator->logits(x), logits, 1e-5, 1e-6));
  auto log_probs = generator(x);
  EXPECT_TRUE(torch::allclose(log_probs, logits - logits.exp().sum(-1, true).log(), 1e-5, 1e-6));
}

TEST(Generator, LogSoftmaxIsFloat32ForBFloat16Input) {
  model::Generator generator(4, 7);
  generator->to(torch::kBFloat16);
  auto log_probs = generator(torch::randn({2, 3, 4}).to(torch::kBFloat16));
  EXPECT_EQ(log_probs.dtype(), torch::kFloat32);
  EXPECT_TRUE(torch::allclose(log_probs.exp().sum(-1), torch::ones({2, 3}), 0.0, 1e-5));
}

TEST(Generator, TiedWeightIsTheGivenTensorAndNotRegistered) {
  model::Embeddings embed(7, 4);
  model::Generator generator(4, 7, embed->weight());
  EXPECT_TRUE(generator->weight().is_same(embed->weight()));
  EXPECT_EQ(generator->named_parameters().keys(), std::vector<std::string>({"bias"}));
  EXPECT_THROW(model::Generator(4, 8, embed->weight()), c10::Error);
}

}  // namespace
