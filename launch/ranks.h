// The MPI control plane: the ranks of a job agreeing on small things (text,
// numbers, failures) over MPI_COMM_WORLD, torch-free, so that the data tools,
// the trainer's start-up and the evaluation job share it. Tensors travel
// through trainer/distributed/ instead. One process when MPI is not
// initialised (tests call library functions directly). Work is split by
// contiguous ranges in rank order, so concatenating the ranks' outputs in
// rank order gives what one process would have written.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace launch {

class Ranks {
 public:
  Ranks();
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_main() const { return rank_ == 0; }

  // This rank's [begin, end) of n items.
  std::pair<int64_t, int64_t> range(int64_t n) const;
  // Collective. Rank 0's `text` on every rank.
  std::string broadcast(const std::string& text) const;
  // Collective. Rank 0's `value` on every rank.
  int64_t broadcast(int64_t value) const;
  // Collective. Rank 0's `bytes` bytes at `data` into every rank's (of any
  // size: sent in pieces that MPI's int counts can hold).
  void broadcast(void* data, int64_t bytes) const;
  // Collective. Every rank's `text`, in rank order, on rank 0 (empty elsewhere).
  std::vector<std::string> gather(const std::string& text) const;
  // Collective. Every rank's `text`, in rank order, on every rank.
  std::vector<std::string> allgather(const std::string& text) const;
  // Collective. True on every rank when `failed` is true on any.
  bool any(bool failed) const;
  void barrier() const;

 private:
  int rank_ = 0;
  int size_ = 1;
};

// Runs `body` on every rank, then agrees: if it threw anywhere, it throws
// everywhere — its own error on a rank that failed, the first failed rank's
// (named) on the others, since a job ended by an abort may lose the failed
// rank's output — so that no rank waits forever in the next collective.
template <typename Body>
void together(const Ranks& ranks, Body&& body) {
  std::string error;
  try {
    body();
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!ranks.any(!error.empty())) return;
  const std::vector<std::string> errors = ranks.allgather(error);
  if (!error.empty()) throw std::runtime_error(error);
  for (size_t r = 0; r < errors.size(); ++r)
    if (!errors[r].empty())
      throw std::runtime_error("rank " + std::to_string(r) + " failed: " + errors[r]);
}

// together() for what rank 0 alone does: the other ranks wait for it, and
// throw if it threw.
template <typename Body>
void on_main(const Ranks& ranks, Body&& body) {
  together(ranks, [&] {
    if (ranks.is_main()) body();
  });
}

// together() for what every rank but 0 does: rank 0 waits for them.
template <typename Body>
void on_others(const Ranks& ranks, Body&& body) {
  together(ranks, [&] {
    if (!ranks.is_main()) body();
  });
}

}  // namespace launch
