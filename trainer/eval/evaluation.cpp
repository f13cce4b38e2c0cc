#include "trainer/eval/evaluation.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "data_pipeline/batcher.h"
#include "data_pipeline/dataset.h"
#include "data_pipeline/loader/collate.h"
#include "trainer/dist/gather_text.h"
#include "trainer/eval/references.h"
#include "trainer/eval/text_metrics.h"
#include "trainer/train/batch_loss.h"

namespace eval {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// This rank's share: {"batches": [[i, smoothed, nll, tokens], ...],
//                     "hypotheses": [[example index, [ids...]], ...]}
json score_batches(EvalModel& m, const data::Dataset& dataset, const std::vector<data::GlobalBatch>& batches,
                   const EvalOptions& options, int rank, int world) {
  const train::LabelSmoothingLoss loss(m.manifest.tgt_vocab_size, m.manifest.special.pad,
                                       m.cfg.optim.label_smoothing);
  json mine = {{"batches", json::array()}, {"hypotheses", json::array()}};
  for (size_t i = static_cast<size_t>(rank); i < batches.size(); i += static_cast<size_t>(world)) {
    std::vector<data::Example> examples;
    for (int64_t index : batches[i]) examples.push_back(dataset.get(index));
    const data::Batch batch = data::collate(examples, m.manifest.special);
    const train::LossSums sums = train::batch_loss(m.model, loss, batch);
    mine["batches"].push_back({i, sums.smoothed.item<double>(), sums.nll.item<double>(), sums.tokens});
    const auto hyps = decode_batch(m.model, batch.src, m.manifest.special, options.decode);
    for (size_t b = 0; b < hyps.size(); ++b) mine["hypotheses"].push_back({batches[i][b], hyps[b]});
  }
  return mine;
}

}  // namespace

json evaluate_split(EvalModel& m, const EvalOptions& options, dist::Communicator& comm) {
  torch::NoGradGuard no_grad;
  const data::Dataset dataset(m.data_dir, options.split);
  if (dataset.size() == 0)
    throw std::runtime_error("split '" + options.split + "' of " + m.data_dir + " has no examples");
  const auto batches = data::length_sorted_batches(dataset.lengths(), options.batch_tokens);
  spdlog::info("evaluating step {} on {} split '{}': {} examples in {} batches over {} ranks", m.step,
               m.data_dir, options.split, dataset.size(), batches.size(), comm.world_size());

  const auto start = std::chrono::steady_clock::now();
  const json mine = score_batches(m, dataset, batches, options, comm.rank(), comm.world_size());
  const std::vector<std::string> gathered = dist::allgather_text(comm, mine.dump());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (comm.rank() != 0) return nullptr;

  // Sums in batch order, hypotheses in input order: the same for any number of ranks.
  std::vector<std::array<double, 3>> per_batch(batches.size());
  std::vector<std::vector<int32_t>> hyp_ids(static_cast<size_t>(dataset.size()));
  for (const auto& text : gathered) {
    const json part = json::parse(text);
    for (const auto& b : part["batches"])
      per_batch[b[0].get<size_t>()] = {b[1].get<double>(), b[2].get<double>(), b[3].get<double>()};
    for (const auto& h : part["hypotheses"]) hyp_ids[h[0].get<size_t>()] = h[1].get<std::vector<int32_t>>();
  }
  double smoothed = 0, nll = 0, tokens = 0;
  for (const auto& [s, n, t] : per_batch) smoothed += s, nll += n, tokens += t;

  int64_t exact = 0;
  std::vector<std::string> hypotheses;
  for (int64_t i = 0; i < dataset.size(); ++i) {
    if (hyp_ids[i] == dataset.get(i).tgt) ++exact;
    hypotheses.push_back(m.tgt_tokenizer->decode(hyp_ids[i]));
  }
  const References refs = read_references(m, dataset, options.split);

  json results = {
      {"split", options.split}, {"checkpoints", m.checkpoints}, {"step", m.step},
      {"dataset", m.data_dir}, {"num_examples", dataset.size()}, {"target_tokens", tokens},
      {"loss", smoothed / tokens}, {"nll", nll / tokens}, {"ppl", std::exp(nll / tokens)},
      {"exact_match", static_cast<double>(exact) / static_cast<double>(dataset.size())},
      {"decode", describe(options.decode)}, {"references", refs.source},
      {"ranks", comm.world_size()}, {"seconds", seconds},
      {"sentences_per_s", static_cast<double>(dataset.size()) / seconds}};
  results.update(text_metrics(hypotheses, refs.lines, options.bleu_tokenize, m.manifest.tokenizer_kind));

  const fs::path out_dir(options.out_dir);
  fs::create_directories(out_dir);
  std::ofstream hyp_file(out_dir / "hypotheses.txt");
  for (const auto& h : hypotheses) hyp_file << h << "\n";
  std::ofstream(out_dir / "results.json") << results.dump(2) << "\n";
  spdlog::info("results in {}", (out_dir / "results.json").string());
  return results;
}

}  // namespace eval
