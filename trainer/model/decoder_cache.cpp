#include "trainer/model/decoder_cache.h"

#include <tuple>

namespace model {

void DecoderCache::select(const torch::Tensor& sources, const torch::Tensor& rows) {
  const bool every_source = sources.size(0) == layers.at(0).cross_keys.size(0);
  for (auto& layer : layers) {
    for (torch::Tensor* t : {&layer.self_keys, &layer.self_values})
      if (t->defined()) *t = t->index_select(0, rows);
    if (every_source) continue;
    for (torch::Tensor* t : {&layer.cross_keys, &layer.cross_values})
      *t = t->index_select(0, sources);
  }
}

LayerCache start_layer_cache(MultiHeadedAttentionImpl& src_attn, const torch::Tensor& memory) {
  LayerCache cache;
  std::tie(cache.cross_keys, cache.cross_values) = src_attn.keys_values(memory);
  return cache;
}

torch::Tensor self_attention_step(MultiHeadedAttentionImpl& self_attn, const torch::Tensor& x,
                                  LayerCache& cache) {
  auto qkv = self_attn.queries_keys_values(x);  // 3 x [N, h, 1, d_k]
  auto& keys = cache.self_keys;
  auto& values = cache.self_values;
  keys = keys.defined() ? torch::cat({keys, qkv[1]}, 2) : qkv[1];        // [N, h, t + 1, d_k]
  values = values.defined() ? torch::cat({values, qkv[2]}, 2) : qkv[2];  // [N, h, t + 1, d_k]
  return self_attn.attend(qkv[0], keys, values, {});
}

torch::Tensor cross_attention_step(MultiHeadedAttentionImpl& src_attn, const torch::Tensor& x,
                                   const LayerCache& cache, const AttentionMask& src_mask) {
  // A source's N / n rows as the queries of one attention over its memory:
  // [N, 1, D] -> [n, N / n, D]; scores [n, h, N / n, S], one matrix product
  // per source and head rather than one per row and head.
  const auto queries = src_attn.queries(x.view({cache.cross_keys.size(0), -1, x.size(2)}));
  return src_attn.attend(queries, cache.cross_keys, cache.cross_values, src_mask).view_as(x);
}

}  // namespace model
