// prepare_data's work: text or a synthetic task -> a complete dataset dir.
//
//   out/manifest.json                 (manifest.h)
//   out/vocab.txt  or  out/vocab.src.txt + out/vocab.tgt.txt   (vocab.h)
//   or out/spm.model + spm.vocab (or .src/.tgt)   (sentencepiece_tokenizer.h)
//   out/labels.txt                    classification only (labels.h)
//   out/{train,valid,test}-NNNNN.h5   (shard_format.h)
//
// Tasks: seq2seq from parallel text ("text") or synthetic ("copy",
// "reverse"); classification from label<TAB>text files ("classify",
// labeled_text.h) or synthetic ("majority"). A classification dataset has
// one tokenizer (trained on the texts), its labels in labels.txt (the
// training split's, sorted), and shards with /labels and no target tokens;
// a valid or test label missing from the training split is an error naming
// the file and line.
//
// The directory appears atomically: everything is built in "<out>.tmp-XXXXXX"
// (a random name, made with the umask's mode) and renamed to <out> at the
// end; without force, never over a dataset another prepare_data published
// meanwhile (an error), with force an
// old <out> is moved aside first and deleted last. A failure removes the
// temporary directory.
//
// Text is streamed (parallel_text.h): memory does not grow with the corpus.
// Tokenizers are trained on a uniform sample of at most tokenizer_sample
// cleaned training pairs.
//
// Under `mpirun -np N` (launch/ranks.h) rank 0 trains the tokenizers, each rank
// encodes a contiguous range of input lines of every split into its own
// shards, and rank 0 names them in order and writes the manifest: the
// examples, their ids and their order are the same for any N (shard
// boundaries may differ).
//
// Shard k of a split holds examples [k × shard_size, (k + 1) × shard_size).
// Example ids are input line numbers (0-based) for text — the training split
// is cleaned first (cleaning.h), so its ids have gaps — and positions for
// synthetic tasks.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "data_pipeline/make_tokenizer.h"
#include "data_pipeline/manifest.h"
#include "data_pipeline/prepare/cleaning.h"
#include "data_pipeline/prepare/sentencepiece_tokenizer.h"
#include "data_pipeline/prepare/synthetic.h"
#include "data_pipeline/shard_writer.h"
#include "settings/names.h"

namespace data {

// The splits prepare_data knows, in the order they are written.
inline const std::vector<std::string> kSplits = {"train", "valid", "test"};

struct TextFiles {
  std::filesystem::path src;
  std::filesystem::path tgt;
};

// What a dataset is made from: a synthetic task (copy, reverse: seq2seq;
// majority: classification) or files (text: parallel; classify: labeled).
enum class Task { kCopy, kReverse, kMajority, kText, kClassify };
inline const settings::Names<Task> kTaskNames = {{"copy", Task::kCopy},
                                                 {"reverse", Task::kReverse},
                                                 {"majority", Task::kMajority},
                                                 {"text", Task::kText},
                                                 {"classify", Task::kClassify}};

inline bool is_synthetic_task(Task task) {
  return task == Task::kCopy || task == Task::kReverse || task == Task::kMajority;
}
inline bool is_classification_task(Task task) {
  return task == Task::kClassify || task == Task::kMajority;
}

// prepare_data's settings (prepare_settings.h binds each to a key).
struct PrepareOptions {
  Task task = Task::kCopy;
  std::filesystem::path out;
  bool force = false;  // replace an existing non-empty <out>

  // Synthetic tasks: split sizes (0 leaves a split out), lengths, symbols.
  int64_t seed = 1;  // split s is drawn with mix_seed(seed, index of s in kSplits)
  std::map<std::string, int64_t> sizes = {{"train", 20000}, {"valid", 500}, {"test", 500}};
  SyntheticOptions synthetic;

  // Text and classify: files per split ("train" required); the tokenizer is trained on train.
  std::map<std::string, TextFiles> text;             // text: parallel files
  std::map<std::string, std::filesystem::path> tsv;  // classify: label<TAB>text files
  TokenizerKind tokenizer = TokenizerKind::kWord;
  bool joint_vocab = false;   // text: one vocabulary for both sides (classify has one side)
  TokenizerOptions vocab;     // word / char
  CleaningOptions cleaning;   // the training split
  bool strip_spaces = false;  // remove spaces and tabs from every sentence (text_lines.h)
  int64_t tokenizer_sample = 2000000;  // tokenizers train on at most this many pairs (a sample)
  SentencePieceOptions spm;            // spm: training
  std::filesystem::path spm_model;     // spm: use this .model (both sides) instead of training

  int64_t shard_size = 100000;  // max examples per shard
  int64_t shard_mb = 0;         // and about this many MiB (0 = no size limit)
  ShardWriteOptions shard;

  std::string command;  // the command line, recorded in the manifest
};

// Throws std::invalid_argument naming the first option that is missing or out
// of range (the task, sizes, files a task needs, tokenizer settings).
void check_options(const PrepareOptions& options);

// Builds the dataset and returns its manifest. Throws std::runtime_error or
// std::invalid_argument with a message naming the file or option at fault.
Manifest prepare_dataset(const PrepareOptions& options);

}  // namespace data
