#include "trainer/eval/metrics/corpus.h"

#include <stdexcept>

#include "data_pipeline/utf8.h"

namespace eval::metrics {

std::vector<Segment> corpus_segments(const std::vector<std::string>& hypotheses,
                                     const std::vector<std::vector<std::string>>& references) {
  if (references.empty()) throw std::invalid_argument("no reference stream given");
  for (size_t k = 0; k < references.size(); ++k) {
    if (references[k].size() != hypotheses.size()) {
      throw std::invalid_argument("reference stream " + std::to_string(k + 1) + " has " +
                                  std::to_string(references[k].size()) + " lines, the " +
                                  "hypotheses " + std::to_string(hypotheses.size()));
    }
  }
  std::vector<Segment> segments(hypotheses.size());
  for (size_t i = 0; i < hypotheses.size(); ++i) {
    segments[i].hypothesis = data::decode_utf8(hypotheses[i]);
    for (const auto& stream : references) {
      segments[i].references.push_back(data::decode_utf8(stream[i]));
    }
  }
  return segments;
}

}  // namespace eval::metrics
