// Metrics of label predictions (classification tasks), as fractions in 0..1:
//
//   accuracy  share of positions where prediction == reference
//   macro F1  the mean over classes of F1_c = 2 TP_c / (2 TP_c + FP_c + FN_c),
//             i.e. the harmonic mean of precision and recall of class c
//
// Macro F1 averages over the classes present in the references or the
// predictions (their union), as sklearn.metrics.f1_score(average='macro')
// does when given no `labels`. A class that is only predicted, or only
// expected, has TP = 0 and so F1 = 0 (sklearn: precision or recall 0/0
// counts as 0) and pulls the mean down; a class absent from both is ignored.
#pragma once
#include <cstdint>
#include <vector>

namespace eval::metrics {

// Both throw std::invalid_argument when the vectors are empty or differ in length.
double accuracy(const std::vector<int64_t>& references, const std::vector<int64_t>& predictions);
double macro_f1(const std::vector<int64_t>& references, const std::vector<int64_t>& predictions);

}  // namespace eval::metrics
