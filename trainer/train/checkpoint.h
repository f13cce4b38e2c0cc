// Checkpoints: one directory per save, written atomically.
//
//   <run>/checkpoints/step_00012000/
//       model.pt       weights, a state dict Python's torch.load reads
//       optimizer.pt   Adam moments and step counts (torch::save archive)
//       state.json     step, epoch, data cursor, world size, config, dataset hash
//       SHA256SUMS     `sha256sum -c` checks the three files above
//   <run>/checkpoints/latest -> step_00012000   (updated last)
//
// The directory is written under a temporary name, every file fsynced, then
// renamed; a crash leaves either the old checkpoints or the new one, never a
// half-written one that `latest` points to.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

namespace train {

class Checkpoints {
 public:
  explicit Checkpoints(std::string run_dir, int64_t keep_last = 5);

  // Writes step_<step>, moves `latest` to it, removes all but the newest keep_last.
  std::string save(int64_t step, const torch::nn::Module& model,
                   torch::optim::Optimizer& optimizer, const nlohmann::json& state) const;

  // "latest" or a checkpoint directory path -> that directory; throws naming
  // what was looked for when there is none.
  std::string resolve(const std::string& which) const;

  // Complete checkpoint directories, oldest first.
  std::vector<std::string> list() const;

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;  // <run>/checkpoints
  int64_t keep_last_;
};

// True when SHA256SUMS matches every file; otherwise false and *why says what failed.
bool verify_checkpoint(const std::string& checkpoint_dir, std::string* why);

nlohmann::json read_checkpoint_state(const std::string& checkpoint_dir);

}  // namespace train
