// sandbox/rank/check.h: the check phase (DESIGN.md "The sandbox", step 3), and the
// expected outputs it and the timing phase compare against.
#pragma once

#include <string>

#include "context.h"
#include "rank_status.h"

namespace sandbox::rank {

// This rank's expected outputs of the call just made on the inputs of `seed`, worked out
// only now, after it (so that no expected output and no peer's input sits in this
// process while a kernel runs): the oracle's from every rank's gathered inputs, or
// (reference "baseline") the baseline's outputs on the same inputs, which runs it on
// every rank. Collective. Overwrites the inputs and outputs on the device.
Outcome expected_after(Ctx& c, uint64_t seed, RankPhase phase, const std::string& detail,
                       Values* want);

// A device error outside a library call (the context broke, most likely in the last
// call): a crash of whoever ran last; kFatal.
Outcome device_error(Results& out, RankPhase phase, const std::string& what,
                     const std::string& err);

// `trials` rounds of `calls` back-to-back calls, each behind a barrier; stops at the
// first failing call (on every rank). Then, at world > 1 against the oracle, the race
// pass: calls chained with no barrier between them and random entry delays, which
// exposes a missing entry wait, and on odd calls the exit probe (inputs poisoned at a
// rank's return, its peers stalled at their first read of them), which exposes a
// missing exit wait. Collective; returns the agreed outcome.
Outcome run_checks(Ctx& c);

}  // namespace sandbox::rank
