// Corpus BLEU and chrF of detokenized hypotheses against reference text, as
// sacreBLEU computes them (eval/metrics/), for results.json:
//
//   {"bleu": {"score": 27.3, "signature":
//   "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0", ...},
//    "chrf": {"score": 55.1, "signature":
//    "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"}}
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data_pipeline/tokenizer_kind.h"

namespace eval {

// bleu_tokenize "auto": "char" for character-tokenized datasets (e.g. Chinese
// couplets, where 13a would see each line as one word), else "13a".
nlohmann::json text_metrics(const std::vector<std::string>& hypotheses,
                            const std::vector<std::string>& references,
                            const std::string& bleu_tokenize,
                            data::TokenizerKind dataset_tokenizer);

}  // namespace eval
