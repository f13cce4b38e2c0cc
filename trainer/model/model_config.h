// Sizes and choices of the encoder-decoder; filled from the run config.
#pragma once
#include <cstdint>
#include <string>

#include "settings/names.h"

namespace model {

enum class NormPlacement {
  kPre,   // x + Dropout(Sublayer(LayerNorm(x))), final LayerNorm per stack (Annotated Transformer)
  kPost,  // LayerNorm(x + Dropout(Sublayer(x)))                          (the paper)
};
inline const settings::Names<NormPlacement> kNormNames = {{"pre", NormPlacement::kPre},
                                                          {"post", NormPlacement::kPost}};

// How Attention(Q, K, V) is computed; the same mathematics either way
// (train.attention chooses, runtime-side, not part of the model's identity).
enum class AttentionKernel {
  kExplicit,    // matmul, masked softmax, dropout, matmul: the paper's formula as written
  kFusedOnGpu,  // LibTorch's scaled_dot_product_attention (flash / memory-efficient
                // kernels) on CUDA tensors, explicit on CPU ones
  kFused,       // scaled_dot_product_attention on every device
};
// train.attention's names: auto is fused on GPUs, explicit where LibTorch has
// no fused kernels or with train.deterministic (config::RunConfig::model_config).
inline const settings::Names<AttentionKernel> kAttentionNames = {
    {"auto", AttentionKernel::kFusedOnGpu},
    {"explicit", AttentionKernel::kExplicit},
    {"fused", AttentionKernel::kFused}};

struct ModelConfig {
  int64_t src_vocab = 0;
  int64_t tgt_vocab = 0;  // 0: no decoder (the encoder classifier)
  int64_t d_model = 512;
  int64_t heads = 8;
  int64_t d_ff = 2048;
  int64_t encoder_layers = 6;
  int64_t decoder_layers = 6;
  double dropout = 0.1;  // residual, embedding and attention-probability dropout
  double layer_norm_eps = 1e-6;
  NormPlacement norm = NormPlacement::kPre;
  bool share_embeddings = false;  // one table for source and target (needs equal vocabularies)
  bool tie_output = false;        // generator weight = target embedding
  int64_t max_positions = 1024;   // rows of the sinusoidal table
  int64_t pad_id = 0;
  AttentionKernel attention = AttentionKernel::kExplicit;
};

// The architecture's own settings (a run's [model] section: sizes, layers,
// dropout, epsilon, positions); throws std::invalid_argument naming the first
// offending field. The trainer's config checks these through this function.
void validate_architecture(const ModelConfig& config);

// validate_architecture, and what the dataset gives: vocabularies, padding id.
void validate(const ModelConfig& config);

// The floats building the model allocates, counted from the config alone (no
// allocation): its matrices (embeddings; attention's four projections and
// the feed-forward pair per layer; the generator) and the positional table
// (max_positions x d_model). Biases, norms and a classifier's head are left
// out: a lower bound, within a few percent for real configs. In double: an
// absurd config (d_model 1e6) must not overflow.
double construction_floats(const ModelConfig& config);

}  // namespace model
