// A directory every rank must see as rank 0 sees it (the run directory: rank
// 0 writes checkpoints that every rank reads when the job resumes). On a
// cluster that means a shared file system; a node-local path (/tmp, a local
// scratch disk) trains happily and fails only at the first resume, on the
// other nodes. Checked at start-up instead.
#pragma once
#include <string>

#include "launch/ranks.h"

namespace launch {

// Collective: rank 0 writes a file with a random token into `dir` (which it
// has created), every rank reads it back; if any rank cannot, or reads another
// token (another directory at the same path), every rank throws
// std::runtime_error naming `what` (the config keys), the directory and each
// failing rank with its host and reason.
void require_shared_directory(const Ranks& ranks, const std::string& host, const std::string& dir,
                              const std::string& what);

}  // namespace launch
