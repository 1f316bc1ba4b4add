// cli/cmd_solve.cpp: see cmd_solve.h.
#include "cli/cmd_solve.h"

#include <fmt/core.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agent/loop.h"
#include "agent/loop_json.h"
#include "agent/template.h"
#include "cli/commands.h"
#include "cli/enum_option.h"
#include "cli/live.h"
#include "cli/solve_context.h"
#include "cli/solve_model.h"
#include "cli/solve_resume.h"
#include "cli/solve_text.h"
#include "kf_build_paths.h"
#include "llm/config.h"
#include "sandbox/interrupt.h"
#include "sandbox/process.h"
#include "suite/paths.h"
#include "suite/problem.h"

namespace cli {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool load_problem_named(const std::string& name, const suite::Paths& paths, suite::Problem* p,
                        std::string* err) {
  std::string dir = paths.problems_dir + "/" + name;
  if (!fs::exists(dir + "/problem.json")) {
    *err = fmt::format("no problem '{}' in {}; `kforge problems` lists them", name,
                       paths.problems_dir);
    return false;
  }
  return suite::load_problem(dir, p, err);
}

// The native problem a names (or the default one) into e, with the evaluation options;
// the world and overrides are checked here, before any model call.
bool native_problem(const SolveArgs& a, const suite::Paths& paths, eval::EvalConfig* e,
                    std::string* err) {
  std::string name = a.positionals.empty() ? "" : a.positionals[0];
  if (name.empty() && !suite::default_problem(paths.problems_dir, &name, err)) return false;
  if (!load_problem_named(name, paths, &e->problem, err)) return false;
  e->paths = paths;
  std::vector<std::string> params;
  if (a.positionals.size() > 1) params.assign(a.positionals.begin() + 1, a.positionals.end());
  if (!apply_eval_options(a.opt, params, e, err)) return false;
  sandbox::EvalRequest probe;
  return eval::make_request(*e, "/dev/null", sandbox::Role::candidate, &probe, err);
}

// The loop's own options from the command line: mode, target, budgets, profile, prompts,
// and what agent-mode commands are told of kforge.
void loop_options(const SolveArgs& a, const suite::Paths& paths, agent::SolveConfig* cfg) {
  cfg->mode = a.mode;
  cfg->target = a.target;
  cfg->max_turns = a.max_turns;
  cfg->max_tokens = a.max_tokens;
  cfg->max_cost_usd = a.max_cost;
  cfg->max_wall_s = a.max_wall;
  cfg->reply_max_tokens = a.reply_max_tokens;
  cfg->llm_seed = a.llm_seed;
  cfg->command_timeout_s = a.command_timeout_s;
  cfg->profile = a.profile;
  cfg->prompts_dir = agent::default_prompts_dir();
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) cfg->agent_env.push_back("KFORGE_BIN=" + std::string(self, static_cast<size_t>(n)));
  cfg->agent_env.push_back("KFORGE_ROOT=" + paths.source_root);
}

// The exit code of a finished run: 128+N after signal N, else by how it ended.
int exit_code_of(const agent::SolveResult& r, bool ok) {
  if (r.exit_reason == agent::ExitReason::interrupted && r.interrupt_signal)
    return sandbox::interrupt_exit_code(r.interrupt_signal);
  if (!ok && r.setup_fault != agent::SetupFault::none) return kBadInput;  // verdict.json says which
  if (!ok || r.exit_reason == agent::ExitReason::llm_error) return kInternal;
  return r.target_met ? kOk : kNotCorrect;
}

// verdict.json's solve.error for a run that failed: "bad_input" where the setup runs none
// of the suite's jobs (a sweep stops: every sample would fail alike),
// "problem_not_runnable" where this problem's reference fails here (a sweep goes on
// without the problem), else "internal" (kforge failed).
const char* error_kind(agent::SetupFault fault) {
  switch (fault) {
    case agent::SetupFault::machine:
      return "bad_input";
    case agent::SetupFault::problem:
      return "problem_not_runnable";
    case agent::SetupFault::none:
      break;
  }
  return "internal";
}

// Writes the kernels kept (best, and the accepted one when that is another) into out_dir;
// *accepted_path is the accepted kernel's file.
std::string write_kernels(const agent::SolveResult& r, const std::string& out_dir,
                          const std::string& ext, std::string* accepted_path) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  std::string best_path;
  if (r.has_best) {
    best_path = out_dir + "/best" + ext;
    std::ofstream(best_path, std::ios::binary) << r.best_source;
  }
  if (r.exit_reason == agent::ExitReason::accepted && r.has_last) {
    // Accepting a kernel keeps it, correct or not: the person chose it and must find it.
    bool is_best = r.has_best && r.last_turn == r.best_turn;
    *accepted_path = is_best ? best_path : out_dir + "/accepted" + ext;
    if (!is_best) std::ofstream(*accepted_path, std::ios::binary) << r.last_source;
  }
  return best_path;
}

// The end of a run: kernels and verdict.json into out_dir, the result line (headless) or
// two readable lines, and the exit code.
int report(const SolveArgs& a, const agent::SolveConfig& cfg, const agent::SolveResult& res,
           const std::string& err, const std::string& trajectory, const std::string& out_dir,
           const std::string& model, LiveView* live) {
  bool ok = err.empty();
  std::string accepted_path;
  std::string best_path = write_kernels(
      res, out_dir,
      cfg.foreign ? cfg.foreign->extension : eval::kernel_extension(cfg.eval.settings.backend),
      &accepted_path);
  int exit_code = exit_code_of(res, ok);
  json solve_j = {{"exit_reason", res.exit_reason},
                  {"target_met", res.target_met},
                  {"exit_code", exit_code},
                  {"turns", res.turns},
                  {"candidates", res.candidates},
                  {"tokens_in", res.tokens_in},
                  {"tokens_out", res.tokens_out},
                  {"tokens_cache_read", res.tokens_cache_read},
                  {"tokens_cache_write", res.tokens_cache_write},
                  {"cost_usd", res.cost_usd},
                  {"tokens_estimated", res.tokens_estimated},
                  {"seconds", res.seconds},
                  {"trajectory", trajectory},
                  {"kernel", best_path},
                  {"best_turn", res.best_turn},
                  {"model", model},
                  {"target", cfg.target}};
  if (res.part > 1)  // a resumed run: the figures above are every part's
    solve_j["part"] = res.part, solve_j["this_part"] = agent::spend_json(agent::this_part(res));
  if (!ok) solve_j["error"] = error_kind(res.setup_fault), solve_j["message"] = err;
  if (res.exit_reason == agent::ExitReason::llm_error)
    solve_j["error"] = "provider",
    solve_j["message"] =
        std::string(llm::error_kind_name(res.llm_error.kind)) + ": " + res.llm_error.message;
  if (!res.budget.name.empty())
    solve_j["budget"] = {{"name", res.budget.name},
                         {"spent", res.budget.spent},
                         {"limit", res.budget.limit},
                         {"text", res.budget.text()}};
  if (res.interrupt_signal)
    solve_j["interrupt"] = {{"signal", sandbox::signal_name(res.interrupt_signal)},
                            {"phase", res.interrupt_phase}};
  if (!accepted_path.empty())
    solve_j["accepted"] = {
        {"file", accepted_path}, {"turn", res.last_turn}, {"status", res.last.status}};
  json vj = res.has_best   ? sandbox::verdict_json(res.best)
            : res.has_last ? sandbox::verdict_json(res.last)
                           : json::object();
  vj["solve"] = solve_j;
  std::ofstream(out_dir + "/verdict.json") << vj.dump(2) << "\n";

  if (solve_j.contains("message"))
    fmt::print(stderr, "kforge solve: {}\n", solve_j["message"].get<std::string>());
  if (a.headless) {
    json result = solve_j;
    result["event"] = "result";
    result["verdict_file"] = out_dir + "/verdict.json";
    print_json_line(result);
    return exit_code;
  }
  auto lines = solve_end_lines(cfg, res, {best_path, accepted_path, trajectory});
  if (live) {
    live->print_end(lines, res.target_met);
  } else {
    for (const std::string& l : lines) fmt::print("{}\n", l);
  }
  return exit_code;
}

// A new trajectory's header: what was asked, of whom, on what.
void write_header(const SolveArgs& a, const agent::SolveConfig& cfg, const std::string& problem,
                  const std::string& model_name, trace::Writer* tw) {
  tw->header({{"args", a.cli ? given_solve_words(*a.cli, true, false) : std::vector<std::string>{}},
              {"problem", problem},
              {"model", model_name},
              {"mode", cfg.mode},
              {"config", agent::solve_config_json(cfg)},
              {"versions", {{"kforge", KF_VERSION}, {"trajectory", trace::kFormat}}},
              {"topology", suite::topology_json(cfg.topology)},
              {"baseline_time", cfg.baseline_time}});
}

}  // namespace

CLI::App* add_solve_command(CLI::App& app, SolveArgs* a) {
  CLI::App* s = app.add_subcommand(
      "solve",
      "write a kernel for a problem with a model, until it is correct and faster than NCCL");
  s->add_option("args", a->positionals,
                "PROBLEM (default: the one whose problem.json says \"default\": true), then "
                "PARAM=V overrides");
  s->add_option("--model,-m", a->model,
                "provider:name (openai:gpt-5, anthropic:claude-..., replay:FILE, builtin); "
                "default: the config file's, else builtin");
  s->add_option("--base-url", a->base_url, "the provider's base URL (vLLM, SGLang, a proxy)");
  s->add_option(
      "--api-key-env", a->api_key_env,
      "the environment variable that holds the API key (default: the config file's key_env, else "
      "the provider's, e.g. OPENAI_API_KEY); none: send no key (a local server)");
  s->add_option("--config", a->config_file,
                "model configuration file (default ~/.config/kforge/config.json)");
  s->add_option("--mode", a->mode,
                "direct (the model answers with a kernel) or agent (one bash command per turn)")
      ->transform(enum_words<agent::Mode>());
  s->add_option("--target", a->target,
                "speedup over the baseline to stop at (default 1.0; where none can be measured, "
                "correct is enough)");
  s->add_option("--max-turns", a->max_turns, "model calls at most (default 10)")
      ->check(CLI::Range(1, 100000));
  s->add_option("--max-tokens", a->max_tokens,
                "input+output tokens over the run at most; each reply is capped at what is left "
                "(default: no limit)");
  s->add_option("--max-cost", a->max_cost,
                "USD over the run at most; each reply is capped at what is left at the output "
                "price (default: no limit)");
  s->add_option("--max-wall", a->max_wall,
                "seconds of wall time at most; cuts a model call, eval or command still running "
                "(default: no limit)");
  s->add_flag("--confirm", a->confirm,
              "agent mode on a terminal: show each command and wait for you to run, edit or "
              "reject it");
  s->add_flag("--headless", a->headless,
              "no menu: JSON lines on stdout, best kernel and verdict.json in --out");
  s->add_option("--out,-o", a->out,
                "where best.cu|.cpp and verdict.json go (default: the run's folder under runs/)");
  s->add_option("--topology", a->topology_file,
                "the machine's topology as JSON, for a machine kforge is not running on");
  s->add_option("--idle-timeout", a->idle_timeout_s,
                "seconds without a byte from the model's server before giving up on a request");
  s->add_option("--command-timeout", a->command_timeout_s,
                "agent mode: seconds one command may run (default 120)");
  s->add_option("--reply-max-tokens", a->reply_max_tokens,
                "output tokens per reply (default: the provider's)");
  s->add_option("--llm-seed", a->llm_seed,
                "the model's sampling seed, sent with every request (OpenAI-compatible servers; "
                "kforge sweep passes each sample's index)")
      ->check(CLI::NonNegativeNumber);
  s->add_option("--profile", a->profile,
                "never (default), auto (a correct but slow candidate under Nsight Compute, a "
                "crash on a bad address or a result that differs between calls under "
                "compute-sanitizer; what it finds goes into the next prompt), or always")
      ->transform(enum_words<agent::ProfileMode>());
  s->add_option("--resume", a->resume,
                "RUN (a run's folder under runs/, or its .jsonl): go on with that run where it "
                "stopped, with its conversation, kernels and spend; its options unless given "
                "again; budgets given count from here (--max-turns 3: three more turns)");
  s->add_flag("--continue", a->continue_run,
              "go on with the newest run of PROBLEM (or of the default problem), as --resume");
  add_eval_options(s, &a->opt);
  a->cli = s;
  return s;
}

int run_solve(const SolveArgs& a, const suite::Paths& paths, const std::string& resume_path,
              const trace::Run& prior);

int cmd_solve(const SolveArgs& given) {
  suite::Paths paths = suite::default_paths();
  SolveArgs a = given;
  std::string resume_path, err;
  trace::Run prior;
  if ((!given.resume.empty() || given.continue_run) &&
      !prepare_resume(given, paths, &a, &resume_path, &prior, &err)) {
    fmt::print(stderr, "kforge solve: {}\n", err);
    if (given.headless)
      print_json_line({{"event", "result"},
                       {"exit_code", kBadInput},
                       {"error", "bad_input"},
                       {"message", err}});
    return kBadInput;
  }
  return run_solve(a, paths, resume_path, prior);
}

int run_solve(const SolveArgs& a, const suite::Paths& paths, const std::string& resume_path,
              const trace::Run& prior) {
  // A terminal that cannot move its cursor (TERM=dumb: an editor's shell) gets the lines
  // a log gets: the live view redraws its bottom rows in place.
  const char* term = std::getenv("TERM");
  const bool interactive =
      !a.headless && isatty(0) && isatty(1) && !(term && std::string(term) == "dumb");
  auto fail = [&](int code, const std::string& kind, const std::string& msg) {
    fmt::print(stderr, "kforge solve: {}\n", msg);
    if (a.headless)
      print_json_line(
          {{"event", "result"}, {"exit_code", code}, {"error", kind}, {"message", msg}});
    return code;
  };
  agent::SolveConfig cfg;
  eval::EvalConfig& e = cfg.eval;
  std::string err;
  const bool pkb = !a.opt.suite.empty();
  if (!pkb && !native_problem(a, paths, &e, &err)) return fail(kBadInput, "bad_input", err);
  if (!pkb && warm_ranks_wanted(a.opt)) eval::use_warm_ranks(&e);

  if (a.confirm && a.mode != agent::Mode::agent)
    return fail(kBadInput, "bad_input",
                "--confirm asks before each agent command: add --mode agent, or drop --confirm");
  if (a.confirm && !interactive)
    return fail(kBadInput, "bad_input",
                "--confirm needs a person at a terminal (stdin and stdout a tty, no --headless); "
                "drop it to run the commands unasked");
  loop_options(a, paths, &cfg);
  if (!resume_path.empty()) {
    auto r = std::make_shared<agent::ResumeFrom>();
    if (!agent::resume_from(prior, cfg.prompts_dir, cfg.target, r.get(), &err))
      return fail(kBadInput, "bad_input", err);
    cfg.resume = r;
  }

  if (!choose_topology(a.topology_file, pkb ? sandbox::Backend::cuda : e.settings.backend,
                       &cfg.topology, &err) ||
      (pkb && !setup_pkb_solve(a, &cfg, &err)))
    return fail(kBadInput, "bad_input", err);
  const std::string problem = pkb ? "pkb-" + cfg.foreign->problem : e.problem.name;

  int code = kInternal;
  std::string kind;
  auto model = solve_model(a, cfg, &code, &kind, &err);
  if (!model) return fail(code, kind, err);

  trace::Writer tw;
  if (!(cfg.resume ? tw.open_append(resume_path, cfg.resume->spent.seconds, &err)
                   : tw.open(paths.runs_dir, problem, model->name(), &err)))
    return fail(kInternal, "internal", err);
  std::string run_dir = run_dir_of(tw.path());
  cfg.workspace = run_dir;
  std::unique_ptr<LiveView> live;  // a terminal's: its clock runs in a thread of its own
  if (interactive) {
    live = std::make_unique<LiveView>(stdin, stdout, std::getenv("NO_COLOR") == nullptr, a.confirm);
    live->set_model(model->name());
    live->set_agent_mode(cfg.mode == agent::Mode::agent);
    std::string title;
    HeaderRows rows = solve_header(cfg, model->name(), a.confirm, run_dir, &title);
    live->header(title, rows);
  }
  // A PKB candidate is timed beside its reference in the same job: no baseline run first.
  // A resumed run's prompts were written: its header stays as it was.
  if (!pkb && !cfg.resume) cfg.baseline_time = baseline_time_text(e, cfg.topology, a.headless);
  if (!cfg.resume) write_header(a, cfg, problem, model->name(), &tw);
  if (!interactive)
    fmt::print(stderr, "kforge solve: {}{} with {}, trajectory {}\n", problem,
               cfg.resume ? fmt::format(" resumed after turn {}", cfg.resume->spent.turns) : "",
               model->name(), tw.path());

  LineObserver lines(a.headless, model->name());
  agent::Observer& obs = live ? static_cast<agent::Observer&>(*live) : lines;
  agent::SolveResult res;
  bool ok = agent::solve(cfg, *model, obs, tw, &res, &err);
  tw.close();
  return report(a, cfg, res, ok ? "" : err, tw.path(), a.out.empty() ? run_dir : a.out,
                model->name(), live.get());
}

}  // namespace cli
