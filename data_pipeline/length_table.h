// Per-example token counts of a split, without bos/eos: what the batcher
// needs to plan batches without touching the tokens. Read from the split's
// index on disk (split_index.h) when training, so that no rank holds them
// all, or from a list in memory (tests, sentences to translate).
#pragma once
#include <cstdint>
#include <vector>

namespace data {

struct Lengths {
  int64_t src = 0, tgt = 0;
};

class LengthTable {
 public:
  virtual ~LengthTable() = default;
  virtual int64_t size() const = 0;
  virtual Lengths at(int64_t index) const = 0;  // example `index`, in [0, size())
  // Examples [begin, begin + out.size()), in order: a sequential read.
  virtual void read(int64_t begin, std::vector<Lengths>& out) const = 0;
};

// In memory.
struct ExampleLengths : LengthTable {
  std::vector<int64_t> src;  // [n]
  std::vector<int64_t> tgt;  // [n]

  int64_t size() const override { return static_cast<int64_t>(src.size()); }
  Lengths at(int64_t index) const override { return {src.at(index), tgt.at(index)}; }
  void read(int64_t begin, std::vector<Lengths>& out) const override {
    for (size_t k = 0; k < out.size(); ++k) out[k] = at(begin + static_cast<int64_t>(k));
  }
};

}  // namespace data
