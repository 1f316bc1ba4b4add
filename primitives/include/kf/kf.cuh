// kf/kf.cuh: what a GPU candidate includes. The ABI (kf::Comm, kf::Tensors, kf_setup,
// kf_run) plus the CUDA runtime. The primitives (signals, transfers, schedules) are
// added beside this header; see primitives/docs/.
#pragma once

#include <cuda_runtime.h>

#include "abi.h"
