// src/cli/cmd_pkb.cpp: `--suite pkb:PATH` for `kforge problems` and `kforge eval`: a
// user's ParallelKernelBench checkout (src/pkb/), listed and evaluated by kforge.
#include <fmt/core.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "agent/prompt.h"
#include "agent/template.h"
#include "cli/cmd_solve.h"
#include "cli/commands.h"
#include "cli/pkb_serve.h"
#include "eval/serve_client.h"
#include "pkb/checkout.h"
#include "pkb/evaluate.h"
#include "pkb/solve.h"
#include "sandbox/evaluate.h"
#include "sandbox/interrupt.h"
#include "sandbox/process.h"
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

bool pkb_eval_options(const EvalOptions& o, pkb::EvalSpec* spec, std::string* err) {
  // kforge's own problems' options: PKB's evaluator has no such knob, and dropping one a
  // person gave would hide that it did nothing.
  const EvalOptions d;
  std::string native;
  if (!o.backend.empty() && o.backend != "cuda") native = "--backend " + o.backend;
  if (!o.sizes.empty()) native = "--size";
  if (!o.timing.empty()) native = "--timing";
  if (o.seed != d.seed) native = "--seed";
  if (o.call_limit_s != d.call_limit_s) native = "--call-limit (use --job-limit)";
  if (o.no_race_pass) native = "--no-race-pass";
  if (!o.machine_file.empty()) native = "--machine";
  if (!native.empty())
    return (*err = native +
                   ": it applies to kforge's own problems only; a ParallelKernelBench problem "
                   "is run by its own evaluator (sandbox/pkb/): drop it",
            false);
  spec->world = o.world;
  if (o.trials > 0) spec->trials = o.trials;
  if (o.iters > 0) spec->iters = o.iters;
  if (o.warmup >= 0) spec->warmup = o.warmup;
  if (o.no_time) spec->iters = 0, spec->warmup = 0;
  spec->python = o.python;
  if (!o.timed_check.empty()) spec->timed_check = o.timed_check;
  if (o.warmup_s >= 0) spec->warmup_s = o.warmup_s;
  if (o.job_limit_s > 0) spec->timeout_s = o.job_limit_s;
  return true;
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
  if (!pkb_eval_options(a.opt, &spec, &err)) {
    fmt::print(stderr, "{}: {}\n", cmd, err);
    return kBadInput;
  }
  spec.work_dir = sandbox::make_eval_dir(paths.runs_dir + "/evals");
  if (spec.work_dir.empty()) {
    fmt::print(stderr, "{}: cannot create a run directory under {}/evals\n", cmd, paths.runs_dir);
    return kInternal;
  }
  sandbox::Verdict v;
  agent::SetupFault fault = agent::SetupFault::none;
  // On KFORGE_SERVE's server where one is named (its warm interpreters), else one cold job.
  auto cold = [&](sandbox::Verdict* lv, std::string* le, agent::SetupFault* lf) {
    return pkb::evaluate(spec, lv, le, lf);
  };
  bool ok = evaluate_served_first(eval::serve_socket_from_env(), spec, cold, &v, &err, &fault);
  if (int sig = sandbox::interrupt_signal()) {
    fmt::print(stderr, "{}: interrupted by {}: the job was killed; no verdict\n", cmd,
               sandbox::signal_name(sig));
    return sandbox::interrupt_exit_code(sig);
  }
  if (!ok) {
    fmt::print(stderr, "{}: {}\n", cmd, err);
    return fault != agent::SetupFault::none ? kBadInput : kInternal;
  }
  if (a.json)
    std::puts(sandbox::verdict_json(v).dump(2).c_str());
  else
    fmt::print("{}\n", sandbox::render_text(v));
  return v.status == sandbox::Status::correct ? kOk : kNotCorrect;
}

bool resolve_pkb_problems(const std::string& suite, const std::vector<std::string>& words,
                          std::vector<std::string>* names, std::vector<std::string>* cats,
                          std::string* err) {
  pkb::Checkout c;
  if (!open_suite(suite, &c, err)) return false;
  std::vector<pkb::Problem> chosen;
  for (const std::string& w : words) {
    std::vector<pkb::Problem> some;
    if (!pkb::select_problems(c, w, &some, err)) return false;
    chosen.insert(chosen.end(), some.begin(), some.end());
  }
  for (const pkb::Problem& p : c.problems)  // the checkout's order, each once
    for (const pkb::Problem& q : chosen)
      if (q.name == p.name) {
        names->push_back(p.name);
        cats->push_back("pkb");
        break;
      }
  return true;
}

bool setup_pkb_solve(const SolveArgs& a, agent::SolveConfig* cfg, std::string* err) {
  pkb::SolveSpec spec;
  if (a.positionals.size() != 1)
    return (*err = "give one PKB problem and nothing after it: kforge solve --suite " +
                   a.opt.suite + " 16 (a number or a name from kforge problems --suite)",
            false);
  if (a.profile != agent::ProfileMode::never)
    return (*err = "--profile " + std::string(sandbox::enum_name(a.profile)) +
                   ": kforge profiles kernels of its own ABI; a PKB solution (a Python module) is "
                   "not profiled, so leave --profile out",
            false);
  if (a.mode != agent::Mode::direct)
    return (*err = "--mode " + std::string(sandbox::enum_name(a.mode)) +
                   ": a PKB problem is solved in direct mode only (the "
                   "model answers with the module)",
            false);
  if (!open_suite(a.opt.suite, &spec.checkout, err) ||
      !pkb::find_problem(spec.checkout, a.positionals[0], &spec.eval.problem, err))
    return false;
  suite::Paths paths = suite::default_paths();
  spec.eval.checkout = spec.checkout.root;
  if (!pkb_eval_options(a.opt, &spec.eval, err)) return false;
  spec.prompt.world = spec.eval.world;
  spec.prompt.topology = suite::topology_text(cfg->topology);
  if (!agent::primitives_docs(paths.source_root + "/primitives/docs", &spec.prompt.docs, err))
    return false;
  spec.prompts_dir = agent::default_prompts_dir() + "/pkb";
  spec.evals_dir = paths.runs_dir + "/evals";
  // A server's interpreters where KFORGE_SERVE names one (a sweep's), else one of its own.
  spec.warm = warm_ranks_wanted(a.opt) && eval::serve_socket_from_env().empty();
  auto suite = std::make_shared<agent::ForeignSuite>();
  if (!pkb::make_foreign_suite(spec, suite.get(), err)) return false;
  serve_foreign_evals(suite.get(), spec.eval);
  cfg->foreign = suite;
  cfg->prompts_dir = spec.prompts_dir;
  cfg->eval.settings.world = spec.eval.world;
  cfg->eval.paths = paths;
  return true;
}

}  // namespace cli
