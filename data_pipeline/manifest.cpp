#include "data_pipeline/manifest.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include "base/file_write.h"

namespace data {

using nlohmann::json;

namespace {

template <typename Member>
int64_t sum(const std::vector<ShardEntry>& shards, Member member) {
  int64_t total = 0;
  for (const auto& shard : shards) total += shard.*member;
  return total;
}

json to_json(const SplitEntry& split) {
  json shards = json::array();
  for (const auto& shard : split.shards) {
    shards.push_back({{"file", shard.file},
                      {"num_examples", shard.num_examples},
                      {"src_tokens", shard.src_tokens},
                      {"tgt_tokens", shard.tgt_tokens},
                      {"sha256", shard.sha256}});
  }
  json sources = json::array();
  for (const auto& source : split.sources) {
    sources.push_back({{"path", source.path}, {"sha256", source.sha256}});
  }
  json object = {{"shards", shards}, {"sources", sources}};
  if (!split.index.file.empty())
    object["index"] = {{"file", split.index.file}, {"sha256", split.index.sha256}};
  return object;
}

// Typed access to the fields of one manifest file; errors name the file and
// the field's path ("splits.train.shards[0].file").
class Fields {
 public:
  explicit Fields(std::string file) : file_(std::move(file)) {}

  // object[key], which must exist; `path` is the object's own field path.
  const json& at(const json& object, const std::string& path, const std::string& key) const {
    if (!object.contains(key)) fail(join(path, key), "is missing");
    return object.at(key);
  }

  template <typename T>
  T get(const json& object, const std::string& path, const std::string& key) const {
    const json& value = at(object, path, key);
    try {
      return value.get<T>();
    } catch (const json::exception&) {
      fail(join(path, key), "has the wrong type (" + value.dump() + ")");
    }
  }

  // object[key], which must be of `type` (an array or an object).
  const json& container(const json& object, const std::string& path, const std::string& key,
                        json::value_t type) const {
    const json& value = at(object, path, key);
    if (value.type() != type) {
      fail(join(path, key), type == json::value_t::array ? "is not an array" : "is not an object");
    }
    return value;
  }

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw std::runtime_error(file_ + ": field '" + field + "' " + problem);
  }

 private:
  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  std::string file_;
};

SplitEntry split_from_json(const Fields& fields, const json& object, const std::string& path) {
  SplitEntry split;
  const auto& shards = fields.container(object, path, "shards", json::value_t::array);
  for (size_t i = 0; i < shards.size(); ++i) {
    const std::string at = path + ".shards[" + std::to_string(i) + "]";
    split.shards.push_back({fields.get<std::string>(shards[i], at, "file"),
                            fields.get<int64_t>(shards[i], at, "num_examples"),
                            fields.get<int64_t>(shards[i], at, "src_tokens"),
                            fields.get<int64_t>(shards[i], at, "tgt_tokens"),
                            fields.get<std::string>(shards[i], at, "sha256")});
  }
  const auto& sources = fields.container(object, path, "sources", json::value_t::array);
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::string at = path + ".sources[" + std::to_string(i) + "]";
    split.sources.push_back({fields.get<std::string>(sources[i], at, "path"),
                             fields.get<std::string>(sources[i], at, "sha256")});
  }
  if (object.contains("index")) {
    const auto& index = fields.container(object, path, "index", json::value_t::object);
    split.index = {fields.get<std::string>(index, path + ".index", "file"),
                   fields.get<std::string>(index, path + ".index", "sha256")};
    if (split.index.file.empty()) fields.fail(path + ".index.file", "is empty");
  }
  return split;
}

}  // namespace

int64_t SplitEntry::num_examples() const { return sum(shards, &ShardEntry::num_examples); }
int64_t SplitEntry::src_tokens() const { return sum(shards, &ShardEntry::src_tokens); }
int64_t SplitEntry::tgt_tokens() const { return sum(shards, &ShardEntry::tgt_tokens); }

void write_manifest(const std::filesystem::path& dir, const Manifest& manifest) {
  json splits = json::object();
  for (const auto& [name, split] : manifest.splits) splits[name] = to_json(split);
  json document = {
      {"format", kDatasetFormat},
      {"format_version", kDatasetFormatVersion},
      {"task", manifest.task},
      {"tokenizer",
       {{"kind", settings::name_of(kTokenizerKindNames, manifest.tokenizer_kind)},
        {"src_file", manifest.src_tokenizer_file},
        {"tgt_file", manifest.tgt_tokenizer_file}}},
      {"src_vocab_size", manifest.src_vocab_size},
      {"tgt_vocab_size", manifest.tgt_vocab_size},
      {"special_ids",
       {{"pad", manifest.special.pad},
        {"bos", manifest.special.bos},
        {"eos", manifest.special.eos},
        {"unk", manifest.special.unk}}},
      {"splits", splits},
      {"prepare", manifest.prepare},
  };
  if (!manifest.content_sha256.empty()) document["content_sha256"] = manifest.content_sha256;
  if (!manifest.manifest_sha256_before_upgrade.empty())
    document["manifest_sha256_before_upgrade"] = manifest.manifest_sha256_before_upgrade;
  if (manifest.is_classification()) {
    document["labels"] = {{"file", manifest.labels_file}, {"count", manifest.num_labels}};
  }
  const auto file = dir / kManifestFile;
  base::write_file(file, document.dump(2) + "\n");
}

Manifest read_manifest(const std::filesystem::path& dir) {
  const auto file = dir / kManifestFile;
  if (!std::filesystem::is_directory(dir)) {
    throw std::runtime_error("dataset directory " + dir.string() + " does not exist");
  }
  std::ifstream in(file);
  if (!in) {
    const int error = errno;  // the stream's open(2) sets it (libstdc++), before any allocation
    throw std::runtime_error(dir.string() + " is not a dataset: cannot open " + file.string() +
                             ": " + std::strerror(error));
  }
  json document;
  try {
    document = json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(file.string() + ": not valid JSON: " + e.what());
  }
  const Fields fields(file.string());
  if (!document.is_object()) fields.fail("(top level)", "is not an object");

  if (fields.get<std::string>(document, "", "format") != kDatasetFormat) {
    fields.fail("format", std::string("is not \"") + kDatasetFormat + "\"");
  }
  if (fields.get<int64_t>(document, "", "format_version") != kDatasetFormatVersion) {
    fields.fail("format_version", "is not " + std::to_string(kDatasetFormatVersion) +
                                      ", the version this build reads");
  }
  Manifest manifest;
  manifest.task = fields.get<std::string>(document, "", "task");
  if (manifest.task == kClassificationTask) {
    const auto& labels = fields.container(document, "", "labels", json::value_t::object);
    manifest.labels_file = fields.get<std::string>(labels, "labels", "file");
    manifest.num_labels = fields.get<int64_t>(labels, "labels", "count");
    if (manifest.labels_file.empty()) fields.fail("labels.file", "is empty");
    if (manifest.num_labels < 2) fields.fail("labels.count", "is below 2");
  } else if (manifest.task == kSeq2SeqTask) {
    if (document.contains("labels")) fields.fail("labels", "applies only to task 'classification'");
  } else {
    fields.fail("task", "is '" + manifest.task + "', expected 'seq2seq' or 'classification'");
  }

  const auto& tokenizer = fields.container(document, "", "tokenizer", json::value_t::object);
  const auto kind = fields.get<std::string>(tokenizer, "tokenizer", "kind");
  if (const auto known = settings::find_value(kTokenizerKindNames, kind))
    manifest.tokenizer_kind = *known;
  else
    fields.fail("tokenizer.kind",
                "is '" + kind + "', expected " + settings::names_list(kTokenizerKindNames));
  manifest.src_tokenizer_file = fields.get<std::string>(tokenizer, "tokenizer", "src_file");
  manifest.tgt_tokenizer_file = fields.get<std::string>(tokenizer, "tokenizer", "tgt_file");
  manifest.src_vocab_size = fields.get<int64_t>(document, "", "src_vocab_size");
  manifest.tgt_vocab_size = fields.get<int64_t>(document, "", "tgt_vocab_size");

  const auto& special = fields.container(document, "", "special_ids", json::value_t::object);
  manifest.special = {fields.get<int32_t>(special, "special_ids", "pad"),
                      fields.get<int32_t>(special, "special_ids", "bos"),
                      fields.get<int32_t>(special, "special_ids", "eos"),
                      fields.get<int32_t>(special, "special_ids", "unk")};
  if (manifest.special != SpecialIds{}) {
    fields.fail("special_ids", "differs from the fixed pad=0 bos=1 eos=2 unk=3 of this build");
  }

  const auto& splits = fields.container(document, "", "splits", json::value_t::object);
  for (const auto& [name, split] : splits.items()) {
    manifest.splits[name] = split_from_json(fields, split, "splits." + name);
  }
  // A shard once in a split, and a training shard in no other split: listed
  // twice in one, its examples would be read twice (trained on twice as
  // often); in training and another split, that split scores training data.
  // (Two evaluation splits may share one.)
  std::map<std::string, std::map<std::string, std::string>> listed;  // file -> split -> field
  for (const auto& [name, split] : manifest.splits)
    for (size_t i = 0; i < split.shards.size(); ++i) {
      const std::string field = "splits." + name + ".shards[" + std::to_string(i) + "].file";
      const std::string file =
          std::filesystem::path(split.shards[i].file).lexically_normal().string();
      auto& splits_of_file = listed[file];
      for (const auto& [other, other_field] : splits_of_file)
        if (other == name || other == "train" || name == "train")
          fields.fail(field, "names " + file + " again (" + other_field + " does too)");
      splits_of_file.emplace(name, field);
    }
  if (document.contains("content_sha256"))
    manifest.content_sha256 = fields.get<std::string>(document, "", "content_sha256");
  if (document.contains("manifest_sha256_before_upgrade"))
    manifest.manifest_sha256_before_upgrade =
        fields.get<std::string>(document, "", "manifest_sha256_before_upgrade");
  manifest.prepare = document.value("prepare", json::object());
  return manifest;
}

}  // namespace data
