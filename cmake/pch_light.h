// Precompiled header of the torch-free targets (launch, data_pipeline,
// prepare_data): they must not see LibTorch (see CMakeLists.txt).
#pragma once
#include <nlohmann/json.hpp>
