#include "trainer/eval/translate.h"

#include <string>
#include <vector>

#include "data_pipeline/batcher.h"
#include "data_pipeline/loader/collate.h"
#include "data_pipeline/text_line.h"
#include "data_pipeline/utf8.h"
#include "base/logging.h"
#include "trainer/eval/source_encoder.h"

namespace eval {

namespace {

constexpr int64_t kChunkLines = 1024;

// Translations of `sources` (class names for a classifier), in their order.
std::vector<std::string> translate_chunk(EvalModel& m, const std::vector<data::Example>& sources,
                                         const TranslateOptions& options) {
  data::ExampleLengths lengths;
  for (const auto& e : sources) {
    lengths.src.push_back(static_cast<int64_t>(e.src.size()));
    lengths.tgt.push_back(0);
  }
  std::vector<std::string> out(sources.size());
  for (const auto& indices : data::length_sorted_batches(lengths, options.batch_tokens)) {
    std::vector<data::Example> examples;
    for (int64_t i : indices) examples.push_back(sources[i]);
    const data::Batch batch = data::collate(examples, m.manifest.special).to(m.device);
    if (m.classification()) {
      const auto labels = m.classify(batch.src);
      for (size_t b = 0; b < indices.size(); ++b)
        out[indices[b]] = m.labels.name(static_cast<int32_t>(labels[b]));
      continue;
    }
    const auto hyps =
        decode_batch(m.encoder_decoder(), batch.src, m.manifest.special, options.decode);
    for (size_t b = 0; b < indices.size(); ++b) out[indices[b]] = m.tgt_tokenizer->decode(hyps[b]);
  }
  return out;
}

}  // namespace

int64_t translate_stream(EvalModel& m, std::istream& in, std::ostream& out,
                         const TranslateOptions& options) {
  torch::NoGradGuard no_grad;
  SourceEncoder encoder(m.data_dir, m.manifest);
  // The source and its eos must fit the positional encoding.
  const size_t max_src = static_cast<size_t>(m.cfg.model.max_positions - 1);
  const int64_t chunk = options.line_by_line ? 1 : kChunkLines;
  int64_t count = 0;
  std::vector<data::Example> sources;
  const auto flush = [&] {  // translates and writes the lines read so far
    for (const auto& translation : translate_chunk(m, sources, options)) out << translation << "\n";
    out.flush();
    count += static_cast<int64_t>(sources.size());
    sources.clear();
  };
  for (bool more = true; more;) {
    std::string line;
    more = data::read_text_line(in, line);
    if (more) {
      data::Example e;
      e.id = count + static_cast<int64_t>(sources.size());
      if (const size_t bad = data::find_invalid_utf8(line); bad != std::string::npos) {
        if (!sources.empty()) flush();  // every line before it is answered
        throw std::invalid_argument("line " + std::to_string(e.id + 1) +
                                    " is not valid UTF-8 (byte " + std::to_string(bad + 1) +
                                    " of the line); the " + std::to_string(count) +
                                    " lines before it are translated, none after it");
      }
      e.src = encoder.encode(line);
      if (e.src.size() > max_src) {
        logging::warn("line {}: {} source tokens, cut to model.max_positions - 1 = {}", e.id + 1,
                      e.src.size(), max_src);
        e.src.resize(max_src);
      }
      sources.push_back(std::move(e));
    }
    if (sources.empty() || (more && static_cast<int64_t>(sources.size()) < chunk)) continue;
    flush();
  }
  return count;
}

}  // namespace eval
