// One example as the data pipeline hands it to collate(): a sentence pair
// (seq2seq) or a sentence and its class (classification, tgt empty).
#pragma once
#include <cstdint>
#include <vector>

namespace data {

// Token ids without bos/eos (collate adds them).
struct Example {
  int64_t id = 0;            // index in its split (line number in the text files)
  std::vector<int32_t> src;  // [S]
  std::vector<int32_t> tgt;  // [T]
  int32_t label = -1;        // class id in [0, num_labels) (classification); -1 = none
};

}  // namespace data
