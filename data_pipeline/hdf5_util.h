// A thin layer over the HDF5 C API for shard_writer and shard_reader: owned
// handles, errors as exceptions, scalar attributes and 1-D integer datasets.
//
// Errors name the object ("dataset src/tokens") and end with HDF5's own
// reason, put plainly where we know it (a failed checksum, a truncated
// file); callers add the file name.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace data::h5 {

// Owns an hid_t and closes it with the matching H5?close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  // Throws std::runtime_error("cannot " + what + ": " + reason) when `id` is
  // negative (failure); the reason is failure_reason().
  Handle(hid_t id, Closer close, const std::string& what);
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }

 private:
  hid_t id_;
  Closer close_;
};

// Throws std::runtime_error("cannot " + what + ": " + reason) when `status` is negative.
void check(herr_t status, const std::string& what);

// Why the last HDF5 call failed, from its error stack: "the data fails its
// Fletcher-32 checksum (corrupted)", "metadata checksum mismatch (the file
// is corrupted)", "the file is truncated (...)", or HDF5's innermost message;
// "" when the stack is empty.
std::string failure_reason();

// File access without HDF5's own file lock. HDF5 1.10 takes a flock() on
// every file it opens (for SWMR), and the open fails where the file system
// refuses it with other than ENOSYS (NFS without lockd: ENOLCK), which
// HDF5_USE_FILE_LOCKING=FALSE would otherwise be needed for (that variable,
// set site-wide, still overrides this). Shards need no lock: written in a
// private temporary directory and renamed into place, they never change
// once readable. (H5Pset_file_locking: HDF5 1.10.7 and later.)
Handle unlocked_access();

// unlocked_access for new files, in the 1.10 format, whose metadata
// (superblock, object headers, chunk indexes) carries checksums that every
// open verifies.
Handle checksummed_metadata_access();

// While alive, HDF5 does not print its error stack to stderr: our exceptions
// carry the message instead.
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

// Scalar attributes: int64 numbers and variable-length UTF-8 strings.
bool has_attr(hid_t object, const char* name);
void write_attr(hid_t object, const char* name, int64_t value);
void write_attr(hid_t object, const char* name, const std::string& value);
int64_t read_int_attr(hid_t object, const char* name);
std::string read_string_attr(hid_t object, const char* name);

// How a 1-D dataset is stored: contiguous (chunk = 0) or in chunks of `chunk`
// elements, optionally deflated (level 1..9; 0 = off), optionally with a
// Fletcher-32 checksum per chunk (after deflate, so it covers the bytes on
// disk) that HDF5 verifies on every read of the chunk.
struct Layout {
  int64_t chunk = 0;
  int deflate = 0;
  bool checksum = false;
};

// 1-D little-endian integer datasets, T = int32_t or int64_t.
template <typename T>
void write_vector(hid_t group, const char* name, const std::vector<T>& values,
                  const Layout& layout);

// An open 1-D dataset of integers of T's width, for reads of element ranges
// (hyperslabs). Throws, naming the dataset, when it is missing, not 1-D, not
// integers, or integers of another width.
//
// A failed read throws ReadError naming the dataset, the elements that could
// not be read and why: for a damaged chunk (failed checksum), the part of
// the requested range that lies in it.
template <typename T>
class Vector {
 public:
  Vector(hid_t group, const char* name);
  int64_t size() const { return size_; }
  bool checksummed() const { return checksummed_; }       // Fletcher-32 on its chunks
  std::vector<T> read() const;                            // every element
  void read(int64_t begin, int64_t count, T* out) const;  // elements [begin, begin + count)

 private:
  // nullopt when read, else why not
  std::optional<std::string> try_read(int64_t begin, int64_t count, T* out) const;

  std::string what_;
  Handle dataset_;
  int64_t size_ = 0;
  int64_t chunk_ = 0;  // elements per chunk; 0 = contiguous
  bool checksummed_ = false;
};

// A read that failed: the elements [begin, end) of the dataset that could
// not be read (callers turn them into examples).
struct ReadError : std::runtime_error {
  ReadError(const std::string& message, int64_t begin, int64_t end)
      : std::runtime_error(message), begin(begin), end(end) {}
  int64_t begin, end;
};

}  // namespace data::h5
