// The classes of a classification dataset, by name: labels.txt in the
// dataset directory, UTF-8, one label a line, id = line number from 0 (the
// ids in the shards' /labels).
//
//     negative     id 0
//     neutral      id 1
//     positive     id 2
//
// prepare_data writes the training split's labels in byte order (as
// `LC_ALL=C sort -u` would), or a synthetic task's classes in their order.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace data {

inline constexpr char kLabelsFile[] = "labels.txt";

class LabelSet {
 public:
  LabelSet() = default;  // no classes: a seq2seq dataset
  // Throws std::invalid_argument on an empty or duplicate label, or one
  // holding a line break.
  explicit LabelSet(std::vector<std::string> names);

  // Errors name the file (and line).
  static LabelSet load(const std::filesystem::path& file);
  void save(const std::filesystem::path& file) const;

  int64_t size() const { return static_cast<int64_t>(names_.size()); }
  // The id of `name`, or -1 when it is not one of the labels.
  int32_t id(std::string_view name) const;
  // The name of `id`; throws std::out_of_range outside [0, size).
  const std::string& name(int32_t id) const;

 private:
  std::vector<std::string> names_;  // [size], index = id
  std::unordered_map<std::string, int32_t> ids_;
};

}  // namespace data
