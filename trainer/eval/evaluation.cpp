#include "trainer/eval/evaluation.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "base/file_write.h"
#include "base/logging.h"
#include "base/progress.h"
#include "base/seconds.h"
#include "data_pipeline/batcher.h"
#include "data_pipeline/dataset.h"
#include "data_pipeline/loader/collate.h"
#include "data_pipeline/node_check.h"
#include "launch/ranks.h"
#include "trainer/eval/metrics/classification_metrics.h"
#include "trainer/eval/references.h"
#include "trainer/eval/text_metrics.h"

namespace eval {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// What each example's row of a batch gives: seq2seq -> the hypothesis' token
// ids; classification -> the predicted label id.
std::vector<json> predict(EvalModel& m, const data::Batch& batch, const DecodeOptions& decode) {
  std::vector<json> out;
  if (m.classification()) {
    for (int64_t label : m.classify(batch.src)) out.emplace_back(label);
    return out;
  }
  for (auto& ids : decode_batch(m.encoder_decoder(), batch.src, m.manifest.special, decode))
    out.emplace_back(ids);
  return out;
}

// This rank's share: {"batches": [[i, smoothed, nll, count], ...],
//                     "outputs": [[example index, prediction], ...],
//                     "predict_seconds": its time in predict()}
json score_batches(EvalModel& m, const data::Dataset& dataset,
                   const std::vector<data::GlobalBatch>& batches, const EvalOptions& options,
                   int rank, int world) {
  json mine = {{"batches", json::array()}, {"outputs", json::array()}};
  double predict_seconds = 0;
  int64_t share = 0;  // examples in this rank's batches
  for (size_t i = static_cast<size_t>(rank); i < batches.size(); i += static_cast<size_t>(world))
    share += static_cast<int64_t>(batches[i].size());
  base::Progress progress("evaluating " + options.split + (world > 1 ? " (rank 0's share)" : ""),
                            share, m.classification() ? "examples" : "sentences",
                            options.progress_s, rank == 0);
  for (size_t i = static_cast<size_t>(rank); i < batches.size(); i += static_cast<size_t>(world)) {
    std::vector<data::Example> examples;
    for (int64_t index : batches[i]) examples.push_back(dataset.get(index));
    const data::Batch batch = data::collate(examples, m.manifest.special).to(m.device);
    const task::LossSums sums = m.objective->loss(batch);
    mine["batches"].push_back(
        {i, sums.smoothed.item<double>(), sums.nll.item<double>(), sums.tokens.item<int64_t>()});
    const auto begin = std::chrono::steady_clock::now();
    const auto predictions = predict(m, batch, options.decode);
    predict_seconds += base::seconds_since(begin);
    for (size_t b = 0; b < predictions.size(); ++b)
      mine["outputs"].push_back({batches[i][b], predictions[b]});
    progress.advance(static_cast<int64_t>(predictions.size()));
  }
  mine["predict_seconds"] = predict_seconds;
  return mine;
}

// One line per example, in input order: the hypotheses detokenized
// (seq2seq), or the predicted labels' names (classification).
std::vector<std::string> output_lines(const EvalModel& m, const std::vector<json>& outputs) {
  std::vector<std::string> lines;
  for (const auto& output : outputs)
    lines.push_back(m.classification()
                        ? m.labels.name(output.get<int32_t>())
                        : m.tgt_tokenizer->decode(output.get<std::vector<int32_t>>()));
  return lines;
}

// Seq2seq: exact match, BLEU, chrF of the hypotheses (`lines`).
json seq2seq_report(EvalModel& m, const data::Dataset& dataset, const std::vector<json>& outputs,
                    const EvalOptions& options, const std::vector<std::string>& lines) {
  int64_t exact = 0;
  for (int64_t i = 0; i < dataset.size(); ++i)
    if (outputs[i].get<std::vector<int32_t>>() == dataset.get(i).tgt) ++exact;
  const References refs = read_references(m, dataset, options.split);
  json report = {{"exact_match", static_cast<double>(exact) / static_cast<double>(dataset.size())},
                 {"decode", describe(options.decode)},
                 {"references", refs.source}};
  report.update(text_metrics(lines, refs.lines, options.bleu_tokenize, m.manifest.tokenizer_kind));
  return report;
}

// Classification: accuracy and macro-F1.
json classification_report(const data::Dataset& dataset, const std::vector<json>& outputs) {
  std::vector<int64_t> references, predictions;
  for (int64_t i = 0; i < dataset.size(); ++i) {
    references.push_back(dataset.get(i).label);
    predictions.push_back(outputs[i].get<int64_t>());
  }
  return {{"accuracy", metrics::accuracy(references, predictions)},
          {"macro_f1", metrics::macro_f1(references, predictions)}};
}

}  // namespace

json evaluate_split(EvalModel& m, const EvalOptions& options, const launch::Ranks& ranks,
                    const launch::ProcessInfo& process) {
  torch::NoGradGuard no_grad;
  const auto opened =
      data::open_checked_on_each_node(m.data_dir, options.split, {}, ranks, process);
  const data::Dataset& dataset = *opened;
  if (dataset.size() == 0)
    throw std::runtime_error("split '" + options.split + "' of " + m.data_dir + " has no examples");
  const auto batches = data::length_sorted_batches(dataset.lengths(), options.batch_tokens);
  logging::info("evaluating step {} on {} split '{}': {} examples in {} batches over {} ranks",
                m.step, m.data_dir, options.split, dataset.size(), batches.size(), ranks.size());

  const auto start = std::chrono::steady_clock::now();
  const json mine = score_batches(m, dataset, batches, options, ranks.rank(), ranks.size());
  const std::vector<std::string> gathered = ranks.gather(mine.dump());
  const double seconds = base::seconds_since(start);
  if (ranks.rank() != 0) return nullptr;

  // Sums in batch order, outputs in input order: the same for any number of ranks.
  std::vector<std::array<double, 3>> per_batch(batches.size());
  std::vector<json> outputs(static_cast<size_t>(dataset.size()));
  double predict_seconds = 0;  // the slowest rank's
  for (const auto& text : gathered) {
    const json part = json::parse(text);
    predict_seconds = std::max(predict_seconds, part["predict_seconds"].get<double>());
    for (const auto& b : part["batches"])
      per_batch[b[0].get<size_t>()] = {b[1].get<double>(), b[2].get<double>(), b[3].get<double>()};
    for (const auto& o : part["outputs"]) outputs[o[0].get<size_t>()] = o[1];
  }
  double smoothed = 0, nll = 0, count = 0;
  for (const auto& [s, n, c] : per_batch) smoothed += s, nll += n, count += c;

  // The outputs written before they are scored: a failure in scoring (a
  // reference file, a metric) loses none of the decoding.
  const fs::path out_dir(options.out_dir);
  base::make_directories(out_dir, "the output directory (--out)");
  const fs::path lines_file = out_dir / (m.classification() ? "predictions.txt" : "hypotheses.txt");
  const std::vector<std::string> lines = output_lines(m, outputs);
  std::error_code ignored;
  fs::remove(out_dir / "results.json", ignored);  // an earlier run's: not these outputs' scores
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  base::write_file(lines_file, text);

  json results = {{"task", m.manifest.task},
                  {"split", options.split},
                  {"checkpoints", m.checkpoints},
                  {"step", m.step},
                  {"examples_ledger", m.examples_ledger},
                  {"dataset", m.data_dir},
                  {"num_examples", dataset.size()},
                  {m.classification() ? "examples" : "target_tokens", count},
                  {"loss", smoothed / count},
                  {"nll", nll / count},
                  {"ppl", std::exp(nll / count)},
                  {"ranks", ranks.size()},
                  {"seconds", seconds},
                  {"decode_seconds", predict_seconds},
                  {"sentences_per_s", static_cast<double>(dataset.size()) / seconds}};
  try {
    results.update(m.classification() ? classification_report(dataset, outputs)
                                      : seq2seq_report(m, dataset, outputs, options, lines));
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("scoring failed: ") + e.what() + " (the " +
                             std::to_string(lines.size()) + " outputs decoded are kept in " +
                             lines_file.string() + ")");
  }
  base::write_file(out_dir / "results.json", results.dump(2) + "\n");
  logging::info("results in {}", (out_dir / "results.json").string());
  return results;
}

}  // namespace eval
