#include "trainer/eval/references.h"

#include <filesystem>
#include <fstream>

#include "data_pipeline/sha256.h"
#include "data_pipeline/text_line.h"
#include "base/logging.h"

namespace eval {

namespace {

// The split's target text file if it is unchanged since prepare_data; "" otherwise.
std::string original_target_file(const data::Manifest& manifest, const std::string& split) {
  const auto& sources = manifest.splits.at(split).sources;
  if (sources.size() < 2) return "";
  const data::SourceFile& tgt = sources[1];
  if (!std::filesystem::is_regular_file(tgt.path)) {
    logging::warn("reference file {} is gone; scoring against the dataset's decoded targets",
                  tgt.path);
    return "";
  }
  if (data::sha256_file(tgt.path) != tgt.sha256) {
    logging::warn(
        "reference file {} changed since prepare_data; scoring against the dataset's decoded "
        "targets",
        tgt.path);
    return "";
  }
  return tgt.path;
}

}  // namespace

References read_references(const EvalModel& m, const data::Dataset& dataset,
                           const std::string& split) {
  References refs;
  const std::string file = original_target_file(m.manifest, split);
  if (file.empty()) {
    refs.source = "decoded from the dataset";
    for (int64_t i = 0; i < dataset.size(); ++i)
      refs.lines.push_back(m.tgt_tokenizer->decode(dataset.get(i).tgt));
    return refs;
  }
  std::vector<std::string> lines;
  std::ifstream in(file);
  for (std::string line; data::read_text_line(in, line);) lines.push_back(line);
  for (int64_t i = 0; i < dataset.size(); ++i) {
    const int64_t id = dataset.get(i).id;
    if (id < 0 || id >= static_cast<int64_t>(lines.size()))
      throw std::runtime_error(file + " has " + std::to_string(lines.size()) +
                               " lines; example id " + std::to_string(id) + " of split '" + split +
                               "' is beyond it");
    refs.lines.push_back(lines[id]);
  }
  refs.source = file;
  return refs;
}

}  // namespace eval
