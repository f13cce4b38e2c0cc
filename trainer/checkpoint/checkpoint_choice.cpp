#include "trainer/checkpoint/checkpoint_choice.h"

#include <stdexcept>

namespace checkpoint {

CheckpointChoice CheckpointChoice::parse(const std::string& text) {
  if (text == "latest" || text == "auto") return latest();
  if (text == "best") return best();
  if (text == "none") return none();
  if (text.empty())
    throw std::invalid_argument("give latest, best, none or a checkpoint directory, not ''");
  return directory(text);
}

std::string CheckpointChoice::text() const {
  switch (kind) {
    case Kind::kLatest: return "latest";
    case Kind::kBest: return "best";
    case Kind::kNone: return "none";
    case Kind::kDirectory: return dir;
  }
  throw std::logic_error("a checkpoint choice of no kind");
}

}  // namespace checkpoint
