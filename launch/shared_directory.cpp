#include "launch/shared_directory.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

namespace launch {

namespace fs = std::filesystem;

void require_shared_directory(const Ranks& ranks, const std::string& host, const std::string& dir,
                              const std::string& what) {
  const fs::path probe = fs::path(dir) / ".shared-directory-check";
  std::string token;
  if (ranks.is_main()) {
    token = std::to_string(std::random_device{}()) + "-" + std::to_string(std::random_device{}());
    std::ofstream(probe) << token;
  }
  token = ranks.broadcast(token);

  std::string mine = "ok";
  std::ifstream in(probe);
  std::string read;
  if (!in)
    mine = std::strerror(errno);
  else if (!std::getline(in, read) || read != token)
    mine = "it holds another directory at that path";
  const std::vector<std::string> all = ranks.allgather(host + "\n" + mine);
  ranks.barrier();  // every rank has read it
  if (ranks.is_main()) fs::remove(probe);

  std::string failing;
  for (size_t r = 0; r < all.size(); ++r) {
    const auto newline = all[r].find('\n');
    const std::string reason = all[r].substr(newline + 1);
    if (reason == "ok") continue;
    if (!failing.empty()) failing += "; ";
    failing += "rank " + std::to_string(r) + " on " + all[r].substr(0, newline) + ": " + reason;
  }
  if (!failing.empty())
    throw std::runtime_error(what + " " + dir + " is not the same directory on every node (" +
                             failing + "): put it on a file system every node mounts");
}

}  // namespace launch
