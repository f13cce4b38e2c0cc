// The four reserved token ids shared by every tokenizer, shard and batch.
//
// They are fixed (every vocabulary starts with these four entries, in this
// order) and stored in manifest.json and in each shard's attributes so that
// files are self-describing and readers can check them.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace data {

struct SpecialIds {
  int32_t pad = 0;  // fills batches up to the longest row; ignored by the loss
  int32_t bos = 1;  // first decoder input token
  int32_t eos = 2;  // ends source rows and decoder targets
  int32_t unk = 3;  // any token missing from the vocabulary

  bool operator==(const SpecialIds& other) const {
    return pad == other.pad && bos == other.bos && eos == other.eos && unk == other.unk;
  }
  bool operator!=(const SpecialIds& other) const { return !(*this == other); }
};

// Their spellings in vocabulary files, indexed by id.
inline constexpr std::array<std::string_view, 4> kSpecialTokens = {"<pad>", "<s>", "</s>", "<unk>"};
inline constexpr int32_t kNumSpecialIds = static_cast<int32_t>(kSpecialTokens.size());

}  // namespace data
