// src/cli/cmd_eval.cpp: `kforge eval` and `kforge baseline`: resolve the problem into
// instances (small: checked against the oracle; full: checked against the baseline and
// timed), hand them to the sandbox, print the verdict.
#include <fmt/core.h>

#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "eval/eval.h"
#include "sandbox/build.h"
#include "sandbox/evaluate.h"
#include "sandbox/interrupt.h"
#include "sandbox/process.h"
#include "sandbox/verdict.h"
#include "suite/cost.h"
#include "suite/instance.h"
#include "suite/machine.h"
#include "suite/problem.h"

namespace cli {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Does the kernel's language fit the backend? A .cu needs a GPU to run; a host .cpp
// only runs on the host backend.
bool kernel_fits_backend(const std::string& kernel, sandbox::Backend backend, bool compile_only,
                         std::string* err) {
  bool cu = ends_with(kernel, ".cu");
  bool cpp = ends_with(kernel, ".cpp") || ends_with(kernel, ".cc");
  if (!cu && !cpp) {
    *err = fmt::format("{}: a kernel is a .cu file (or a .cpp for the host backend)", kernel);
    return false;
  }
  if (backend == sandbox::Backend::cuda && cpp) {
    *err = fmt::format("{}: a .cpp kernel runs on the host backend: add --backend host", kernel);
    return false;
  }
  if (backend == sandbox::Backend::host && cu && !compile_only) {
    *err = fmt::format(
        "{}: this machine has no GPU, so a .cu kernel cannot run here. "
        "Use --compile-only to check that it builds, or evaluate a host-backend .cpp",
        kernel);
    return false;
  }
  return true;
}

int print_build(const sandbox::BuildResult& b, bool json) {
  if (json) {
    nlohmann::json j = {
        {"status", b.ok ? "built" : sandbox::status_name(b.status)},
        {"summary", b.summary()},
        {"lib", b.lib_path},
        {"cached", b.cached},
        {"log", b.log},
        {"seconds", {{"static", b.static_s}, {"compile", b.compile_s}, {"symbols", b.symbols_s}}}};
    std::puts(j.dump(2).c_str());
  } else {
    fmt::print("{}\n", b.ok
                           ? fmt::format("built: {} ({})", b.lib_path,
                                         b.cached ? "cached" : fmt::format("{:.1f} s", b.compile_s))
                           : b.summary());
    if (!b.ok && !b.log.empty()) fmt::print("{}\n", b.log);
  }
  return b.ok ? kOk : kNotCorrect;
}

// The problem named on the command line; false (having said why) when there is none.
bool load_named_problem(const suite::Paths& paths, const std::string& name, const char* cmd,
                        suite::Problem* problem) {
  std::string err, dir = paths.problems_dir + "/" + name;
  if (!fs::exists(dir + "/problem.json")) {
    std::vector<suite::Problem> all;
    std::string ignored;
    suite::load_all_problems(paths.problems_dir, &all, &ignored);
    std::string names;
    for (auto& p : all) names += (names.empty() ? "" : ", ") + p.name;
    fmt::print(stderr, "{}: no problem '{}' in {} (problems: {}); `kforge problems` lists them\n",
               cmd, name, paths.problems_dir, names);
    return false;
  }
  if (!suite::load_problem(dir, problem, &err)) {
    fmt::print(stderr, "{}: {}\n", cmd, err);
    return false;
  }
  return true;
}

// The evaluation itself, and its verdict printed; the exit code.
int run_eval(const eval::EvalConfig& cfg, const std::string& kernel, sandbox::Role role, bool json,
             const char* cmd) {
  std::string err;
  sandbox::EvalRequest req;
  if (!eval::make_request(cfg, kernel, role, &req, &err)) {
    fmt::print(stderr, "{}: {}\n", cmd, err);
    return kBadInput;
  }
  sandbox::Verdict v;
  bool ok = eval::evaluate_request(cfg, req, &v, &err);
  if (int sig = sandbox::interrupt_signal()) {
    // The build or the ranks were killed by kforge, not by the kernel: no verdict.
    fmt::print(stderr, "{}: interrupted by {}: the build and the ranks were killed; no verdict\n",
               cmd, sandbox::signal_name(sig));
    return sandbox::interrupt_exit_code(sig);
  }
  if (!ok) {
    fmt::print(stderr, "{}: {}\n", cmd, err);
    return kInternal;
  }
  if (json)
    std::puts(sandbox::verdict_json(v).dump(2).c_str());
  else
    fmt::print("{}\n", sandbox::render_text(v));
  return v.status == sandbox::Status::correct ? kOk : kNotCorrect;
}

}  // namespace

int cmd_eval(const EvalArgs& a) {
  if (!a.opt.suite.empty()) return cmd_pkb_eval(a);
  suite::Paths paths = suite::default_paths();
  const char* cmd = a.is_baseline ? "kforge baseline" : "kforge eval";
  suite::Problem problem;
  if (!load_named_problem(paths, a.problem, cmd, &problem)) return kBadInput;
  std::string err;

  eval::EvalConfig cfg;
  if (!apply_eval_options(a.opt, a.params, &cfg, &err)) {
    fmt::print(stderr, "{}: {}\n", cmd, err);
    return kBadInput;
  }
  const sandbox::Backend backend = cfg.settings.backend;
  std::string kernel = a.kernel;
  if (kernel.empty()) {
    kernel = eval::default_kernel(problem, backend, a.is_baseline);
    if (!a.json)
      fmt::print(stderr, "{}: no kernel given: evaluating {} on the {} backend\n", cmd,
                 fs::relative(kernel, paths.source_root).string(), sandbox::backend_name(backend));
  }
  if (!fs::exists(kernel)) {
    fmt::print(stderr, "{}: {}: no such file\n", cmd, kernel);
    return kBadInput;
  }
  kernel = fs::absolute(kernel).string();
  if (!kernel_fits_backend(kernel, backend, a.compile_only, &err)) {
    fmt::print(stderr, "{}: {}\n", cmd, err);
    return kBadInput;
  }
  cfg.problem = problem;
  cfg.paths = paths;
  // Only --compile-only may get here with a kernel of the other backend: it builds for it.
  cfg.settings.backend = ends_with(kernel, ".cu") ? sandbox::Backend::cuda : sandbox::Backend::host;
  sandbox::Role role = a.is_baseline ? sandbox::Role::baseline : sandbox::Role::candidate;

  if (a.compile_only) {
    sandbox::EvalRequest req;
    if (!eval::make_request(cfg, kernel, role, &req, &err)) {
      fmt::print(stderr, "{}: {}\n", cmd, err);
      return kBadInput;
    }
    sandbox::BuildResult b;
    if (!sandbox::build_library(req.toolchain, kernel, role, &b, &err)) {
      fmt::print(stderr, "{}: {}\n", cmd, err);
      return kInternal;
    }
    return print_build(b, a.json);
  }
  return run_eval(cfg, kernel, role, a.json, cmd);
}

}  // namespace cli
