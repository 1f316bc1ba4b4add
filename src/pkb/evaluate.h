// pkb/evaluate.h: one PKB candidate evaluated by kforge: ONE job (the driver
// sandbox/pkb/pkb_eval.py, shipped with kforge, which starts the ranks as torchrun would) runs the
// reference and the candidate on every trial's fresh inputs and times them alternated; it runs
// under kforge's sandbox (the scrubbed environment, confinement where the machine has it, a
// watchdog limit, the process tree killed past it), and the per-rank JSON it writes becomes
// kforge's typed verdict: compile_error, rejected (the candidate changed what the reference,
// the check or the timer call: sandbox/pkb/pkb_tamper.py), crash, timeout, mismatch (rank and
// tensor), correct with the speedup (reference time over candidate time, the slowest rank's,
// median of trials).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/setup_fault.h"
#include "pkb/checkout.h"
#include "sandbox/verdict.h"

namespace pkb {

class WarmInterpreter;

struct EvalSpec {
  std::string checkout;  // the PKB checkout's root
  Problem problem;
  std::string solution;  // the candidate module (PKB's solution format)
  int world = 1;
  int trials = 5;                   // PKB's default
  int warmup = 500, iters = 100;    // PKB's (warmup on the first trial; later ones a few calls)
  double atol = 1e-2, rtol = 1e-2;  // PKB's defaults
  std::string dtype = "bfloat16";   // PKB's default
  double timeout_s = 600;           // the whole job; past it the process tree is killed
  // At most this many seconds of warmup calls a side (0: PKB's count, however long): 500
  // calls of 48_fsdp_and_tp's are over a minute a side (pkb_timing.warm_up).
  double warmup_s = 10;
  std::string timed_check = "clones";  // or last: the driver's --timed-check (pkb_fresh.py)
  // The python3 with torch: this, else $KF_PYTHON, else `python3` on PATH.
  std::string python;
  std::string driver;     // "" = <kforge source root>/sandbox/pkb/pkb_eval.py
  std::string work_dir;   // where the ranks write; must exist
  std::string ext_cache;  // "" = <kforge cache>/pkb_ext (extensions by source hash)
  bool confine = true;    // under bwrap where isolation_mode() says "bwrap"
  // Where set, the job runs as a child of this warm interpreter (pkb/warm.h; work_dir
  // beneath its root), and cold where it cannot; the verdict says which.
  std::shared_ptr<WarmInterpreter> warm;
};

// A PKB eval as `kforge serve` receives it (eval/serve_proto.h's ServeRequest::pkb):
// everything but `warm`, which is the server's own.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Problem, number, name, reference)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(EvalSpec, checkout, problem, solution, world,
                                                trials, warmup, iters, atol, rtol, dtype, timeout_s,
                                                warmup_s, timed_check, python, driver, work_dir,
                                                ext_cache, confine)

// Runs the job (pkb/job.h) and reads its verdict. False (with *err) when none came: kforge
// could not run the job, or the user's setup cannot (*fault set, where given). Fault
// `machine`: no PKB job runs here (a python without torch or CUDA, fewer GPUs than ranks,
// an interpreter the sandbox cannot start); every candidate would fail alike, so that is
// no candidate's verdict. A job that says so is believed only once the driver's --probe,
// which loads no candidate, agrees: the candidate shares the job's process and could say
// it itself. Fault `problem`: this problem's reference fails here (its code or its inputs
// raised: it needs more ranks or memory), believed once a second job, with the reference
// as its own candidate, fails so too; otherwise the candidate made it fail, and that is
// its crash.
bool evaluate(const EvalSpec& spec, sandbox::Verdict* out, std::string* err,
              agent::SetupFault* fault = nullptr);

}  // namespace pkb
