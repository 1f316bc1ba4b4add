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
  // A running `kforge serve`'s socket (eval/serve_client.h), "" for none: candidates'
  // evals go there first (its warm sets outlive this process), and run here only when it
  // cannot serve them.
  std::string server;
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

// What make_request takes from this process rather than from the eval: the programs and
// folders it runs with (nvcc, the primitives' headers, NCCL, the rank binary), from paths.
// `kforge serve` fills its requests so (the build cache stays the client's).
void fill_toolchain(const suite::Paths& paths, sandbox::EvalRequest* req);

// req (make_request's) evaluated: on cfg's server, else on a warm set of cfg's pool or
// ranks of its own, in a fresh run directory (under <runs>/evals, or the set's root),
// after its eval slot under a sweep. False only for an internal failure or a stop (a
// signal, the deadline); a bad candidate is a verdict.
bool evaluate_request(const EvalConfig& cfg, sandbox::EvalRequest& req, sandbox::Verdict* v,
                      std::string* err);

// make_request + evaluate_request. False only for bad input or an internal failure; a
// bad candidate is a verdict.
bool evaluate_file(const EvalConfig& cfg, const std::string& kernel, sandbox::Role role,
                   sandbox::Verdict* v, std::string* err);

}  // namespace eval
