// Precompiled header shared by every target: the expensive, stable headers.
#pragma once
#include <torch/torch.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>
