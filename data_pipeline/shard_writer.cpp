#include "data_pipeline/shard_writer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "data_pipeline/hdf5_util.h"

namespace data {

namespace {

void check_shapes(const ShardData& data, const ShardAttrs& attrs) {
  if (data.src.size() != data.size() || data.tgt.size() != data.size()) {
    throw std::invalid_argument(
        "src, tgt and ids hold different numbers of examples (" + std::to_string(data.src.size()) +
        ", " + std::to_string(data.tgt.size()) + ", " + std::to_string(data.size()) + ")");
  }
  const auto labels = static_cast<int64_t>(data.labels.size());
  if (labels != (attrs.num_labels > 0 ? data.size() : 0)) {
    throw std::invalid_argument(std::to_string(labels) + " labels for " +
                                std::to_string(data.size()) +
                                " examples and num_labels = " + std::to_string(attrs.num_labels));
  }
  for (const int64_t label : data.labels) {
    if (label < 0 || label >= attrs.num_labels) {
      throw std::invalid_argument("label " + std::to_string(label) + " outside [0, num_labels = " +
                                  std::to_string(attrs.num_labels) + ")");
    }
  }
}

// Every dataset is chunked (a chunk no larger than the data) and checksummed;
// only the token arrays are deflated.
template <typename T>
void write_checked(hid_t file, const std::string& name, const std::vector<T>& values,
                   const ShardWriteOptions& options, bool deflate) {
  const int64_t chunk = std::clamp<int64_t>(values.size(), 1, options.chunk);
  h5::write_vector(file, name.c_str(), values,
                   {chunk, deflate ? static_cast<int>(options.deflate) : 0, true});
}

void write_side(hid_t file, const std::string& side, const RaggedTokens& sequences,
                const ShardWriteOptions& options) {
  h5::Handle group(H5Gcreate2(file, side.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                   "create group " + side);
  write_checked(file, side + "/tokens", sequences.tokens, options, true);
  write_checked(file, side + "/offsets", sequences.offsets, options, false);
}

void write_file(const std::string& path, const ShardData& data, const ShardAttrs& attrs,
                const ShardWriteOptions& options) {
  if (options.deflate > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0) {
    throw std::runtime_error("this HDF5 library has no deflate filter");
  }
  if (H5Zfilter_avail(H5Z_FILTER_FLETCHER32) <= 0) {
    throw std::runtime_error("this HDF5 library has no Fletcher-32 filter");
  }
  h5::Handle file(
      H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, h5::checksummed_metadata_access().get()),
      H5Fclose, "create the file");
  const hid_t root = file.get();
  h5::write_attr(root, "format", std::string(kShardFormat));
  h5::write_attr(root, "format_version", kShardFormatVersion);
  h5::write_attr(root, "num_examples", data.size());
  h5::write_attr(root, "src_vocab_size", attrs.src_vocab_size);
  h5::write_attr(root, "tgt_vocab_size", attrs.tgt_vocab_size);
  h5::write_attr(root, "pad_id", attrs.special.pad);
  h5::write_attr(root, "bos_id", attrs.special.bos);
  h5::write_attr(root, "eos_id", attrs.special.eos);
  h5::write_attr(root, "unk_id", attrs.special.unk);
  write_side(root, "src", data.src, options);
  write_side(root, "tgt", data.tgt, options);
  write_checked(root, "ids", data.ids, options, false);
  if (attrs.num_labels > 0) {
    h5::write_attr(root, "num_labels", attrs.num_labels);
    write_checked(root, "labels", data.labels, options, false);
  }
  h5::check(H5Fflush(root, H5F_SCOPE_LOCAL), "flush the file");
}

}  // namespace

void write_shard(const std::filesystem::path& file, const ShardData& data, const ShardAttrs& attrs,
                 const ShardWriteOptions& options) {
  const std::filesystem::path temp = file.string() + ".tmp";
  try {
    check_shapes(data, attrs);
    h5::QuietErrors quiet;
    write_file(temp.string(), data, attrs, options);  // closed on return
    std::filesystem::rename(temp, file);
  } catch (const std::exception& e) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw std::runtime_error("writing shard " + file.string() + ": " + e.what());
  }
}

}  // namespace data
