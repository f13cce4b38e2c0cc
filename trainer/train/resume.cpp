#include "trainer/train/resume.h"

#include <toml++/toml.h>

#include <sstream>
#include <stdexcept>

#include "base/logging.h"
#include "trainer/checkpoint/optimizer_state.h"
#include "trainer/checkpoint/train_state.h"

namespace train {

namespace {

std::string text(const toml::node* node) {
  if (node == nullptr) return "(absent)";
  std::ostringstream out;
  node->visit([&out](const auto& value) { out << value; });
  return out.str();
}

}  // namespace

std::string resume_from(const checkpoint::Checkpoints& checkpoints,
                        const checkpoint::CheckpointChoice& resume,
                        const std::function<void(const checkpoint::CheckpointFiles&)>& load) {
  using Kind = checkpoint::CheckpointChoice::Kind;
  if (resume.kind == Kind::kNone) return "";
  if (resume.kind == Kind::kLatest) {
    const auto all = checkpoints.list();
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      try {
        load(checkpoint::CheckpointFiles(*it));
        return *it;
      } catch (const checkpoint::Unverified& e) {
        logging::warn("skipping checkpoint {}: {}", *it, e.what());
      }
    }
    return "";
  }
  std::string chosen;  // best, or a directory
  try {
    chosen = checkpoints.resolve(resume);
  } catch (const std::exception& e) {
    throw std::runtime_error("--resume " + resume.text() + ": " + e.what());
  }
  try {
    load(checkpoint::CheckpointFiles(chosen));
  } catch (const checkpoint::Unverified& e) {
    throw std::runtime_error("--resume " + resume.text() + ": checkpoint " + chosen +
                             " fails verification: " + e.what());
  }
  return chosen;
}

void check_resume_compatible(const std::string& checkpoint_dir, const nlohmann::json& saved_state,
                             const std::string& current_toml, const std::string& dataset_id) {
  const auto refuse = [&checkpoint_dir](const std::string& what) {
    throw std::invalid_argument(
        "cannot resume from " + checkpoint_dir + ": " + what +
        ". To train this config anyway, give it another --run.name (a new run directory), or "
        "start this run afresh with --resume none (its checkpoints are then replaced)");
  };
  const checkpoint::RunIdentity saved_run = checkpoint::CheckpointState::from_json(saved_state).run;
  if (saved_run.dataset_id != dataset_id)
    refuse("it was trained on another dataset (dataset id " + saved_run.dataset_id +
           ", data.dir's is " + dataset_id + ")");
  const toml::table saved = toml::parse(saved_run.config_toml);
  const toml::table current = toml::parse(current_toml);
  for (const char* section : {"model", "optim", "data", "run"}) {
    const toml::table* now = current[section].as_table();
    const toml::table* then = saved[section].as_table();
    if (now == nullptr) continue;
    for (const auto& [key, value] : *now) {
      const std::string name = std::string(section) + "." + std::string(key.str());
      const std::string was = text(then ? then->get(key.str()) : nullptr);
      const std::string is = text(&value);
      if (was == is || name == "run.name" || name == "run.out_dir" || name == "data.dir") continue;
      if (std::string(section) == "model")
        refuse("its model differs from the config: " + name + " = " + was + " in the checkpoint, " +
               is + " now");
      logging::warn("resuming with {} = {} (the checkpoint was trained with {})", name, is, was);
    }
  }
  // The precision as each run chose it (auto resolved): another one changes
  // the numbers, so it is said, like the other settings above.
  const std::string was = text(saved["train"]["precision"].node());
  const std::string is = text(current["train"]["precision"].node());
  if (was != "(absent)" && was != is)
    logging::warn("resuming with train.precision = {} (the checkpoint was trained with {})", is,
                  was);
}

void share_adam_state(torch::optim::Adam& adam, const std::vector<torch::Tensor>& params,
                      distributed::Communicator& comm) {
  if (params.empty()) return;
  const bool root = comm.rank() == 0;
  auto& states = adam.state();
  // Each parameter's step count on rank 0, -1 where Adam has no state for it
  // (not stepped yet).
  std::vector<int64_t> steps(params.size(), -1);
  if (root)
    for (size_t i = 0; i < params.size(); ++i) {
      const auto it = states.find(checkpoint::adam_state_key(params[i]));
      if (it != states.end())
        steps[i] = static_cast<const torch::optim::AdamParamState&>(*it->second).step();
    }
  torch::Tensor counts = torch::tensor(steps).to(params.front().device());  // [params]
  comm.broadcast(counts, 0);
  counts = counts.cpu();
  if (!root) states.clear();
  for (size_t i = 0; i < params.size(); ++i) {
    const int64_t step = counts[static_cast<int64_t>(i)].item<int64_t>();
    if (step < 0) continue;
    const auto key = checkpoint::adam_state_key(params[i]);
    if (!root) {
      auto s = std::make_unique<torch::optim::AdamParamState>();
      s->step(step);
      s->exp_avg(torch::empty_like(params[i]));
      s->exp_avg_sq(torch::empty_like(params[i]));
      states[key] = std::move(s);
    }
    auto& s = static_cast<torch::optim::AdamParamState&>(*states.at(key));
    s.exp_avg(s.exp_avg().contiguous());  // like params[i]
    s.exp_avg_sq(s.exp_avg_sq().contiguous());
    comm.broadcast(s.exp_avg(), 0);
    comm.broadcast(s.exp_avg_sq(), 0);
  }
}

}  // namespace train
