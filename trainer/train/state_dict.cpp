#include "trainer/train/state_dict.h"

#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>

namespace train {

namespace {

std::vector<std::pair<std::string, torch::Tensor>> named_state(const torch::nn::Module& module) {
  std::vector<std::pair<std::string, torch::Tensor>> state;
  for (const auto& p : module.named_parameters()) state.emplace_back(p.key(), p.value());
  for (const auto& b : module.named_buffers()) state.emplace_back(b.key(), b.value());
  return state;
}

std::string shape_of(const torch::Tensor& t) {
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

}  // namespace

void save_state_dict(const torch::nn::Module& module, const std::string& path) {
  c10::Dict<std::string, torch::Tensor> dict;
  for (const auto& [name, tensor] : named_state(module)) dict.insert(name, tensor.detach().cpu());
  const std::vector<char> bytes = torch::pickle_save(dict);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

void load_state_dict(torch::nn::Module& module, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read model weights " + path);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  c10::impl::GenericDict dict = torch::pickle_load(bytes).toGenericDict();

  torch::NoGradGuard no_grad;
  std::set<std::string> expected;
  for (auto& [name, tensor] : named_state(module)) {
    expected.insert(name);
    const auto it = dict.find(name);
    if (it == dict.end()) throw std::runtime_error(path + ": tensor '" + name + "' is missing");
    const torch::Tensor saved = it->value().toTensor();
    if (!saved.sizes().equals(tensor.sizes()))
      throw std::runtime_error(path + ": tensor '" + name + "' has shape " + shape_of(saved) +
                               ", the model expects " + shape_of(tensor));
    tensor.copy_(saved);
  }
  for (const auto& entry : dict) {
    if (!expected.count(entry.key().toStringRef()))
      throw std::runtime_error(path + ": tensor '" + entry.key().toStringRef() +
                               "' is not part of the model");
  }
}

}  // namespace train
