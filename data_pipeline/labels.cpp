#include "data_pipeline/labels.h"

#include <stdexcept>

#include "data_pipeline/line_file.h"

namespace data {

LabelSet::LabelSet(std::vector<std::string> names) : names_(std::move(names)) {
  for (size_t id = 0; id < names_.size(); ++id) {
    const std::string& name = names_[id];
    if (name.empty()) throw std::invalid_argument("empty label (id " + std::to_string(id) + ")");
    if (name.find_first_of("\r\n") != std::string::npos)
      throw std::invalid_argument("label '" + name + "' holds a line break");
    if (!ids_.emplace(name, static_cast<int32_t>(id)).second)
      throw std::invalid_argument("duplicate label '" + name + "'");
  }
}

LabelSet LabelSet::load(const std::filesystem::path& file) {
  std::vector<std::string> names = read_lines(file, "label");
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty())
      throw std::runtime_error(file.string() + ":" + std::to_string(i + 1) + ": empty label");
  }
  try {
    return LabelSet(std::move(names));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

void LabelSet::save(const std::filesystem::path& file) const { write_lines(file, names_, "label"); }

int32_t LabelSet::id(std::string_view name) const {
  const auto found = ids_.find(std::string(name));
  return found == ids_.end() ? -1 : found->second;
}

const std::string& LabelSet::name(int32_t id) const {
  if (id < 0 || id >= size()) {
    throw std::out_of_range("label id " + std::to_string(id) + " outside the " +
                            std::to_string(size()) + " labels");
  }
  return names_[id];
}

}  // namespace data
