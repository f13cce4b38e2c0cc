#include "data_pipeline/shard_reader.h"

#include <stdexcept>
#include <string>

namespace data {

namespace {

// Runs `body`, prefixing any error with the shard's file name.
template <typename Body>
auto naming(const std::filesystem::path& file, Body&& body) {
  try {
    h5::QuietErrors quiet;
    return body();
  } catch (const std::exception& e) {
    throw std::runtime_error("shard " + file.string() + ": " + e.what());
  }
}

h5::Handle open_file(const std::filesystem::path& file) {
  return naming(file, [&] {
    if (!std::filesystem::is_regular_file(file)) throw std::runtime_error("no such file");
    return h5::Handle(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose,
                      "open it as an HDF5 file");
  });
}

RaggedTokens read_side(hid_t file, const std::string& side, int64_t num_examples,
                       int64_t vocab_size) {
  RaggedTokens sequences{h5::read_vector<int32_t>(file, (side + "/tokens").c_str()),
                         h5::read_vector<int64_t>(file, (side + "/offsets").c_str())};
  const auto& offsets = sequences.offsets;
  const auto total = static_cast<int64_t>(sequences.tokens.size());
  if (static_cast<int64_t>(offsets.size()) != num_examples + 1) {
    throw std::runtime_error(side + "/offsets has " + std::to_string(offsets.size()) +
                             " entries, expected num_examples + 1 = " +
                             std::to_string(num_examples + 1));
  }
  if (offsets.front() != 0 || offsets.back() != total) {
    throw std::runtime_error(side + "/offsets must run from 0 to the " + std::to_string(total) +
                             " tokens of " + side + "/tokens");
  }
  for (int64_t i = 0; i < num_examples; ++i) {
    if (offsets[i] > offsets[i + 1]) {
      throw std::runtime_error(side + "/offsets decreases at example " + std::to_string(i));
    }
  }
  for (const int32_t token : sequences.tokens) {
    if (token < 0 || token >= vocab_size) {
      throw std::runtime_error(side + "/tokens holds id " + std::to_string(token) +
                               " outside the vocabulary of " + std::to_string(vocab_size));
    }
  }
  return sequences;
}

}  // namespace

ShardReader::ShardReader(const std::filesystem::path& file)
    : file_(file), handle_(open_file(file)) {
  naming(file_, [&] {
    const hid_t root = handle_.get();
    const std::string format = h5::read_string_attr(root, "format");
    if (format != kShardFormat) {
      throw std::runtime_error("format is '" + format + "', expected '" + kShardFormat + "'");
    }
    const int64_t version = h5::read_int_attr(root, "format_version");
    if (version != kShardFormatVersion) {
      throw std::runtime_error("format_version " + std::to_string(version) +
                               " is not supported (this build reads version " +
                               std::to_string(kShardFormatVersion) + ")");
    }
    num_examples_ = h5::read_int_attr(root, "num_examples");
    attrs_.src_vocab_size = h5::read_int_attr(root, "src_vocab_size");
    attrs_.tgt_vocab_size = h5::read_int_attr(root, "tgt_vocab_size");
    attrs_.special.pad = static_cast<int32_t>(h5::read_int_attr(root, "pad_id"));
    attrs_.special.bos = static_cast<int32_t>(h5::read_int_attr(root, "bos_id"));
    attrs_.special.eos = static_cast<int32_t>(h5::read_int_attr(root, "eos_id"));
    attrs_.special.unk = static_cast<int32_t>(h5::read_int_attr(root, "unk_id"));
  });
}

ShardData ShardReader::read() const {
  return naming(file_, [&] {
    const hid_t root = handle_.get();
    ShardData data{read_side(root, "src", num_examples_, attrs_.src_vocab_size),
                   read_side(root, "tgt", num_examples_, attrs_.tgt_vocab_size),
                   h5::read_vector<int64_t>(root, "ids")};
    if (data.size() != num_examples_) {
      throw std::runtime_error("ids has " + std::to_string(data.size()) +
                               " entries, expected num_examples = " + std::to_string(num_examples_));
    }
    return data;
  });
}

}  // namespace data
