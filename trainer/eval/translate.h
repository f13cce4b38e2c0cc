// evaluate --translate: source text from a file or stdin -> one translation
// per line on stdout, in input order (for a classification run: the
// predicted class name).
//
// From a file (or stdin redirected from one) lines are read in chunks and
// decoded in length-sorted batches; from a terminal or a pipe each line is
// translated and written as soon as it arrives, so another program can hold
// a conversation with it.
#pragma once
#include <cstdint>
#include <istream>
#include <ostream>

#include "trainer/eval/decode.h"
#include "trainer/eval/eval_model.h"

namespace eval {

struct TranslateOptions {
  DecodeOptions decode;
  int64_t batch_tokens = 4096;
  bool line_by_line = false;  // answer each line before reading the next
};

// Returns the number of lines translated. A line that is not UTF-8 stops it
// (std::invalid_argument naming the line) once the lines before it are written.
int64_t translate_stream(EvalModel& m, std::istream& in, std::ostream& out,
                         const TranslateOptions& options);

}  // namespace eval
