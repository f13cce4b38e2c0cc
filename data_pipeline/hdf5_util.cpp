#include "data_pipeline/hdf5_util.h"

#include <stdexcept>

namespace data::h5 {

namespace {

// In memory: the machine's int; in files: little-endian, whatever the machine.
template <typename T>
struct IntTypes;
template <>
struct IntTypes<int32_t> {
  static hid_t memory() { return H5T_NATIVE_INT32; }
  static hid_t file() { return H5T_STD_I32LE; }
};
template <>
struct IntTypes<int64_t> {
  static hid_t memory() { return H5T_NATIVE_INT64; }
  static hid_t file() { return H5T_STD_I64LE; }
};

Handle scalar_space() { return Handle(H5Screate(H5S_SCALAR), H5Sclose, "create a dataspace"); }

Handle create_attr(hid_t object, const char* name, hid_t type) {
  return Handle(H5Acreate2(object, name, type, scalar_space().get(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose, std::string("create attribute ") + name);
}

// An existing attribute holding a single value of `expected_class`.
Handle open_attr(hid_t object, const char* name, H5T_class_t expected_class, const char* expected) {
  const std::string what = std::string("attribute ") + name;
  if (!has_attr(object, name)) throw std::runtime_error("missing " + what);
  Handle attr(H5Aopen(object, name, H5P_DEFAULT), H5Aclose, "open " + what);
  Handle type(H5Aget_type(attr.get()), H5Tclose, "get the type of " + what);
  Handle space(H5Aget_space(attr.get()), H5Sclose, "get the shape of " + what);
  if (H5Tget_class(type.get()) != expected_class || H5Sget_simple_extent_npoints(space.get()) != 1) {
    throw std::runtime_error(what + " is not " + expected);
  }
  return attr;
}

}  // namespace

Handle::Handle(hid_t id, Closer close, const std::string& what) : id_(id), close_(close) {
  if (id < 0) throw std::runtime_error("cannot " + what);
}

void check(herr_t status, const std::string& what) {
  if (status < 0) throw std::runtime_error("cannot " + what);
}

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, function_, data_); }

bool has_attr(hid_t object, const char* name) { return H5Aexists(object, name) > 0; }

void write_attr(hid_t object, const char* name, int64_t value) {
  const auto attr = create_attr(object, name, H5T_STD_I64LE);
  check(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value), std::string("write attribute ") + name);
}

void write_attr(hid_t object, const char* name, const std::string& value) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "create a string type");
  check(H5Tset_size(type.get(), H5T_VARIABLE), "make a variable-length string type");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "make a UTF-8 string type");
  const auto attr = create_attr(object, name, type.get());
  const char* text = value.c_str();
  check(H5Awrite(attr.get(), type.get(), &text), std::string("write attribute ") + name);
}

int64_t read_int_attr(hid_t object, const char* name) {
  const auto attr = open_attr(object, name, H5T_INTEGER, "an integer");
  int64_t value = 0;
  check(H5Aread(attr.get(), H5T_NATIVE_INT64, &value), std::string("read attribute ") + name);
  return value;
}

std::string read_string_attr(hid_t object, const char* name) {
  const auto attr = open_attr(object, name, H5T_STRING, "a string");
  Handle type(H5Aget_type(attr.get()), H5Tclose, std::string("get the type of attribute ") + name);
  const std::string what = std::string("read attribute ") + name;
  if (H5Tis_variable_str(type.get()) > 0) {
    char* text = nullptr;
    check(H5Aread(attr.get(), type.get(), &text), what);
    std::string value = text ? text : "";
    H5free_memory(text);
    return value;
  }
  std::string value(H5Tget_size(type.get()), '\0');  // fixed length, NUL-padded
  check(H5Aread(attr.get(), type.get(), value.data()), what);
  return value.substr(0, value.find('\0'));
}

template <typename T>
void write_vector(hid_t group, const char* name, const std::vector<T>& values, const Layout& layout) {
  const std::string what = std::string("dataset ") + name;
  const hsize_t size = values.size();
  const hsize_t unlimited = H5S_UNLIMITED;  // chunked datasets may grow (appending writers)
  Handle space(H5Screate_simple(1, &size, layout.chunk > 0 ? &unlimited : nullptr), H5Sclose,
               "create the dataspace of " + what);
  Handle properties(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create properties of " + what);
  if (layout.chunk > 0) {
    const hsize_t chunk = layout.chunk;
    check(H5Pset_chunk(properties.get(), 1, &chunk), "set the chunk size of " + what);
    if (layout.deflate > 0) check(H5Pset_deflate(properties.get(), layout.deflate), "deflate " + what);
  }
  Handle dataset(H5Dcreate2(group, name, IntTypes<T>::file(), space.get(), H5P_DEFAULT,
                            properties.get(), H5P_DEFAULT),
                 H5Dclose, "create " + what);
  if (size > 0) {
    check(H5Dwrite(dataset.get(), IntTypes<T>::memory(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
          "write " + what);
  }
}

template <typename T>
Vector<T>::Vector(hid_t group, const char* name)
    : what_(std::string("dataset ") + name),
      dataset_((H5Lexists(group, name, H5P_DEFAULT) > 0 ? H5Dopen2(group, name, H5P_DEFAULT) : -1),
               H5Dclose, "open " + what_ + " (missing?)") {
  Handle type(H5Dget_type(dataset_.get()), H5Tclose, "get the type of " + what_);
  Handle space(H5Dget_space(dataset_.get()), H5Sclose, "get the shape of " + what_);
  if (H5Tget_class(type.get()) != H5T_INTEGER || H5Sget_simple_extent_ndims(space.get()) != 1)
    throw std::runtime_error(what_ + " is not a 1-D integer array");
  if (H5Tget_size(type.get()) != sizeof(T))
    throw std::runtime_error(what_ + " holds " + std::to_string(8 * H5Tget_size(type.get())) +
                             "-bit integers, expected " + std::to_string(8 * sizeof(T)) + "-bit");
  hsize_t size = 0;
  H5Sget_simple_extent_dims(space.get(), &size, nullptr);
  size_ = static_cast<int64_t>(size);
}

template <typename T>
std::vector<T> Vector<T>::read() const {
  std::vector<T> values(size_);
  read(0, size_, values.data());
  return values;
}

template <typename T>
void Vector<T>::read(int64_t begin, int64_t count, T* out) const {
  if (begin < 0 || count < 0 || begin + count > size_)
    throw std::runtime_error("elements [" + std::to_string(begin) + ", " +
                             std::to_string(begin + count) + ") are outside " + what_ + " of " +
                             std::to_string(size_));
  if (count == 0) return;
  Handle file_space(H5Dget_space(dataset_.get()), H5Sclose, "get the shape of " + what_);
  const hsize_t start = begin, length = count;
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &length, nullptr),
        "select a range of " + what_);
  Handle memory_space(H5Screate_simple(1, &length, nullptr), H5Sclose, "create a dataspace");
  check(H5Dread(dataset_.get(), IntTypes<T>::memory(), memory_space.get(), file_space.get(),
                H5P_DEFAULT, out),
        "read " + what_);
}

template <typename T>
std::vector<T> read_vector(hid_t group, const char* name) {
  return Vector<T>(group, name).read();
}

template class Vector<int32_t>;
template class Vector<int64_t>;
template void write_vector<int32_t>(hid_t, const char*, const std::vector<int32_t>&, const Layout&);
template void write_vector<int64_t>(hid_t, const char*, const std::vector<int64_t>&, const Layout&);
template std::vector<int32_t> read_vector<int32_t>(hid_t, const char*);
template std::vector<int64_t> read_vector<int64_t>(hid_t, const char*);

}  // namespace data::h5
