// Training-corpus cleaning, as Moses' clean-corpus-n.perl does it. A pair is
// dropped when
//   empty            either side is empty (after whitespace normalisation)
//   too_many_bytes   either side has more than max_bytes bytes
//   too_short        either side has fewer than min_words words
//   too_long         either side has more than max_words words
//   ratio            one side has more than max_ratio times the words of the other
// (words: whitespace-separated), and, once encoded,
//   too_many_tokens  either side has more than max_tokens tokens
// The byte and token caps catch what words cannot: a line of one 5 MB
// "word" (a stray binary or an unsplit language), which a character or
// SentencePiece tokenizer turns into millions of tokens. The token cap is
// judged after the tokenizer is trained (it needs the tokenizer), so the
// tokenizer's sample may still hold such a pair, but no shard does.
//
// Kept pairs get their whitespace normalised (runs of spaces and tabs -> one
// space, none at either end), which is the text SentencePiece round-trips
// exactly. Valid and test splits are never cleaned: every test sentence is
// scored. A single sentence (the text of a classification example) is
// cleaned the same way, without the ratio.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace data {

struct CleaningOptions {
  int64_t min_words = 1;
  int64_t max_words = 250;    // 0 = no limit
  double max_ratio = 9.0;     // 0 = no limit
  int64_t max_bytes = 4096;   // 0 = no limit
  int64_t max_tokens = 1024;  // 0 = no limit
};

struct CleaningReport {
  int64_t kept = 0, empty = 0, too_many_bytes = 0, too_short = 0, too_long = 0, ratio = 0,
          too_many_tokens = 0;
  nlohmann::json to_json() const;
  CleaningReport& operator+=(const CleaningReport& other);
};

// Normalises the pair's whitespace in place and decides: true = keep. The
// decision is counted in `report`.
bool clean_pair(std::string& src, std::string& tgt, const CleaningOptions& options,
                CleaningReport& report);
// The same for one sentence (empty, too many bytes, too short, too long).
bool clean_text(std::string& text, const CleaningOptions& options, CleaningReport& report);

// After encoding a kept example (tgt_tokens 0 for a single sentence): true
// when both sides are within max_tokens; otherwise the example moves from
// `kept` to `too_many_tokens` in `report`.
bool within_token_cap(int64_t src_tokens, int64_t tgt_tokens, const CleaningOptions& options,
                      CleaningReport& report);

}  // namespace data
