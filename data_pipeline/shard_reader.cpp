#include "data_pipeline/shard_reader.h"

#include <algorithm>
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
    return h5::Handle(H5Fopen(file.c_str(), H5F_ACC_RDONLY, h5::unlocked_access().get()), H5Fclose,
                      "open it as an HDF5 file");
  });
}

// " (examples 3 to 9)", " (example 3)", or "" for none.
std::string examples(int64_t first, int64_t last) {
  if (first > last) return "";
  if (first == last) return " (example " + std::to_string(first) + ")";
  return " (examples " + std::to_string(first) + " to " + std::to_string(last) + ")";
}

// Since format version 2 every dataset carries checksums; one without them
// has been rewritten by something else.
template <typename T>
void require_checksums(const h5::Vector<T>& array, const std::string& name, int64_t version) {
  if (version >= 2 && !array.checksummed()) {
    throw std::runtime_error("dataset " + name +
                             " has no Fletcher-32 checksums, which format_version " +
                             std::to_string(version) + " requires (rewritten by another tool?)");
  }
}

// An index array (offsets, ids, labels), read whole. A damaged chunk is named
// by its examples: entry k of ids or labels is example k's; entry k of
// offsets (lead = 1) bounds examples k - 1 and k.
std::vector<int64_t> read_index_array(hid_t file, const std::string& name, int64_t version,
                                      int64_t num_examples, int64_t lead) {
  const h5::Vector<int64_t> array(file, name.c_str());
  require_checksums(array, name, version);
  try {
    return array.read();
  } catch (const h5::ReadError& e) {
    throw std::runtime_error(e.what() + examples(std::max<int64_t>(e.begin - lead, 0),
                                                 std::min(e.end, num_examples) - 1));
  }
}

// Offsets of one side: n + 1 entries, monotone, from 0 to its token count.
std::vector<int64_t> read_offsets(hid_t file, const std::string& side, int64_t version,
                                  int64_t num_examples, int64_t num_tokens) {
  auto offsets = read_index_array(file, side + "/offsets", version, num_examples, 1);
  if (static_cast<int64_t>(offsets.size()) != num_examples + 1) {
    throw std::runtime_error(
        side + "/offsets has " + std::to_string(offsets.size()) +
        " entries, expected num_examples + 1 = " + std::to_string(num_examples + 1));
  }
  if (offsets.front() != 0 || offsets.back() != num_tokens) {
    throw std::runtime_error(side + "/offsets must run from 0 to the " +
                             std::to_string(num_tokens) + " tokens of " + side + "/tokens");
  }
  for (int64_t i = 0; i < num_examples; ++i) {
    if (offsets[i] > offsets[i + 1]) {
      throw std::runtime_error(side + "/offsets decreases at example " + std::to_string(i));
    }
  }
  return offsets;
}

void check_vocabulary(const std::vector<int32_t>& tokens, const std::string& side,
                      int64_t vocab_size) {
  for (const int32_t token : tokens) {
    if (token < 0 || token >= vocab_size) {
      throw std::runtime_error(side + "/tokens holds id " + std::to_string(token) +
                               " outside the vocabulary of " + std::to_string(vocab_size));
    }
  }
}

// All tokens of one side; a damaged chunk is named by the examples whose
// tokens lie in it.
std::vector<int32_t> read_tokens(const h5::Vector<int32_t>& tokens,
                                 const std::vector<int64_t>& offsets) {
  try {
    return tokens.read();
  } catch (const h5::ReadError& e) {
    // Example k holds tokens [offsets[k], offsets[k + 1]).
    const auto first =
        std::upper_bound(offsets.begin(), offsets.end(), e.begin) - offsets.begin() - 1;
    const auto last = std::lower_bound(offsets.begin(), offsets.end(), e.end) - offsets.begin() - 1;
    throw std::runtime_error(e.what() + examples(first, last));
  }
}

// Labels of a classification shard: n entries, each in [0, num_labels).
std::vector<int64_t> read_labels(hid_t file, int64_t version, int64_t num_examples,
                                 int64_t num_labels) {
  auto labels = read_index_array(file, "labels", version, num_examples, 0);
  if (static_cast<int64_t>(labels.size()) != num_examples) {
    throw std::runtime_error("labels has " + std::to_string(labels.size()) +
                             " entries, expected num_examples = " + std::to_string(num_examples));
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= num_labels) {
      throw std::runtime_error("labels holds " + std::to_string(labels[i]) + " in example " +
                               std::to_string(i) + ", outside the " + std::to_string(num_labels) +
                               " labels (num_labels)");
    }
  }
  return labels;
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
    format_version_ = h5::read_int_attr(root, "format_version");
    if (format_version_ < kOldestShardFormatVersion || format_version_ > kShardFormatVersion) {
      throw std::runtime_error("format_version " + std::to_string(format_version_) +
                               " is not supported (this build reads versions " +
                               std::to_string(kOldestShardFormatVersion) + " to " +
                               std::to_string(kShardFormatVersion) + ")");
    }
    num_examples_ = h5::read_int_attr(root, "num_examples");
    attrs_.src_vocab_size = h5::read_int_attr(root, "src_vocab_size");
    attrs_.tgt_vocab_size = h5::read_int_attr(root, "tgt_vocab_size");
    attrs_.special.pad = static_cast<int32_t>(h5::read_int_attr(root, "pad_id"));
    attrs_.special.bos = static_cast<int32_t>(h5::read_int_attr(root, "bos_id"));
    attrs_.special.eos = static_cast<int32_t>(h5::read_int_attr(root, "eos_id"));
    attrs_.special.unk = static_cast<int32_t>(h5::read_int_attr(root, "unk_id"));
    if (h5::has_attr(root, "num_labels")) {
      attrs_.num_labels = h5::read_int_attr(root, "num_labels");
      if (attrs_.num_labels < 1) {
        throw std::runtime_error("attribute num_labels is " + std::to_string(attrs_.num_labels) +
                                 ", expected at least 1");
      }
    }
    src_tokens_.emplace(root, "src/tokens");
    tgt_tokens_.emplace(root, "tgt/tokens");
    require_checksums(*src_tokens_, "src/tokens", format_version_);
    require_checksums(*tgt_tokens_, "tgt/tokens", format_version_);
  });
}

ShardIndex ShardReader::read_index() const {
  return naming(file_, [&] {
    const hid_t root = handle_.get();
    const int64_t version = format_version_;
    ShardIndex index{read_offsets(root, "src", version, num_examples_, src_tokens_->size()),
                     read_offsets(root, "tgt", version, num_examples_, tgt_tokens_->size()),
                     read_index_array(root, "ids", version, num_examples_, 0),
                     attrs_.num_labels > 0
                         ? read_labels(root, version, num_examples_, attrs_.num_labels)
                         : std::vector<int64_t>{}};
    if (index.size() != num_examples_) {
      throw std::runtime_error(
          "ids has " + std::to_string(index.size()) +
          " entries, expected num_examples = " + std::to_string(num_examples_));
    }
    return index;
  });
}

ExampleLocation ShardIndex::location(int64_t i) const {
  return {src_offsets[i], src_offsets[i + 1] - src_offsets[i],
          tgt_offsets[i], tgt_offsets[i + 1] - tgt_offsets[i],
          ids[i],         labels.empty() ? -1 : labels[i]};
}

Example ShardReader::read_example(const ExampleLocation& where, int64_t i) const {
  return naming(file_, [&] {
    const auto read_side = [&](const h5::Vector<int32_t>& tokens, int64_t offset, int64_t length,
                               const char* side, int64_t vocab_size) {
      if (offset < 0 || length < 0 || offset + length > tokens.size())
        throw std::runtime_error(std::string(side) + " tokens [" + std::to_string(offset) + ", " +
                                 std::to_string(offset + length) + ") outside the shard's " +
                                 std::to_string(tokens.size()));
      std::vector<int32_t> sequence(length);
      tokens.read(offset, length, sequence.data());
      check_vocabulary(sequence, side, vocab_size);
      return sequence;
    };
    try {
      return Example{
          where.id,
          read_side(*src_tokens_, where.src_offset, where.src_length, "src", attrs_.src_vocab_size),
          read_side(*tgt_tokens_, where.tgt_offset, where.tgt_length, "tgt", attrs_.tgt_vocab_size),
          static_cast<int32_t>(where.label)};
    } catch (const std::exception& e) {
      throw std::runtime_error("example " + std::to_string(i) + " (id " + std::to_string(where.id) +
                               "): " + e.what());
    }
  });
}

ShardData ShardReader::read() const {
  ShardIndex index = read_index();
  return naming(file_, [&] {
    ShardData data{{read_tokens(*src_tokens_, index.src_offsets), std::move(index.src_offsets)},
                   {read_tokens(*tgt_tokens_, index.tgt_offsets), std::move(index.tgt_offsets)},
                   std::move(index.ids),
                   std::move(index.labels)};
    check_vocabulary(data.src.tokens, "src", attrs_.src_vocab_size);
    check_vocabulary(data.tgt.tokens, "tgt", attrs_.tgt_vocab_size);
    return data;
  });
}

}  // namespace data
