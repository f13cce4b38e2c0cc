#include "launch/shared_directory.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

#include "base/file_write.h"

namespace launch {

namespace fs = std::filesystem;

void require_shared_directory(const Ranks& ranks, const std::string& host, const std::string& dir,
                              const std::string& what) {
  // A name of its own each time: a node's NFS client may have cached a
  // previous one as absent.
  std::string token;
  if (ranks.is_main())
    token = std::to_string(std::random_device{}()) + "-" + std::to_string(std::random_device{}());
  token = ranks.broadcast(token);
  const fs::path probe = fs::path(dir) / (".shared-directory-check-" + token);
  together(ranks, [&] {
    if (ranks.is_main()) base::write_file(probe, token);  // a full disk is said as such
  });

  errno = 0;
  std::ifstream in(probe);
  std::string read, mine = "ok";
  if (!in)
    mine = errno != 0 ? std::strerror(errno) : "cannot open it";
  else if (!std::getline(in, read) || read != token)
    mine = "it holds another directory at that path";
  const std::vector<std::string> all = ranks.allgather(host + "\n" + mine);  // all have read
  std::error_code ignored;
  if (ranks.is_main()) fs::remove(probe, ignored);

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
