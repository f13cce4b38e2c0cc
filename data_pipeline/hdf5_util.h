// A thin layer over the HDF5 C API for shard_writer and shard_reader: owned
// handles, errors as exceptions, scalar attributes and 1-D integer datasets.
//
// Errors name the object ("dataset src/tokens"); callers add the file name.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace data::h5 {

// Owns an hid_t and closes it with the matching H5?close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  // Throws std::runtime_error("cannot " + what) when `id` is negative (failure).
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

// Throws std::runtime_error("cannot " + what) when `status` is negative.
void check(herr_t status, const std::string& what);

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
// elements, optionally deflated (level 1..9; 0 = off).
struct Layout {
  int64_t chunk = 0;
  int deflate = 0;
};

// 1-D little-endian integer datasets, T = int32_t or int64_t.
template <typename T>
void write_vector(hid_t group, const char* name, const std::vector<T>& values, const Layout& layout);
template <typename T>
std::vector<T> read_vector(hid_t group, const char* name);

// An open 1-D dataset of integers of T's width, for reads of element ranges
// (hyperslabs). Throws, naming the dataset, when it is missing, not 1-D, not
// integers, or integers of another width.
template <typename T>
class Vector {
 public:
  Vector(hid_t group, const char* name);
  int64_t size() const { return size_; }
  std::vector<T> read() const;                           // every element
  void read(int64_t begin, int64_t count, T* out) const;  // elements [begin, begin + count)

 private:
  std::string what_;
  Handle dataset_;
  int64_t size_ = 0;
};

}  // namespace data::h5
