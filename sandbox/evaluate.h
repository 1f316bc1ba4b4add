// sandbox/evaluate.h: the whole evaluation of one candidate: build the baseline and the
// candidate, run each instance (e.g. "small" checked against the oracle, then "full"
// checked against the baseline and timed) in one launch of the ranks until one is not
// correct, and turn what the ranks reported into one Verdict. This is the executor's interface to
// the rest of kforge: a second suite can fill an EvalRequest its own way.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "build.h"
#include "job.h"
#include "launch.h"
#include "verdict.h"
#include "warm.h"

namespace sandbox {

struct Instance {
  std::string label;  // "small", "full": the run directory's name and Verdict::size
  // The size's part of the job (shapes, params, reference, timed, race); evaluate adds
  // the request's settings and the paths.
  Job job;
  double roofline_ms = 0, busbw_bytes = 0, busbw_factor = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Instance, label, job, roofline_ms, busbw_bytes,
                                                busbw_factor)

struct EvalRequest {
  Settings settings;                          // whole, into every job (settings.h)
  std::string candidate_path, baseline_path;  // baseline: .cu or baseline_host.cpp
  // Role::baseline evaluates a problem's baseline as the candidate (it may use NCCL);
  // baseline_path is then usually "".
  Role candidate_role = Role::candidate;
  // The problem's folder: its oracle.cpp is built (cached) for the ranks. "" for none.
  std::string problem_dir;
  std::vector<Instance> instances;  // run in order; stop at the first that is not correct
  Toolchain toolchain;
  LaunchOptions launch;
  std::string eval_dir;  // fresh and unique per evaluation (see make_eval_dir)
  // Warm ranks (warm.h): the set to run on, or null for a launch of the eval's own. With
  // a set, eval_dir must be beneath its root.
  std::shared_ptr<WarmSet> warm;
  // Called as each stage starts ("compiling", "running 4 ranks: small", ...), for live
  // views; may be empty.
  std::function<void(const std::string& stage)> on_stage;
};

// Creates <root>/<yyyymmdd-hhmmss>-<pid>-<random> (and root); "" when it cannot.
std::string make_eval_dir(const std::string& root);

// Builds what evaluate() will need (the candidate, the baseline, the oracle) into the build
// cache and nothing else, so that evaluate() finds them cached. Under a sweep, whose evals
// queue for the GPU (eval/eval_slot.h), this lets one sample compile while another runs.
// Every failure is left for evaluate() to report.
void prebuild(const EvalRequest& req);

// Fills *out (and writes <eval_dir>/verdict.json). False (with *err) only for internal
// failures: the baseline does not build or fails, the sandbox itself broke, a file
// cannot be written. A bad candidate is a verdict, never an error.
bool evaluate(const EvalRequest& req, Verdict* out, std::string* err);

// The verdict of one finished job (exposed for tests). False with *err when the run
// says the sandbox or the baseline failed rather than the candidate.
bool verdict_from_run(const Instance& inst, const Job& job, const RunResult& run, Verdict* v,
                      std::string* err);

}  // namespace sandbox
