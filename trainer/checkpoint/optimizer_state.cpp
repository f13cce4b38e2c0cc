#include "trainer/checkpoint/optimizer_state.h"

#include <sstream>
#include <stdexcept>

#include "trainer/checkpoint/state_dict.h"

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

}  // namespace

AdamStateKey adam_state_key(const torch::Tensor& param) { return state_key<AdamStateKey>(param); }

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

void load_optimizer_state(torch::optim::Adam& optimizer, const torch::nn::Module& model,
                          const std::string& path) {
  std::map<std::string, torch::Tensor> saved = load_tensors(path);
  const auto take = [&](const std::string& name, const torch::Tensor& param) {
    const auto it = saved.find(name);
    if (it == saved.end()) throw std::runtime_error(path + ": '" + name + "' is missing");
    torch::Tensor t = it->second;
    saved.erase(it);
    if (param.defined() && !t.sizes().equals(param.sizes()))
      throw std::runtime_error(path + ": '" + name + "' does not have its parameter's shape");
    return param.defined() ? t.to(param.device(), param.scalar_type()).contiguous() : t;
  };
  auto& states = optimizer.state();
  states.clear();
  for (const auto& p : model.named_parameters()) {
    if (!saved.count(p.key() + ".step")) continue;  // not stepped yet
    auto s = std::make_unique<torch::optim::AdamParamState>();
    s->step(take(p.key() + ".step", {}).item<int64_t>());
    s->exp_avg(take(p.key() + ".exp_avg", p.value()));
    s->exp_avg_sq(take(p.key() + ".exp_avg_sq", p.value()));
    states[adam_state_key(p.value())] = std::move(s);
  }
  if (!saved.empty())
    throw std::runtime_error(path + ": '" + saved.begin()->first + "' belongs to no parameter");
}

}  // namespace checkpoint
