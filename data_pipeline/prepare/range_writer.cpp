#include "data_pipeline/prepare/range_writer.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "data_pipeline/sha256.h"
#include "data_pipeline/shard_writer.h"
#include "base/progress.h"

namespace data {

namespace fs = std::filesystem;

namespace {

// Shard files are first named per rank ("train.r0001-00000.h5"), then given
// their place in the dataset ("train-00003.h5") by rank 0 (publish_shards).
std::string rank_shard_name(const std::string& split, int rank, int64_t index) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s.r%04d-%05lld.h5", split.c_str(), rank,
                static_cast<long long>(index));
  return name;
}

// Bytes for ranks.gather, read back in the order they were written. The
// ranks run one build of this program, so a number travels as its bytes; a
// string travels as its length, then its characters.
class ByteWriter {
 public:
  template <typename T>
  ByteWriter& put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
    return *this;
  }
  ByteWriter& put(const std::string& text) {
    put(static_cast<int64_t>(text.size()));
    bytes_ += text;
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  ByteReader& get(T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::memcpy(&value, take(sizeof value), sizeof value);
    return *this;
  }
  ByteReader& get(std::string& text) {
    int64_t size = 0;
    get(size);
    text.assign(take(static_cast<size_t>(size)), static_cast<size_t>(size));
    return *this;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  const char* take(size_t size) {
    if (size > bytes_.size() - at_) throw std::logic_error("a rank's shard list is cut short");
    const char* at = bytes_.data() + at_;
    at_ += size;
    return at;
  }
  const std::string& bytes_;
  size_t at_ = 0;
};

std::string to_bytes(const RangeWritten& written) {
  ByteWriter out;
  out.put(written.cleaning);
  for (const ShardEntry& s : written.shards)
    out.put(s.file).put(s.num_examples).put(s.src_tokens).put(s.tgt_tokens).put(s.sha256);
  return out.bytes();
}

RangeWritten from_bytes(const std::string& bytes) {
  ByteReader in(bytes);
  RangeWritten written;
  in.get(written.cleaning);
  while (!in.done()) {
    ShardEntry& s = written.shards.emplace_back();
    in.get(s.file).get(s.num_examples).get(s.src_tokens).get(s.tgt_tokens).get(s.sha256);
  }
  return written;
}

}  // namespace

RangeWritten write_range(const fs::path& dir, const std::string& split, const PairSource& pairs,
                         const Tokenizers& tokenizers, const LabelSet& labels,
                         const ShardAttrs& attrs, const PrepareOptions& options,
                         const launch::Ranks& ranks) {
  RangeWritten written;
  ShardData shard;
  const auto flush = [&] {
    const auto name =
        rank_shard_name(split, ranks.rank(), static_cast<int64_t>(written.shards.size()));
    write_shard(dir / name, shard, attrs, options.shard);
    written.shards.push_back({name, shard.size(), static_cast<int64_t>(shard.src.tokens.size()),
                              static_cast<int64_t>(shard.tgt.tokens.size()),
                              sha256_file(dir / name)});
    shard = ShardData{};
  };
  const auto bytes = [&] {  // on disk, roughly: int32 tokens, int64 offsets and ids
    return 4 * static_cast<int64_t>(shard.src.tokens.size() + shard.tgt.tokens.size()) +
           24 * shard.size();
  };
  const auto [begin, end] = ranks.range(pairs.size());
  base::Progress progress("writing " + split + (ranks.size() > 1 ? " (rank 0's share)" : ""),
                            end - begin, "lines", 5.0, ranks.is_main());
  // The token cap is a cleaning rule: training split, text tasks (prepare.h).
  const bool capped = split == "train" && !is_synthetic_task(options.task);
  pairs.read(begin, end, written.cleaning, [&](SentencePair& pair) {
    std::vector<int32_t> src = tokenizers.src->encode(pair.src);
    std::vector<int32_t> tgt;
    if (attrs.num_labels == 0) tgt = tokenizers.tgt->encode(pair.tgt);
    if (capped &&
        !within_token_cap(static_cast<int64_t>(src.size()), static_cast<int64_t>(tgt.size()),
                          options.cleaning, written.cleaning))
      return;
    shard.src.append(src);
    if (attrs.num_labels > 0) {
      const int32_t label = labels.id(pair.tgt);
      if (label < 0)
        throw InputError("label '" + pair.tgt + "' does not occur in the training split");
      shard.tgt.append({});
      shard.labels.push_back(label);
    } else {
      shard.tgt.append(tgt);
    }
    shard.ids.push_back(pair.id);
    if (shard.size() == options.shard_size ||
        (options.shard_mb > 0 && bytes() >= (options.shard_mb << 20)))
      flush();
    progress.reach(pair.id + 1 - begin);
  });
  if (shard.size() > 0) flush();
  return written;
}

std::vector<RangeWritten> gather(const launch::Ranks& ranks, const RangeWritten& written) {
  std::vector<RangeWritten> all;
  for (const std::string& bytes : ranks.gather(to_bytes(written))) all.push_back(from_bytes(bytes));
  return all;
}

}  // namespace data
