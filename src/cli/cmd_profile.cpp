// cli/cmd_profile.cpp: see cmd_profile.h.
#include "cli/cmd_profile.h"

#include <fmt/core.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "cli/commands.h"
#include "eval/profile.h"
#include "eval/profile_text.h"
#include "sandbox/interrupt.h"
#include "sandbox/process.h"
#include "suite/paths.h"

namespace cli {

namespace fs = std::filesystem;

bool parse_ranks(const std::string& text, int world, std::vector<int>* out, std::string* err) {
  out->clear();
  if (text == "all") return true;
  std::stringstream ss(text);
  for (std::string w; std::getline(ss, w, ',');) {
    char* end = nullptr;
    long r = std::strtol(w.c_str(), &end, 10);
    if (w.empty() || *end != '\0' || r < 0 || r >= world)
      return (*err = fmt::format("--rank {}: give all, or rank numbers below the world size {} "
                                 "(e.g. --rank 1 or --rank 0,3)",
                                 text, world),
              false);
    out->push_back(static_cast<int>(r));
  }
  return true;
}

CLI::App* add_profile_command(CLI::App& app, ProfileArgs* a) {
  CLI::App* s = app.add_subcommand(
      "profile",
      "run a kernel under Nsight Compute (or compute-sanitizer) in the sandbox: what limits it, "
      "per rank, beside the baseline's kernels: kforge profile PROBLEM [KERNEL] [PARAM=V ...]");
  s->add_option("args", a->positionals,
                "PROBLEM, then the kernel file (default: the shipped example), then PARAM=V")
      ->required();
  s->add_option("--tool", a->tool,
                "ncu (default: Nsight Compute's counters for one timed call), or memcheck, "
                "racecheck, synccheck (compute-sanitizer over the checks)")
      ->check(CLI::IsMember({"ncu", "memcheck", "racecheck", "synccheck"}));
  s->add_option("--metrics", a->metrics,
                "ncu: brief (default: duration, launch shape, SM and DRAM throughputs, occupancy, "
                "stall reasons; several passes, and the one-pass set again where those profile "
                "nothing), time (one pass: duration, grid, block, registers), peers (brief and "
                "NVLink/PCIe bytes), or Nsight Compute metric names, comma-separated");
  s->add_option("--rank", a->rank, "the ranks run under the tool: all (default), R, or R,S,...");
  s->add_option("--tool-args", a->tool_args,
                "more of the tool's own options, split at spaces, put before kforge's "
                "(e.g. --tool-args=\"--replay-mode application\")");
  s->add_flag("--json", a->json, "print the report (and the verdict) as JSON");
  add_eval_options(s, &a->opt);
  return s;
}

namespace {

bool load(const ProfileArgs& a, eval::EvalConfig* cfg, std::string* kernel, std::string* err) {
  cfg->paths = suite::default_paths();
  const std::string dir = cfg->paths.problems_dir + "/" + a.positionals[0];
  if (!fs::exists(dir + "/problem.json"))
    return (*err = fmt::format("no problem '{}' in {}; `kforge problems` lists them",
                               a.positionals[0], cfg->paths.problems_dir),
            false);
  if (!suite::load_problem(dir, &cfg->problem, err)) return false;
  std::vector<std::string> params(a.positionals.begin() + 1, a.positionals.end());
  if (!params.empty() && params[0].find('=') == std::string::npos) {
    *kernel = params[0];
    params.erase(params.begin());
  }
  if (!apply_eval_options(a.opt, params, cfg, err)) return false;
  if (kernel->empty()) *kernel = eval::default_kernel(cfg->problem, cfg->settings.backend, false);
  if (!fs::exists(*kernel)) return (*err = *kernel + ": no such file", false);
  *kernel = fs::absolute(*kernel).string();
  return true;
}

}  // namespace

int cmd_profile(const ProfileArgs& a) {
  eval::EvalConfig cfg;
  std::string kernel, err;
  eval::ProfileOptions opt;
  if (!load(a, &cfg, &kernel, &err) || !sandbox::parse_enum(a.tool, &opt.tool) ||
      !parse_ranks(a.rank, cfg.settings.world, &opt.ranks, &err))
    return fmt::print(stderr, "kforge profile: {}\n", err), kBadInput;
  opt.metrics = a.metrics;
  std::istringstream words(a.tool_args);
  for (std::string w; words >> w;) opt.tool_args.push_back(w);
  eval::ProfileReport r;
  bool ok = eval::profile_file(cfg, kernel, sandbox::Role::candidate, opt, &r, &err);
  // Without the tool, the kernel's verdict still: the eval it would have been.
  if (ok && r.status == eval::ProfileStatus::skipped && r.verdict.problem.empty()) {
    ok = eval::evaluate_file(cfg, kernel, sandbox::Role::candidate, &r.verdict, &err);
    r.verdict.notes.push_back("profile skipped: " + r.note);
  }
  if (int sig = sandbox::interrupt_signal()) {
    fmt::print(stderr, "kforge profile: interrupted by {}: the ranks were killed; no report\n",
               sandbox::signal_name(sig));
    return sandbox::interrupt_exit_code(sig);
  }
  if (!ok) return fmt::print(stderr, "kforge profile: {}\n", err), kInternal;
  if (a.json) {
    std::puts(eval::profile_json(r, true).dump(2).c_str());
  } else {
    fmt::print("verdict: {}\n", r.verdict.summary);
    fmt::print("{}", eval::render_profile(r));
    fmt::print("for the model:\n");
    for (const std::string& l : eval::feedback_lines(r, 12)) fmt::print("  {}\n", l);
  }
  const bool correct = r.verdict.status == sandbox::Status::correct;
  return correct && r.status != eval::ProfileStatus::failed ? kOk : kNotCorrect;
}

}  // namespace cli
