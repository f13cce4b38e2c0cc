// Training-corpus cleaning, as Moses' clean-corpus-n.perl does it. A pair is
// dropped when
//   empty      either side is empty (after whitespace normalisation)
//   too_short  either side has fewer than min_words words
//   too_long   either side has more than max_words words
//   ratio      one side has more than max_ratio times the words of the other
// (words: whitespace-separated). Kept pairs get their whitespace normalised
// (runs of spaces and tabs -> one space, none at either end), which is the
// text SentencePiece round-trips exactly. Valid and test splits are never
// cleaned: every test sentence is scored. A single sentence (the text of a
// classification example) is cleaned the same way, without the ratio.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace data {

struct CleaningOptions {
  int64_t min_words = 1;
  int64_t max_words = 250;  // 0 = no limit
  double max_ratio = 9.0;   // 0 = no limit
};

struct CleaningReport {
  int64_t kept = 0, empty = 0, too_short = 0, too_long = 0, ratio = 0;
  nlohmann::json to_json() const;
  CleaningReport& operator+=(const CleaningReport& other);
  static CleaningReport from_json(const nlohmann::json& j);
};

// Normalises the pair's whitespace in place and decides: true = keep. The
// decision is counted in `report`.
bool clean_pair(std::string& src, std::string& tgt, const CleaningOptions& options,
                CleaningReport& report);
// The same for one sentence (empty, too short, too long).
bool clean_text(std::string& text, const CleaningOptions& options, CleaningReport& report);

}  // namespace data
