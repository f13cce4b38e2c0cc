#include "data_pipeline/dataset_identity.h"

#include <cstdint>

#include "data_pipeline/sha256.h"
#include "data_pipeline/shard_reader.h"

namespace data {

namespace fs = std::filesystem;

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "content_sha256 hashes host bytes");

class ContentHash {
 public:
  void integer(int64_t value) { sha_.update(&value, sizeof value); }
  void text(const std::string& value) {
    integer(static_cast<int64_t>(value.size()));
    sha_.update(value.data(), value.size());
  }
  void tokens(const RaggedTokens& side, int64_t i) {  // example i's sequence
    integer(side.length(i));
    sha_.update(side.tokens.data() + side.offsets[i],
                static_cast<size_t>(side.length(i)) * sizeof(int32_t));
  }
  std::string hex() { return sha_.hex(); }

 private:
  Sha256 sha_;
};

}  // namespace

std::string content_sha256(const fs::path& dir, const Manifest& manifest) {
  ContentHash hash;
  hash.text("transformer-dataset content 1");
  hash.text(manifest.task);
  hash.text(settings::name_of(kTokenizerKindNames, manifest.tokenizer_kind));
  for (const int64_t value :
       {manifest.src_vocab_size, manifest.tgt_vocab_size, int64_t{manifest.special.pad},
        int64_t{manifest.special.bos}, int64_t{manifest.special.eos}, int64_t{manifest.special.unk},
        manifest.num_labels})
    hash.integer(value);
  // A joint tokenizer is one file named twice; its bytes enter twice alike.
  hash.text(sha256_file(dir / manifest.src_tokenizer_file));
  hash.text(sha256_file(dir / manifest.tgt_tokenizer_file));
  hash.text(manifest.labels_file.empty() ? "" : sha256_file(dir / manifest.labels_file));
  for (const auto& [name, split] : manifest.splits) {  // std::map: name order
    hash.text(name);
    hash.integer(split.num_examples());
    for (const auto& shard : split.shards) {
      const ShardData data = ShardReader(dir / shard.file).read();
      for (int64_t i = 0; i < data.size(); ++i) {
        hash.integer(data.ids[i]);
        hash.tokens(data.src, i);
        hash.tokens(data.tgt, i);
        hash.integer(data.labels.empty() ? -1 : data.labels[i]);
      }
    }
  }
  return hash.hex();
}

std::string dataset_id(const fs::path& dir) {
  const Manifest manifest = read_manifest(dir);
  if (!manifest.content_sha256.empty()) return manifest.content_sha256;
  if (!manifest.manifest_sha256_before_upgrade.empty())
    return manifest.manifest_sha256_before_upgrade;
  return sha256_file(dir / kManifestFile);
}

bool names_manifest(const fs::path& dir, const std::string& id) {
  if (id.empty()) return false;  // manifest_sha256_before_upgrade is empty when there is none
  return id == sha256_file(dir / kManifestFile) ||
         id == read_manifest(dir).manifest_sha256_before_upgrade;
}

}  // namespace data
