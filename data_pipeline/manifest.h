// manifest.json: the table of contents of a dataset directory.
//
//   {
//     "format": "transformer-dataset", "format_version": 1, "task": "seq2seq",
//     "tokenizer": {"kind": "word", "src_file": "vocab.txt", "tgt_file": "vocab.txt"},
//     "src_vocab_size": 24, "tgt_vocab_size": 24,
//     "special_ids": {"pad": 0, "bos": 1, "eos": 2, "unk": 3},
//     "splits": {
//       "train": {
//         "shards": [{"file": "train-00000.h5", "num_examples": 20000,
//                     "src_tokens": 160123, "tgt_tokens": 160123, "sha256": "9f86..."}],
//         "sources": [{"path": "/abs/train.de", "sha256": "..."}, ...],  // text only
//         "index": {"file": "train.index", "sha256": "..."}   // split_index.h
//       },
//       "valid": {...}, "test": {...}
//     },
//     "content_sha256": "5e3c...",
//     "prepare": {"command": "prepare_data --task copy ...", "options": {...}}
//   }
//
// content_sha256 identifies the dataset by what training reads
// (dataset_identity.h); datasets prepared before it have none. A split's
// "index" (split_index.h) is absent in datasets prepared before it
// (`prepare_data --upgrade DIR` adds it). A dataset without content_sha256
// that --upgrade rewrote keeps the manifest's sha256 from before in
// "manifest_sha256_before_upgrade": its runs named it by that.
// Token counts are without bos/eos, as stored in the shards. The tokenizer
// files are relative to the directory; src_file == tgt_file when joint.
//
// A classification dataset has "task": "classification" and its classes:
//
//     "labels": {"file": "labels.txt", "count": 3}     (labels.h; count >= 2)
//
// Its shards carry /labels and no target tokens; its one tokenizer is
// joint (src_file == tgt_file, tgt_vocab_size == src_vocab_size).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data_pipeline/special_ids.h"
#include "data_pipeline/tokenizer_kind.h"

namespace data {

inline constexpr char kManifestFile[] = "manifest.json";
inline constexpr char kDatasetFormat[] = "transformer-dataset";
inline constexpr int64_t kDatasetFormatVersion = 1;
inline constexpr char kSeq2SeqTask[] = "seq2seq";
inline constexpr char kClassificationTask[] = "classification";

struct ShardEntry {
  std::string file;  // relative to the dataset dir
  int64_t num_examples = 0;
  int64_t src_tokens = 0;
  int64_t tgt_tokens = 0;
  std::string sha256;  // of the whole file
};

struct SourceFile {
  std::string path;  // absolute, as read by prepare_data
  std::string sha256;
};

struct IndexEntry {
  std::string file;  // relative to the dataset dir; empty: the split has no index (prepared before)
  std::string sha256;
};

struct SplitEntry {
  std::vector<ShardEntry> shards;  // in example order
  std::vector<SourceFile>
      sources;       // src then tgt text file, or the TSV file; empty for synthetic tasks
  IndexEntry index;  // split_index.h

  int64_t num_examples() const;
  int64_t src_tokens() const;
  int64_t tgt_tokens() const;
};

struct Manifest {
  std::string task = kSeq2SeqTask;  // or kClassificationTask
  TokenizerKind tokenizer_kind = TokenizerKind::kWord;
  std::string src_tokenizer_file;
  std::string tgt_tokenizer_file;
  int64_t src_vocab_size = 0;
  int64_t tgt_vocab_size = 0;
  SpecialIds special;
  std::string labels_file;  // classification: the label file (labels.h); empty for seq2seq
  int64_t num_labels = 0;   // classification: its number of labels; 0 for seq2seq
  std::map<std::string, SplitEntry> splits;
  std::string content_sha256;  // dataset_identity.h; empty if prepared before it
  std::string manifest_sha256_before_upgrade;  // see above; empty if never upgraded
  nlohmann::json prepare;  // how the dataset was made (free-form, for people)

  bool is_classification() const { return task == kClassificationTask; }
};

void write_manifest(const std::filesystem::path& dir, const Manifest& manifest);

// Reads and validates dir/manifest.json; errors name the file and the field
// ("... manifest.json: field 'splits.train.shards[0].sha256' is missing").
Manifest read_manifest(const std::filesystem::path& dir);

}  // namespace data
