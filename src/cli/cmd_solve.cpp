// cli/cmd_solve.cpp: see cmd_solve.h.
#include "cli/cmd_solve.h"

#include <fmt/core.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agent/loop.h"
#include "agent/template.h"
#include "cli/commands.h"
#include "cli/live.h"
#include "cli/solve_context.h"
#include "kf_build_paths.h"
#include "llm/config.h"
#include "llm/replay.h"
#include "sandbox/interrupt.h"
#include "sandbox/process.h"
#include "suite/paths.h"
#include "suite/problem.h"
#if __has_include("agent/builtin.h")
#include "agent/builtin.h"
#define KF_HAVE_BUILTIN 1
#endif

namespace cli {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void print_json_line(const json& j) {
  std::puts(j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  std::fflush(stdout);
}

// --headless: one JSON object per event; without a terminal and without --headless: the
// same events as readable lines. Never waits on a person: between turns is always "next".
class LineObserver : public agent::Observer {
 public:
  LineObserver(bool json, std::string model) : json_(json), model_(std::move(model)) {}
  void on_event(const agent::TurnEvent& ev) override {
    if (ev.phase == "streaming") return;  // a live view's business, not a log's
    if (!json_) {
      fmt::print("{}\n", status_text(ev, model_));
      std::fflush(stdout);
      return;
    }
    json j = {{"event", ev.phase},   {"turn", ev.turn},         {"detail", ev.detail},
              {"tokens", ev.tokens}, {"cost_usd", ev.cost_usd}, {"elapsed_s", ev.elapsed_s}};
    if (ev.verdict) j["status"] = ev.verdict->status, j["summary"] = ev.verdict->summary;
    print_json_line(j);
  }

 private:
  bool json_;
  std::string model_;
};

// The model named by --model, the config file, or builtin. Null with *err, *code.
std::unique_ptr<agent::Model> make_model(const SolveArgs& a, const eval::EvalConfig& ecfg,
                                         bool* used_default, std::string* err, int* code) {
  llm::LlmConfig file;
  bool explicit_cfg = !a.config_file.empty();
  if (!llm::load_llm_config(explicit_cfg ? a.config_file : llm::default_config_path(), explicit_cfg,
                            &file, err)) {
    *code = kBadInput;
    return nullptr;
  }
  std::string spec = !a.model.empty() ? a.model : file.model;
  *used_default = spec.empty();
  if (spec.empty() || spec == "builtin") {
#ifdef KF_HAVE_BUILTIN
    auto m = agent::make_builtin_model(ecfg, err);
    if (!m) *code = kInternal;
    return m;
#else
    *err =
        "no model configured and the builtin template search is not in this build: pass --model "
        "provider:name";
    *code = kBadInput;
    return nullptr;
#endif
  }
  llm::register_replay_provider();
  llm::ProviderConfig pc;
  if (!llm::resolve_provider_config(file, a.model, a.base_url, &pc, err)) {
    *code = kBadInput;
    return nullptr;
  }
  if (a.idle_timeout_s > 0) pc.timeouts.idle_s = a.idle_timeout_s;
  if (!a.api_key_env.empty()) pc.api_key_env = a.api_key_env;
  auto p = llm::make_provider(pc, err);
  if (!p) {
    *code = kBadInput;
    return nullptr;
  }
  llm::Error e;
  if (!p->ready(&e)) {
    *err = e.kind + ": " + e.message;
    *code = e.kind == "missing_key" ? kBadInput : kInternal;  // the user's setup, not kforge
    return nullptr;
  }
  return agent::wrap_provider(std::move(p));
}

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

// The exit code of a finished run: 128+N after signal N, else by how it ended.
int exit_code_of(const agent::SolveResult& r, bool ok) {
  if (r.exit_reason == "interrupted" && r.interrupt_signal)
    return sandbox::interrupt_exit_code(r.interrupt_signal);
  if (!ok || r.exit_reason == "llm_error") return kInternal;
  return r.target_met ? kOk : kNotCorrect;
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
  if (r.exit_reason == "accepted" && r.has_last) {
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
           const std::string& model) {
  bool ok = err.empty();
  std::string accepted_path;
  std::string best_path =
      write_kernels(res, out_dir, eval::kernel_extension(cfg.eval.backend), &accepted_path);
  int exit_code = exit_code_of(res, ok);
  json solve_j = {{"exit_reason", res.exit_reason},
                  {"target_met", res.target_met},
                  {"exit_code", exit_code},
                  {"turns", res.turns},
                  {"candidates", res.candidates},
                  {"tokens_in", res.tokens_in},
                  {"tokens_out", res.tokens_out},
                  {"cost_usd", res.cost_usd},
                  {"seconds", res.seconds},
                  {"trajectory", trajectory},
                  {"kernel", best_path},
                  {"best_turn", res.best_turn},
                  {"model", model},
                  {"target", cfg.target}};
  if (!ok) solve_j["error"] = "internal", solve_j["message"] = err;
  if (res.exit_reason == "llm_error")
    solve_j["error"] = "provider",
    solve_j["message"] = res.llm_error.kind + ": " + res.llm_error.message;
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
  std::string why = res.exit_reason;
  if (!res.budget.name.empty()) why += " (" + res.budget.text() + ")";
  if (res.interrupt_signal)
    why += fmt::format(" (by {} during the {})", sandbox::signal_name(res.interrupt_signal),
                       res.interrupt_phase);
  fmt::print("{}: {} after {} turn{}{}\n", res.target_met ? "target met" : "stopped", why,
             res.turns, res.turns == 1 ? "" : "s",
             res.has_best ? fmt::format("; best kernel (turn {}): {}", res.best_turn, best_path)
                          : "; no correct kernel");
  if (!accepted_path.empty())
    fmt::print("accepted kernel (turn {}): {}{}\n", res.last_turn, accepted_path,
               res.last.status == sandbox::Status::correct
                   ? " (correct)"
                   : " - NOT correct: " + (res.last.summary.empty()
                                               ? std::string(sandbox::status_name(res.last.status))
                                               : res.last.summary));
  fmt::print("trajectory: {}\n", trajectory);
  return exit_code;
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
      ->check(CLI::IsMember({"direct", "agent"}));
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
      ->check(CLI::IsMember({"never", "auto", "always"}));
  add_eval_options(s, &a->opt);
  return s;
}

int cmd_solve(const SolveArgs& a) {
  const bool interactive = !a.headless && isatty(0) && isatty(1);
  auto fail = [&](int code, const std::string& kind, const std::string& msg) {
    fmt::print(stderr, "kforge solve: {}\n", msg);
    if (a.headless)
      print_json_line(
          {{"event", "result"}, {"exit_code", code}, {"error", kind}, {"message", msg}});
    return code;
  };
  suite::Paths paths = suite::default_paths();
  agent::SolveConfig cfg;
  eval::EvalConfig& e = cfg.eval;
  std::string err;
  std::string name = a.positionals.empty() ? "" : a.positionals[0];
  if (name.empty() && !suite::default_problem(paths.problems_dir, &name, &err))
    return fail(kBadInput, "bad_input", err);
  if (!load_problem_named(name, paths, &e.problem, &err)) return fail(kBadInput, "bad_input", err);
  e.paths = paths;
  std::vector<std::string> params;
  if (a.positionals.size() > 1) params.assign(a.positionals.begin() + 1, a.positionals.end());
  if (!apply_eval_options(a.opt, params, &e, &err)) return fail(kBadInput, "bad_input", err);
  sandbox::EvalRequest probe;  // checks the world and the overrides before any model call
  if (!eval::make_request(e, "/dev/null", sandbox::Role::candidate, &probe, &err))
    return fail(kBadInput, "bad_input", err);

  cfg.mode = a.mode;
  cfg.target = a.target;
  cfg.max_turns = a.max_turns;
  cfg.max_tokens = a.max_tokens;
  cfg.max_cost_usd = a.max_cost;
  cfg.max_wall_s = a.max_wall;
  cfg.reply_max_tokens = a.reply_max_tokens;
  cfg.llm_seed = a.llm_seed;
  cfg.command_timeout_s = a.command_timeout_s;
  sandbox::parse_enum(a.profile, &cfg.profile);  // CLI11 checked the word
  cfg.prompts_dir = agent::default_prompts_dir();
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) cfg.agent_env.push_back("KFORGE_BIN=" + std::string(self, static_cast<size_t>(n)));
  cfg.agent_env.push_back("KFORGE_ROOT=" + paths.source_root);

  if (!choose_topology(a.topology_file, e.backend, &cfg.topology, &err))
    return fail(kBadInput, "bad_input", err);

  bool used_default = false;
  int code = kInternal;
  auto model = make_model(a, e, &used_default, &err, &code);
  if (!model) return fail(code, code == kBadInput ? "bad_input" : "provider", err);
  if (used_default)
    fmt::print(
        stderr,
        "kforge solve: no model configured (--model or {}): using builtin, the template search\n",
        llm::default_config_path());

  trace::Writer tw;
  if (!tw.open(paths.runs_dir, e.problem.name, model->name(), &err))
    return fail(kInternal, "internal", err);
  std::string run_dir = tw.path().substr(0, tw.path().size() - 6);  // without ".jsonl"
  cfg.workspace = run_dir;
  cfg.baseline_time = baseline_time_text(e, cfg.topology, a.headless);
  tw.header({{"problem", e.problem.name},
             {"model", model->name()},
             {"mode", cfg.mode},
             {"config", agent::solve_config_json(cfg)},
             {"versions", {{"kforge", KF_VERSION}, {"trajectory", trace::kFormat}}},
             {"topology", suite::topology_json(cfg.topology)},
             {"baseline_time", cfg.baseline_time}});
  if (!interactive)
    fmt::print(stderr, "kforge solve: {} with {}, trajectory {}\n", e.problem.name, model->name(),
               tw.path());

  LineObserver lines(a.headless, model->name());
  LiveView live(stdin, stdout, std::getenv("NO_COLOR") == nullptr);
  live.set_model(model->name());
  agent::Observer& obs = interactive ? static_cast<agent::Observer&>(live) : lines;
  agent::SolveResult res;
  bool ok = agent::solve(cfg, *model, obs, tw, &res, &err);
  tw.close();
  return report(a, cfg, res, ok ? "" : err, tw.path(), a.out.empty() ? run_dir : a.out,
                model->name());
}

}  // namespace cli
