// The whole encoder-decoder: causality, padding, shared and tied weights,
// initialisation, config validation, parameter count (and its estimate from
// the config), saved state, the weights' decoding layout.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "small_model_config.h"
#include "trainer/model/masks.h"
#include "trainer/model/transformer.h"
#include "trainer/model/weight_layout.h"

namespace {

constexpr int64_t kPad = 0;

model::ModelConfig small_config(model::NormPlacement norm = model::NormPlacement::kPre) {
  return small_model_config(13, 11, norm);
}

model::EncoderDecoder eval_model(const model::ModelConfig& config) {
  model::EncoderDecoder m(config);
  m->eval();
  return m;
}

// Non-pad token ids [B, length] below vocab.
torch::Tensor random_tokens(int64_t batch, int64_t length, int64_t vocab) {
  return torch::randint(1, vocab, {batch, length}, torch::kLong);
}

void expect_same(const torch::Tensor& a, const torch::Tensor& b) {
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_LE((a - b).abs().max().item<double>(), 1e-6);
}

const char* name(model::NormPlacement norm) {
  return norm == model::NormPlacement::kPre ? "pre-norm" : "post-norm";
}

constexpr model::NormPlacement kBothNorms[] = {model::NormPlacement::kPre,
                                               model::NormPlacement::kPost};

TEST(EncoderDecoder, DecoderOutputAtTIgnoresLaterTargetTokens) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(3);
  for (auto norm : kBothNorms) {
    SCOPED_TRACE(name(norm));
    auto m = eval_model(small_config(norm));
    auto src = random_tokens(2, 6, 13);
    auto src_mask = model::make_src_mask(src, kPad);
    auto memory = m->encode(src, src_mask);
    auto tgt = random_tokens(2, 7, 11);
    auto hidden = m->decode(memory, src_mask, tgt, model::make_tgt_mask(tgt, kPad));
    for (int64_t t = 0; t < 6; ++t) {
      auto changed = tgt.clone();
      changed.slice(1, t + 1) = random_tokens(2, 7 - t - 1, 11);
      auto changed_hidden =
          m->decode(memory, src_mask, changed, model::make_tgt_mask(changed, kPad));
      expect_same(changed_hidden.slice(1, 0, t + 1), hidden.slice(1, 0, t + 1));
    }
    // ... while a change at t does reach position t.
    auto changed = tgt.clone();
    changed.select(1, 3) = torch::remainder(tgt.select(1, 3), 10) + 1;
    auto changed_hidden = m->decode(memory, src_mask, changed, model::make_tgt_mask(changed, kPad));
    EXPECT_GT((changed_hidden.select(1, 3) - hidden.select(1, 3)).abs().max().item<double>(), 1e-3);
  }
}

TEST(EncoderDecoder, PaddingContentDoesNotReachRealPositions) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(3);
  for (auto norm : kBothNorms) {
    SCOPED_TRACE(name(norm));
    auto m = eval_model(small_config(norm));
    // Row 0 has 4 real source tokens, row 1 has 6; the mask comes from the padded batch.
    auto src = random_tokens(2, 6, 13);
    src[0].slice(0, 4).fill_(kPad);
    auto src_mask = model::make_src_mask(src, kPad);
    auto other = src.clone();
    other[0].slice(0, 4) = random_tokens(1, 2, 13).squeeze(0);  // what sits under the mask changes

    auto memory = m->encode(src, src_mask);
    auto other_memory = m->encode(other, src_mask);
    expect_same(other_memory[0].slice(0, 0, 4), memory[0].slice(0, 0, 4));
    expect_same(other_memory[1], memory[1]);

    auto tgt = random_tokens(2, 5, 11);
    auto tgt_mask = model::make_tgt_mask(tgt, kPad);
    expect_same(m->decode(other_memory, src_mask, tgt, tgt_mask),
                m->decode(memory, src_mask, tgt, tgt_mask));
  }
}

TEST(EncoderDecoder, ForwardGivesFloat32LogProbabilities) {
  auto m = eval_model(small_config());
  auto src = random_tokens(3, 5, 13);
  auto tgt = random_tokens(3, 4, 11);
  auto log_probs = m(src, tgt, model::make_src_mask(src, kPad), model::make_tgt_mask(tgt, kPad));
  EXPECT_EQ(log_probs.sizes(), torch::IntArrayRef({3, 4, 11}));
  EXPECT_EQ(log_probs.dtype(), torch::kFloat32);
  EXPECT_TRUE(torch::allclose(log_probs.exp().sum(-1), torch::ones({3, 4}), 0.0, 1e-5));
}

TEST(EncoderDecoder, DropoutActsOnlyInTraining) {
  auto config = small_config();
  config.dropout = 0.3;
  model::EncoderDecoder m(config);
  auto src = random_tokens(2, 5, 13);
  auto mask = model::make_src_mask(src, kPad);
  EXPECT_FALSE(torch::allclose(m->encode(src, mask), m->encode(src, mask)));
  m->eval();
  EXPECT_TRUE(torch::equal(m->encode(src, mask), m->encode(src, mask)));
}

std::set<std::string> parameter_names(model::EncoderDecoder& m) {
  auto keys = m->named_parameters().keys();
  return {keys.begin(), keys.end()};
}

model::ModelConfig shared_tied_config() {
  auto c = small_config();
  c.tgt_vocab = c.src_vocab;
  c.share_embeddings = true;
  c.tie_output = true;
  return c;
}

TEST(EncoderDecoder, SharedAndTiedWeightsAreOneTensorListedOnce) {
  auto m = eval_model(shared_tied_config());
  auto params = m->named_parameters();
  const auto& table = params["src_embed.lut.weight"];
  EXPECT_TRUE(m->generator()->weight().is_same(table));
  EXPECT_EQ(m->generator()->weight().data_ptr(), table.data_ptr());
  auto names = parameter_names(m);
  EXPECT_EQ(names.count("tgt_embed.lut.weight"), 0u);
  EXPECT_EQ(names.count("generator.weight"), 0u);
  std::set<void*> storages;
  for (const auto& p : m->parameters()) storages.insert(p.data_ptr());
  EXPECT_EQ(storages.size(), params.size());  // no tensor appears twice

  // Target tokens go through the shared table: an update to it shows in decode().
  auto src = random_tokens(1, 4, 13);
  auto mask = model::make_src_mask(src, kPad);
  auto tgt = random_tokens(1, 3, 13);
  auto memory = m->encode(src, mask);
  auto before = m->decode(memory, mask, tgt, model::subsequent_mask(3));
  {
    torch::NoGradGuard no_grad;
    table.mul_(2.0);
  }
  EXPECT_FALSE(torch::allclose(m->decode(memory, mask, tgt, model::subsequent_mask(3)), before));
}

TEST(EncoderDecoder, UnsharedUntiedWeightsAreSeparate) {
  auto m = eval_model(small_config());
  auto names = parameter_names(m);
  EXPECT_EQ(names.count("tgt_embed.lut.weight"), 1u);
  EXPECT_EQ(names.count("generator.weight"), 1u);
  auto params = m->named_parameters();
  EXPECT_NE(params["src_embed.lut.weight"].data_ptr(), params["tgt_embed.lut.weight"].data_ptr());
}

TEST(EncoderDecoder, TyingSurvivesDtypeChange) {
  auto m = eval_model(shared_tied_config());
  m->to(torch::kDouble);
  const auto& table = m->named_parameters()["src_embed.lut.weight"];
  EXPECT_EQ(table.dtype(), torch::kDouble);
  EXPECT_EQ(m->generator()->weight().data_ptr(), table.data_ptr());
  auto src = random_tokens(2, 4, 13);
  auto tgt = random_tokens(2, 3, 13);
  auto log_probs = m(src, tgt, model::make_src_mask(src, kPad), model::make_tgt_mask(tgt, kPad));
  EXPECT_TRUE(torch::isfinite(log_probs).all().item<bool>());
}

TEST(EncoderDecoder, SavedStateRestoresTheSameFunction) {
  torch::manual_seed(1);
  auto saved = eval_model(shared_tied_config());
  std::stringstream stream;
  torch::save(saved, stream);
  torch::manual_seed(2);
  auto loaded = eval_model(shared_tied_config());
  torch::load(loaded, stream);

  auto src = random_tokens(2, 5, 13);
  auto tgt = random_tokens(2, 4, 13);
  auto src_mask = model::make_src_mask(src, kPad);
  auto tgt_mask = model::make_tgt_mask(tgt, kPad);
  EXPECT_TRUE(
      torch::equal(loaded(src, tgt, src_mask, tgt_mask), saved(src, tgt, src_mask, tgt_mask)));
  EXPECT_TRUE(
      loaded->generator()->weight().is_same(loaded->named_parameters()["src_embed.lut.weight"]));
}

TEST(EncoderDecoder, WeightsStoredTransposedKeepValuesTiesAndFunction) {
  for (const auto& config : {shared_tied_config(), small_config(model::NormPlacement::kPost)}) {
    torch::manual_seed(3);
    auto m = eval_model(config);
    auto src = random_tokens(3, 5, 11);
    auto tgt = random_tokens(3, 4, 11);
    auto src_mask = model::make_src_mask(src, kPad);
    auto tgt_mask = model::make_tgt_mask(tgt, kPad);
    const auto before = m(src, tgt, src_mask, tgt_mask);
    std::vector<torch::Tensor> values;
    for (const auto& p : m->parameters()) values.push_back(p.clone());

    model::store_weights_transposed(*m);
    const auto params = m->parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(torch::equal(params[i], values[i])) << "parameter " << i;
      if (params[i].dim() == 2) {
        EXPECT_EQ(params[i].stride(0), 1) << "parameter " << i;
      }
    }
    if (config.tie_output) {
      EXPECT_TRUE(m->generator()->weight().is_same(m->named_parameters()["src_embed.lut.weight"]));
    }
    // The same function, up to the GEMMs' order of summation.
    EXPECT_LE((m(src, tgt, src_mask, tgt_mask) - before).abs().max().item<double>(), 1e-5);
  }
}

TEST(EncoderDecoder, XavierUniformMatricesZeroBiasesUnitGains) {
  auto config = small_config();
  config.d_model = 64;
  config.d_ff = 128;
  config.heads = 8;
  model::EncoderDecoder m(config);
  for (const auto& p : m->named_parameters()) {
    const auto& name = p.key();
    const auto& w = p.value();
    if (w.dim() == 2) {  // fan_in = columns, fan_out = rows
      const double bound = std::sqrt(6.0 / static_cast<double>(w.size(0) + w.size(1)));
      const double largest = w.abs().max().item<double>();
      EXPECT_LE(largest, bound) << name;
      EXPECT_GE(largest, 0.95 * bound) << name;
    } else if (name.find("norm.weight") != std::string::npos) {
      EXPECT_TRUE(torch::all(w == 1).item<bool>()) << name;
    } else {
      EXPECT_TRUE(torch::all(w == 0).item<bool>()) << name << " should be a zero bias";
    }
  }
}

void expect_invalid(const std::function<void(model::ModelConfig&)>& change,
                    const std::string& field) {
  auto config = small_config();
  change(config);
  try {
    model::EncoderDecoder m(config);
    ADD_FAILURE() << "expected std::invalid_argument naming " << field;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(EncoderDecoder, InvalidConfigNamesTheField) {
  using C = model::ModelConfig;
  expect_invalid([](C& c) { c.src_vocab = 0; }, "src_vocab");
  expect_invalid([](C& c) { c.tgt_vocab = -1; }, "tgt_vocab");
  expect_invalid([](C& c) { c.d_model = 0; }, "d_model");
  expect_invalid([](C& c) { c.heads = 0; }, "heads");
  expect_invalid([](C& c) { c.heads = 5; }, "divisible by heads");
  expect_invalid([](C& c) { c.d_ff = 0; }, "d_ff");
  expect_invalid([](C& c) { c.encoder_layers = 0; }, "encoder_layers");
  expect_invalid([](C& c) { c.decoder_layers = -2; }, "decoder_layers");
  expect_invalid([](C& c) { c.dropout = 1.0; }, "dropout");
  expect_invalid([](C& c) { c.dropout = -0.1; }, "dropout");
  expect_invalid([](C& c) { c.layer_norm_eps = 0.0; }, "layer_norm_eps");
  expect_invalid([](C& c) { c.max_positions = 0; }, "max_positions");
  expect_invalid([](C& c) { c.pad_id = 11; }, "pad_id");
  expect_invalid([](C& c) { c.share_embeddings = true; }, "src_vocab = 13 and tgt_vocab = 11");
}

TEST(EncoderDecoder, SequenceLongerThanMaxPositionsIsAClearError) {
  auto m = eval_model(small_config());
  auto src = random_tokens(1, 33, 13);
  EXPECT_THROW(m->encode(src, model::make_src_mask(src, kPad)), std::out_of_range);
}

TEST(EncoderDecoder, PaperBaseParameterCount) {
  model::ModelConfig c;  // d_model 512, 8 heads, d_ff 2048, 6 + 6 layers, pre-norm
  c.src_vocab = c.tgt_vocab = 37000;
  c.share_embeddings = true;
  c.tie_output = true;
  model::EncoderDecoder m(c);
  int64_t count = 0;
  for (const auto& p : m->parameters()) count += p.numel();

  const int64_t D = 512, F = 2048, V = 37000, N = 6;
  const int64_t attention = 4 * (D * D + D);  // W^Q, W^K, W^V, W^O and biases
  const int64_t feed_forward = D * F + F + F * D + D;
  const int64_t layer_norm = 2 * D;
  const int64_t encoder_layer = attention + feed_forward + 2 * layer_norm;
  const int64_t decoder_layer = 2 * attention + feed_forward + 3 * layer_norm;
  const int64_t expected = V * D  // one shared, tied table
                           + N * encoder_layer + N * decoder_layer +
                           2 * layer_norm  // final norms of the pre-norm stacks
                           + V;            // generator bias
  EXPECT_EQ(count, expected);
  EXPECT_NEAR(count / 1e6, 63.1, 0.1);
}

// construction_floats: from the config alone, a lower bound of what building
// the model allocates (its parameters, counted by LibTorch, and the
// positional table), within 1% for paper-base with and without shared tables.
TEST(EncoderDecoder, ConstructionFloatsBoundTheParametersFromBelow) {
  for (const bool shared : {true, false}) {
    model::ModelConfig c;  // paper-base
    c.src_vocab = c.tgt_vocab = 37000;
    c.share_embeddings = c.tie_output = shared;
    model::EncoderDecoder m(c);
    double allocated = static_cast<double>(c.max_positions * c.d_model);
    for (const auto& p : m->parameters()) allocated += static_cast<double>(p.numel());
    const double estimate = model::construction_floats(c);
    EXPECT_LE(estimate, allocated) << "shared " << shared;
    EXPECT_GE(estimate, 0.99 * allocated) << "shared " << shared;
  }
  model::ModelConfig absurd;
  absurd.d_model = absurd.d_ff = int64_t{1} << 20;
  EXPECT_GT(model::construction_floats(absurd), 1e13);  // no overflow
}

}  // namespace
