// Which checkpoint a job starts from or scores, in the words of the trainer's
// --resume and evaluate's --checkpoint:
//
//   latest  the run's newest checkpoint ("auto", its former name, is the same)
//   best    the run's best by validation loss
//   none    no checkpoint: a fresh start (the trainer's only)
//   <dir>   that checkpoint directory
#pragma once
#include <string>

namespace checkpoint {

struct CheckpointChoice {
  enum class Kind { kLatest, kBest, kNone, kDirectory };
  Kind kind = Kind::kLatest;
  std::string dir;  // kDirectory's

  static CheckpointChoice latest() { return {Kind::kLatest, ""}; }
  static CheckpointChoice best() { return {Kind::kBest, ""}; }
  static CheckpointChoice none() { return {Kind::kNone, ""}; }
  static CheckpointChoice directory(std::string dir) { return {Kind::kDirectory, std::move(dir)}; }

  // One of the words, else a directory; "" is refused (std::invalid_argument).
  static CheckpointChoice parse(const std::string& text);
  // As parse() reads it: "latest", "best", "none" or the directory.
  std::string text() const;
  // latest or best: a checkpoint of the run, found through its link.
  bool of_run() const { return kind == Kind::kLatest || kind == Kind::kBest; }
};

}  // namespace checkpoint
