// Precompiled header shared by the torch targets: the expensive, stable headers.
// No spdlog or fmt here: LibTorch ships its own fmt (see launch/logging.h).
#pragma once
#include <torch/torch.h>
#include <nlohmann/json.hpp>
