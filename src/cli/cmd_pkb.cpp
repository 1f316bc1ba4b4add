// src/cli/cmd_pkb.cpp: `--suite pkb:PATH` for `kforge problems` and `kforge eval`: a
// user's ParallelKernelBench checkout (src/pkb/), listed and evaluated by kforge.
#include <fmt/core.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "pkb/checkout.h"
#include "pkb/evaluate.h"
#include "sandbox/evaluate.h"
#include "sandbox/interrupt.h"
#include "suite/paths.h"

namespace cli {

namespace fs = std::filesystem;

namespace {

// The checkout `suite` names (pkb:PATH), or false with a message saying what to write.
bool open_suite(const std::string& suite, pkb::Checkout* c, std::string* err) {
  if (!is_pkb_suite(suite)) {
    *err = "--suite '" + suite + "': the suites are pkb:PATH (a ParallelKernelBench checkout)";
    return false;
  }
  return pkb::open_checkout(suite.substr(4), c, err);
}

}  // namespace

bool is_pkb_suite(const std::string& suite) {
  return suite.rfind("pkb:", 0) == 0 && suite.size() > 4;
}

int cmd_pkb_problems(const ProblemsArgs& a) {
  pkb::Checkout c;
  std::string err;
  if (!open_suite(a.suite, &c, &err)) {
    fmt::print(stderr, "kforge problems: {}\n", err);
    return kBadInput;
  }
  if (a.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (auto& p : c.problems)
      arr.push_back({{"number", p.number}, {"name", p.name}, {"reference", p.reference}});
    std::puts(arr.dump(2).c_str());
    return kOk;
  }
  fmt::print("{:<6} {}\n", "PKB", "PROBLEM");
  for (auto& p : c.problems) fmt::print("{:<6} {}\n", p.number, p.name);
  fmt::print(stderr, "{} problems in {}\n", c.problems.size(), c.root);
  return kOk;
}

int cmd_pkb_eval(const EvalArgs& a) {
  const char* cmd = "kforge eval";
  pkb::Checkout c;
  std::string err;
  pkb::EvalSpec spec;
  if (!open_suite(a.opt.suite, &c, &err) || !pkb::find_problem(c, a.problem, &spec.problem, &err)) {
    fmt::print(stderr, "{}: {}\n", cmd, err);
    return kBadInput;
  }
  if (a.kernel.empty() || !a.params.empty()) {
    fmt::print(
        stderr,
        "{}: give a PKB problem and one solution module: kforge eval --suite {} {} SOLUTION.py\n",
        cmd, a.opt.suite, a.problem);
    return kBadInput;
  }
  suite::Paths paths = suite::default_paths();
  spec.checkout = c.root;
  spec.solution = fs::absolute(a.kernel).string();
  spec.world = a.opt.world;
  if (a.opt.trials > 0) spec.trials = a.opt.trials;
  if (a.opt.iters > 0) spec.iters = a.opt.iters;
  if (a.opt.warmup >= 0) spec.warmup = a.opt.warmup;
  if (a.opt.no_time) spec.iters = 0, spec.warmup = 0;
  spec.torchrun = a.opt.torchrun;
  spec.work_dir = sandbox::make_eval_dir(paths.runs_dir + "/evals");
  if (spec.work_dir.empty()) {
    fmt::print(stderr, "{}: cannot create a run directory under {}/evals\n", cmd, paths.runs_dir);
    return kInternal;
  }
  sandbox::Verdict v;
  bool ok = pkb::evaluate(spec, &v, &err);
  if (int sig = sandbox::interrupt_signal()) {
    fmt::print(stderr, "{}: interrupted by {}: the job was killed; no verdict\n", cmd,
               sandbox::signal_name(sig));
    return sandbox::interrupt_exit_code(sig);
  }
  if (!ok) {
    fmt::print(stderr, "{}: {}\n", cmd, err);
    return kInternal;
  }
  if (a.json)
    std::puts(sandbox::verdict_json(v).dump(2).c_str());
  else
    fmt::print("{}\n", sandbox::render_text(v));
  return v.status == sandbox::Status::correct ? kOk : kNotCorrect;
}

}  // namespace cli
