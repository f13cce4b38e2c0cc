#include "data_pipeline/prepare/tokenizers.h"

#include <set>
#include <stdexcept>
#include <string_view>

#include "data_pipeline/make_tokenizer.h"
#include "data_pipeline/prepare/sentencepiece_tokenizer.h"
#include "data_pipeline/prepare/synthetic.h"
#include "data_pipeline/random.h"
#include "data_pipeline/vocab_tokenizer.h"

namespace data {

namespace {

// Up to `limit` of the kept training pairs, a uniform sample (reservoir,
// seeded) when there are more: what tokenizers are trained on, so that
// memory stays bounded however large the corpus.
ParallelText sample_pairs(const PairSource& train, int64_t limit, uint64_t seed) {
  ParallelText sample;
  Rng rng(mix_seed(seed, 0x5a3b1e));
  int64_t seen = 0;
  CleaningReport ignored;
  train.read(0, train.size(), ignored, [&](SentencePair& pair) {
    ++seen;
    if (static_cast<int64_t>(sample.src.size()) < limit) {
      sample.src.push_back(std::move(pair.src));
      sample.tgt.push_back(std::move(pair.tgt));
      return;
    }
    const auto slot = static_cast<int64_t>(rng.below(static_cast<uint64_t>(seen)));
    if (slot < limit) {
      sample.src[slot] = std::move(pair.src);
      sample.tgt[slot] = std::move(pair.tgt);
    }
  });
  if (sample.src.empty()) throw std::runtime_error("no training pair is left after cleaning");
  return sample;
}

}  // namespace

bool joint_tokenizer(const PrepareOptions& options) {
  return is_synthetic_task(options.task) || is_classification_task(options.task) ||
         options.joint_vocab || !options.spm_model.empty();
}

Tokenizers make_tokenizers(const PrepareOptions& options, const PairSource& train_pairs) {
  if (is_synthetic_task(options.task)) {
    auto symbols = std::make_shared<VocabTokenizer>(
        VocabTokenizer::Unit::kWord, Vocab(synthetic_symbols(options.synthetic.symbols)));
    return {symbols, symbols};
  }
  if (options.tokenizer == TokenizerKind::kSentencePiece && !options.spm_model.empty()) {
    std::shared_ptr<Tokenizer> given = SentencePieceTokenizer::load(options.spm_model);
    return {given, given};
  }
  const ParallelText train = sample_pairs(train_pairs, options.tokenizer_sample, options.seed);
  const auto train_on = [&](std::vector<const std::vector<std::string>*> sides) {
    std::vector<std::string_view> text;
    for (const auto* lines : sides) text.insert(text.end(), lines->begin(), lines->end());
    if (options.tokenizer == TokenizerKind::kSentencePiece)
      return std::shared_ptr<Tokenizer>(SentencePieceTokenizer::train(text, options.spm));
    return std::shared_ptr<Tokenizer>(train_tokenizer(options.tokenizer, text, options.vocab));
  };
  if (is_classification_task(options.task)) {  // the texts only: targets are labels
    auto texts = train_on({&train.src});
    return {texts, texts};
  }
  if (options.joint_vocab) {
    auto joint = train_on({&train.src, &train.tgt});
    return {joint, joint};
  }
  return {train_on({&train.src}), train_on({&train.tgt})};
}

LabelSet make_labels(const PrepareOptions& options, const PairSource& train) {
  if (is_synthetic_task(options.task))
    return LabelSet(synthetic_symbols(options.synthetic.classes));
  std::set<std::string> names;
  CleaningReport ignored;
  train.read(0, train.size(), ignored, [&](SentencePair& pair) { names.insert(pair.tgt); });
  if (names.size() < 2) {
    throw std::runtime_error("the training split has " + std::to_string(names.size()) +
                             " label(s); classification needs at least 2");
  }
  return LabelSet({names.begin(), names.end()});
}

std::shared_ptr<Tokenizer> load_encoder(TokenizerKind kind, const std::filesystem::path& file) {
  if (kind == TokenizerKind::kSentencePiece) return SentencePieceTokenizer::load(file);
  return load_tokenizer(kind, file);
}

}  // namespace data
