// Classification text: one example a line, "label<TAB>text" (TSV without a
// header or quoting), read as pairs whose tgt is the label:
//
//   pos<TAB>a fine film   ->   SentencePair{id = line (0-based), src = "a fine film", tgt = "pos"}
//
// The label is everything before the first tab, verbatim; the text is the
// rest of the line. A line without a tab or with an empty label is an error
// in every split. An empty text (nothing but whitespace) is dropped and
// counted in the training split, which is cleaned like a pair's sides
// (cleaning.h, clean_text), and an error in the valid and test splits,
// which are never cleaned: every example there is scored. Errors name the
// file and the line.
#pragma once
#include <filesystem>
#include <memory>

#include "data_pipeline/prepare/parallel_text.h"

namespace data {

// Throws, naming the file, when it is missing or empty.
std::unique_ptr<PairSource> labeled_text(const std::filesystem::path& file,
                                         const TextReadOptions& options);

}  // namespace data
