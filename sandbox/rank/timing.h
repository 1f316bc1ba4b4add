// sandbox/rank/timing.h: the timing phase (DESIGN.md "The sandbox", step 4).
#pragma once

#include "context.h"

namespace sandbox::rank {

// Baseline (when it runs) and candidate alternate, `warmup` then `iters` iterations;
// every iteration: inputs of its own (no two samples share them), outputs poisoned, L2 flushed,
// a barrier, then the timed call. Every verify_every-th timed candidate call (and the
// last) is checked against the expected outputs. Rank 0 fills c.out.run with the slowest
// rank's time per iteration. Collective; returns the agreed outcome.
Outcome run_timing(Ctx& c);

}  // namespace sandbox::rank
