#include "trainer/dist/gather_text.h"

#include <cstring>

namespace dist {

std::vector<std::string> allgather_text(Communicator& comm, const std::string& local) {
  const auto lengths = comm.allgather(torch::tensor({static_cast<int64_t>(local.size())}));  // [W, 1]
  const int64_t longest = lengths.max().item<int64_t>();
  auto bytes = torch::zeros({longest}, torch::kByte);
  std::memcpy(bytes.data_ptr<uint8_t>(), local.data(), local.size());
  const auto all = comm.allgather(bytes).contiguous();  // [W, longest]

  std::vector<std::string> out;
  for (int64_t r = 0; r < all.size(0); ++r)
    out.emplace_back(reinterpret_cast<const char*>(all[r].data_ptr<uint8_t>()),
                     static_cast<size_t>(lengths[r][0].item<int64_t>()));
  return out;
}

}  // namespace dist
