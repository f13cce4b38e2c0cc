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

// Offsets of one side: n + 1 entries, monotone, from 0 to its token count.
std::vector<int64_t> read_offsets(hid_t file, const std::string& side, int64_t num_examples,
                                  int64_t num_tokens) {
  auto offsets = h5::read_vector<int64_t>(file, (side + "/offsets").c_str());
  if (static_cast<int64_t>(offsets.size()) != num_examples + 1) {
    throw std::runtime_error(side + "/offsets has " + std::to_string(offsets.size()) +
                             " entries, expected num_examples + 1 = " +
                             std::to_string(num_examples + 1));
  }
  if (offsets.front() != 0 || offsets.back() != num_tokens) {
    throw std::runtime_error(side + "/offsets must run from 0 to the " + std::to_string(num_tokens) +
                             " tokens of " + side + "/tokens");
  }
  for (int64_t i = 0; i < num_examples; ++i) {
    if (offsets[i] > offsets[i + 1]) {
      throw std::runtime_error(side + "/offsets decreases at example " + std::to_string(i));
    }
  }
  return offsets;
}

void check_vocabulary(const std::vector<int32_t>& tokens, const std::string& side,
                      int64_t vocab_size, const std::string& where) {
  for (const int32_t token : tokens) {
    if (token < 0 || token >= vocab_size) {
      throw std::runtime_error(side + "/tokens holds id " + std::to_string(token) + where +
                               " outside the vocabulary of " + std::to_string(vocab_size));
    }
  }
}

// Labels of a classification shard: n entries, each in [0, num_labels).
std::vector<int64_t> read_labels(hid_t file, int64_t num_examples, int64_t num_labels) {
  auto labels = h5::read_vector<int64_t>(file, "labels");
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
    if (h5::has_attr(root, "num_labels")) {
      attrs_.num_labels = h5::read_int_attr(root, "num_labels");
      if (attrs_.num_labels < 1) {
        throw std::runtime_error("attribute num_labels is " + std::to_string(attrs_.num_labels) +
                                 ", expected at least 1");
      }
    }
    src_tokens_.emplace(root, "src/tokens");
    tgt_tokens_.emplace(root, "tgt/tokens");
  });
}

ShardIndex ShardReader::read_index() const {
  return naming(file_, [&] {
    const hid_t root = handle_.get();
    ShardIndex index{read_offsets(root, "src", num_examples_, src_tokens_->size()),
                     read_offsets(root, "tgt", num_examples_, tgt_tokens_->size()),
                     h5::read_vector<int64_t>(root, "ids"),
                     attrs_.num_labels > 0 ? read_labels(root, num_examples_, attrs_.num_labels)
                                           : std::vector<int64_t>{}};
    if (index.size() != num_examples_) {
      throw std::runtime_error("ids has " + std::to_string(index.size()) +
                               " entries, expected num_examples = " + std::to_string(num_examples_));
    }
    return index;
  });
}

Example ShardReader::read_example(const ShardIndex& index, int64_t i) const {
  return naming(file_, [&] {
    const auto read_side = [&](const h5::Vector<int32_t>& tokens, const std::vector<int64_t>& offsets,
                               const char* side, int64_t vocab_size) {
      std::vector<int32_t> sequence(offsets[i + 1] - offsets[i]);
      tokens.read(offsets[i], static_cast<int64_t>(sequence.size()), sequence.data());
      check_vocabulary(sequence, side, vocab_size, " in example " + std::to_string(i));
      return sequence;
    };
    return Example{index.ids[i], read_side(*src_tokens_, index.src_offsets, "src", attrs_.src_vocab_size),
                   read_side(*tgt_tokens_, index.tgt_offsets, "tgt", attrs_.tgt_vocab_size),
                   index.labels.empty() ? -1 : static_cast<int32_t>(index.labels[i])};
  });
}

ShardData ShardReader::read() const {
  ShardIndex index = read_index();
  return naming(file_, [&] {
    ShardData data{{src_tokens_->read(), std::move(index.src_offsets)},
                   {tgt_tokens_->read(), std::move(index.tgt_offsets)},
                   std::move(index.ids), std::move(index.labels)};
    check_vocabulary(data.src.tokens, "src", attrs_.src_vocab_size, "");
    check_vocabulary(data.tgt.tokens, "tgt", attrs_.tgt_vocab_size, "");
    return data;
  });
}

}  // namespace data
