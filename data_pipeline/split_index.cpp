#include "data_pipeline/split_index.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "data_pipeline/sha256.h"
#include "base/file_write.h"

namespace data {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[16] = "transformer-idx";

struct Header {  // 128 bytes
  char magic[16];
  int64_t format_version, num_examples, num_shards;
  char split[64];
  int64_t zeros[3];
};
using Digest = std::array<unsigned char, 32>;  // a shard's SHA-256
struct LengthRecord {  // 8 bytes
  int32_t src, tgt;
};
struct LocationRecord {  // 48 bytes
  int64_t src_offset, tgt_offset, id, label;
  int32_t src_length, tgt_length;
  uint32_t crc32;  // of the 40 bytes above
  int32_t zero;
};
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the index is little-endian and read as the host's integers");
static_assert(sizeof(Header) == 128 && sizeof(LengthRecord) == 8 && sizeof(LocationRecord) == 48,
              "the index's records are packed as split_index.h says");
constexpr size_t kCheckedBytes = offsetof(LocationRecord, crc32);

uint32_t checksum(const LocationRecord& record) {
  return static_cast<uint32_t>(
      ::crc32(0, reinterpret_cast<const Bytef*>(&record), static_cast<uInt>(kCheckedBytes)));
}

// Where the arrays start: after the header, shard_begin, shard_sha256.
int64_t digests_offset(int64_t num_shards) {
  return static_cast<int64_t>(sizeof(Header)) + 8 * (num_shards + 1);
}
int64_t lengths_offset(int64_t num_shards) {
  return digests_offset(num_shards) + static_cast<int64_t>(sizeof(Digest)) * num_shards;
}
int64_t locations_offset(int64_t num_shards, int64_t num_examples) {
  return lengths_offset(num_shards) + static_cast<int64_t>(sizeof(LengthRecord)) * num_examples;
}

[[noreturn]] void fail(const fs::path& file, const std::string& problem) {
  throw std::runtime_error("split index " + file.string() + ": " + problem);
}

// A problem that `prepare_data --upgrade` mends (RebuildableIndex), saying so.
[[noreturn]] void fail_rebuildable(const fs::path& file, const std::string& problem) {
  throw RebuildableIndex("split index " + file.string() + ": " + problem +
                         ": `prepare_data --upgrade " + file.parent_path().string() +
                         "` rebuilds the index from the shards the manifest names");
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A shard's sha256 as the manifest gives it (64 hex digits), as bytes.
Digest digest_bytes(const ShardEntry& shard, const fs::path& dir) {
  Digest bytes{};
  const std::string& hex = shard.sha256;
  for (size_t i = 0; i < bytes.size() && hex.size() == 2 * bytes.size(); ++i) {
    const int high = hex_digit(hex[2 * i]), low = hex_digit(hex[2 * i + 1]);
    if (high < 0 || low < 0) break;
    bytes[i] = static_cast<unsigned char>(16 * high + low);
    if (i + 1 == bytes.size()) return bytes;
  }
  throw std::runtime_error((dir / kManifestFile).string() + ": shard " + shard.file +
                           ": sha256 '" + hex + "' is not 64 hex digits");
}

std::string digest_hex(const Digest& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (const unsigned char byte : bytes) hex += {kDigits[byte >> 4], kDigits[byte & 15]};
  return hex;
}

// An open file descriptor, closed on every path out.
class Fd {
 public:
  Fd(const fs::path& file, int flags) : fd_(::open(file.c_str(), flags | O_CLOEXEC, 0644)) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

void write_at(int fd, const fs::path& file, int64_t offset, const void* bytes, size_t size) {
  const char* at = static_cast<const char*>(bytes);
  while (size > 0) {
    const ssize_t written = ::pwrite(fd, at, size, offset);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0)
      throw std::runtime_error("cannot write " + file.string() + ": " + std::strerror(errno));
    at += written;
    offset += written;
    size -= static_cast<size_t>(written);
  }
}

int32_t narrow_length(int64_t length, const fs::path& shard) {
  if (length > INT32_MAX)
    throw std::runtime_error("shard " + shard.string() + " holds a sequence of " +
                             std::to_string(length) + " tokens, more than an index records");
  return static_cast<int32_t>(length);
}

}  // namespace

std::string split_index_file_name(const std::string& split) { return split + ".index"; }

IndexEntry write_split_index(const fs::path& dir, const std::string& split,
                             const SplitEntry& entry) {
  const std::string name = split_index_file_name(split);
  const fs::path file = dir / name, temp = dir / (name + ".tmp");
  const auto num_shards = static_cast<int64_t>(entry.shards.size());
  const int64_t num_examples = entry.num_examples();
  try {
    const Fd out(temp, O_WRONLY | O_CREAT | O_TRUNC);
    if (out.get() < 0)
      throw std::runtime_error("cannot write " + temp.string() + ": " + std::strerror(errno));
    Header header{};
    std::memcpy(header.magic, kMagic, sizeof(kMagic));
    header.format_version = kSplitIndexVersion;
    header.num_examples = num_examples;
    header.num_shards = num_shards;
    if (split.size() >= sizeof(header.split))
      throw std::runtime_error("split name '" + split + "' is longer than an index records (" +
                               std::to_string(sizeof(header.split) - 1) + " bytes)");
    std::memcpy(header.split, split.data(), split.size());
    write_at(out.get(), temp, 0, &header, sizeof(header));

    std::vector<int64_t> shard_begin = {0};
    std::vector<Digest> digests;
    for (const auto& shard : entry.shards) {
      shard_begin.push_back(shard_begin.back() + shard.num_examples);
      digests.push_back(digest_bytes(shard, dir));
    }
    write_at(out.get(), temp, sizeof(header), shard_begin.data(), 8 * shard_begin.size());
    write_at(out.get(), temp, digests_offset(num_shards), digests.data(),
             sizeof(Digest) * digests.size());

    for (int64_t k = 0; k < num_shards; ++k) {  // one shard's index in memory at a time
      const fs::path shard_file = dir / entry.shards[k].file;
      const ShardIndex index = ShardReader(shard_file).read_index();
      if (index.size() != entry.shards[k].num_examples)
        throw std::runtime_error("shard " + shard_file.string() + " holds " +
                                 std::to_string(index.size()) + " examples, the manifest says " +
                                 std::to_string(entry.shards[k].num_examples));
      std::vector<LengthRecord> lengths(index.size());
      std::vector<LocationRecord> locations(index.size());
      for (int64_t i = 0; i < index.size(); ++i) {
        const ExampleLocation where = index.location(i);
        lengths[i] = {narrow_length(where.src_length, shard_file),
                      narrow_length(where.tgt_length, shard_file)};
        locations[i] = {where.src_offset, where.tgt_offset, where.id, where.label,
                        lengths[i].src,   lengths[i].tgt,   0,        0};
        locations[i].crc32 = checksum(locations[i]);
      }
      write_at(out.get(), temp, lengths_offset(num_shards) + 8 * shard_begin[k], lengths.data(),
               sizeof(LengthRecord) * lengths.size());
      write_at(out.get(), temp, locations_offset(num_shards, num_examples) + 48 * shard_begin[k],
               locations.data(), sizeof(LocationRecord) * locations.size());
    }
    base::sync_to_disk(out.get(), temp);
    fs::rename(temp, file);
  } catch (...) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw;
  }
  return {name, sha256_file(file)};
}

SplitIndex::SplitIndex(const fs::path& dir, const std::string& split, const SplitEntry& entry)
    : file_(dir / entry.index.file) {
  if (entry.index.file.empty())
    throw std::runtime_error("dataset " + dir.string() + " has no index of its '" + split +
                             "' split (it was prepared before split indexes): run "
                             "`prepare_data --upgrade " +
                             dir.string() + "` once to add them");
  fd_ = Fd(file_, O_RDONLY).release();
  if (fd_ < 0)
    fail(file_, std::string("cannot open it: ") + std::strerror(errno) +
                    " (`prepare_data --upgrade " + dir.string() +
                    "` rebuilds a missing or damaged index from the shards)");
  try {
    Header header{};
    read_at(0, &header, offsetof(Header, num_examples));  // magic and version first: v1's header is shorter
    if (std::memcmp(header.magic, kMagic, sizeof(kMagic)) != 0) fail(file_, "not a split index");
    if (header.format_version > kSplitIndexVersion)
      fail(file_, "format_version " + std::to_string(header.format_version) +
                      " (a later prepare_data's); this build reads " +
                      std::to_string(kSplitIndexVersion));
    if (header.format_version != kSplitIndexVersion)
      fail_rebuildable(file_, "format_version " + std::to_string(header.format_version) +
                                  " (an earlier prepare_data's, which did not record its split "
                                  "and shards); this build reads " +
                                  std::to_string(kSplitIndexVersion));
    read_at(0, &header, sizeof(header));
    const std::string written_for(header.split, strnlen(header.split, sizeof(header.split)));
    if (written_for != split)
      fail_rebuildable(file_, "an index of the '" + written_for + "' split, not of '" + split +
                                  "' (split index files exchanged?)");
    // The file's size from its header, before reading arrays of the header's sizes.
    const auto actual = static_cast<int64_t>(fs::file_size(file_));
    if (header.num_shards < 0 || header.num_examples < 0 || header.num_shards > actual ||
        header.num_examples > actual)
      fail_rebuildable(file_, "a damaged header");
    const int64_t expected =
        locations_offset(header.num_shards, header.num_examples) + 48 * header.num_examples;
    if (actual != expected)
      fail_rebuildable(file_, std::to_string(actual) + " bytes, expected " +
                                  std::to_string(expected) + " (cut short or overwritten?)");
    check_shards(header.num_shards, header.num_examples, entry);
    num_examples_ = header.num_examples;
    lengths_at_ = lengths_offset(header.num_shards);
    locations_at_ = locations_offset(header.num_shards, num_examples_);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

// The manifest's shards against those the index was built from: the same
// files (SHA-256) in the same order, of the same sizes.
void SplitIndex::check_shards(int64_t index_shards, int64_t index_examples,
                              const SplitEntry& entry) {
  const auto num_shards = static_cast<int64_t>(entry.shards.size());
  std::vector<Digest> built(index_shards);
  read_at(digests_offset(index_shards), built.data(), sizeof(Digest) * built.size());
  std::vector<std::string> foreign;  // the manifest's shards the index does not know
  for (const auto& shard : entry.shards)
    if (std::find(built.begin(), built.end(), digest_bytes(shard, file_.parent_path())) ==
        built.end())
      foreign.push_back(shard.file);
  if (!foreign.empty() && foreign.size() == entry.shards.size())
    fail_rebuildable(file_, "built from none of the manifest's " + std::to_string(num_shards) +
                                " shards (an index of another dataset?)");
  if (!foreign.empty())
    fail(file_, "shard " + foreign.front() +
                    " of the manifest is not one this index was built from (its sha256 is none "
                    "of the index's): was it added to the manifest by hand? Take it out, or "
                    "prepare the dataset again with it");
  if (index_examples != entry.num_examples() || index_shards != num_shards)
    fail(file_, std::to_string(index_examples) + " examples in " +
                    std::to_string(index_shards) + " shards, the manifest says " +
                    std::to_string(entry.num_examples()) + " in " + std::to_string(num_shards));
  shard_begin_.resize(num_shards + 1);
  read_at(sizeof(Header), shard_begin_.data(), 8 * shard_begin_.size());
  for (int64_t k = 0; k < num_shards; ++k) {
    const auto& shard = entry.shards[k];
    if (built[k] != digest_bytes(shard, file_.parent_path()))
      fail(file_, "shard " + std::to_string(k) + " (" + shard.file +
                                  ") is not the index's shard " + std::to_string(k) +
                                  " (sha256 " + digest_hex(built[k]).substr(0, 16) +
                                  "...): the manifest's shards in another order (moved by hand?)");
    if (shard_begin_[k + 1] - shard_begin_[k] != shard.num_examples)
      fail(file_, "shard " + std::to_string(k) + " (" + shard.file + ") holds " +
                      std::to_string(shard_begin_[k + 1] - shard_begin_[k]) +
                      " examples, the manifest says " + std::to_string(shard.num_examples));
  }
}

SplitIndex::~SplitIndex() { ::close(fd_); }

void SplitIndex::read_at(int64_t offset, void* out, size_t bytes) const {
  char* at = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t got = ::pread(fd_, at, bytes, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(file_, std::string("cannot read it: ") + std::strerror(errno));
    if (got == 0) fail_rebuildable(file_, "cut short at byte " + std::to_string(offset));
    at += got;
    offset += got;
    bytes -= static_cast<size_t>(got);
  }
}

void SplitIndex::damaged(int64_t index, const std::string& what) const {
  fail_rebuildable(file_, "example " + std::to_string(index) + what + " (damaged)");
}

void SplitIndex::check_index(int64_t index) const {
  if (index < 0 || index >= num_examples_)
    throw std::out_of_range("example " + std::to_string(index) + " outside " + file_.string() +
                            "'s " + std::to_string(num_examples_));
}

Lengths SplitIndex::at(int64_t index) const {
  check_index(index);
  LengthRecord record{};
  read_at(lengths_at_ + 8 * index, &record, sizeof(record));
  if (record.src < 0 || record.tgt < 0) damaged(index, " has a negative length");
  return {record.src, record.tgt};
}

void SplitIndex::read(int64_t begin, std::vector<Lengths>& out) const {
  const auto count = static_cast<int64_t>(out.size());
  if (count == 0) return;
  check_index(begin);
  check_index(begin + count - 1);
  std::vector<LengthRecord> records(out.size());
  read_at(lengths_at_ + 8 * begin, records.data(), sizeof(LengthRecord) * records.size());
  for (size_t k = 0; k < records.size(); ++k) {
    if (records[k].src < 0 || records[k].tgt < 0)
      damaged(begin + static_cast<int64_t>(k), " has a negative length");
    out[k] = {records[k].src, records[k].tgt};
  }
}

int64_t SplitIndex::shard_of(int64_t index) const {
  check_index(index);
  return std::upper_bound(shard_begin_.begin(), shard_begin_.end(), index) - shard_begin_.begin() -
         1;
}

ExampleLocation SplitIndex::location(int64_t index) const {
  check_index(index);
  LocationRecord record{};
  read_at(locations_at_ + 48 * index, &record, sizeof(record));
  if (record.crc32 != checksum(record)) damaged(index, "'s location fails its CRC-32");
  // The lengths batching read, which carry no checksum, must be this record's.
  const Lengths lengths = at(index);
  if (lengths.src != record.src_length || lengths.tgt != record.tgt_length)
    damaged(index, "'s lengths differ from its location's");
  return {record.src_offset, record.src_length, record.tgt_offset,
          record.tgt_length, record.id,         record.label};
}

}  // namespace data
