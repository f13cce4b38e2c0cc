// A corpus as sacreBLEU's corpus_score takes it: hypotheses[i] is segment i's
// system output and references[k][i] its k-th reference (one stream, e.g.
// one file, per reference). Regrouped per segment and decoded to code points.
#pragma once
#include <string>
#include <vector>

namespace eval::metrics {

struct Segment {
  std::u32string hypothesis;
  std::vector<std::u32string> references;  // one per stream
};

// Throws std::invalid_argument when there is no reference stream, a stream's
// length differs from the hypotheses', or a line is not valid UTF-8.
std::vector<Segment> corpus_segments(const std::vector<std::string>& hypotheses,
                                     const std::vector<std::vector<std::string>>& references);

}  // namespace eval::metrics
