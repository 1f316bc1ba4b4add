// sandbox/settings.h: the settings of one evaluation, as the person (or the command acting
// for them) chose them: what is evaluated, on what, how it is checked and timed, and the
// limits. One struct, filled once by the one option reader (src/cli/eval_options.cpp, or
// settings_from_json for a recorded run), carried whole in the EvalRequest and written whole
// into every job.json, where the rank reads it. A layer that adds something (an instance's
// shapes, the run directory, the libraries) adds its own part beside it (sandbox::Job),
// never a copy of a knob.
//
// The candidate's own process (the runner) is not given these settings: which calls are
// checked, staggered or audited is for the judge to know, not the judged (rank/runner_proto.h
// Init carries only what the runner needs to make its calls).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "job_enums.h"

namespace sandbox {

// Per-phase time limits, in seconds. A rank whose status has not changed for longer
// than its phase's limit is stuck; the watchdog kills the job and names it.
struct Limits {
  double bootstrap_s = 60;  // from mpirun's start until every rank reports
  double load_s = 20;       // dlopen of the libraries
  double setup_s = 30;      // kf_setup of baseline and candidate, collective allocs
  double call_s = 10;       // one checked kf_run call (launch to synchronize)
  // The judge's own work after a checked call: reading back, the expected outputs (an
  // oracle at a large size takes seconds: conv2d's full size is ~2.4e11 multiply-adds a
  // rank), comparing. Not the candidate's time, so not held to call_s.
  double reference_s = 120;
  double time_s = 120;   // the whole timing phase
  double total_s = 600;  // the whole job
  double build_s = 200;  // waiting at the build gate (the compiler's own limit is 180 s)
};

struct Settings {
  // What is evaluated, and on what.
  std::string problem;
  std::vector<std::string> sizes;      // run in order; none given: sizes_to_run below
  std::vector<std::string> overrides;  // PARAM=V, applied to every size
  Backend backend = Backend::cuda;
  int world = 1;
  // The inputs: 0 draws them from a secret each rank keeps to itself (no rank can rebuild a
  // peer's inputs instead of reading them); any other value makes them reproducible from
  // it, and derivable by a kernel.
  uint64_t seed = 0;

  // Checking: `trials` rounds of `calls` back-to-back kf_run calls, fresh inputs and
  // poisoned outputs before each call, every output compared, inputs checked unchanged.
  // Odd-numbered calls start staggered (rank r waits r * stagger_ms first) so that a
  // candidate that does not wait for its peers reads poison instead of data. Against the
  // oracle at world > 1 the race pass follows (race_pass): `race_calls` calls chained with
  // no barrier between them, each rank late by 0 to 2 * stagger_ms (rank/check.h); an eval
  // runs it in its first size only.
  int trials = 2;
  int calls = 3;
  double stagger_ms = 20;
  bool race_pass = true;
  int race_calls = 8;

  // Timing (the last size only): baseline and candidate alternate, `warmup` then `iters`
  // iterations each; every iteration starts behind a barrier, L2 flushed, outputs
  // poisoned; the outputs of every `verify_every`-th timed call are checked too.
  // timing "batched" is nccl-tests' method instead: the iterations run in kTimingBatches
  // batches of back-to-back calls, one pair of events around each batch, no barrier or
  // L2 flush between its calls; a sample is the batch's time over its calls. Launch
  // latency then overlaps and small messages stay in L2, as in nccl-tests' numbers.
  bool time = true;
  Timing timing = Timing::isolated;
  int warmup = 5;
  int iters = 50;
  int verify_every = 10;
  int64_t l2_flush_bytes = 256ll << 20;  // cuda only: bytes written between iterations

  Limits limits;

  // Under a tool (kforge profile, a sanitizer rerun: src/eval/profile.h). `profile`: the
  // timing phase runs its warm-up, then exactly one timed iteration, each side's call
  // inside an NVTX range named kf_profile, the only calls Nsight Compute is told to
  // profile. `under_tool`: the ranks run inside ncu or compute-sanitizer, whose injected
  // library needs the candidate's process to write the sandbox's private /tmp and open
  // local sockets (rank/harden.h: the runner is otherwise denied both).
  bool profile = false;
  bool under_tool = false;
};

// The defaults for a backend: the host backend times 10 iterations after 2 of warm-up (its
// CPU "kernels" are slow and their times say nothing of a GPU's), cuda 50 after 5.
Settings default_settings(Backend backend);

// The sizes an evaluation runs: the settings' own, else "small" then "full" (a problem's
// baseline evaluated as the candidate: "full" only).
std::vector<std::string> sizes_to_run(const Settings& s, bool baseline);

// Reads settings written by to_json, or by an older kforge (a trajectory's header before
// the settings block: iters 0 and warmup -1 meant the backend's default, no_time and
// call_limit_s stood beside them). A missing key keeps the backend's default. False with
// a message naming the bad key.
bool settings_from_json(const nlohmann::json& j, Settings* out, std::string* err);

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Limits, bootstrap_s, load_s, setup_s, call_s,
                                                reference_s, time_s, total_s, build_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Settings, problem, sizes, overrides, backend, world,
                                                seed, trials, calls, stagger_ms, race_pass,
                                                race_calls, time, timing, warmup, iters,
                                                verify_every, l2_flush_bytes, limits, profile,
                                                under_tool)

}  // namespace sandbox
