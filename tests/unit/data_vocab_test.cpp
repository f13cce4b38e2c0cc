// Word and character tokenizers: round trips (Chinese included, spaced
// couplets), unknown tokens, specials, vocabulary limits and the vocabulary
// file; UTF-8 checks.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "data_pipeline/make_tokenizer.h"
#include "data_pipeline/prepare/text_lines.h"
#include "data_pipeline/special_ids.h"
#include "data_pipeline/utf8.h"
#include "data_pipeline/vocab.h"

namespace {

using data::SpecialIds;

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::path(testing::TempDir()) /
         (name + "-" + std::to_string(::getpid()) + ".txt");
}

std::vector<std::string> file_lines(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(DataVocab, WordRoundTripAndUnknown) {
  const std::vector<std::string_view> text = {"the cat sat", "the  dog\tsat", "a cat"};
  const auto words = data::train_tokenizer(data::TokenizerKind::kWord, text, {});
  EXPECT_EQ(words->kind(), data::TokenizerKind::kWord);
  EXPECT_EQ(words->vocab_size(), 4 + 5);  // specials + the cat sat dog a

  const auto ids = words->encode("the dog sat");
  ASSERT_EQ(ids.size(), 3u);
  for (const int32_t id : ids) EXPECT_GE(id, data::kNumSpecialIds);
  EXPECT_EQ(words->decode(ids), "the dog sat");

  const auto unknown = words->encode("the zebra");
  EXPECT_EQ(unknown[1], SpecialIds{}.unk);
  EXPECT_EQ(words->decode(unknown), "the <unk>");
  // Specials are never produced from text, even when spelled out.
  EXPECT_EQ(words->encode("<s>"), std::vector<int32_t>{SpecialIds{}.unk});
}

TEST(DataVocab, CharRoundTripChinese) {
  const std::string poem = "春风得意马蹄疾";
  const std::vector<std::string_view> text = {poem, "一日看尽长安花"};
  const auto chars = data::train_tokenizer(data::TokenizerKind::kChar, text, {});
  EXPECT_EQ(chars->vocab_size(), 4 + 14);

  const auto ids = chars->encode(poem);
  ASSERT_EQ(ids.size(), 7u);  // code points, not bytes
  EXPECT_EQ(chars->decode(ids), poem);
  EXPECT_EQ(chars->encode("春雨"), (std::vector<int32_t>{ids[0], SpecialIds{}.unk}));
  EXPECT_THROW(chars->encode("\xE6\x98"), std::invalid_argument);  // truncated UTF-8
}

// Couplets as the public corpora write them, characters separated by
// spaces: without the spaces (prepare_data --strip-spaces) every character
// is one token, 3- and 4-byte UTF-8 alike, and decoding gives the text back.
TEST(DataVocab, CharRoundTripSpacedCoupletWithoutSpaces) {
  std::string up = "晚 风 摇 树 树 还 挺 ",
              down = "\xF0\xA0\xAE\xB7 日 映 \t 花 花 更 红";  // U+20BB7 𠮷
  data::remove_spaces(up);
  data::remove_spaces(down);
  EXPECT_EQ(up, "晚风摇树树还挺");
  EXPECT_EQ(down, "\xF0\xA0\xAE\xB7日映花花更红");
  const std::vector<std::string_view> text = {up, down};
  const auto chars = data::train_tokenizer(data::TokenizerKind::kChar, text, {});
  EXPECT_EQ(chars->vocab_size(), 4 + 6 + 6);  // 晚风摇树还挺 and 𠮷日映花更红
  for (const auto& line : {up, down}) {
    const auto ids = chars->encode(line);
    EXPECT_EQ(ids.size(), 7u) << line;
    EXPECT_EQ(std::count(ids.begin(), ids.end(), SpecialIds{}.unk), 0) << line;
    EXPECT_EQ(chars->decode(ids), line);
  }
  EXPECT_EQ(chars->encode("树树")[0], chars->encode("树树")[1]);
}

TEST(DataVocab, DecodeStopsAtEosAndSkipsPadAndBos) {
  const std::vector<std::string_view> text = {"a b c"};
  const auto words = data::train_tokenizer(data::TokenizerKind::kWord, text, {});
  const auto abc = words->encode("a b c");
  const SpecialIds special;
  EXPECT_EQ(words->decode({special.bos, abc[0], special.pad, abc[1], special.eos, abc[2]}), "a b");
  EXPECT_THROW(words->decode({99}), std::out_of_range);
}

TEST(DataVocab, MinCountAndMaxSize) {
  const std::vector<std::string_view> text = {"x x x y y z", "w"};
  // Most frequent first, ties in byte order: x(3) y(2) w(1) z(1).
  const auto all = data::train_tokenizer(data::TokenizerKind::kWord, text, {});
  EXPECT_EQ(all->encode("x y w z"), (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(data::train_tokenizer(data::TokenizerKind::kWord, text, {2, 0})->vocab_size(), 4 + 2);
  const auto capped = data::train_tokenizer(data::TokenizerKind::kWord, text, {1, 5});
  EXPECT_EQ(capped->vocab_size(), 5);
  EXPECT_EQ(capped->encode("x y"), (std::vector<int32_t>{4, SpecialIds{}.unk}));
}

TEST(DataVocab, FileHasSpecialsFirstAndLoadsBack) {
  const std::vector<std::string_view> text = {"春风 得意"};
  const auto chars = data::train_tokenizer(data::TokenizerKind::kChar, text, {});
  const auto file = temp_file("vocab");
  chars->save(file);
  const auto lines = file_lines(file);
  ASSERT_EQ(lines.size(), 4u + 5u);
  EXPECT_EQ(std::vector<std::string>(lines.begin(), lines.begin() + 4),
            (std::vector<std::string>{"<pad>", "<s>", "</s>", "<unk>"}));
  EXPECT_NE(std::find(lines.begin(), lines.end(), " "), lines.end());  // the space is a token

  const auto loaded = data::load_tokenizer(data::TokenizerKind::kChar, file);
  EXPECT_EQ(loaded->encode("得意 春风"), chars->encode("得意 春风"));
  EXPECT_EQ(loaded->decode(loaded->encode("春风 得意")), "春风 得意");
  std::filesystem::remove(file);
}

TEST(DataVocab, ErrorsNameTheFileOrKind) {
  try {
    data::load_tokenizer(data::TokenizerKind::kWord, "/nonexistent/vocab.txt");
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/vocab.txt"), std::string::npos) << e.what();
  }
  const auto file = temp_file("bad-vocab");
  std::ofstream(file) << "<pad>\nhello\n";
  try {
    data::load_tokenizer(data::TokenizerKind::kWord, file);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(file.string() + ":2"), std::string::npos) << e.what();
  }
  std::filesystem::remove(file);
  EXPECT_THROW(data::train_tokenizer(data::TokenizerKind::kSentencePiece, {}, {}),
               std::invalid_argument);  // prepare_data trains those with SentencePiece
}

TEST(DataUtf8, SplitsCodePointsAndFindsMalformedBytes) {
  EXPECT_EQ(data::split_code_points("a\u00e9\u6625\U0001F600").size(), 4u);  // 1, 2, 3, 4 bytes
  EXPECT_EQ(data::find_invalid_utf8("ok \u6625"), std::string_view::npos);
  EXPECT_EQ(data::find_invalid_utf8("ab\xC0\xAF"), 2u);    // overlong '/'
  EXPECT_EQ(data::find_invalid_utf8("\xED\xA0\x80"), 0u);  // a UTF-16 surrogate
  EXPECT_EQ(data::find_invalid_utf8("x\x80"), 1u);         // stray continuation byte
}

}  // namespace
