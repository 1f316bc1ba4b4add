// cli/solve_text.cpp: see solve_text.h.
#include "cli/solve_text.h"

#include <fmt/format.h>

#include <cstdio>

#include "agent/loop_json.h"
#include "cli/solve_resume.h"
#include "eval/eval.h"
#include "llm/provider.h"
#include "sandbox/process.h"
#include "suite/expr.h"
#include "suite/instance.h"

namespace cli {

namespace {

// "small (dtype=f32, n=4099), full (dtype=f32, n=1048576)": the sizes this run checks.
std::string sizes_text(const eval::EvalConfig& e) {
  std::vector<std::string> sizes = eval::sizes_to_run(e, false);
  std::string out;
  for (const std::string& sz : sizes) {
    suite::Instance inst;
    std::string err, params;
    if (suite::resolve_instance(e.problem, e.settings.world, sz, e.settings.overrides, &inst,
                                &err)) {
      for (auto& [k, v] : inst.str_params) params += (params.empty() ? "" : ", ") + k + "=" + v;
      for (auto& [k, v] : inst.params)
        params += (params.empty() ? "" : ", ") + k + "=" + suite::format_number(v);
    }
    out += (out.empty() ? "" : "; ") + sz + (params.empty() ? "" : " (" + params + ")");
  }
  return out;
}

bool speed_measured(const agent::SolveConfig& cfg) {
  return cfg.eval.settings.backend == sandbox::Backend::cuda && cfg.eval.settings.time &&
         static_cast<int>(cfg.topology.gpus.size()) >= cfg.eval.settings.world;
}

// A resumed run's spend: this part's, then the whole run's.
std::string parts_line(const agent::SolveResult& r) {
  agent::Spend p = agent::this_part(r);
  return fmt::format(
      "this part (the run's part {}): {} turn{}, {} tokens, ${:.4f}, {:.0f} s; the whole run: {} "
      "turn{}, {} tokens, ${:.4f}, {:.0f} s",
      r.part, p.turns, p.turns == 1 ? "" : "s", group_digits(p.tokens_in + p.tokens_out),
      p.cost_usd, p.seconds, r.turns, r.turns == 1 ? "" : "s",
      group_digits(r.tokens_in + r.tokens_out), r.cost_usd, r.seconds);
}

std::string limit_text(double v, const char* unit) {
  return v > 0 ? suite::format_number(v) + unit : "no limit";
}

}  // namespace

HeaderRows solve_header(const agent::SolveConfig& cfg, const std::string& model, bool confirm,
                        const std::string& run_dir, std::string* title) {
  const eval::EvalConfig& e = cfg.eval;
  std::string backend = sandbox::backend_name(e.settings.backend);
  // A suite's problem (PKB) is named by the suite; its inputs are the suite's own.
  const std::string name = cfg.foreign ? cfg.foreign->problem : e.problem.name;
  *title = fmt::format("kforge solve · {} · {} rank{} · {} backend", name, e.settings.world,
                       e.settings.world == 1 ? "" : "s", backend);
  HeaderRows rows;
  rows.push_back({"problem", cfg.foreign ? name + " of " + cfg.foreign->suite + ", its own inputs"
                                         : name + ", sizes " + sizes_text(e)});
  std::string m =
      model + (cfg.mode == agent::Mode::agent ? ", agent mode: one bash command per turn"
                                              : ", direct mode: one kernel per reply");
  if (cfg.mode == agent::Mode::agent)
    m += confirm ? "; each command waits for your yes (--confirm)" : "; commands run unasked";
  rows.push_back({"model", m});
  size_t gpus = cfg.topology.gpus.size();
  std::string ranks = fmt::format("{} rank{}", e.settings.world, e.settings.world == 1 ? "" : "s");
  rows.push_back({"world", e.settings.backend == sandbox::Backend::host
                               ? ranks + " as processes on this machine's CPU"
                           : gpus >= static_cast<size_t>(e.settings.world)
                               ? fmt::format("{} on {} GPU{}", ranks, gpus, gpus == 1 ? "" : "s")
                               : fmt::format("{} emulated on {} GPU{} (correctness only)", ranks,
                                             gpus, gpus == 1 ? "" : "s")});
  rows.push_back(
      {"target", speed_measured(cfg)
                     ? fmt::format("a correct kernel at least {}x as fast as the baseline",
                                   suite::format_number(cfg.target))
                     : "a correct kernel (no speed is measured here: " +
                           std::string(e.settings.backend == sandbox::Backend::cuda
                                           ? (!e.settings.time ? "--no-time" : "emulated ranks")
                                           : "host backend") +
                           ")"});
  rows.push_back(
      {"budgets", fmt::format("{} turns · tokens {} · cost {} · time {}", cfg.max_turns,
                              limit_text(cfg.max_tokens, ""),
                              cfg.max_cost_usd > 0 ? fmt::format("${:.2f}", cfg.max_cost_usd)
                                                   : std::string("no limit"),
                              limit_text(cfg.max_wall_s, " s"))});
  rows.push_back({"run", run_dir});
  rows.push_back({"keys", "m: the menu after the current step · Ctrl-C: stop the step"});
  return rows;
}

std::vector<std::string> solve_end_lines(const agent::SolveConfig& cfg, const agent::SolveResult& r,
                                         const KeptKernels& k) {
  std::vector<std::string> out;
  std::string turns = fmt::format("{} turn{}", r.turns, r.turns == 1 ? "" : "s");
  std::string why = exit_reason_text(r.exit_reason);
  if (!r.budget.name.empty()) why += " (" + r.budget.text() + ")";
  if (r.interrupt_signal)
    why += fmt::format(" ({} during the {})", sandbox::signal_name(r.interrupt_signal),
                       sandbox::enum_name(r.interrupt_phase));
  std::string best =
      r.has_best ? (r.best.summary.empty() ? sandbox::summarize(r.best) : r.best.summary) : "";
  if (r.target_met)
    out.push_back(
        fmt::format("Done after {}: the kernel of turn {} meets the target.", turns, r.best_turn));
  else if (r.has_best)
    out.push_back(
        fmt::format("Stopped after {}: {}. The best kernel (turn {}) is correct but "
                    "short of the target: {}",
                    turns, why, r.best_turn, best));
  else
    out.push_back(fmt::format("Stopped after {}: {}. No kernel was correct.", turns, why));
  if (!k.best.empty()) out.push_back(fmt::format("best kernel (turn {}): {}", r.best_turn, k.best));
  if (!k.accepted.empty())
    out.push_back(fmt::format(
        "accepted kernel (turn {}): {}{}", r.last_turn, k.accepted,
        r.last.status == sandbox::Status::correct
            ? " (correct)"
            : " - NOT correct: " + (r.last.summary.empty()
                                        ? std::string(sandbox::status_name(r.last.status))
                                        : r.last.summary)));
  if (r.tokens_estimated)
    out.push_back(llm::estimated_usage_text(r.tokens_in + r.tokens_out, r.cost_usd));
  out.push_back("trajectory: " + k.trajectory);
  if (r.part > 1) out.push_back(parts_line(r));
  // Going on with this run keeps its options (model, server, backend, world, ...) and
  // its conversation: better advice than a new run that has neither.
  std::string resume = "kforge solve --resume " + run_dir_of(k.trajectory);
  std::string next;
  if (r.target_met || (!k.accepted.empty() && r.last.status == sandbox::Status::correct))
    next = fmt::format("check it again with `kforge eval {} {}`", cfg.eval.problem.name,
                       k.accepted.empty() ? k.best : k.accepted);
  else if (r.exit_reason == agent::ExitReason::max_turns)
    next = fmt::format(
        "`{} --max-turns {}` goes on for {} more turns with the conversation so "
        "far (a hint at its menu with h)",
        resume, cfg.max_turns, cfg.max_turns);
  else if (!r.budget.name.empty())
    next = fmt::format("`{} --{}-{} N` goes on with a new budget for the part it adds", resume,
                       r.budget.name.substr(0, 3), r.budget.name.substr(4));
  else if (r.exit_reason == agent::ExitReason::format_errors)
    next = "read the model's replies with `kforge show " + k.trajectory +
           "`; a stronger model, or --mode " +
           (cfg.mode == agent::Mode::agent ? "direct" : "agent") +
           ", may answer in the format asked";
  else if (r.exit_reason == agent::ExitReason::llm_error)
    next = "fix what the error above names, then `" + resume + "` goes on with this run";
  else if (r.exit_reason == agent::ExitReason::interrupted ||
           r.exit_reason == agent::ExitReason::quit)
    next = "`" + resume + "` goes on with this run; `kforge show " + k.trajectory + "` shows it";
  else if (!k.accepted.empty())
    next = "the verdict above says what is wrong with it; `kforge eval " + cfg.eval.problem.name +
           " " + k.accepted + "` checks it again";
  if (!next.empty()) out.push_back("next: " + next);
  return out;
}

void print_json_line(const nlohmann::json& j) {
  std::puts(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  std::fflush(stdout);
}

void LineObserver::on_event(const agent::TurnEvent& ev) {
  using P = agent::TurnPhase;
  if (ev.phase == P::streaming || ev.phase == P::command_output)
    return;                                   // a live view's business, not a log's
  if (ev.phase == P::reply && json_) return;  // the whole text is in the trajectory
  if (!json_) {
    fmt::print("{}\n", status_text(ev, model_));
    std::fflush(stdout);
    return;
  }
  nlohmann::json j = {{"event", ev.phase},       {"turn", ev.turn},
                      {"detail", ev.detail},     {"tokens", ev.tokens},
                      {"cost_usd", ev.cost_usd}, {"elapsed_s", ev.elapsed_s}};
  if (ev.verdict) j["status"] = ev.verdict->status, j["summary"] = ev.verdict->summary;
  print_json_line(j);
}

}  // namespace cli
