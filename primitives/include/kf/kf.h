// kf/kf.h: what a host-backend candidate includes (plain C++, no CUDA). The same ABI
// as <kf/kf.cuh>; the symmetric heap is POSIX shared memory and kf_run runs on the CPU.
#pragma once

#include "abi.h"
