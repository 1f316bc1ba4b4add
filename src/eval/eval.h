// eval/eval.h: how kforge evaluates a candidate file for one problem: the problem's
// sizes resolved into sandbox instances (small: checked against the oracle; full:
// checked against the baseline where it can run, and timed), the toolchain and the
// paths. `kforge eval`, `kforge baseline`, the agent loop and the builtin search all
// evaluate through this, so they judge candidates the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sandbox/evaluate.h"
#include "suite/machine.h"
#include "suite/paths.h"
#include "suite/problem.h"

namespace eval {

struct EvalConfig {
  // Sizes, backend, world, checks, timing and limits, as the option reader filled them
  // (src/cli/eval_options.h); make_request names the problem in them.
  sandbox::Settings settings = sandbox::default_settings(sandbox::Backend::cuda);
  suite::Problem problem;  // the problem's folder, loaded
  suite::Paths paths;
  suite::Machine machine;
  // Progress of each evaluation ("compiling", "running 2 ranks: full"), for live views.
  std::function<void(const std::string& stage)> on_stage;
  // Warm ranks (sandbox/warm.h), shared by the copies of this config: solve, tune and
  // sweep keep them between evals unless --cold; null runs every eval cold.
  std::shared_ptr<sandbox::WarmPool> warm;
};

// Gives cfg a pool of warm ranks (its sets' folders under <runs>/evals/warm).
void use_warm_ranks(EvalConfig* cfg);

// The language a candidate is written in on a backend: ".cu" (cuda) or ".cpp" (host).
std::string kernel_extension(sandbox::Backend backend);

// The sizes an evaluation of cfg runs: sandbox::sizes_to_run, except that on the host
// backend a problem's "host" size, where it names one, stands in for "full" (a full size
// that is GPU work, e.g. a convolution of 10^11 flops, cannot run on a CPU rank).
std::vector<std::string> sizes_to_run(const EvalConfig& cfg, bool baseline);

// The problem's shipped example for the backend, or its baseline.
std::string default_kernel(const suite::Problem& p, sandbox::Backend backend, bool baseline);

// Fills *req for evaluating `kernel` (an absolute path) in role `role`. False with a
// message naming the bad input (an override, the world size) otherwise.
bool make_request(const EvalConfig& cfg, const std::string& kernel, sandbox::Role role,
                  sandbox::EvalRequest* req, std::string* err);

// make_request + a fresh run directory under <runs>/evals + sandbox::evaluate. False only
// for bad input or an internal failure; a bad candidate is a verdict.
bool evaluate_file(const EvalConfig& cfg, const std::string& kernel, sandbox::Role role,
                   sandbox::Verdict* v, std::string* err);

}  // namespace eval
