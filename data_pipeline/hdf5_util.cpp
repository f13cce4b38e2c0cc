#include "data_pipeline/hdf5_util.h"

#include <algorithm>
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
  if (H5Tget_class(type.get()) != expected_class ||
      H5Sget_simple_extent_npoints(space.get()) != 1) {
    throw std::runtime_error(what + " is not " + expected);
  }
  return attr;
}

// "cannot <what>", and why when HDF5 says.
std::runtime_error failure(const std::string& what) {
  const std::string reason = failure_reason();
  return std::runtime_error("cannot " + what + (reason.empty() ? "" : ": " + reason));
}

bool contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

// The dataset `name`; "missing dataset <name>" when there is none.
Handle open_dataset(hid_t group, const char* name) {
  const std::string what = std::string("dataset ") + name;
  const htri_t exists = H5Lexists(group, name, H5P_DEFAULT);
  if (exists == 0) throw std::runtime_error("missing " + what);
  return Handle(exists > 0 ? H5Dopen2(group, name, H5P_DEFAULT) : -1, H5Dclose, "open " + what);
}

}  // namespace

Handle::Handle(hid_t id, Closer close, const std::string& what) : id_(id), close_(close) {
  if (id < 0) throw failure(what);
}

void check(herr_t status, const std::string& what) {
  if (status < 0) throw failure(what);
}

std::string failure_reason() {
  std::vector<std::string> messages;  // innermost (the cause) first
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned, const H5E_error2_t* error, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->push_back(error->desc ? error->desc : "");
        return 0;
      },
      &messages);
  for (const auto& message : messages) {
    if (contains(message, "Fletcher32 checksum"))
      return "the data fails its Fletcher-32 checksum (corrupted)";
    if (contains(message, "metadata checksum"))
      return "metadata checksum mismatch (the file is corrupted)";
    if (contains(message, "truncated file")) return "the file is truncated (" + message + ")";
  }
  return messages.empty() ? "" : messages.front();
}

Handle unlocked_access() {
  Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "create file access properties");
  check(H5Pset_file_locking(access.get(), /*use_file_locking=*/false,
                            /*ignore_when_disabled=*/false),
        "turn HDF5's file locking off");
  return access;
}

Handle checksummed_metadata_access() {
  Handle access = unlocked_access();
  check(H5Pset_libver_bounds(access.get(), H5F_LIBVER_V110, H5F_LIBVER_V110),
        "select the HDF5 1.10 file format");
  return access;
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
void write_vector(hid_t group, const char* name, const std::vector<T>& values,
                  const Layout& layout) {
  const std::string what = std::string("dataset ") + name;
  const hsize_t size = values.size();
  const hsize_t unlimited = H5S_UNLIMITED;  // chunked datasets may grow (appending writers)
  Handle space(H5Screate_simple(1, &size, layout.chunk > 0 ? &unlimited : nullptr), H5Sclose,
               "create the dataspace of " + what);
  Handle properties(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "create properties of " + what);
  if (layout.chunk > 0) {
    const hsize_t chunk = layout.chunk;
    check(H5Pset_chunk(properties.get(), 1, &chunk), "set the chunk size of " + what);
    if (layout.deflate > 0)
      check(H5Pset_deflate(properties.get(), layout.deflate), "deflate " + what);
    if (layout.checksum) check(H5Pset_fletcher32(properties.get()), "checksum " + what);
  } else if (layout.checksum) {
    throw std::invalid_argument(what + ": checksums need a chunked layout");
  }
  Handle dataset(H5Dcreate2(group, name, IntTypes<T>::file(), space.get(), H5P_DEFAULT,
                            properties.get(), H5P_DEFAULT),
                 H5Dclose, "create " + what);
  if (size > 0) {
    check(H5Dwrite(dataset.get(), IntTypes<T>::memory(), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                   values.data()),
          "write " + what);
  }
}

template <typename T>
Vector<T>::Vector(hid_t group, const char* name)
    : what_(std::string("dataset ") + name), dataset_(open_dataset(group, name)) {
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
  Handle properties(H5Dget_create_plist(dataset_.get()), H5Pclose, "get the layout of " + what_);
  if (H5Pget_layout(properties.get()) == H5D_CHUNKED) {
    hsize_t chunk = 0;
    check(H5Pget_chunk(properties.get(), 1, &chunk), "get the chunk size of " + what_);
    chunk_ = static_cast<int64_t>(chunk);
  }
  for (int k = 0, filters = H5Pget_nfilters(properties.get()); k < filters; ++k) {
    unsigned flags = 0, filter_config = 0;
    size_t values = 0;
    if (H5Pget_filter2(properties.get(), k, &flags, &values, nullptr, 0, nullptr, &filter_config) ==
        H5Z_FILTER_FLETCHER32)
      checksummed_ = true;
  }
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
  const auto fail = [&](int64_t first, int64_t end, const std::string& reason) {
    throw ReadError("cannot read " + what_ + ", elements [" + std::to_string(first) + ", " +
                        std::to_string(end) + "): " + reason,
                    first, end);
  };
  const auto failed = try_read(begin, count, out);
  if (!failed) return;
  if (chunk_ == 0) fail(begin, begin + count, *failed);
  // Chunk by chunk, to name the part of the range in the damaged chunk (a
  // failure that does not come back leaves the range read).
  for (int64_t first = begin, end; first < begin + count; first = end) {
    end = std::min((first / chunk_ + 1) * chunk_, begin + count);
    if (const auto reason = try_read(first, end - first, out + (first - begin)))
      fail(first, end, *reason);
  }
}

template <typename T>
std::optional<std::string> Vector<T>::try_read(int64_t begin, int64_t count, T* out) const {
  Handle file_space(H5Dget_space(dataset_.get()), H5Sclose, "get the shape of " + what_);
  const hsize_t start = begin, length = count;
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &length, nullptr),
        "select a range of " + what_);
  Handle memory_space(H5Screate_simple(1, &length, nullptr), H5Sclose, "create a dataspace");
  if (H5Dread(dataset_.get(), IntTypes<T>::memory(), memory_space.get(), file_space.get(),
              H5P_DEFAULT, out) >= 0)
    return std::nullopt;
  const std::string reason = failure_reason();  // before closing the handles clears the stack
  return reason.empty() ? "HDF5 gives no reason" : reason;
}

template class Vector<int32_t>;
template class Vector<int64_t>;
template void write_vector<int32_t>(hid_t, const char*, const std::vector<int32_t>&, const Layout&);
template void write_vector<int64_t>(hid_t, const char*, const std::vector<int64_t>&, const Layout&);

}  // namespace data::h5
