// Model weights as a state dict {name: tensor} in a file that Python reads:
//
//   import torch; sd = torch.load("model.pt")   # a dict of tensors
//
// in the format of Python's torch.save (torch::pickle_save's archive), with
// nothing in it that torch.load's weights_only mode (its default since torch
// 2.6) refuses; Debian's torch 1.13 reads it as well.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

namespace checkpoint {

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

// {name: tensor} as CPU tensors, in the format of Python's torch.save.
void save_tensors(const NamedTensors& tensors, const std::string& path);
// Throws naming the file when it cannot be read or is not such a dict.
std::map<std::string, torch::Tensor> load_tensors(const std::string& path);
// The same from the file's bytes (checkpoint_files.h), read at `path`.
std::map<std::string, torch::Tensor> parse_tensors(const std::vector<char>& bytes,
                                                   const std::string& path);

// The module's parameters and buffers by name: its state dict (the live tensors).
NamedTensors named_state(const torch::nn::Module& module);
void save_state_dict(const torch::nn::Module& module, const std::string& path);

// Copies every parameter and buffer of `module` from the file. A missing or
// extra name, or a shape that differs, is an error naming the tensor and the file.
void load_state_dict(torch::nn::Module& module, const std::string& path);
// The same from the tensors of the file at `path` (parse_tensors).
void copy_state_dict(torch::nn::Module& module, std::map<std::string, torch::Tensor> saved,
                     const std::string& path);

}  // namespace checkpoint
