// SentencePiece: training, the project's special ids, round trips through
// both decoders, and agreement with Debian's spm_encode / spm_decode (the
// reference nobody here wrote) on a model trained here; a model made by
// spm_train with its default ids is refused.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "data_pipeline/dataset.h"
#include "data_pipeline/make_tokenizer.h"
#include "data_pipeline/piece_decoder.h"
#include "data_pipeline/prepare/prepare.h"
#include "data_pipeline/prepare/sentencepiece_tokenizer.h"
#include "error_message.h"
#include "run_command.h"
#include "temp_dir_test.h"

namespace {

// Sentences of words drawn (by a fixed LCG) from a list with Latin, German
// and Chinese words: single spaces, no leading or trailing space, so that
// SentencePiece's normalisation leaves them as they are.
std::vector<std::string> corpus(size_t n, uint64_t seed) {
  const std::vector<std::string> words = {"the",   "house", "is",     "small",  "über", "Straße",
                                          "schön", "春风",  "得意",   "马蹄疾", "a",    "river",
                                          "flows", "under", "Brücke", "night",  "月",   "光"};
  std::vector<std::string> lines;
  uint64_t state = seed;
  const auto next = [&] {
    return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33;
  };
  for (size_t i = 0; i < n; ++i) {
    std::string line;
    for (uint64_t w = 0, len = 3 + next() % 8; w < len; ++w)
      line += (w ? " " : "") + words[next() % words.size()];
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::string_view> views(const std::vector<std::string>& lines) {
  return {lines.begin(), lines.end()};
}

void write_lines(const std::filesystem::path& file, const std::vector<std::string>& lines) {
  std::ofstream out(file);
  for (const auto& line : lines) out << line << "\n";
}

// "1 2 3\n4 5\n" -> {{1, 2, 3}, {4, 5}}
std::vector<std::vector<int32_t>> parse_ids(const std::string& text) {
  std::vector<std::vector<int32_t>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream ids(line);
    rows.emplace_back();
    for (int32_t id; ids >> id;) rows.back().push_back(id);
  }
  return rows;
}

class SentencePieceTest : public test_util::TempDirTest {};

TEST_F(SentencePieceTest, TrainsWithTheProjectsSpecialIdsAndRoundTrips) {
  const auto lines = corpus(400, 1);
  for (const auto& [type, model_type] : data::kSpmModelTypeNames) {
    data::SentencePieceOptions options;
    options.model_type = model_type;
    options.vocab_size = 120;
    const auto spm = data::SentencePieceTokenizer::train(views(lines), options);
    EXPECT_LE(spm->vocab_size(), 120);
    spm->save(dir_ / "m.model");
    const data::PieceDecoder decoder(dir_ / "m.vocab");
    ASSERT_EQ(decoder.vocab_size(), spm->vocab_size());
    for (const auto& line : corpus(50, 2)) {  // unseen sentences of the same words
      const auto ids = spm->encode(line);
      EXPECT_EQ(spm->decode(ids), line) << type;
      EXPECT_EQ(decoder.decode(ids), line) << type;
    }
  }
}

TEST_F(SentencePieceTest, DebiansSpmEncodeAndDecodeAgreeWithAModelTrainedHere) {
  data::SentencePieceOptions options;
  options.vocab_size = 150;
  const auto spm = data::SentencePieceTokenizer::train(views(corpus(400, 3)), options);
  spm->save(dir_ / "m.model");
  const auto lines = corpus(40, 4);
  write_lines(dir_ / "in.txt", lines);

  const auto encoded =
      test_util::run_command("spm_encode --model " + (dir_ / "m.model").string() +
                             " --output_format=id < " + (dir_ / "in.txt").string());
  ASSERT_EQ(encoded.status, 0) << encoded.output;
  const auto reference = parse_ids(encoded.output);
  ASSERT_EQ(reference.size(), lines.size());
  std::ofstream ids_file(dir_ / "ids.txt");
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto ids = spm->encode(lines[i]);
    EXPECT_EQ(ids, reference[i]) << lines[i];
    for (size_t k = 0; k < ids.size(); ++k) ids_file << (k ? " " : "") << ids[k];
    ids_file << "\n";
  }
  ids_file.close();

  const auto decoded =
      test_util::run_command("spm_decode --model " + (dir_ / "m.model").string() +
                             " --input_format=id < " + (dir_ / "ids.txt").string());
  ASSERT_EQ(decoded.status, 0) << decoded.output;
  std::istringstream decoded_lines(decoded.output);
  const data::PieceDecoder decoder(dir_ / "m.vocab");
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line;
    ASSERT_TRUE(std::getline(decoded_lines, line));
    EXPECT_EQ(decoder.decode(reference[i]), line);
  }
}

TEST_F(SentencePieceTest, RefusesAModelWithOtherSpecialIds) {
  write_lines(dir_ / "train.txt", corpus(300, 5));
  const auto trained = test_util::run_command(
      "cd " + dir_.string() +
      " && spm_train --input=train.txt --model_prefix=default "
      "--vocab_size=40 --minloglevel=2");  // spm's defaults: unk 0, bos 1, eos 2, no pad
  ASSERT_EQ(trained.status, 0) << trained.output;
  try {
    data::SentencePieceTokenizer::load(dir_ / "default.model");
    FAIL() << "a model with unk = 0 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("default.model: id 0 must be <pad>"), std::string::npos)
        << e.what();
  }
}

// Beyond the default size (8000: an upper bound, a small corpus gives fewer
// pieces), a vocabulary of more pieces than the text has words and characters
// (pieces seen once, long to learn on a large text of rare words: minutes) is
// refused before SentencePiece's work, naming the option and what the text holds.
TEST_F(SentencePieceTest, AVocabularyBeyondTheTextsWordsIsRefusedAtOnce) {
  data::SentencePieceOptions options;
  options.vocab_size = 1000000;
  const auto lines = corpus(400, 1);
  test_util::expect_mentions(
      test_util::error_of([&] { data::SentencePieceTokenizer::train(views(lines), options); }),
      {"--spm-vocab-size 1000000", "18 distinct words", "35 characters", "at most 8000 pieces",
       "--vocab word"});
  options.vocab_size = 8000;
  EXPECT_LE(data::SentencePieceTokenizer::train(views(lines), options)->vocab_size(), 8000);
  options.vocab_size = 8001;
  EXPECT_THROW(data::SentencePieceTokenizer::train(views(lines), options), std::invalid_argument);
}

// prepare_data with --vocab spm: the shards hold spm_encode's ids, and the
// dataset's decoder restores the text.
TEST_F(SentencePieceTest, PreparedDatasetHoldsSpmEncodeIds) {
  const auto src = corpus(200, 6), tgt = corpus(200, 7);
  write_lines(dir_ / "train.src", src);
  write_lines(dir_ / "train.tgt", tgt);
  data::PrepareOptions options;
  options.task = data::Task::kText;
  options.out = dir_ / "data";
  options.text["train"] = {dir_ / "train.src", dir_ / "train.tgt"};
  options.tokenizer = data::TokenizerKind::kSentencePiece;
  options.joint_vocab = true;
  options.spm.vocab_size = 100;
  const data::Manifest manifest = data::prepare_dataset(options);
  EXPECT_EQ(manifest.tokenizer_kind, data::TokenizerKind::kSentencePiece);
  EXPECT_EQ(manifest.src_tokenizer_file, "spm.model");

  const auto encoded =
      test_util::run_command("spm_encode --model " + (dir_ / "data/spm.model").string() +
                             " --output_format=id < " + (dir_ / "train.tgt").string());
  ASSERT_EQ(encoded.status, 0) << encoded.output;
  const auto reference = parse_ids(encoded.output);
  const data::Dataset train(dir_ / "data", "train");
  const auto decoder =
      data::load_tokenizer(data::TokenizerKind::kSentencePiece, dir_ / "data/spm.model");
  ASSERT_EQ(train.size(), static_cast<int64_t>(tgt.size()));
  for (int64_t i = 0; i < train.size(); ++i) {
    const auto example = train.get(i);
    EXPECT_EQ(example.tgt, reference[example.id]);
    EXPECT_EQ(decoder->decode(example.tgt), tgt[example.id]);
  }
}

}  // namespace
