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

}  // namespace

nlohmann::json CleaningReport::to_json() const {
  return {{"kept", kept}, {"dropped", {{"empty", empty}, {"too_short", too_short},
                                       {"too_long", too_long}, {"ratio", ratio}}}};
}

CleaningReport clean_corpus(ParallelText& text, const CleaningOptions& options,
                            std::vector<int64_t>& lines) {
  CleaningReport report;
  lines.clear();
  size_t out = 0;
  for (size_t i = 0; i < text.src.size(); ++i) {
    const int64_t src_words = normalise_whitespace(text.src[i]);
    const int64_t tgt_words = normalise_whitespace(text.tgt[i]);
    const int64_t shorter = std::min(src_words, tgt_words), longer = std::max(src_words, tgt_words);
    if (shorter == 0) {
      ++report.empty;
    } else if (shorter < options.min_words) {
      ++report.too_short;
    } else if (options.max_words > 0 && longer > options.max_words) {
      ++report.too_long;
    } else if (options.max_ratio > 0 && longer > options.max_ratio * shorter) {
      ++report.ratio;
    } else {
      if (out != i) {
        text.src[out] = std::move(text.src[i]);
        text.tgt[out] = std::move(text.tgt[i]);
      }
      lines.push_back(static_cast<int64_t>(i));
      ++out;
    }
  }
  text.src.resize(out);
  text.tgt.resize(out);
  report.kept = static_cast<int64_t>(out);
  return report;
}

}  // namespace data
