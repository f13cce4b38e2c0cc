#include "trainer/eval/eval_model.h"

#include <filesystem>
#include <stdexcept>

#include "trainer/eval/checkpoint_average.h"
#include "trainer/train/checkpoint.h"

namespace eval {

namespace fs = std::filesystem;

EvalModel load_eval_model(const std::string& run_dir, const std::string& data_dir,
                          const std::vector<std::string>& checkpoints) {
  EvalModel m;
  m.cfg = config::read_run_config(run_dir + "/config.toml");
  m.data_dir = data_dir.empty() ? m.cfg.data.dir : data_dir;
  m.manifest = data::read_manifest(m.data_dir);
  m.tgt_tokenizer = data::load_tokenizer(m.manifest.tokenizer_kind,
                                         fs::path(m.data_dir) / m.manifest.tgt_tokenizer_file);
  m.model = model::EncoderDecoder(m.cfg.model_config(m.manifest.src_vocab_size,
                                                     m.manifest.tgt_vocab_size, m.manifest.special.pad));
  try {
    load_averaged(*m.model, checkpoints);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + " (does the checkpoint belong to dataset " +
                             m.data_dir + "?)");
  }
  m.model->eval();
  m.checkpoints = checkpoints;
  m.step = train::read_checkpoint_state(checkpoints.back()).at("step").get<int64_t>();
  return m;
}

}  // namespace eval
