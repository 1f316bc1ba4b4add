// sandbox/rank/setup.h: the views a call receives (tensors, params, Comms, comm.alloc)
// and the setup phase (kf_setup of the baseline, then of the candidate).
#pragma once

#include <string>

#include "context.h"

namespace sandbox::rank {

// Checks the job's shapes against the world and lays out the heap.
bool plan_heap(Ctx& c, std::string* err);

// Builds this rank's kf::Tensor items, the kf::Param list and both Comms. Needs the
// backend initialized.
void build_views(Ctx& c);

// kf_setup of the baseline (when it runs) and of the candidate, each followed by a check
// that every rank allocated the same workspace. Collective; returns the agreed outcome.
Outcome run_setups(Ctx& c);

}  // namespace sandbox::rank
