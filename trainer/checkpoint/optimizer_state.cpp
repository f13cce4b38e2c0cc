#include "trainer/checkpoint/optimizer_state.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace checkpoint {
namespace {

template <typename Key>  // a template, so that only the matching branch is compiled
Key state_key(const torch::Tensor& param) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream address;
    address << param.unsafeGetTensorImpl();
    return address.str();
  } else {
    return static_cast<Key>(param.unsafeGetTensorImpl());
  }
}

// One parameter's moments as the files give them: flattened, filled piece by piece.
struct Assembly {
  torch::Tensor exp_avg, exp_avg_sq;                // [numel]
  std::vector<std::pair<int64_t, int64_t>> filled;  // [begin, end) of each piece
  int64_t step = -1;
};

// Removes `name` from `saved` and returns it (undefined when absent and not `required`).
torch::Tensor take(std::map<std::string, torch::Tensor>& saved, const std::string& path,
                   const std::string& name, bool required = true) {
  const auto it = saved.find(name);
  if (it == saved.end()) {
    if (required) throw std::runtime_error(path + ": '" + name + "' is missing");
    return {};
  }
  torch::Tensor t = it->second;
  saved.erase(it);
  return t;
}

// The piece of `param` in the file at `path`, if it holds one, into `a`.
void add_piece(Assembly& a, std::map<std::string, torch::Tensor>& saved, const std::string& path,
               const std::string& param, const torch::Tensor& value) {
  const int64_t step = take(saved, path, param + ".step").item<int64_t>();
  const torch::Tensor m = take(saved, path, param + ".exp_avg");
  const torch::Tensor v = take(saved, path, param + ".exp_avg_sq");
  const torch::Tensor elements = take(saved, path, param + ".elements", false);
  const auto where = path + ": '" + param + "'";
  int64_t begin = 0, end = value.numel();
  if (elements.defined()) {  // a piece of a part
    if (elements.numel() != 2) throw std::runtime_error(where + ".elements is not [begin, end]");
    begin = elements[0].item<int64_t>();
    end = elements[1].item<int64_t>();
    if (begin < 0 || begin >= end || end > value.numel() || m.dim() != 1 ||
        m.numel() != end - begin || !v.sizes().equals(m.sizes()))
      throw std::runtime_error(where + ": a piece of elements [" + std::to_string(begin) + ", " +
                               std::to_string(end) + ") that does not fit its parameter of " +
                               std::to_string(value.numel()) + " elements");
  } else if (!m.sizes().equals(value.sizes()) || !v.sizes().equals(value.sizes())) {
    throw std::runtime_error(where + " does not have its parameter's shape");
  }
  if (a.step >= 0 && a.step != step)
    throw std::runtime_error(where + ": Adam step " + std::to_string(step) +
                             ", where another file of the checkpoint says " +
                             std::to_string(a.step));
  a.filled.emplace_back(begin, end);
  a.step = step;
  if (!a.exp_avg.defined() && end - begin == value.numel()) {  // whole (optimizer.pt): as loaded
    a.exp_avg = m.reshape({-1});
    a.exp_avg_sq = v.reshape({-1});
    return;
  }
  if (!a.exp_avg.defined()) {
    a.exp_avg = torch::empty({value.numel()}, m.options());
    a.exp_avg_sq = torch::empty({value.numel()}, v.options());
  }
  a.exp_avg.narrow(0, begin, end - begin).copy_(m.reshape({-1}));
  a.exp_avg_sq.narrow(0, begin, end - begin).copy_(v.reshape({-1}));
}

// The pieces cover [0, numel) once.
void check_covered(Assembly& a, int64_t numel, const std::string& dir, const std::string& param) {
  std::sort(a.filled.begin(), a.filled.end());
  int64_t next = 0;  // pieces end to end from 0 reach it
  bool gap_or_overlap = false;
  for (const auto& [begin, end] : a.filled) {
    gap_or_overlap = gap_or_overlap || begin != next;
    if (!gap_or_overlap) next = end;
  }
  if (gap_or_overlap || next != numel)
    throw std::runtime_error(dir + ": the optimizer files' pieces of '" + param +
                             "' do not cover its " + std::to_string(numel) +
                             " elements exactly once (covered up to " + std::to_string(next) +
                             " without a gap or an overlap)");
}

}  // namespace

AdamStateKey adam_state_key(const torch::Tensor& param) { return state_key<AdamStateKey>(param); }

std::string optimizer_part_name(int rank, int world_size) {
  std::ostringstream name;
  name << "optimizer-" << std::setw(5) << std::setfill('0') << rank << "-of-" << std::setw(5)
       << world_size << ".pt";
  return name.str();
}

NamedTensors optimizer_tensors(torch::optim::Adam& optimizer, const torch::nn::Module& model) {
  NamedTensors tensors;
  auto& states = optimizer.state();
  for (const auto& p : model.named_parameters()) {
    const auto it = states.find(adam_state_key(p.value()));
    if (it == states.end()) continue;
    const auto& s = static_cast<const torch::optim::AdamParamState&>(*it->second);
    tensors.emplace_back(p.key() + ".exp_avg", s.exp_avg());
    tensors.emplace_back(p.key() + ".exp_avg_sq", s.exp_avg_sq());
    tensors.emplace_back(p.key() + ".step", torch::tensor(static_cast<int64_t>(s.step())));
  }
  return tensors;
}

void add_moment_piece(NamedTensors& part, const std::string& param, int64_t begin,
                      const torch::Tensor& exp_avg, const torch::Tensor& exp_avg_sq, int64_t step) {
  part.emplace_back(param + ".exp_avg", exp_avg);
  part.emplace_back(param + ".exp_avg_sq", exp_avg_sq);
  part.emplace_back(param + ".step", torch::tensor(step));
  part.emplace_back(param + ".elements", torch::tensor({begin, begin + exp_avg.numel()}));
}

std::vector<std::string> optimizer_files(const std::vector<std::string>& names) {
  static const std::regex part_name("optimizer-([0-9]{5,})-of-([0-9]{5,})\\.pt");
  const bool whole = std::count(names.begin(), names.end(), kWholeOptimizerFile) > 0;
  std::map<int64_t, std::string> parts;
  int64_t world = 0;
  for (const auto& name : names) {
    std::smatch m;
    if (!std::regex_match(name, m, part_name)) continue;
    const int64_t of = std::stoll(m[2]);
    if (world != 0 && of != world)
      throw std::runtime_error("optimizer parts of " + std::to_string(world) + " and of " +
                               std::to_string(of) + " ranks");
    world = of;
    parts[std::stoll(m[1])] = name;
  }
  if (whole && !parts.empty())
    throw std::runtime_error(std::string("both ") + kWholeOptimizerFile + " and optimizer parts");
  if (whole) return {kWholeOptimizerFile};
  if (parts.empty())
    throw std::runtime_error(std::string("no optimizer state (") + kWholeOptimizerFile +
                             " or optimizer-*-of-*.pt)");
  std::vector<std::string> files;
  for (int64_t r = 0; r < world; ++r) {
    const auto it = parts.find(r);
    if (it == parts.end())
      throw std::runtime_error("not every optimizer part: no " +
                               optimizer_part_name(static_cast<int>(r), static_cast<int>(world)));
    files.push_back(it->second);
  }
  if (parts.size() != files.size())
    throw std::runtime_error(parts.rbegin()->second + ", a part beyond its rank count");
  return files;
}

namespace {

// The optimizer's state from `files` (optimizer_files' answer) of
// `checkpoint_dir`, each file's tensors from `load`: all of them read,
// assembled and checked before the state changes.
void load_optimizer_files(
    torch::optim::Adam& optimizer, const torch::nn::Module& model,
    const std::string& checkpoint_dir, const std::vector<std::string>& files,
    const std::function<std::map<std::string, torch::Tensor>(const std::string& file)>& load) {
  namespace fs = std::filesystem;
  const auto params = model.named_parameters();
  std::map<std::string, Assembly> found;
  for (const auto& file : files) {  // one at a time: a whole part in memory, not all of them
    const std::string path = (fs::path(checkpoint_dir) / file).string();
    std::map<std::string, torch::Tensor> saved = load(file);
    for (const auto& p : params)
      if (saved.count(p.key() + ".step"))
        add_piece(found[p.key()], saved, path, p.key(), p.value());
    if (!saved.empty())
      throw std::runtime_error(path + ": '" + saved.begin()->first + "' belongs to no parameter");
  }
  // The new state built aside, and swapped in once whole: a refusal below
  // leaves the optimizer's state as it was.
  std::remove_reference_t<decltype(optimizer.state())> states;
  const bool parts = files.front() != kWholeOptimizerFile;
  for (const auto& p : params) {
    const auto it = found.find(p.key());
    // Adam steps every parameter or none (GradSync gives each a gradient):
    // parts that hold some but not this one lost it.
    if (it == found.end() && parts && !found.empty() && p.value().numel() > 0)
      throw std::runtime_error(checkpoint_dir +
                               ": the optimizer parts hold moments of other "
                               "parameters but none of '" +
                               p.key() + "'");
    if (it == found.end()) continue;  // not stepped yet
    Assembly& a = it->second;
    check_covered(a, p.value().numel(), checkpoint_dir, p.key());
    const auto on_device = [&](const torch::Tensor& t) {
      return t.view(p.value().sizes()).to(p.value().device(), p.value().scalar_type());
    };
    auto s = std::make_unique<torch::optim::AdamParamState>();
    s->step(a.step);
    s->exp_avg(on_device(a.exp_avg));
    s->exp_avg_sq(on_device(a.exp_avg_sq));
    states[adam_state_key(p.value())] = std::move(s);
  }
  optimizer.state().swap(states);
}

}  // namespace

void load_optimizer_state(torch::optim::Adam& optimizer, const torch::nn::Module& model,
                          const std::string& checkpoint_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(checkpoint_dir))
    names.push_back(entry.path().filename().string());
  std::vector<std::string> files;
  try {
    files = optimizer_files(names);
  } catch (const std::exception& e) {
    throw std::runtime_error(checkpoint_dir + " holds " + e.what());
  }
  load_optimizer_files(optimizer, model, checkpoint_dir, files, [&](const std::string& file) {
    return load_tensors((fs::path(checkpoint_dir) / file).string());
  });
}

void load_optimizer_state(torch::optim::Adam& optimizer, const torch::nn::Module& model,
                          const CheckpointFiles& checkpoint) {
  load_optimizer_files(optimizer, model, checkpoint.dir(), checkpoint.optimizer_files(),
                       [&](const std::string& file) {
                         return parse_tensors(checkpoint.read(file), checkpoint.path(file));
                       });
}

}  // namespace checkpoint
