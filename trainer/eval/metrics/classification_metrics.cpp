#include "trainer/eval/metrics/classification_metrics.h"

#include <map>
#include <stdexcept>
#include <string>

namespace eval::metrics {
namespace {

void check_labels(const std::vector<int64_t>& references, const std::vector<int64_t>& predictions) {
  if (references.empty() || references.size() != predictions.size()) {
    throw std::invalid_argument("label metrics need as many predictions (" +
                                std::to_string(predictions.size()) + ") as references (" +
                                std::to_string(references.size()) + "), at least one");
  }
}

}  // namespace

double accuracy(const std::vector<int64_t>& references, const std::vector<int64_t>& predictions) {
  check_labels(references, predictions);
  size_t correct = 0;
  for (size_t i = 0; i < references.size(); ++i) correct += references[i] == predictions[i];
  return static_cast<double>(correct) / static_cast<double>(references.size());
}

double macro_f1(const std::vector<int64_t>& references, const std::vector<int64_t>& predictions) {
  check_labels(references, predictions);
  struct Counts {
    int64_t true_positives = 0, false_positives = 0, false_negatives = 0;
  };
  std::map<int64_t, Counts> classes;  // every label seen on either side
  for (size_t i = 0; i < references.size(); ++i) {
    if (references[i] == predictions[i]) {
      ++classes[references[i]].true_positives;
    } else {
      ++classes[references[i]].false_negatives;
      ++classes[predictions[i]].false_positives;
    }
  }
  double sum = 0.0;
  for (const auto& [label, c] : classes) {
    sum += 2.0 * c.true_positives /
           static_cast<double>(2 * c.true_positives + c.false_positives + c.false_negatives);
  }
  return sum / static_cast<double>(classes.size());
}

}  // namespace eval::metrics
