#include "data_pipeline/node_check.h"

#include <stdexcept>
#include <vector>

namespace data {

std::unique_ptr<Dataset> open_checked_on_each_node(const std::filesystem::path& dir,
                                                   const std::string& split, DatasetOptions options,
                                                   const launch::Ranks& ranks,
                                                   const launch::ProcessInfo& process) {
  std::unique_ptr<Dataset> dataset;
  std::string error;
  try {
    options.check_shards = false;
    dataset = std::make_unique<Dataset>(dir, split, options);  // manifest, index header, labels
    if (process.local_rank == 0) dataset->check_shards();
  } catch (const std::exception& e) {
    error =
        (ranks.size() > 1 ? "rank " + std::to_string(process.rank) + " on " + process.node + ": "
                          : std::string()) +
        e.what();
  }
  for (const std::string& found : ranks.allgather(error))
    if (!found.empty()) throw std::runtime_error(found);  // the first rank's that failed
  return dataset;
}

}  // namespace data
