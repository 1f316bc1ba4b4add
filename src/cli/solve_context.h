// cli/solve_context.h: what `kforge solve` tells the model about where it runs: the
// topology, and the baseline's time measured once on this machine.
#pragma once

#include <string>

#include "eval/eval.h"
#include "suite/topology.h"

namespace cli {

// The topology the prompt describes: the file given, the host's, or the machine's as
// detected (none, with the reason, when it cannot be). False only for a bad file.
bool choose_topology(const std::string& file, sandbox::Backend backend, suite::Topology* topo,
                     std::string* err);

// One line on the baseline's time at size full, measured here when that is a speed (a
// GPU per rank), else why not.
std::string baseline_time_text(const eval::EvalConfig& cfg, const suite::Topology& topo,
                               bool headless);

}  // namespace cli
