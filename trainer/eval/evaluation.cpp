#include "trainer/eval/evaluation.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "data_pipeline/batcher.h"
#include "data_pipeline/loader/collate.h"
#include "data_pipeline/dataset.h"
#include "data_pipeline/tokenizer.h"
#include "trainer/config/run_config.h"
#include "trainer/eval/greedy_decode.h"
#include "trainer/train/batch_loss.h"
#include "trainer/train/checkpoint.h"
#include "trainer/train/state_dict.h"

namespace eval {

namespace fs = std::filesystem;

nlohmann::json run_evaluation(const EvalOptions& options) {
  const config::RunConfig cfg = config::read_run_config(options.run_dir + "/config.toml");
  const std::string data_dir = options.data_dir.empty() ? cfg.data.dir : options.data_dir;
  const data::Dataset dataset(data_dir, options.split);
  if (dataset.size() == 0)
    throw std::runtime_error("split '" + options.split + "' of " + data_dir + " has no examples");
  const data::Manifest& manifest = dataset.manifest();
  const auto tokenizer =
      data::load_tokenizer(manifest.tokenizer_kind, fs::path(data_dir) / manifest.tgt_tokenizer_file);

  const train::Checkpoints checkpoints(options.run_dir);
  const std::string checkpoint = checkpoints.resolve(options.checkpoint);
  std::string why;
  if (!train::verify_checkpoint(checkpoint, &why))
    throw std::runtime_error("checkpoint fails verification: " + why);
  const int64_t step = train::read_checkpoint_state(checkpoint).at("step").get<int64_t>();

  model::EncoderDecoder model(
      cfg.model_config(manifest.src_vocab_size, manifest.tgt_vocab_size, manifest.special.pad));
  try {
    train::load_state_dict(*model, checkpoint + "/model.pt");
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + " (does the checkpoint belong to dataset " +
                             data_dir + "?)");
  }
  model->eval();
  torch::NoGradGuard no_grad;
  const train::LabelSmoothingLoss loss(manifest.tgt_vocab_size, manifest.special.pad,
                                       cfg.optim.label_smoothing);

  const fs::path out_dir = options.out_dir.empty()
      ? fs::path(options.run_dir) / "eval" / (options.split + "-" + fs::path(checkpoint).filename().string())
      : fs::path(options.out_dir);
  fs::create_directories(out_dir);
  spdlog::info("evaluating {} on {} split '{}' ({} examples)", checkpoint, data_dir,
               options.split, dataset.size());

  double smoothed = 0, nll = 0, tokens = 0;
  int64_t exact = 0;
  std::vector<std::string> hypotheses(dataset.size());
  const auto start = std::chrono::steady_clock::now();
  for (const auto& indices : data::length_sorted_batches(dataset.lengths(), options.batch_tokens)) {
    std::vector<data::Example> examples;
    for (int64_t i : indices) examples.push_back(dataset.get(i));
    const data::Batch batch = data::collate(examples, manifest.special);
    const train::LossSums sums = train::batch_loss(model, loss, batch);
    smoothed += sums.smoothed.item<double>();
    nll += sums.nll.item<double>();
    tokens += static_cast<double>(sums.tokens);

    const auto hyps = greedy_decode(model, batch.src, manifest.special.bos, manifest.special.eos,
                                    batch.src.size(1) + options.max_extra_len);
    for (size_t b = 0; b < indices.size(); ++b) {
      if (hyps[b] == examples[b].tgt) ++exact;
      hypotheses[indices[b]] = tokenizer->decode(hyps[b]);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::ofstream hyp_file(out_dir / "hypotheses.txt");
  for (const auto& h : hypotheses) hyp_file << h << "\n";

  const nlohmann::json results = {
      {"run", options.run_dir}, {"split", options.split}, {"checkpoint", checkpoint},
      {"step", step}, {"dataset", data_dir}, {"num_examples", dataset.size()},
      {"target_tokens", tokens}, {"loss", smoothed / tokens}, {"nll", nll / tokens},
      {"ppl", std::exp(nll / tokens)},
      {"exact_match", static_cast<double>(exact) / static_cast<double>(dataset.size())},
      {"decode", "greedy"}, {"seconds", seconds},
      {"sentences_per_s", static_cast<double>(dataset.size()) / seconds}};
  std::ofstream(out_dir / "results.json") << results.dump(2) << "\n";
  spdlog::info("results in {}", (out_dir / "results.json").string());
  return results;
}

}  // namespace eval
