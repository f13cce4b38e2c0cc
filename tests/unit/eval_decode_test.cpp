// Greedy decoding and beam search against hand-computed answers and brute
// force, on a bigram "model" whose next-token table is set by hand; beam 1
// against greedy on a Transformer; a batch decoded by two threads against one;
// the Transformer's incremental decoding against its full forward pass.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <vector>

#include "small_model_config.h"
#include "trainer/eval/beam_search.h"
#include "trainer/eval/decode.h"
#include "trainer/eval/greedy_decode.h"
#include "trainer/eval/top_k.h"
#include "trainer/model/masks.h"

namespace {

constexpr int64_t kPad = 0, kBos = 1, kEos = 2, kA = 3, kB = 4, kC = 5, kVocab = 6;

// p(next | last token) from a table [V, V]: the smallest model with hand-set
// weights (its "weights" are the table).
class BigramState : public eval::DecoderState {
 public:
  explicit BigramState(torch::Tensor probs) : log_table_(probs.log()) {}
  torch::Tensor next_logits(const torch::Tensor& prefixes) override {
    return log_table_.index_select(0, prefixes.select(1, -1));  // [N, V]
  }
  void select(const torch::Tensor& sources, const torch::Tensor& rows) override {}

 private:
  torch::Tensor log_table_;
};

// Rows: last token; columns: next token. Unlisted entries are 0 (log = -inf).
torch::Tensor table(const std::vector<std::tuple<int64_t, int64_t, double>>& entries) {
  auto t = torch::zeros({kVocab, kVocab}, torch::kFloat);
  for (const auto& [from, to, p] : entries) t[from][to] = p;
  return t;
}

// Greedy takes a (0.5), then c (0.4), then eos (0.9): p = 0.18. The best
// sequence is b eos: p = 0.4 × 0.95 = 0.38.
torch::Tensor greedy_trap() {
  return table({{kBos, kA, 0.5},
                {kBos, kB, 0.4},
                {kBos, kEos, 0.1},
                {kA, kC, 0.4},
                {kA, kEos, 0.35},
                {kA, kB, 0.25},
                {kB, kEos, 0.95},
                {kB, kC, 0.05},
                {kC, kEos, 0.9},
                {kC, kA, 0.1}});
}

TEST(GreedyDecode, FollowsTheLocallyBestToken) {
  BigramState state(greedy_trap());
  const auto out = eval::greedy_decode(state, {10}, kBos, kEos);
  EXPECT_EQ(out[0], (std::vector<int32_t>{kA, kC}));
}

TEST(BeamSearch, FindsTheBestSequenceThatGreedyMisses) {
  BigramState state(greedy_trap());
  eval::BeamOptions options;
  options.beam = 2;
  options.length_penalty = 0;
  const auto best = eval::beam_search(state, {10}, kBos, kEos, options);
  EXPECT_EQ(best[0].tokens, (std::vector<int32_t>{kB}));
  EXPECT_NEAR(best[0].log_prob, std::log(0.4 * 0.95), 1e-6);
  EXPECT_NEAR(best[0].score, best[0].log_prob, 1e-12);  // α = 0: lp = 1
}

// K = 2. Step 1 ranks the extensions a c (0.42), a eos (0.21), b eos (0.18),
// b c (0.12): "a eos" is among the 2 best and finishes; "b eos" is not and is
// dropped, so the sentence goes on with a c and b c, and step 2 finds
// a c eos (0.378). Counting "b eos" too would end the sentence at step 1 with
// 2 finished and answer "a" (0.21). fairseq and transformers count the same.
TEST(BeamSearch, OnlyEosAmongTheKBestFinishes) {
  BigramState state(table({{kBos, kA, 0.7},
                           {kBos, kB, 0.3},
                           {kA, kC, 0.6},
                           {kA, kEos, 0.3},
                           {kA, kB, 0.1},
                           {kB, kEos, 0.6},
                           {kB, kC, 0.4},
                           {kC, kEos, 0.9},
                           {kC, kA, 0.1}}));
  eval::BeamOptions options;
  options.beam = 2;
  options.length_penalty = 0;
  const auto best = eval::beam_search(state, {10}, kBos, kEos, options);
  EXPECT_EQ(best[0].tokens, (std::vector<int32_t>{kA, kC}));
  EXPECT_NEAR(best[0].log_prob, std::log(0.7 * 0.6 * 0.9), 1e-6);
}

TEST(BeamSearch, GnmtLengthPenaltyByHand) {
  // lp(|Y|) = ((5 + |Y|) / 6)^α
  EXPECT_NEAR(eval::gnmt_length_penalty(1, 0.6), 1.0, 1e-12);
  EXPECT_NEAR(eval::gnmt_length_penalty(7, 0.6), std::pow(2.0, 0.6), 1e-12);
  EXPECT_NEAR(eval::gnmt_length_penalty(19, 1.0), 4.0, 1e-12);
}

TEST(BeamSearch, LengthPenaltyPrefersTheLongerHypothesis) {
  // "eos": p = 0.45 (|Y| = 1); "a eos": p = 0.3 (|Y| = 2); "b c eos": p = 0.25 (|Y| = 3).
  const auto p = table({{kBos, kEos, 0.45},
                        {kBos, kA, 0.3},
                        {kBos, kB, 0.25},
                        {kA, kEos, 1.0},
                        {kB, kC, 1.0},
                        {kC, kEos, 1.0}});
  eval::BeamOptions options;
  options.beam = 3;
  for (double alpha : {0.0, 2.0}) {
    BigramState state(p);
    options.length_penalty = alpha;
    const auto best = eval::beam_search(state, {5}, kBos, kEos, options);
    // Scores by hand: log p / ((5 + |Y|) / 6)^α for eos (|Y|=1), a eos (2), b c eos (3).
    const double empty = std::log(0.45) / std::pow(6.0 / 6.0, alpha);
    const double a = std::log(0.3) / std::pow(7.0 / 6.0, alpha);
    const double bc = std::log(0.25) / std::pow(8.0 / 6.0, alpha);
    const double expected = std::max({empty, a, bc});
    EXPECT_NEAR(best[0].score, expected, 1e-6) << "alpha " << alpha;
    if (alpha == 0.0)
      EXPECT_TRUE(best[0].tokens.empty());
    else
      EXPECT_EQ(best[0].tokens, (std::vector<int32_t>{kB, kC}));
  }
}

// Every sequence of at most max_len tokens, by brute force: the best score.
double exhaustive_best(const torch::Tensor& probs, int64_t max_len, double alpha) {
  double best = -INFINITY;
  std::function<void(int64_t, int64_t, double)> extend = [&](int64_t last, int64_t length,
                                                             double lp) {
    for (int64_t next = 0; next < kVocab; ++next) {
      const double p = probs[last][next].item<double>();
      if (p == 0) continue;
      const double log_prob = lp + std::log(p);
      if (next == kEos || length + 1 == max_len)
        best = std::max(best, log_prob / eval::gnmt_length_penalty(length + 1, alpha));
      if (next != kEos && length + 1 < max_len) extend(next, length + 1, log_prob);
    }
  };
  extend(kBos, 0, 0.0);
  return best;
}

TEST(BeamSearch, WideBeamEqualsExhaustiveSearch) {
  torch::manual_seed(7);
  for (int trial = 0; trial < 5; ++trial) {
    auto probs = torch::rand({kVocab, kVocab}, torch::kDouble);
    probs.select(1, kPad).zero_();
    probs.select(1, kBos).zero_();
    probs = (probs / probs.sum(1, true)).to(torch::kFloat);
    for (double alpha : {0.0, 0.6, 1.5}) {
      BigramState state(probs);
      eval::BeamOptions options;
      options.beam = 64;  // more than the 3^3 live prefixes: nothing is pruned
      options.length_penalty = alpha;
      const auto best = eval::beam_search(state, {4}, kBos, kEos, options);
      EXPECT_NEAR(best[0].score, exhaustive_best(probs.to(torch::kDouble), 4, alpha), 1e-5)
          << "trial " << trial << " alpha " << alpha;
    }
  }
}

TEST(BeamSearch, StopsAtMaxLenWithLiveHypotheses) {
  // eos is never likely: every hypothesis is cut at max_len.
  const auto probs = table({{kBos, kA, 1.0}, {kA, kA, 1.0}});
  BigramState state(probs);
  eval::BeamOptions options;
  options.beam = 2;
  const auto best = eval::beam_search(state, {3}, kBos, kEos, options);
  EXPECT_EQ(best[0].tokens, (std::vector<int32_t>{kA, kA, kA}));
}

TEST(BeamSearch, SentencesOfABatchDecodeAsIfAlone) {
  // Finished sentences leave the batch and rows are reordered: each answer
  // must still be the one its sentence gets on its own.
  torch::manual_seed(5);
  auto probs = torch::rand({kVocab, kVocab});
  probs.select(1, kPad).zero_();
  probs.select(1, kBos).zero_();
  probs /= probs.sum(1, true);
  const std::vector<int64_t> max_lens = {1, 6, 3, 9, 2};
  eval::BeamOptions options;
  options.beam = 3;
  BigramState batched(probs);
  const auto together = eval::beam_search(batched, max_lens, kBos, kEos, options);
  for (size_t b = 0; b < max_lens.size(); ++b) {
    BigramState alone_state(probs);
    const auto alone = eval::beam_search(alone_state, {max_lens[b]}, kBos, kEos, options);
    EXPECT_EQ(together[b].tokens, alone[0].tokens) << "sentence " << b;
    EXPECT_DOUBLE_EQ(together[b].score, alone[0].score) << "sentence " << b;
  }
}

TEST(TopK, EqualsLibTorchsTopkAndPutsTheLowerOfEqualValuesFirst) {
  // Random rows, rows of many ties and rows mostly -inf; LibTorch's topk the reference.
  torch::manual_seed(5);
  auto x = torch::randn({37, 1001});
  x.slice(0, 20, 30) = torch::randint(0, 4, {10, 1001}).to(torch::kFloat);  // ties
  x.slice(0, 30).masked_fill_(torch::rand({7, 1001}) < 0.995, -INFINITY);   // mostly -inf
  for (int64_t k : {1, 8, 1001}) {
    const auto [values, indices] = eval::top_k(x, k);
    EXPECT_TRUE(values.equal(std::get<0>(x.topk(k, 1)))) << "k = " << k;
    EXPECT_TRUE(x.gather(1, indices).equal(values)) << "k = " << k;  // each index holds its value
    const auto sorted = std::get<0>(indices.sort(1));                // no index twice in a row
    EXPECT_TRUE((sorted.slice(1, 1) > sorted.slice(1, 0, -1)).all().item<bool>()) << "k = " << k;
    // Of equal values, the lower index first.
    const auto same = values.slice(1, 1) == values.slice(1, 0, -1);
    EXPECT_TRUE((indices.slice(1, 1) > indices.slice(1, 0, -1))
                    .logical_or(same.logical_not())
                    .all()
                    .item<bool>())
        << "k = " << k;
  }
  const auto hand = torch::tensor({{2.f, 5.f, 5.f, 1.f, 5.f}});
  EXPECT_TRUE(std::get<1>(eval::top_k(hand, 2)).equal(torch::tensor({{1L, 2L}})));
  EXPECT_THROW(eval::top_k(hand, 6), c10::Error);
}

TEST(TopK, LogProbsOfTheBestLogitsEqualLibTorchsLogSoftmaxThenTopk) {
  // Logits of a 5003-token vocabulary: ordinary, spread wide (most of a row's
  // exp below e^-87), with -inf entries; odd V so that the vectorised sum has a tail.
  torch::manual_seed(7);
  auto logits = torch::randn({12, 5003}) * 3;
  logits.slice(0, 4, 8) *= 40;
  logits.slice(0, 8).masked_fill_(torch::rand({4, 5003}) < 0.5, -INFINITY);
  for (int64_t k : {1, 8}) {
    const auto [log_probs, tokens] = eval::top_k_log_probs(logits, k);
    const auto [ref_log_probs, ref_tokens] = torch::log_softmax(logits, -1).topk(k, 1);
    EXPECT_TRUE(tokens.equal(ref_tokens)) << "k = " << k;
    EXPECT_LE((log_probs - ref_log_probs).abs().max().item<double>(), 2e-6) << "k = " << k;
  }
}

model::ModelConfig tiny_config() { return small_model_config(17, 17); }

// `count` random sources of lengths shortest, shortest + 1, ... tokens, eos
// last, right-padded -> [count, shortest + count].
torch::Tensor padded_sources(int64_t count, int64_t shortest) {
  auto src = torch::full({count, shortest + count}, kPad, torch::kLong);
  for (int64_t b = 0; b < count; ++b) {
    src[b].slice(0, 0, shortest + b) = torch::randint(3, 17, {shortest + b}, torch::kLong);
    src[b][shortest + b] = kEos;
  }
  return src;
}

TEST(BeamSearch, BeamOneEqualsGreedyOnATransformer) {
  torch::manual_seed(11);
  model::EncoderDecoder model(tiny_config());
  model->eval();
  const auto src = padded_sources(6, 3);                        // lengths 3..8
  const std::vector<int64_t> max_lens = {5, 20, 7, 20, 9, 20};  // some hypotheses are cut
  eval::TransformerDecoderState greedy_state(model, src);
  const auto greedy = eval::greedy_decode(greedy_state, max_lens, kBos, kEos);
  eval::TransformerDecoderState beam_state(model, src);
  eval::BeamOptions options;
  options.beam = 1;
  const auto beam = eval::beam_search(beam_state, max_lens, kBos, kEos, options);
  int64_t tokens = 0;
  for (int64_t b = 0; b < 6; ++b) {
    EXPECT_EQ(beam[b].tokens, greedy[b]) << "sentence " << b;
    EXPECT_LE(static_cast<int64_t>(greedy[b].size()), max_lens[b]);
    tokens += static_cast<int64_t>(greedy[b].size());
  }
  EXPECT_GT(tokens, 6);  // not a trivial all-empty comparison
}

TEST(BeamSearch, ATransformersSentencesDecodeTogetherAsAlone) {
  // Sentences leave the batch at different steps (their limits), so that the
  // decoder state's sources and rows are chosen anew while others go on.
  torch::manual_seed(17);
  model::EncoderDecoder model(tiny_config());
  model->eval();
  const auto src = padded_sources(4, 4);  // lengths 4..7
  const std::vector<int64_t> max_lens = {3, 9, 5, 9};
  eval::BeamOptions options;
  options.beam = 3;
  eval::TransformerDecoderState state(model, src);
  const auto together = eval::beam_search(state, max_lens, kBos, kEos, options);
  for (int64_t b = 0; b < 4; ++b) {
    eval::TransformerDecoderState alone_state(model, src.slice(0, b, b + 1));
    const auto alone = eval::beam_search(alone_state, {max_lens[b]}, kBos, kEos, options);
    EXPECT_EQ(together[b].tokens, alone[0].tokens) << "sentence " << b;
    EXPECT_NEAR(together[b].score, alone[0].score, 1e-4) << "sentence " << b;
  }
}

TEST(DecodeBatch, TwoThreadsDecodeAsOne) {
  // With 2 LibTorch threads decode_batch splits a small model's rows over two
  // threads (rows_in_parallel.h); with 1 the whole batch runs in this one.
  torch::manual_seed(19);
  model::EncoderDecoder model(tiny_config());
  model->eval();
  const auto src = padded_sources(7, 2);  // lengths 2..8
  const int threads = torch::get_num_threads();
  for (const int64_t beam : {1, 3}) {
    eval::DecodeOptions options;
    options.beam = beam;
    options.max_extra_len = 6;
    torch::set_num_threads(1);
    const auto alone = eval::decode_batch(model, src, data::SpecialIds{}, options);
    torch::set_num_threads(2);
    const auto split = eval::decode_batch(model, src, data::SpecialIds{}, options);
    EXPECT_EQ(torch::get_num_threads(), 2);
    ASSERT_EQ(split.size(), 7u);
    int64_t tokens = 0;
    for (int64_t b = 0; b < 7; ++b) {
      EXPECT_EQ(split[b], alone[b]) << "beam " << beam << ", sentence " << b;
      tokens += static_cast<int64_t>(alone[b].size());
    }
    EXPECT_GT(tokens, 7) << "beam " << beam;  // not a trivial all-empty comparison
  }
  torch::set_num_threads(threads);
}

TEST(TransformerDecoderState, IncrementalStepsEqualTheFullForward) {
  // The reference: the model's teacher-forced forward over the whole prefix.
  torch::manual_seed(13);
  for (auto norm : {model::NormPlacement::kPre, model::NormPlacement::kPost}) {
    auto config = tiny_config();
    config.norm = norm;
    model::EncoderDecoder model(config);
    model->eval();
    auto src = torch::randint(3, 17, {4, 7}, torch::kLong);
    src.select(1, 6).fill_(kEos);
    src[2].slice(0, 4) = kPad;  // a padded source
    src[2][3] = kEos;
    auto prefixes = torch::cat(
        {torch::full({4, 1}, kBos, torch::kLong), torch::randint(3, 17, {4, 8}, torch::kLong)},
        1);  // [4, 9]
    eval::TransformerDecoderState state(model, src);
    // As beam search does: a source dropped and each kept one in two rows
    // (t = 3), then rows reordered and repeated, and another source dropped
    // (t = 6); the rows' tokens after t made different. `src` is each row's source.
    const auto select = [&](int64_t t, std::vector<int64_t> sources, std::vector<int64_t> rows) {
      const auto kept = torch::tensor(rows, torch::kLong);
      state.select(torch::tensor(sources, torch::kLong), kept);
      src = src.index_select(0, kept);
      prefixes = prefixes.index_select(0, kept);
      prefixes.slice(1, t) = torch::randint(3, 17, prefixes.slice(1, t).sizes(), torch::kLong);
    };
    for (int64_t t = 1; t <= 9; ++t) {
      if (t == 3) select(t, {0, 2, 3}, {0, 0, 2, 2, 3, 3});
      if (t == 6) select(t, {0, 2}, {1, 0, 5, 5});  // the rows of sources 0 and 3
      const auto prefix = prefixes.slice(1, 0, t);
      const auto step = torch::log_softmax(state.next_logits(prefix), -1);  // [N, V]
      const auto full = model
                            ->forward(src, prefix, model::make_src_mask(src, kPad),
                                      model::make_tgt_mask(prefix, kPad))
                            .select(1, -1);
      EXPECT_LE((step - full).abs().max().item<double>(), 1e-5) << "t = " << t;
    }
    EXPECT_THROW(state.next_logits(prefixes.slice(1, 0, 3)), std::logic_error);
  }
}

}  // namespace
