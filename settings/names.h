// An enum's names, as config files, the command line and the log write them:
// one table per enum, read by settings::Schema and by whatever prints a value.
#pragma once
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace settings {

template <typename Enum>
using Names = std::vector<std::pair<std::string, Enum>>;

template <typename Enum>
const std::string& name_of(const Names<Enum>& names, Enum value) {
  for (const auto& [name, named] : names)
    if (named == value) return name;
  throw std::logic_error("a value missing from its enum's names");
}

// The value of `name`, one of the names (readers check what they are given).
template <typename Enum>
Enum value_of(const Names<Enum>& names, const std::string& name) {
  for (const auto& [named, value] : names)
    if (named == name) return value;
  throw std::logic_error("'" + name + "' is none of its enum's names");
}

}  // namespace settings
