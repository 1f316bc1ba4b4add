// agent/loop.cpp: a solve run's turns (agent/loop_run.h): the loop, budgets, the menu,
// interrupts and the summary; the steps of a turn are in agent/loop_steps.cpp.
#include "agent/loop.h"

#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "agent/feedback.h"
#include "agent/loop_json.h"
#include "agent/loop_run.h"
#include "agent/prompt.h"
#include "agent/template.h"
#include "sandbox/deadline.h"
#include "sandbox/interrupt.h"
#include "sandbox/process.h"
#include "sandbox/sha256.h"

namespace agent {

using nlohmann::json;
namespace fs = std::filesystem;

namespace detail {

bool Run::go(std::string* err) {
  std::error_code ec;
  fs::create_directories(cfg_.workspace, ec);
  if (ec)
    return (*err = "cannot create the workspace " + cfg_.workspace + ": " + ec.message(), false);
  std::string sys, task;
  if (!first_messages(&sys, &task, err)) return false;
  msgs_ = {{"system", sys}, {"user", task}};
  if (cfg_.mode == "agent" && !init_env(err)) return false;
  // The run's --max-wall as kforge's deadline, for as long as the run lasts.
  sandbox::DeadlineScope deadline(cfg_.max_wall_s > 0 ? std::max(cfg_.max_wall_s - elapsed(), 0.001)
                                                      : 0);
  for (int turn = 1;; ++turn) {
    Step s =
        turn > cfg_.max_turns ? (res_.exit_reason = "max_turns", Step::end) : one_turn(turn, err);
    if (s == Step::fail) return false;
    if (s == Step::end) break;
  }
  finish();
  return true;
}

ParsedReply Run::parse(const std::string& text) const {
  if (cfg_.foreign) return cfg_.foreign->parse(text);
  return cfg_.mode == "agent" ? parse_agent_reply(text, cfg_.eval.backend)
                              : parse_direct_reply(text, cfg_.eval.backend);
}

std::string Run::extension() const {
  return cfg_.foreign ? cfg_.foreign->extension : eval::kernel_extension(cfg_.eval.backend);
}

// One model call and what follows it. ok: on to the next turn; end: the run is over
// (exit_reason set); fail: kforge failed (*err).
Step Run::one_turn(int turn, std::string* err) {
  if (turn > 1 && obs_.wants_menu()) {
    Step s = step_menu(turn, err);
    if (s != Step::ok) return s;
  }
  if (!budget_left(turn, "before the model call")) return Step::end;
  res_.turns = turn;
  size_t before = msgs_.size();
  llm::Reply reply;
  Step s = ask(turn, &reply);
  if (s == Step::cut) return after_cut(turn, "model call", before, "", err);
  if (s != Step::ok) return s;
  msgs_.push_back({"assistant", reply.text});
  ParsedReply pr = parse(reply.text);
  if (!pr.ok) {
    if (!format_error(turn, pr.error, err)) return Step::fail;
    return res_.exit_reason.empty() ? Step::ok : Step::end;
  }
  format_errors_ = 0;
  std::string source = pr.code;
  if (cfg_.mode == "agent") {
    bool submitted = false;
    s = command(turn, pr.code, &source, &submitted, err);
    if (s == Step::cut) return after_cut(turn, "agent command", before, "", err);
    if (s != Step::ok || !submitted) return s;
  }
  sandbox::Verdict v;
  s = evaluate(turn, source, &v, err);
  if (s == Step::cut)
    return after_cut(turn, stage_.rfind("compiling", 0) == 0 ? "compile" : "eval", before, source,
                     err);
  if (s != Step::ok) return s;
  if (target_met(v, cfg_.target)) {
    res_.exit_reason = "target";
    res_.target_met = true;
    return Step::end;
  }
  std::string feedback;
  if (!render_feedback(cfg_.prompts_dir, v, turn, cfg_.target, &feedback, err)) return Step::fail;
  if (!profile(turn, v, &feedback, err)) return Step::fail;
  if (sandbox::stop_requested()) return after_cut(turn, "eval", before, source, err);
  Decision d = obs_.between_turns(source, prev_source_, res_.best_source, v);
  prev_source_ = source;
  if (sandbox::interrupted()) return end_interrupted(turn, "menu");  // Ctrl-C at the menu
  tw_.event("decision", {{"turn", turn}, {"action", action_name(d.action)}});
  if (d.action == Action::retry)
    msgs_.resize(before);
  else
    msgs_.push_back({"user", feedback});
  return decide(turn + 1, d, err);
}

// The menu a person asked for between two steps (before turn's model call): a hint
// goes into the prompt about to be sent; accept and quit end the run; next and retry
// go on with it.
Step Run::step_menu(int turn, std::string* err) {
  Decision d = obs_.menu_between_steps(turn, res_.last_source, prev_source_);
  if (sandbox::interrupted()) return end_interrupted(turn, "menu");
  tw_.event("decision", {{"turn", turn}, {"action", action_name(d.action)}, {"after", "menu_key"}});
  return decide(turn, d, err);
}

// Accept and quit end the run; a hint goes into the prompt of turn `next_turn` (the
// last message).
Step Run::decide(int next_turn, const Decision& d, std::string* err) {
  if (d.action == Action::accept) return (res_.exit_reason = "accepted", Step::end);
  if (d.action == Action::quit) return (res_.exit_reason = "quit", Step::end);
  if (d.action == Action::hint && !d.hint.empty()) {
    std::string h;
    if (!render_prompt_file(cfg_.prompts_dir, "hint.md", {{"hint", d.hint}}, &h, err))
      return Step::fail;
    msgs_.back().content += h;
    tw_.event("hint", {{"turn", next_turn}, {"text", d.hint}});
    emit(next_turn, "hint", d.hint);
  }
  return Step::ok;
}

// A signal or the deadline stopped `phase` of the turn: its children are dead and
// nothing of it counts. The deadline ends the run; a signal asks the observer, which
// may resume (the turn is asked again, its reply forgotten).
Step Run::after_cut(int turn, const std::string& phase, size_t before, const std::string& current,
                    std::string* err) {
  if (!sandbox::interrupted()) {
    end_budget(turn, phase,
               {"max_wall", elapsed(), cfg_.max_wall_s, "the " + phase + " was stopped"});
    return Step::end;
  }
  int sig = sandbox::interrupt_signal();
  tw_.event(
      "interrupted",
      {{"turn", turn}, {"signal", sandbox::signal_name(sig)}, {"signo", sig}, {"phase", phase}});
  emit(turn, "interrupted", fmt::format("{} stopped the {}", sandbox::signal_name(sig), phase));
  if (!obs_.can_resume_after_interrupt()) return end_interrupted(turn, phase);
  sandbox::clear_interrupt();
  Decision d = obs_.interrupted(turn, phase, current, prev_source_);
  if (sandbox::interrupted()) return end_interrupted(turn, "menu");  // a Ctrl-C at its menu
  tw_.event("decision",
            {{"turn", turn}, {"action", action_name(d.action)}, {"after", "interrupted"}});
  msgs_.resize(before);
  return decide(turn + 1, d, err);
}

Step Run::end_interrupted(int turn, const std::string& phase) {
  res_.exit_reason = "interrupted";
  res_.interrupt_signal = sandbox::interrupt_signal();
  res_.interrupt_phase = phase;
  if (phase == "menu")
    tw_.event("interrupted", {{"turn", turn},
                              {"signal", sandbox::signal_name(res_.interrupt_signal)},
                              {"signo", res_.interrupt_signal},
                              {"phase", phase}});
  return Step::end;
}

void Run::end_budget(int turn, const std::string& phase, const BudgetEnd& b) {
  res_.exit_reason = b.name;
  res_.budget = b;
  tw_.event("budget", {{"turn", turn},
                       {"budget", b.name},
                       {"spent", b.spent},
                       {"limit", b.limit},
                       {"phase", phase},
                       {"note", b.note}});
  emit(turn, "budget", b.name + ": " + b.text());
}

// Before a model call: the budgets leave room for it, and req_cap_ is its output cap.
bool Run::budget_left(int turn, const std::string& phase) {
  Limits lim{cfg_.max_tokens, cfg_.max_cost_usd, cfg_.max_wall_s};
  Spent spent{res_.tokens_in + res_.tokens_out, res_.cost_usd, elapsed()};
  BudgetEnd b;
  if (next_call_cap(lim, spent, estimate_prompt_tokens(msgs_), model_.price(), &req_cap_, &b))
    return true;
  end_budget(turn, phase, b);
  return false;
}

void Run::emit(int turn, const std::string& phase, const std::string& detail, int64_t tokens,
               const sandbox::Verdict* v, const std::string& output) {
  TurnEvent e;
  e.turn = turn;
  e.phase = phase;
  e.detail = detail;
  e.output = output;
  e.tokens = tokens;
  e.verdict = v;
  e.cost_usd = res_.cost_usd;
  e.elapsed_s = elapsed();
  obs_.on_event(e);
}

void Run::log_prompt(int turn) {
  tw_.event("prompt", prompt_event(turn, logged_, msgs_));
  logged_ = msgs_;
}

void Run::finish() {
  res_.seconds = elapsed();
  std::string detail;
  tw_.event("summary", summary_json(res_, best_hash_, &detail));
  emit(res_.turns, "done", detail, res_.tokens_in + res_.tokens_out,
       res_.has_last ? &res_.last : nullptr);
}

}  // namespace detail

bool solve(const SolveConfig& cfg, Model& model, Observer& obs, trace::Writer& tw, SolveResult* out,
           std::string* err) {
  *out = SolveResult{};
  detail::Run run(cfg, model, obs, tw, out);
  if (run.go(err)) return true;
  // kforge, or the setup it runs on, failed: the trajectory still ends with a summary that
  // says so.
  out->exit_reason = out->setup_fault != SetupFault::none ? "setup_error" : "internal_error";
  tw.event("summary", failed_summary_json(*out, *err));
  return false;
}

}  // namespace agent
