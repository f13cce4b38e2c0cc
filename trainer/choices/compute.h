// How and where a run computes: the choices of train.precision, train.device
// and dist.backend. Below config and runtime alike (CMakeLists.txt:
// trainer_choices), so that config binds them and runtime, distributed and
// train act on them. `auto` is decided per run by runtime/precision.h and
// runtime/device.h; what they decide is never kAuto.
#pragma once
#include "settings/names.h"

namespace choices {

enum class Precision { kAuto, kFp32, kBf16, kFp16 };  // runtime/precision.h says what each does
inline const settings::Names<Precision> kPrecisionNames = {{"auto", Precision::kAuto},
                                                           {"fp32", Precision::kFp32},
                                                           {"bf16", Precision::kBf16},
                                                           {"fp16", Precision::kFp16}};

enum class Device { kAuto, kCpu, kCuda };
inline const settings::Names<Device> kDeviceNames = {
    {"auto", Device::kAuto}, {"cpu", Device::kCpu}, {"cuda", Device::kCuda}};

enum class Backend { kAuto, kMpi, kNccl };  // the collectives' library
inline const settings::Names<Backend> kBackendNames = {
    {"auto", Backend::kAuto}, {"mpi", Backend::kMpi}, {"nccl", Backend::kNccl}};

}  // namespace choices
