#include "launch/ranks.h"

#include <mpi.h>

#include <algorithm>
#include <stdexcept>

namespace launch {

namespace {

bool mpi_running() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

}  // namespace

Ranks::Ranks() {
  if (!mpi_running()) return;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

std::pair<int64_t, int64_t> Ranks::range(int64_t n) const {
  return {n * rank_ / size_, n * (rank_ + 1) / size_};
}

std::string Ranks::broadcast(const std::string& text) const {
  if (size_ == 1) return text;
  const int64_t length = broadcast(static_cast<int64_t>(text.size()));
  std::string out = rank_ == 0 ? text : std::string(length, '\0');
  broadcast(out.data(), length);
  return out;
}

void Ranks::broadcast(void* data, int64_t bytes) const {
  if (size_ == 1) return;
  constexpr int64_t kPiece = int64_t{1} << 30;  // an int count; 1 GiB
  for (int64_t at = 0; at < bytes; at += kPiece)
    MPI_Bcast(static_cast<char*>(data) + at, static_cast<int>(std::min(kPiece, bytes - at)),
              MPI_CHAR, 0, MPI_COMM_WORLD);
}

int64_t Ranks::broadcast(int64_t value) const {
  if (size_ > 1) MPI_Bcast(&value, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  return value;
}

std::vector<std::string> Ranks::allgather(const std::string& text) const {
  if (size_ == 1) return {text};
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(size_), displacements(size_);
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    displacements[r] = total;
    total += lengths[r];
  }
  std::string all(total, '\0');
  MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), displacements.data(),
                 MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> texts;
  for (int r = 0; r < size_; ++r) texts.push_back(all.substr(displacements[r], lengths[r]));
  return texts;
}

std::vector<std::string> Ranks::gather(const std::string& text) const {
  std::vector<std::string> texts = allgather(text);  // small texts: one code path
  if (rank_ != 0) texts.clear();
  return texts;
}

bool Ranks::any(bool failed) const {
  if (size_ == 1) return failed;
  int flag = failed ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return flag != 0;
}

void Ranks::barrier() const {
  if (size_ > 1) MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace launch
