#include "trainer/model/decoder_cache.h"

namespace model {

void DecoderCache::select_rows(const torch::Tensor& rows) {
  for (auto& layer : layers) {
    for (torch::Tensor* t : {&layer.self_keys, &layer.self_values, &layer.cross_keys, &layer.cross_values})
      if (t->defined()) *t = t->index_select(0, rows);
  }
}

}  // namespace model
