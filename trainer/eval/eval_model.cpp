#include "trainer/eval/eval_model.h"

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "base/host_name.h"
#include "base/text_format.h"
#include "data_pipeline/make_tokenizer.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_files.h"
#include "trainer/checkpoint/train_state.h"
#include "trainer/eval/checkpoint_average.h"
#include "trainer/model/weight_layout.h"

namespace eval {

namespace fs = std::filesystem;

std::string dataset_dir(const std::string& run_dir, const std::string& data_dir) {
  if (!data_dir.empty()) {
    if (!fs::is_directory(data_dir))
      throw std::runtime_error("--data: dataset directory " + data_dir + " does not exist");
    return data_dir;
  }
  const std::string config = run_dir + "/config.toml";
  const std::string dir = config::read_run_config(config).data.dir;
  if (!fs::is_directory(dir))
    throw std::runtime_error(
        "dataset directory " + dir + " (data.dir in " + config + ") does not exist" +
        (fs::path(dir).is_relative() ? " here: a relative data.dir is read from the working "
                                       "directory, " +
                                           fs::current_path().string()
                                     : std::string()) +
        "; give the dataset's place with --data DIR");
  return dir;
}

namespace {

// "name [shape] dtype" of each tensor share_weights sends, one a line.
std::string weight_layout(const torch::nn::Module& model) {
  std::ostringstream out;
  for (const auto& named : {model.named_parameters(), model.named_buffers()})
    for (const auto& w : named)
      out << w.key() << ' ' << w.value().sizes() << ' ' << w.value().dtype() << '\n';
  return out.str();
}

// Collective. Rank 0's parameters and buffers (on the CPU, contiguous: as
// loaded) into every rank's model. Every rank built it from the run's
// config.toml and the dataset's manifest as its node sees them; a node
// whose copy differs is named, not sent mismatched sizes.
void share_weights(torch::nn::Module& model, const launch::Ranks& ranks) {
  const std::string mine = weight_layout(model);
  const std::string main = ranks.broadcast(mine);
  launch::together(ranks, [&] {
    if (mine == main) return;
    const auto lines = [](const std::string& text) {
      std::vector<std::string> all;
      std::istringstream in(text);
      for (std::string line; std::getline(in, line);) all.push_back(line);
      return all;
    };
    const std::vector<std::string> here = lines(mine), there = lines(main);
    size_t i = 0;
    while (i < here.size() && i < there.size() && here[i] == there[i]) ++i;
    throw std::runtime_error(text::format(
        "rank {} on {}: its model differs from rank 0's ({} here, {} on rank 0): the run's "
        "config.toml or the dataset's manifest differs between the nodes' views",
        ranks.rank(), base::host_name(), i < here.size() ? here[i] : "nothing",
        i < there.size() ? there[i] : "nothing"));
  });
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> weights = model.parameters();
  for (const auto& buffer : model.buffers()) weights.push_back(buffer);
  for (auto& w : weights) {
    TORCH_CHECK(w.is_contiguous() && w.device().is_cpu(), "share_weights: a weight not in place");
    ranks.broadcast(w.data_ptr(), static_cast<int64_t>(w.nbytes()));
  }
}

}  // namespace

EvalModel load_eval_model(const std::string& run_dir, const std::string& data_dir,
                          const std::vector<std::string>& checkpoints, const launch::Ranks& ranks,
                          const torch::Device& device) {
  EvalModel m;
  launch::together(ranks, [&] {  // no rank left alone in the collectives below
    m.cfg = config::read_run_config(run_dir + "/config.toml");
    m.data_dir = dataset_dir(run_dir, data_dir);
    m.manifest = data::read_manifest(m.data_dir);
    m.tgt_tokenizer = data::load_dataset_tokenizer(m.manifest, m.data_dir, "tgt");
    if (m.classification())
      m.labels = data::LabelSet::load(fs::path(m.data_dir) / m.manifest.labels_file);
    m.model = task::make_task_model(m.cfg, m.manifest);
  });
  launch::on_main(ranks, [&] {
    try {
      load_averaged(m.model.module(), checkpoints);
    } catch (const checkpoint::Unverified&) {
      throw;
    } catch (const std::exception& e) {
      throw_if_removed(checkpoints);  // pruned meanwhile: said as such
      throw std::runtime_error(std::string(e.what()) + " (does the checkpoint belong to dataset " +
                               m.data_dir + "?)");
    }
    reading(checkpoints, [&] {
      const checkpoint::CheckpointFiles newest_files(checkpoints.back());
      const checkpoint::TrainState newest =
          checkpoint::CheckpointState::from_json(
              checkpoint::parse_checkpoint_state(newest_files.read("state.json"),
                                                 newest_files.path("state.json")))
              .train;
      m.step = newest.step;
      m.examples_ledger = newest.ledger;
    });
  });
  share_weights(m.model.module(), ranks);
  m.step = ranks.broadcast(m.step);
  m.examples_ledger = ranks.broadcast(m.examples_ledger);
  m.model.module().to(device);
  m.model.module().eval();
  if (device.is_cpu()) model::store_weights_transposed(m.model.module());
  m.objective = task::make_objective(m.model, m.manifest, m.cfg.optim.label_smoothing);
  m.device = device;
  m.checkpoints = checkpoints;
  return m;
}

model::EncoderDecoder& EvalModel::encoder_decoder() {
  if (!model.encoder_decoder)
    throw std::invalid_argument("dataset " + data_dir +
                                " is a classification task: nothing to decode");
  return model.encoder_decoder;
}

std::vector<int64_t> EvalModel::classify(const torch::Tensor& src) {
  const auto best = model.classifier->forward(src).argmax(-1).cpu();  // [B]
  return std::vector<int64_t>(best.data_ptr<int64_t>(), best.data_ptr<int64_t>() + best.numel());
}

}  // namespace eval
