// The reference translations a split's hypotheses are scored against.
//
// BLEU and chrF are defined on the original text (sacreBLEU scores detokenized
// output against untokenized references). prepare_data records each text
// split's source files in the manifest; when the target file is still there
// with the same sha256, line <example id> of it is the reference. Otherwise
// (synthetic tasks, a moved file) the references are the dataset's target
// tokens decoded, and results.json says so.
#pragma once
#include <string>
#include <vector>

#include "data_pipeline/dataset.h"
#include "trainer/eval/eval_model.h"

namespace eval {

struct References {
  std::vector<std::string> lines;  // [examples] in split order
  std::string source;              // the text file, or "decoded from the dataset"
};

References read_references(const EvalModel& m, const data::Dataset& dataset,
                           const std::string& split);

}  // namespace eval
