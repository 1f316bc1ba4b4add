// src/cli/eval_options.cpp: see eval_options.h.
#include "cli/eval_options.h"

#include <fmt/core.h>

#include <filesystem>
#include <map>

#include "eval/serve_client.h"
#include "suite/machine.h"
#include "suite/paths.h"

namespace cli {

void add_eval_options(CLI::App* app, EvalOptions* o) {
  const std::string g = "Evaluation";
  app->add_option("--world,-w", o->world,
                  "number of ranks (default 2; more than GPUs is emulation: correctness only)")
      ->check(CLI::Range(1, 64))
      ->group(g);
  app->add_option("--backend", o->backend, "cuda or host (default: cuda when a GPU is present)")
      ->check(CLI::IsMember({"cuda", "host"}))
      ->group(g);
  app->add_option("--size,-s", o->sizes,
                  "small, full, or PARAM=V overrides (repeatable; default: small then full)")
      ->allow_extra_args(false)
      ->group(g);
  app->add_option("--iters", o->iters, "timed iterations per side (default 50)")->group(g);
  app->add_option("--timing", o->timing,
                  "isolated (default: each call alone, behind a barrier, L2 flushed) or batched "
                  "(nccl-tests' method: back-to-back calls between two events)")
      ->check(CLI::IsMember({"isolated", "batched"}))
      ->group(g);
  app->add_option("--warmup", o->warmup, "warm-up iterations per side (default 5)")->group(g);
  app->add_option("--trials", o->trials, "checking trials (default 2, 3 calls each)")->group(g);
  app->add_option("--seed", o->seed,
                  "seed of the inputs, to reproduce them (default: a secret each rank draws for "
                  "itself, so that no kernel can rebuild a peer's inputs instead of reading them)")
      ->group(g);
  app->add_flag("--no-time", o->no_time, "check only, do not time")->group(g);
  app->add_flag("--no-race-pass", o->no_race_pass,
                "skip the race pass (calls chained with no barrier, ranks late at random): "
                "faster, but a kernel that does not wait for its peers may then pass; the "
                "verdict says it was skipped")
      ->group(g);
  app->add_option("--ranks", o->ranks,
                  "solve, tune, sweep: warm (start the ranks once and keep them for the evals of "
                  "the same problem and sizes; each candidate still gets fresh processes of its "
                  "own) or cold (ranks of its own for every eval). Default: warm. eval runs on "
                  "ranks of its own unless KFORGE_SERVE names a running `kforge serve`; "
                  "cold keeps every command off it; baseline is always cold")
      ->check(CLI::IsMember({"warm", "cold"}))
      ->group(g);
  app->add_option("--call-limit", o->call_limit_s,
                  "seconds one checked kf_run may take before it counts as a hang (default 10)")
      ->group(g);
  app->add_option("--suite", o->suite,
                  "pkb:PATH evaluates a ParallelKernelBench problem of the checkout at PATH "
                  "(default: kforge's own problems)")
      ->group(g);
  app->add_option("--python", o->python,
                  "pkb: the python3 that has torch (default $KF_PYTHON, else python3)")
      ->group(g);
  app->add_option("--timed-check", o->timed_check,
                  "pkb: clones (default: every timed call on whole tuples refilled each "
                  "block, blocks of drawn lengths, each block's last output checked) or last "
                  "(only each block's last call on fresh inputs of its own, the others on "
                  "PKB's clones: a solution that tells that call apart passes)")
      ->check(CLI::IsMember({"last", "clones"}))
      ->group(g);
  app->add_option("--warmup-s", o->warmup_s,
                  "pkb: the warm-up ends after this many seconds a side where PKB's 500 calls "
                  "take longer (default 10; 0: all of them, however long)")
      ->check(CLI::NonNegativeNumber)
      ->group(g);
  app->add_option("--job-limit", o->job_limit_s,
                  "pkb: seconds the whole job (reference and solution, every trial) may take "
                  "before its processes are killed and the verdict is timeout (default 600)")
      ->check(CLI::PositiveNumber)
      ->group(g);
  app->add_option("--machine", o->machine_file, "machine description (JSON) for the roofline")
      ->group(g);
}

bool is_pkb_suite(const std::string& suite) {
  return suite.rfind("pkb:", 0) == 0 && suite.size() > 4;
}

bool warm_ranks_wanted(const EvalOptions& o) {
  return o.ranks != "cold";
}

std::vector<std::string> eval_option_args(const EvalOptions& o) {
  const EvalOptions d;
  std::vector<std::string> a;
  auto num = [](double v) { return fmt::format("{}", v); };
  if (o.world != d.world) a.insert(a.end(), {"--world", std::to_string(o.world)});
  if (!o.backend.empty()) a.insert(a.end(), {"--backend", o.backend});
  for (const std::string& s : o.sizes) a.insert(a.end(), {"--size", s});
  if (o.iters != d.iters) a.insert(a.end(), {"--iters", std::to_string(o.iters)});
  if (!o.timing.empty()) a.insert(a.end(), {"--timing", o.timing});
  if (o.warmup != d.warmup) a.insert(a.end(), {"--warmup", std::to_string(o.warmup)});
  if (o.trials != d.trials) a.insert(a.end(), {"--trials", std::to_string(o.trials)});
  if (o.seed != d.seed) a.insert(a.end(), {"--seed", std::to_string(o.seed)});
  if (o.no_time) a.push_back("--no-time");
  if (o.no_race_pass) a.push_back("--no-race-pass");
  if (!o.ranks.empty()) a.insert(a.end(), {"--ranks", o.ranks});
  if (o.call_limit_s != d.call_limit_s) a.insert(a.end(), {"--call-limit", num(o.call_limit_s)});
  if (!o.machine_file.empty()) a.insert(a.end(), {"--machine", o.machine_file});
  if (is_pkb_suite(o.suite))  // the children may not share this folder
    a.insert(a.end(), {"--suite", "pkb:" + std::filesystem::absolute(o.suite.substr(4)).string()});
  else if (!o.suite.empty())
    a.insert(a.end(), {"--suite", o.suite});
  if (!o.python.empty()) a.insert(a.end(), {"--python", o.python});
  if (!o.timed_check.empty()) a.insert(a.end(), {"--timed-check", o.timed_check});
  if (o.warmup_s != d.warmup_s) a.insert(a.end(), {"--warmup-s", num(o.warmup_s)});
  if (o.job_limit_s != d.job_limit_s) a.insert(a.end(), {"--job-limit", num(o.job_limit_s)});
  return a;
}

bool apply_eval_options(const EvalOptions& o, const std::vector<std::string>& params,
                        eval::EvalConfig* cfg, std::string* err) {
  if (!o.suite.empty())  // the native problems' path; a PKB checkout has its own (cmd_pkb.cpp)
    return (*err = "--suite " + o.suite +
                   ": `kforge tune` and `kforge baseline` run kforge's own problems only; a "
                   "ParallelKernelBench problem goes to problems, eval, solve or sweep",
            false);
  if (!o.timed_check.empty())
    return (*err = "--timed-check " + o.timed_check +
                   ": it picks how a ParallelKernelBench problem's timed calls are checked "
                   "(--suite pkb:PATH); kforge's own problems check timed samples on fresh "
                   "inputs of their own: drop it",
            false);
  if (o.warmup_s >= 0)
    return (*err = fmt::format("--warmup-s {}: it limits a ParallelKernelBench problem's warm-up "
                               "(--suite pkb:PATH); kforge's own problems warm up for --warmup "
                               "calls: drop it",
                               o.warmup_s),
            false);
  if (o.job_limit_s > 0)
    return (*err = fmt::format("--job-limit {}: it limits a ParallelKernelBench problem's job "
                               "(--suite pkb:PATH); kforge's own problems limit each call: "
                               "use --call-limit",
                               o.job_limit_s),
            false);
  std::vector<std::string> overrides;
  for (const std::string& p : params) {
    if (p.find('=') == std::string::npos)
      return (*err = fmt::format("unexpected argument '{}': expected PARAM=V", p), false);
    overrides.push_back(p);
  }
  std::vector<std::string> sizes;
  for (const std::string& s : o.sizes)
    (s.find('=') != std::string::npos ? overrides : sizes).push_back(s);
  // One value per parameter: a second would silently win over the first.
  std::map<std::string, std::string> seen;
  for (const std::string& v : overrides) {
    std::string name = v.substr(0, v.find('='));
    if (seen.count(name))
      return (*err = fmt::format("{} is given twice ({} and {}): give each parameter once; for "
                                 "several sizes, run the command once per size",
                                 name, seen[name], v),
              false);
    seen[name] = v;
  }
  // The words become types here; CLI11 checked them against the same names.
  sandbox::Backend backend = suite::detect_backend();
  if (!o.backend.empty() && !sandbox::parse_enum(o.backend, &backend))
    return (*err = "--backend " + o.backend + ": use cuda or host", false);
  sandbox::Settings& s = cfg->settings;
  s = sandbox::default_settings(backend);
  s.overrides = overrides;
  s.sizes = sizes;
  if (!o.timing.empty() && !sandbox::parse_enum(o.timing, &s.timing))
    return (*err = "--timing " + o.timing + ": use isolated or batched", false);
  s.world = o.world;
  if (o.iters > 0) s.iters = o.iters;
  if (o.warmup >= 0) s.warmup = o.warmup;
  if (o.trials > 0) s.trials = o.trials;
  s.seed = o.seed;
  if (o.call_limit_s > 0) s.limits.call_s = o.call_limit_s;
  s.time = !o.no_time;
  s.race_pass = !o.no_race_pass;
  // A running `kforge serve` (KFORGE_SERVE) serves the evals, unless cold ranks are asked.
  cfg->server = o.ranks == "cold" ? "" : eval::serve_socket_from_env();
  cfg->machine = suite::default_h200();
  return o.machine_file.empty() || suite::load_machine(o.machine_file, &cfg->machine, err);
}

}  // namespace cli
