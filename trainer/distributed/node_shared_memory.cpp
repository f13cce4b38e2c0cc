#include "trainer/distributed/node_shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <random>
#include <string>

namespace distributed {
namespace {

// Rank 0's draw, the same name on every rank.
std::string shared_name(Communicator& comm) {
  torch::Tensor draw = torch::zeros({2}, torch::kLong);
  if (comm.rank() == 0) {
    std::random_device random;
    for (int i = 0; i < 2; ++i)
      draw[i] = static_cast<int64_t>((static_cast<uint64_t>(random()) << 32) | random());
  }
  comm.broadcast(draw, 0);
  return "/transformer-grads-" + std::to_string(static_cast<uint64_t>(draw[0].item<int64_t>())) +
         "-" + std::to_string(static_cast<uint64_t>(draw[1].item<int64_t>()));
}

// rank 0 creates the object and reserves its pages; the others open it.
void* map(const std::string& name, size_t bytes, bool create) {
  const int fd = create ? shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600)
                        : shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return nullptr;
  struct stat st {};
  const bool sized = create ? ftruncate(fd, static_cast<off_t>(bytes)) == 0 &&
                                  posix_fallocate(fd, 0, static_cast<off_t>(bytes)) == 0
                            : fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) == bytes;
  void* addr = sized ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  close(fd);  // the mapping keeps the object
  if (addr != MAP_FAILED) return addr;
  if (create) shm_unlink(name.c_str());  // nobody else will open it
  return nullptr;
}

// Whether every rank passes `ok` (a collective).
bool all(Communicator& comm, bool ok) {
  torch::Tensor failures = torch::full({1}, ok ? 0 : 1, torch::kLong);
  comm.allreduce_sum(failures);
  return failures.item<int64_t>() == 0;
}

}  // namespace

std::optional<torch::Tensor> node_shared_memory(Communicator& comm, int64_t numel) {
  const std::string name = shared_name(comm);
  const size_t bytes = static_cast<size_t>(numel) * sizeof(float);
  void* addr = comm.rank() == 0 ? map(name, bytes, /*create=*/true) : nullptr;
  torch::Tensor created = torch::full({1}, addr ? 1 : 0, torch::kLong);
  comm.broadcast(created, 0);
  if (comm.rank() != 0 && created.item<int64_t>() == 1) addr = map(name, bytes, /*create=*/false);
  const bool everyone = all(comm, addr != nullptr);  // every rank has tried to open it
  if (comm.rank() == 0 && created.item<int64_t>() == 1) shm_unlink(name.c_str());
  if (!everyone) {
    if (addr) munmap(addr, bytes);
    return std::nullopt;
  }
  return torch::from_blob(
      addr, {numel}, [bytes](void* p) { munmap(p, bytes); }, torch::kFloat);
}

}  // namespace distributed
