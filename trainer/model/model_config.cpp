#include "trainer/model/model_config.h"

#include <stdexcept>

namespace model {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument("model config: " + message);
}

void require_positive(int64_t value, const char* field) {
  require(value > 0, std::string(field) + " must be positive, got " + std::to_string(value));
}

}  // namespace

void validate_architecture(const ModelConfig& c) {
  require_positive(c.d_model, "d_model");
  require_positive(c.heads, "heads");
  require(c.d_model % c.heads == 0, "d_model (" + std::to_string(c.d_model) +
                                        ") must be divisible by heads (" + std::to_string(c.heads) +
                                        ")");
  require_positive(c.d_ff, "d_ff");
  require_positive(c.encoder_layers, "encoder_layers");
  require_positive(c.decoder_layers, "decoder_layers");
  require(c.dropout >= 0.0 && c.dropout < 1.0,
          "dropout must be in [0, 1), got " + std::to_string(c.dropout));
  require(c.layer_norm_eps > 0.0,
          "layer_norm_eps must be positive, got " + std::to_string(c.layer_norm_eps));
  require_positive(c.max_positions, "max_positions");
}

void validate(const ModelConfig& c) {
  validate_architecture(c);
  require_positive(c.src_vocab, "src_vocab");
  require(c.tgt_vocab >= 0,
          "tgt_vocab must be positive (0: no decoder), got " + std::to_string(c.tgt_vocab));
  require(c.pad_id >= 0 && c.pad_id < c.src_vocab && (c.tgt_vocab == 0 || c.pad_id < c.tgt_vocab),
          "pad_id (" + std::to_string(c.pad_id) + ") must be a valid id of both vocabularies");
  require(!c.share_embeddings || c.tgt_vocab == 0 || c.src_vocab == c.tgt_vocab,
          "share_embeddings needs equal vocabularies, got src_vocab = " +
              std::to_string(c.src_vocab) + " and tgt_vocab = " + std::to_string(c.tgt_vocab));
}

double construction_floats(const ModelConfig& c) {
  const double d = static_cast<double>(c.d_model);
  const double attention = 4 * d * d, feed_forward = 2 * d * static_cast<double>(c.d_ff);
  double floats = static_cast<double>(c.max_positions) * d + static_cast<double>(c.src_vocab) * d +
                  static_cast<double>(c.encoder_layers) * (attention + feed_forward);
  if (c.tgt_vocab == 0) return floats;  // the encoder classifier
  const double tgt = static_cast<double>(c.tgt_vocab) * d;
  return floats + (c.share_embeddings ? 0 : tgt) + (c.tie_output ? 0 : tgt) +
         static_cast<double>(c.decoder_layers) * (2 * attention + feed_forward);
}

}  // namespace model
