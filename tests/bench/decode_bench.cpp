// Decoding speed of the evaluation job's decoders, side by side in one run:
// greedy and beam search (beam 4, α = 0.6, the paper's settings) on the same
// sources, batched as evaluate batches them.
//
// The model is randomly initialised, so it almost never emits eos: every
// hypothesis runs to its length limit, source length + extra (default 0, so
// each sentence generates as many tokens as its source has). The figures are
// sentences/s and generated target tokens/s (beam: tokens of the answers).
//
//   build/bench/decode_bench [size=base|small] [sentences=64] [src_len=24] [batch_sentences=32]
//                            [extra=0] [threads=all cores] [trace=FILE]
//
// With a trace file, each decoder's run is also recorded by LibTorch's
// profiler (a Chrome trace per decoder, FILE.greedy.json and FILE.beam4.json:
// every ATen operation with its time), which the per-step figures of
// docs/performance.md are summed from.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include "trainer/eval/decode.h"

namespace {

using Clock = std::chrono::steady_clock;

model::ModelConfig config_of(const std::string& size) {
  model::ModelConfig c;  // paper base: d 512, 8 heads, 6 + 6 layers, d_ff 2048
  c.src_vocab = c.tgt_vocab = 32000;
  c.share_embeddings = c.tie_output = true;
  c.max_positions = 512;
  c.dropout = 0.1;
  if (size == "small") {
    c.d_model = 256, c.heads = 4, c.d_ff = 1024, c.encoder_layers = c.decoder_layers = 3;
    c.src_vocab = c.tgt_vocab = 8000;
  } else if (size != "base") {
    throw std::invalid_argument("size must be base or small");
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string size = argc > 1 ? argv[1] : "base";
  const int64_t sentences = argc > 2 ? std::stoll(argv[2]) : 64;
  const int64_t src_len = argc > 3 ? std::stoll(argv[3]) : 24;
  const int64_t batch = argc > 4 ? std::stoll(argv[4]) : 32;
  const int64_t extra = argc > 5 ? std::stoll(argv[5]) : 0;
  torch::set_num_threads(argc > 6 ? std::stoi(argv[6])
                                  : static_cast<int>(std::thread::hardware_concurrency()));
  const std::string trace_file = argc > 7 ? argv[7] : "";
  torch::manual_seed(1);
  const model::ModelConfig config = config_of(size);
  model::EncoderDecoder model(config);
  model->eval();
  const data::SpecialIds special;
  auto sources = torch::randint(4, config.src_vocab, {sentences, src_len + 1}, torch::kLong);
  sources.select(1, src_len).fill_(special.eos);

  std::printf(
      "%s model, %ld sentences of %ld tokens, batches of %ld, limit source length + %ld, %d "
      "threads\n",
      size.c_str(), static_cast<long>(sentences), static_cast<long>(src_len),
      static_cast<long>(batch), static_cast<long>(extra), torch::get_num_threads());
  std::printf("| decoder | sentences/s | target tokens/s | seconds |\n|---|---|---|---|\n");
  for (int64_t beam : {1, 4}) {
    eval::DecodeOptions options;
    options.beam = beam;
    options.max_extra_len = extra;
    double tokens = 0;
    std::unique_ptr<torch::autograd::profiler::RecordProfile> trace;
    if (!trace_file.empty())
      trace = std::make_unique<torch::autograd::profiler::RecordProfile>(
          trace_file + (beam == 1 ? ".greedy.json" : ".beam4.json"));
    const auto start = Clock::now();
    for (int64_t first = 0; first < sentences; first += batch) {
      const auto src = sources.slice(0, first, std::min(first + batch, sentences));
      for (const auto& h : eval::decode_batch(model, src, special, options))
        tokens += static_cast<double>(h.size());
    }
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    trace.reset();
    std::printf("| %s | %.1f | %.0f | %.1f |\n", beam == 1 ? "greedy" : "beam 4, alpha 0.6",
                static_cast<double>(sentences) / s, tokens / s, s);
  }
  return 0;
}
