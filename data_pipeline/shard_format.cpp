#include "data_pipeline/shard_format.h"

#include "base/text_format.h"

namespace data {

std::string shard_file_name(const std::string& split, int64_t index) {
  return text::format("{}-{:05d}.h5", split, index);
}

}  // namespace data
