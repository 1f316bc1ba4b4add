// agent/skeleton.h: the starting point every prompt shows instead of an example kernel:
// the ABI's two entry points with the problem's tensors and numeric parameters bound by
// name and a TODO where the work goes. It is generated from problem.json alone (names,
// roles, dtypes, shapes), never from a kernel file, so it cannot carry a solution; it
// compiles, loads and computes nothing.
#pragma once

#include <string>

#include "sandbox/job_enums.h"
#include "suite/problem.h"

namespace agent {

// The skeleton for `backend` ("cuda": a .cu including <kf/kf.cuh>; "host": a .cpp
// including <kf/kf.h> and <kf/host.h>).
std::string kernel_skeleton(const suite::Problem& p, sandbox::Backend backend);

}  // namespace agent
