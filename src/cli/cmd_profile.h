// cli/cmd_profile.h: `kforge profile PROBLEM [KERNEL]`: the kernel (and the baseline, for
// comparison) run once more in the sandbox under Nsight Compute: warm-up, then one timed
// call measured, and per rank and kernel launch its duration, throughputs, occupancy,
// launch shape and top stall reasons beside the baseline's kernels and the roofline
// (eval/profile.h); the .ncu-rep files stay in the run folder for the Nsight Compute UI.
// `--tool memcheck|racecheck|synccheck` reruns the checks under compute-sanitizer
// instead. Where the tool is missing (or on the host backend) the kernel is evaluated
// as `kforge eval` would, and the output says the profile was skipped and why.
// Exit codes: 0 the kernel is correct and the tool ran (or was skipped); 1 the kernel is
// not correct, or the run under the tool did not finish; 2 bad input; 3 kforge failed.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/eval_options.h"

namespace cli {

struct ProfileArgs {
  std::vector<std::string> positionals;  // PROBLEM, then the kernel file, then PARAM=V
  EvalOptions opt;
  std::string tool = "ncu";       // ncu | memcheck | racecheck | synccheck
  std::string metrics = "brief";  // a set (brief, time, peers) or ncu metric names, comma-separated
  std::string rank = "all";       // all | R | R,S,...
  std::string tool_args;          // more of the tool's options, split at spaces
  bool json = false;
};

CLI::App* add_profile_command(CLI::App& app, ProfileArgs* a);
int cmd_profile(const ProfileArgs& a);

// "all" -> {}; "1,3" -> {1, 3}. False with *err for a word that is no rank below world.
bool parse_ranks(const std::string& text, int world, std::vector<int>* out, std::string* err);

}  // namespace cli
