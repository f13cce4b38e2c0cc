#include "trainer/checkpoint/state_dict.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include <fstream>
#include <iterator>
#include <stdexcept>

#include "base/file_write.h"

namespace checkpoint {

namespace {

std::string shape_of(const torch::Tensor& t) {
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

// The bytes torch::pickle_save makes (torch.save's zip archive), without the
// type tag pickle_save gives a dict: a call to torch.jit._pickle.restore_type_tag,
// which torch.load refuses in weights_only mode. Untagged, it is a plain dict of
// tensors to any torch.load, and torch::pickle_load reads it as it reads tagged ones.
std::vector<char> pickle_untagged(const c10::IValue& value) {
  std::vector<char> pickled;
  torch::jit::Pickler pickler(
      [&](const char* data, size_t n) { pickled.insert(pickled.end(), data, data + n); },
      /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
      /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::vector<char> archive;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t n) {
    archive.insert(archive.end(), static_cast<const char*>(data),
                   static_cast<const char*>(data) + n);
    return n;
  });
  torch::jit::writeArchiveAndTensors("data", pickled.data(), pickled.size(), pickler.tensorData(),
                                     writer);
  writer.writeEndOfFile();
  return archive;
}

}  // namespace

void save_tensors(const NamedTensors& tensors, const std::string& path) {
  c10::Dict<std::string, torch::Tensor> dict;
  for (const auto& [name, tensor] : tensors) {
    // A view into a larger buffer (sharded training's flat parameters) is
    // saved as a tensor of its own, not with the whole buffer, and a tensor of
    // another layout (evaluate's transposed weights, model/weight_layout.h)
    // in LibTorch's row-major one.
    const torch::Tensor cpu = tensor.detach().cpu();
    dict.insert(name, cpu.is_contiguous() && cpu.storage().nbytes() == cpu.nbytes()
                          ? cpu
                          : cpu.clone(torch::MemoryFormat::Contiguous));
  }
  const std::vector<char> bytes = pickle_untagged(dict);
  base::write_file(path, std::string_view(bytes.data(), bytes.size()));
}

std::map<std::string, torch::Tensor> load_tensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return parse_tensors(std::vector<char>((std::istreambuf_iterator<char>(in)), {}), path);
}

std::map<std::string, torch::Tensor> parse_tensors(const std::vector<char>& bytes,
                                                   const std::string& path) {
  std::map<std::string, torch::Tensor> tensors;
  try {
    for (const auto& entry : torch::pickle_load(bytes).toGenericDict())
      tensors.emplace(entry.key().toStringRef(), entry.value().toTensor());
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": not a dict of tensors (" + e.what_without_backtrace() + ")");
  }
  return tensors;
}

NamedTensors named_state(const torch::nn::Module& module) {
  NamedTensors state;
  for (const auto& p : module.named_parameters()) state.emplace_back(p.key(), p.value());
  for (const auto& b : module.named_buffers()) state.emplace_back(b.key(), b.value());
  return state;
}

void save_state_dict(const torch::nn::Module& module, const std::string& path) {
  save_tensors(named_state(module), path);
}

void load_state_dict(torch::nn::Module& module, const std::string& path) {
  copy_state_dict(module, load_tensors(path), path);
}

void copy_state_dict(torch::nn::Module& module, std::map<std::string, torch::Tensor> saved,
                     const std::string& path) {
  torch::NoGradGuard no_grad;
  for (auto& [name, tensor] : named_state(module)) {
    const auto it = saved.find(name);
    if (it == saved.end()) throw std::runtime_error(path + ": tensor '" + name + "' is missing");
    if (!it->second.sizes().equals(tensor.sizes()))
      throw std::runtime_error(path + ": tensor '" + name + "' has shape " + shape_of(it->second) +
                               ", the model expects " + shape_of(tensor));
    tensor.copy_(it->second);
    saved.erase(it);
  }
  if (!saved.empty())
    throw std::runtime_error(path + ": tensor '" + saved.begin()->first +
                             "' is not part of the model");
}

}  // namespace checkpoint
