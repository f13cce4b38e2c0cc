// What prepare_data learns from the training split: the tokenizers, trained
// on a uniform sample of its (cleaned) pairs, and a classification
// dataset's labels. Rank 0 makes and saves them; the other ranks load them.
#pragma once
#include <filesystem>
#include <memory>
#include <string>

#include "data_pipeline/labels.h"
#include "data_pipeline/prepare/parallel_text.h"
#include "data_pipeline/prepare/prepare.h"
#include "data_pipeline/tokenizer.h"

namespace data {

// The source and target tokenizers; one shared object when joint.
struct Tokenizers {
  std::shared_ptr<Tokenizer> src;
  std::shared_ptr<Tokenizer> tgt;
  bool joint() const { return src == tgt; }
};

// Whether the task has one tokenizer for both sides: synthetic and
// classification tasks, --joint-vocab, a given SentencePiece model.
bool joint_tokenizer(const PrepareOptions& options);

// The synthetic symbols, the given SentencePiece model, or tokenizers
// trained on at most tokenizer_sample training pairs (classification: on
// the texts alone).
Tokenizers make_tokenizers(const PrepareOptions& options, const PairSource& train_pairs);

// The classes: a synthetic task's, in order, or the labels of the (cleaned)
// training split in byte order. Throws when there are fewer than 2.
LabelSet make_labels(const PrepareOptions& options, const PairSource& train);

// What rank 0 trained and saved in the dataset directory, as an encoder.
std::shared_ptr<Tokenizer> load_encoder(TokenizerKind kind, const std::filesystem::path& file);

}  // namespace data
