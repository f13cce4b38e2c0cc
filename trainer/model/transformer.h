// The encoder-decoder Transformer (paper, section 3, figure 1):
//   memory = Encoder(PE(Embed_src(src)))
//   hidden = Decoder(PE(Embed_tgt(tgt_in)), memory)
//   log p  = Generator(hidden)
#pragma once
#include <torch/torch.h>

#include "trainer/model/decoder.h"
#include "trainer/model/embeddings.h"
#include "trainer/model/encoder.h"
#include "trainer/model/generator.h"
#include "trainer/model/model_config.h"
#include "trainer/model/positional_encoding.h"

namespace model {

class EncoderDecoderImpl : public torch::nn::Module {
 public:
  // Validates the config (std::invalid_argument naming the field), builds the
  // model, and initialises every matrix Xavier-uniform and every bias to zero.
  explicit EncoderDecoderImpl(const ModelConfig& config);

  // src [B, S] int64, src_mask bool [B, 1, 1, S] -> memory [B, S, d_model]
  torch::Tensor encode(const torch::Tensor& src, const AttentionMask& src_mask);

  // memory [B, S, d_model], src_mask [B, 1, 1, S], tgt_in [B, T] int64,
  // tgt_mask bool [B, 1, T, T] -> hidden [B, T, d_model]
  torch::Tensor decode(const torch::Tensor& memory, const AttentionMask& src_mask,
                       const torch::Tensor& tgt_in, const AttentionMask& tgt_mask);

  // Incremental decoding (decoder_cache.h): the cache for memory [B, S, d_model],
  // then one target position a call: tokens [B, 1] int64 at position
  // cache.length -> hidden [B, 1, d_model], the cache extended.
  DecoderCache start_decoding(const torch::Tensor& memory);
  torch::Tensor decode_step(const torch::Tensor& tokens, const AttentionMask& src_mask,
                            DecoderCache& cache);

  // Scores of the next target token before the softmax, [B, T, tgt_vocab]
  // (bfloat16 under autocast): what the fused training loss takes.
  torch::Tensor logits(const torch::Tensor& src, const torch::Tensor& tgt_in,
                       const AttentionMask& src_mask, const AttentionMask& tgt_mask);

  // Log-probabilities of the next target token, float32 [B, T, tgt_vocab].
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& tgt_in,
                        const AttentionMask& src_mask, const AttentionMask& tgt_mask);

  const ModelConfig& config() const { return config_; }
  // For logits(hidden) (a fused loss) or log-probs of decode()'s output.
  Generator& generator() { return generator_; }

 private:
  ModelConfig config_;
  Embeddings src_embed_{nullptr};
  Embeddings tgt_embed_{nullptr};  // the same module as src_embed_ when shared
  PositionalEncoding position_{nullptr};
  Encoder encoder_{nullptr};
  Decoder decoder_{nullptr};
  Generator generator_{nullptr};
};
TORCH_MODULE(EncoderDecoder);

}  // namespace model
