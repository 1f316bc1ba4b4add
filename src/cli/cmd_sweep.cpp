// src/cli/cmd_sweep.cpp: see cmd_sweep.h.
#include "cli/cmd_sweep.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "cli/cmd_sweep_slurm.h"
#include "cli/commands.h"
#include "cli/pkb_serve.h"
#include "eval/serve.h"
#include "eval/serve_client.h"
#include "llm/provider.h"
#include "suite/paths.h"
#include "suite/problem.h"
#include "sweep/progress.h"
#include "sweep/status.h"
#include "sweep/sweep.h"

namespace cli {

namespace fs = std::filesystem;

namespace {

std::string self_exe() {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).string();
}

// The problems named (a name, "all", or "category:NAME"), in the suite's order, with
// their categories. False with a message naming the word that matched nothing.
bool resolve_problems(const std::vector<std::string>& words, std::vector<std::string>* names,
                      std::vector<std::string>* cats, std::string* err) {
  std::vector<suite::Problem> all;
  if (!suite::load_all_problems(suite::default_paths().problems_dir, &all, err)) return false;
  for (const std::string& w : words) {
    size_t before = names->size();
    for (const suite::Problem& p : all) {
      bool hit = w == "all" || w == p.name || w == "category:" + p.category;
      if (hit && std::find(names->begin(), names->end(), p.name) == names->end()) {
        names->push_back(p.name);
        cats->push_back(p.category);
      }
    }
    if (names->size() == before && std::find(names->begin(), names->end(), w) == names->end()) {
      *err =
          "no problem matches '" + w + "' (a name from `kforge problems`, all, or category:NAME)";
      return false;
    }
  }
  return true;
}

// The solve options that shape a sample's outcome (evaluation, budgets, target), or with
// `provider` the ones that only say where the model is (URL, key, config file): a rerun
// may move the endpoint, not the experiment.
std::vector<std::string> solve_args(const SweepArgs& a, bool provider) {
  if (provider) {
    std::vector<std::string> s;
    auto add = [&](const char* flag, const std::string& v) { s.insert(s.end(), {flag, v}); };
    if (!a.base_url.empty()) add("--base-url", a.base_url);
    if (!a.api_key_env.empty()) add("--api-key-env", a.api_key_env);
    if (!a.config_file.empty()) add("--config", a.config_file);
    return s;
  }
  std::vector<std::string> s = eval_option_args(a.opt);
  auto add = [&](const char* flag, const std::string& v) { s.insert(s.end(), {flag, v}); };
  if (a.max_turns > 0) add("--max-turns", std::to_string(a.max_turns));
  if (a.max_tokens > 0) add("--max-tokens", std::to_string(a.max_tokens));
  if (a.max_cost > 0) add("--max-cost", fmt::format("{}", a.max_cost));
  if (a.max_wall > 0) add("--max-wall", fmt::format("{}", a.max_wall));
  if (a.target > 0) add("--target", fmt::format("{}", a.target));
  return s;
}

// Where the samples' evals take their slots (eval/eval_slot.h): one folder for the
// whole machine, so that two sweeps share their GPUs' slots too.
std::string eval_locks_dir() {
  const char* set = std::getenv("KFORGE_EVAL_LOCKS");
  if (set && *set) return set;
  return fmt::format("/tmp/kforge-eval-locks-{}", static_cast<long>(getuid()));
}

// The samples' evals share warm ranks: a server on a thread of this process (eval/
// serve.h), whose sets outlive each sample's solve, so that the samples of a problem
// after the first skip the ranks' start; for a PKB suite, warm interpreters (pkb/warm.h),
// so that python and torch start once per interpreter, not once per sample. Not with
// --ranks cold, or where KFORGE_SERVE names a server already. Its socket is in this
// node's /tmp, one per sweep process (a Slurm array's tasks share DIR, maybe across
// nodes). Without one (it cannot listen), the samples keep warm ranks of their own.
void start_server(const SweepArgs& a, bool pkb, const std::string& out, eval::ServeThread* server,
                  std::string* socket) {
  if (a.opt.ranks == "cold" || !eval::serve_socket_from_env().empty()) return;
  eval::ServeOptions o;
  o.socket = fmt::format("/tmp/kforge-serve-{}-{}.sock", static_cast<long>(getuid()),
                         static_cast<long>(getpid()));
  o.evals_dir = out + "/evals";
  if (pkb) {  // the samples share warm interpreters, one per sample in flight at most
    auto interpreters = std::make_shared<pkb::WarmPool>(o.evals_dir, std::max(a.jobs, 1));
    const std::string dir = o.evals_dir;
    o.pkb = [interpreters, dir](const eval::ServeRequest& r) {
      return serve_pkb_eval(r, interpreters.get(), dir);
    };
  }
  std::string err;
  if (!server->start(o, suite::default_paths(), &err)) {
    fmt::print(stderr,
               "kforge sweep: no eval server ({}): each sample keeps warm ranks of its own\n", err);
    return;
  }
  *socket = server->socket();
}

// Writes the plan, or checks it against the one the folder has. Exit code, 0 when fine.
int check_plan(const sweep::PlanFile& plan, const std::string& dir) {
  sweep::PlanFile before;
  std::string err;
  bool had = sweep::read_plan(dir, &before, &err);
  if (!err.empty() || (had && !sweep::same_sweep(before, plan, &err))) {
    fmt::print(stderr,
               "kforge sweep: {} holds another sweep ({}); run it with the same options or "
               "give another --out\n",
               dir, err);
    return kBadInput;
  }
  if (!sweep::write_plan(dir, plan, &err)) {
    fmt::print(stderr, "kforge sweep: {}\n", err);
    return kInternal;
  }
  return kOk;
}

// Every model through the provider table, before any sample runs; the builtin only for
// kforge's own problems (pkb_suite: the --suite given, "" for none).
bool check_models(const std::vector<std::string>& models, const std::string& pkb_suite,
                  std::string* err) {
  for (const std::string& m : models) {
    std::string provider, name;
    if (!llm::parse_model_spec(m, &provider, &name, err)) return false;
  }
  if (!pkb_suite.empty() && std::find(models.begin(), models.end(), "builtin") != models.end()) {
    *err = fmt::format(
        "--suite {}: the builtin template search writes kforge's own problems only; give the "
        "models to sweep with --model provider:name",
        pkb_suite);
    return false;
  }
  return true;
}

}  // namespace

SweepCommands add_sweep_command(CLI::App& app, SweepArgs* a) {
  SweepCommands c;
  c.sweep = app.add_subcommand(
      "sweep", "K samples of `kforge solve` per problem and model, resumable, with pass@k");
  c.sweep->add_option("problems", a->problems, "problem names, all, or category:NAME");
  c.sweep->add_option("--samples,-k", a->samples, "samples per problem and model (default 4)")
      ->check(CLI::Range(1, 100000));
  c.sweep->add_option("--model,-m", a->models, "a model (repeat for several; default builtin)");
  c.sweep->add_option("--mode", a->mode, "direct or agent")
      ->check(CLI::IsMember({"direct", "agent"}));
  c.sweep->add_option("--jobs,-j", a->jobs, "samples at once (default 1)")
      ->check(CLI::Range(1, 1024));
  c.sweep->add_option("--out,-o", a->out, "the sweep's folder (default runs/sweeps/<time>)");
  c.sweep->add_option("--max-turns", a->max_turns, "per sample, as solve's");
  c.sweep->add_option("--max-tokens", a->max_tokens, "per sample, as solve's");
  c.sweep->add_option("--max-cost", a->max_cost, "USD per sample, as solve's");
  c.sweep->add_option("--max-wall", a->max_wall, "seconds per sample, as solve's");
  c.sweep->add_option("--target", a->target, "speedup to stop at, as solve's");
  c.sweep->add_option("--base-url", a->base_url, "as solve's");
  c.sweep->add_option("--api-key-env", a->api_key_env, "as solve's");
  c.sweep->add_option("--config", a->config_file, "as solve's");
  add_eval_options(c.sweep, &a->opt);
  CLI::Option* slurm = c.sweep->add_flag(
      "--slurm", a->slurm, "submit it as a Slurm job array (sbatch) rather than run it here");
  c.sweep
      ->add_option("--array-size", a->array_size,
                   "with --slurm: array tasks (default: one per --jobs samples, at most 32)")
      ->check(CLI::Range(1, 100000))
      ->needs(slurm);
  c.sweep
      ->add_option("--sbatch", a->sbatch,
                   "with --slurm: an sbatch option, passed on (repeat: --sbatch=--gpus=2 "
                   "--sbatch=--time=4:00:00)")
      ->allow_extra_args(false)
      ->needs(slurm);
  c.status = c.sweep->add_subcommand("status", "a sweep's metrics by model, category, problem");
  c.status->add_option("dir", a->status_dir, "the sweep's folder")->required();
  c.status->add_flag("--json", a->json, "as JSON");
  c.status->add_flag("--csv", a->csv, "as CSV");
  return c;
}

int cmd_sweep(const SweepArgs& a) {
  sweep::SweepConfig cfg;
  std::vector<std::string> names, cats;
  std::string err;
  std::vector<std::string> words =
      a.problems.empty() ? std::vector<std::string>{"all"} : a.problems;
  const bool pkb = !a.opt.suite.empty();
  if (!(pkb ? resolve_pkb_problems(a.opt.suite, words, &names, &cats, &err)
            : resolve_problems(words, &names, &cats, &err))) {
    fmt::print(stderr, "kforge sweep: {}\n", err);
    return kBadInput;
  }
  std::vector<std::string> models =
      a.models.empty() ? std::vector<std::string>{"builtin"} : a.models;
  if (!check_models(models, pkb ? a.opt.suite : "", &err)) {
    fmt::print(stderr, "kforge sweep: {}\n", err);
    return kBadInput;
  }
  cfg.samples = sweep::plan(names, cats, models, a.samples);
  std::vector<std::string> outcome_args = solve_args(a, false);
  cfg.solve_args = outcome_args;
  for (const std::string& w : solve_args(a, true)) cfg.solve_args.push_back(w);
  cfg.mode = a.mode;
  cfg.jobs = a.jobs;
  std::string out = a.out.empty() ? suite::default_paths().runs_dir + "/sweeps/" +
                                        fmt::format("{}", static_cast<long long>(time(nullptr)))
                                  : a.out;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) {
    fmt::print(stderr, "kforge sweep: cannot create --out {}: {}\n", out, ec.message());
    return kBadInput;
  }
  cfg.out = fs::absolute(out).string();
  cfg.kforge_bin = self_exe();
  cfg.eval_locks = eval_locks_dir();
  if (int code = check_plan({1, names, cats, models, a.samples, a.mode, outcome_args}, cfg.out))
    return code;
  if (a.slurm) return submit_sweep_to_slurm(a, cfg, names, models);
  use_slurm_allocation(a);
  // A Slurm array task writes a ledger of its own and takes its share of the samples.
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  const char* count = std::getenv("SLURM_ARRAY_TASK_COUNT");
  if (task && count && std::atoi(count) > 0) {
    cfg.task = std::atoi(task);
    cfg.tasks = std::atoi(count);
  }
  cfg.ledger_file = cfg.out + (cfg.tasks > 1 ? fmt::format("/ledger-{}.jsonl", cfg.task)
                                             : std::string("/ledger.jsonl"));
  fmt::print(stderr, "kforge sweep: {} samples ({} problems x {} models x {}) into {}\n",
             cfg.samples.size(), names.size(), models.size(), a.samples, cfg.out);
  eval::ServeThread server;
  start_server(a, pkb, cfg.out, &server, &cfg.serve);
  sweep::ProgressPrinter printer = sweep::ProgressPrinter::for_stderr();
  sweep::Progress progress;
  bool ok = sweep::run_sweep(
      cfg, [&](const sweep::Progress& p) { printer.update(p); }, &progress, &err);
  printer.finish();
  if (!ok) {
    fmt::print(stderr, "kforge sweep: {}\n", err);
    return progress.bad_input ? kBadInput : kInternal;
  }
  SweepArgs st = a;
  st.status_dir = cfg.out;
  int code = cmd_sweep_status(st);
  if (code == kOk && progress.failed > 0) {
    fmt::print(stderr,
               "kforge sweep: {} samples failed (kforge or the model's provider; the ledger "
               "says why): run the same command again to retry them\n",
               progress.failed);
    return kInternal;
  }
  return code;
}

int cmd_sweep_status(const SweepArgs& a) {
  sweep::Status st;
  std::vector<sweep::Record> done;
  std::string err;
  if (!sweep::read_status(a.status_dir, &st, &done, &err)) {
    fmt::print(stderr, "kforge sweep status: {}\n", err);
    return kBadInput;
  }
  if (a.json)
    fmt::print("{}\n", nlohmann::json(st).dump(2));
  else if (a.csv)
    fmt::print("{}", sweep::status_csv(st));
  else
    fmt::print("{}", sweep::status_table(st));
  return kOk;
}

}  // namespace cli
