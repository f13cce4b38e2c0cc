// sacreBLEU 2.x's reproducibility signature: the settings a score depends on,
// as "key:value" pairs joined by '|' with the version last, e.g.
//   nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0
// (sacrebleu/metrics/base.py, Signature.format). sacreBLEU prints it after
// the metric's name: "BLEU|nrefs:1|...".
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace eval::metrics {

// The sacreBLEU release these metrics reproduce, the one the test suite
// compares them with (scripts/python_tools.txt). BLEU, chrF and the 13a, zh,
// char and none tokenizers compute the same in sacreBLEU 2.3.1 through 2.6.0.
inline constexpr const char* kSacrebleuVersion = "2.6.0";

// `fields` in order, then "version:<kSacrebleuVersion>".
std::string format_signature(const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace eval::metrics
