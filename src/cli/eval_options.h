// src/cli/eval_options.h: the options of every command that evaluates kernels (eval,
// baseline, tune, solve): one struct, one CLI11 option group, one set of defaults, and one
// reader into eval::EvalConfig, so that the commands cannot drift apart.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "eval/eval.h"

namespace cli {

struct EvalOptions {
  // Two ranks unless told: at one rank a collective moves nothing between GPUs, so its
  // check says nothing about the communication (on one GPU, two ranks are emulation:
  // correctness only; pass --world 1 for a time).
  int world = 2;
  std::string backend;             // cuda | host | "" (detect)
  std::vector<std::string> sizes;  // --size: small, full, or PARAM=V
  int iters = 0;                   // 0: the default (50; host 10)
  std::string timing;              // isolated (default) or batched
  int warmup = -1;                 // -1: the default (5; host 2)
  int trials = 0;                  // 0: the default (2)
  uint64_t seed = 0;               // 0: each rank's secret
  double call_limit_s = 0;         // 0: the default (10 s)
  bool no_time = false;
  bool no_race_pass = false;
  // solve, tune, sweep: "warm" keeps the ranks between the evals of one problem
  // (sandbox/warm.h), "cold" starts them for every eval; "" is warm (warm_ranks_wanted).
  // eval and baseline are always cold.
  std::string ranks;
  std::string machine_file;
  // "" (the native problems) or pkb:PATH, a ParallelKernelBench checkout (src/pkb/).
  std::string suite;
  std::string python;  // pkb: the python3 with torch (default $KF_PYTHON, else PATH's)
  // pkb: how the timed calls are checked, last or clones ("": clones; sandbox/pkb/pkb_fresh.py)
  std::string timed_check;
  double warmup_s = -1;    // pkb: the warmup's limit in seconds a side (-1: the default, 10)
  double job_limit_s = 0;  // pkb: the whole job's limit in seconds (0: the default, 600)
};

// Whether --suite names a ParallelKernelBench checkout (pkb:PATH, PATH not empty).
bool is_pkb_suite(const std::string& suite);

// Adds the options to `app`, in a group named "Evaluation".
void add_eval_options(CLI::App* app, EvalOptions* o);

// The command-line words that give another command the same options (a sweep's
// `kforge solve` children): only what differs from the defaults.
std::vector<std::string> eval_option_args(const EvalOptions& o);

// Whether solve, tune and sweep keep warm ranks (--ranks): unless asked for cold ones, on
// either backend (on an H100, 2026-12-07: the candidates' times equal to a cold eval's
// within 2%, the CUDA fault suite 26 of 26 through them; bench/RESULTS.md).
bool warm_ranks_wanted(const EvalOptions& o);

// The one option reader: fills cfg->settings (the backend's defaults, then what `o` gives)
// and cfg->machine from `o` and `params` (the PARAM=V words after the problem and kernel):
// --size words with '=' join the overrides, the backend is detected when not given, the
// machine file is loaded. False with a message naming the bad input: a word
// that is not PARAM=V, a parameter given twice, a machine file that does not load.
bool apply_eval_options(const EvalOptions& o, const std::vector<std::string>& params,
                        eval::EvalConfig* cfg, std::string* err);

}  // namespace cli
