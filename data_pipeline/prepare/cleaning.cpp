#include "data_pipeline/prepare/cleaning.h"

#include <algorithm>
#include <string>

namespace data {

namespace {

// Collapses whitespace runs to one space and trims; returns the word count.
int64_t normalise_whitespace(std::string& line) {
  std::string out;
  int64_t words = 0;
  bool in_word = false;
  for (const char c : line) {
    const bool space = c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
    if (space) {
      in_word = false;
      continue;
    }
    if (!in_word) {
      if (words > 0) out += ' ';
      ++words;
      in_word = true;
    }
    out += c;
  }
  line = std::move(out);
  return words;
}

// Counts the decision about sides of `shorter` and `longer` words, the
// longer side having `bytes` bytes; true = keep.
bool decide(int64_t shorter, int64_t longer, size_t bytes, const CleaningOptions& options,
            CleaningReport& report) {
  if (shorter == 0) {
    ++report.empty;
  } else if (options.max_bytes > 0 && static_cast<int64_t>(bytes) > options.max_bytes) {
    ++report.too_many_bytes;
  } else if (shorter < options.min_words) {
    ++report.too_short;
  } else if (options.max_words > 0 && longer > options.max_words) {
    ++report.too_long;
  } else if (options.max_ratio > 0 && longer > options.max_ratio * shorter) {
    ++report.ratio;
  } else {
    ++report.kept;
    return true;
  }
  return false;
}

}  // namespace

nlohmann::json CleaningReport::to_json() const {
  return {{"kept", kept},
          {"dropped",
           {{"empty", empty},
            {"too_many_bytes", too_many_bytes},
            {"too_short", too_short},
            {"too_long", too_long},
            {"ratio", ratio},
            {"too_many_tokens", too_many_tokens}}}};
}

CleaningReport& CleaningReport::operator+=(const CleaningReport& other) {
  kept += other.kept;
  empty += other.empty;
  too_many_bytes += other.too_many_bytes;
  too_many_tokens += other.too_many_tokens;
  too_short += other.too_short;
  too_long += other.too_long;
  ratio += other.ratio;
  return *this;
}

bool clean_pair(std::string& src, std::string& tgt, const CleaningOptions& options,
                CleaningReport& report) {
  const int64_t src_words = normalise_whitespace(src);
  const int64_t tgt_words = normalise_whitespace(tgt);
  return decide(std::min(src_words, tgt_words), std::max(src_words, tgt_words),
                std::max(src.size(), tgt.size()), options, report);
}

bool clean_text(std::string& text, const CleaningOptions& options, CleaningReport& report) {
  const int64_t words = normalise_whitespace(text);
  CleaningOptions no_ratio = options;  // one side: no length ratio to judge
  no_ratio.max_ratio = 0;
  return decide(words, words, text.size(), no_ratio, report);
}

bool within_token_cap(int64_t src_tokens, int64_t tgt_tokens, const CleaningOptions& options,
                      CleaningReport& report) {
  if (options.max_tokens <= 0 || std::max(src_tokens, tgt_tokens) <= options.max_tokens)
    return true;
  --report.kept;
  ++report.too_many_tokens;
  return false;
}

}  // namespace data
