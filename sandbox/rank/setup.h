// sandbox/rank/setup.h: the views a call receives (tensors, params, Comms, comm.alloc)
// and the setup phase (kf_setup of the baseline, then of the candidate).
#pragma once

#include <string>

#include "context.h"

namespace sandbox::rank {

// Checks the current job's shapes against the world (one shape given for every rank
// becomes each rank's) and lays out its heap into *layout.
bool plan_heap(Place& at, HeapLayout* layout, std::string* err);

// Builds this rank's kf::Tensor items, the kf::Param list, both Comms and comm.alloc's
// workspace (args.bump) for the current job. Needs the backend initialized.
void build_views(const Place& at, const Device& dev, CallArgs& args);

// kf_setup of the baseline (when it runs) and of the candidate, each followed by a check
// that every rank allocated the same workspace. Collective; returns the agreed outcome.
Outcome run_setups(Ctx& c);

}  // namespace sandbox::rank
