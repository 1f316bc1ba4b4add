// eval/profile.h: one more launch of a candidate, on the one eval path (eval.h's request,
// sandbox::evaluate), with every rank (or the ranks asked for) started under a GPU tool:
//  - Nsight Compute (`ncu --clock-control none`): the full-size instance, its warm-up,
//    then exactly one timed iteration whose calls (the baseline's and the candidate's)
//    run inside the NVTX range kf_profile, the only launches ncu is told to measure. A
//    report per rank stays in the run folder (<eval>/full/profile/rank<R>.ncu-rep, for
//    the Nsight Compute UI); its metrics are read back through `ncu --import --csv`.
//  - compute-sanitizer (memcheck, racecheck, synccheck): the eval's checks rerun, not
//    timed, its reports per rank in <eval>/<first size>/profile/sanitizer-rank<R>.log.
// The launch keeps every limit of an eval (the watchdog ends a run the tool made hang);
// only the start-up and one call's limit are longer, as the tools slow both. Where the
// tool is missing, or the backend is the host's, nothing runs and the report says why.
#pragma once

#include <string>
#include <vector>

#include "eval/eval.h"
#include "eval/profile_report.h"

namespace eval {

struct ProfileOptions {
  Tool tool = Tool::ncu;
  // ncu: a named set (metric_set below) or a comma-separated list of ncu's metric names.
  std::string metrics = "brief";
  std::vector<int> ranks;  // the ranks run under the tool; empty: all
  // More of the tool's own options, put before kforge's (e.g. {"--replay-mode",
  // "application"} for ncu): what kforge does not choose for a person who knows the tool.
  std::vector<std::string> tool_args;
};

// The metric names of a set. "time": each launch's duration and shape (grid, block,
// registers, the SMs there are), which Nsight Compute reads in one pass. "brief" (the
// default): those, the SM and DRAM throughputs, achieved occupancy, shared memory and
// the stall reasons; "peers": brief and the NVLink and PCIe bytes. Both take several
// passes: ncu replays the kernel for each, restoring memory in between, which the expert
// kernels (flag waits included) survive at world 1 on the H200. Else the words of a
// comma-separated list. Empty for an unknown set name.
std::vector<std::string> metric_set(const std::string& set);

// The Nsight Compute metric of the share of a kernel's active warp cycles stalled for
// `reason` ("sleeping", "long_scoreboard", ...); metric_set's "brief" has one per reason.
std::string stall_metric(const std::string& reason);

// Where the tool is: $KFORGE_NCU or $KFORGE_COMPUTE_SANITIZER, else beside the nvcc kforge
// was built with, else /usr/local/cuda/bin, else PATH. "" with *why naming the places
// looked at and what to do.
std::string find_tool(Tool tool, std::string* why);

// The command line a rank starts under: the tool and its options, up to the rank program.
// `extra`: ProfileOptions::tool_args, put right after the program.
std::vector<std::string> tool_wrapper(Tool tool, const std::string& exe, const std::string& dir,
                                      const std::vector<std::string>& metrics,
                                      const std::vector<std::string>& extra = {});

// Runs `kernel` (role: the candidate, or a problem's baseline) under the tool. *out is
// filled in every case (status skipped or failed with a note); false only when kforge
// itself failed (bad input to the request, a run folder that cannot be made). Where a
// several-pass set profiles no kernel at all, it is launched once more with the one-pass
// set ("time"), and the note says so.
bool profile_file(const EvalConfig& cfg, const std::string& kernel, sandbox::Role role,
                  const ProfileOptions& opt, ProfileReport* out, std::string* err);

}  // namespace eval
