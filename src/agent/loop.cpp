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
  if (cfg_.resume) {
    start_resumed();
  } else {
    std::string sys, task;
    if (!first_messages(&sys, &task, err)) return false;
    msgs_ = {{"system", sys}, {"user", task}};
  }
  if (cfg_.mode == Mode::agent && !init_env(err)) return false;
  // The run's --max-wall as kforge's deadline, for as long as the run (part) lasts.
  sandbox::DeadlineScope deadline(
      cfg_.max_wall_s > 0 ? std::max(cfg_.max_wall_s - part_elapsed(), 0.001) : 0);
  const int first = res_.prior.turns + 1, last = res_.prior.turns + cfg_.max_turns;
  for (int turn = first;; ++turn) {
    Step s =
        turn > last ? (res_.exit_reason = ExitReason::max_turns, Step::end) : one_turn(turn, err);
    if (s == Step::fail) return false;
    if (s == Step::end) break;
  }
  finish();
  return true;
}

void Run::start_resumed() {
  const ResumeFrom& r = *cfg_.resume;
  msgs_ = r.messages;
  logged_ = r.logged;
  verdicts_ = r.verdicts;
  sources_ = r.sources, feedback_ = r.feedback;
  prev_source_ = r.last_source;
  best_hash_ = r.best_hash;
  res_.part = r.part;
  res_.prior = r.spent;
  res_.turns = r.spent.turns, res_.candidates = r.spent.candidates;
  res_.tokens_in = r.spent.tokens_in, res_.tokens_out = r.spent.tokens_out;
  res_.tokens_cache_read = r.spent.tokens_cache_read;
  res_.tokens_cache_write = r.spent.tokens_cache_write;
  res_.cost_usd = r.spent.cost_usd;
  res_.tokens_estimated = r.spent.tokens_estimated;
  res_.has_best = r.has_best, res_.best = r.best, res_.best_turn = r.best_turn;
  res_.best_source = r.best_source, res_.best_file = r.best_file;
  res_.has_last = r.has_last, res_.last = r.last, res_.last_turn = r.last_turn;
  res_.last_source = r.last_source;
  tw_.event(trace::EventType::resumed, {{"part", r.part},
                                        {"from_turn", r.spent.turns + 1},
                                        {"after", r.how},
                                        {"prior", spend_json(r.spent)},
                                        {"limits",
                                         {{"max_turns", cfg_.max_turns},
                                          {"max_tokens", cfg_.max_tokens},
                                          {"max_cost_usd", cfg_.max_cost_usd},
                                          {"max_wall_s", cfg_.max_wall_s}}}});
  emit(r.spent.turns, TurnPhase::resumed,
       fmt::format("part {}: resumed after turn {} ({})", r.part, r.spent.turns, r.how), 0,
       r.has_best ? &r.best : nullptr, r.best_source);
}

void Run::push_user(int turn, const std::string& content) {
  tw_.event(trace::EventType::feedback, {{"turn", turn}, {"content", content}});
  msgs_.push_back({"user", content});
}

ParsedReply Run::parse(const std::string& text) const {
  if (cfg_.foreign) return cfg_.foreign->parse(text);
  return cfg_.mode == Mode::agent ? parse_agent_reply(text, cfg_.eval.settings.backend)
                                  : parse_direct_reply(text, cfg_.eval.settings.backend);
}

std::string Run::extension() const {
  return cfg_.foreign ? cfg_.foreign->extension
                      : eval::kernel_extension(cfg_.eval.settings.backend);
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
  if (s == Step::cut) return after_cut(turn, TurnPart::model_call, before, "", err);
  if (s != Step::ok) return s;
  msgs_.push_back({"assistant", reply.text});
  ParsedReply pr = parse(reply.text);
  if (!pr.ok) {
    if (!format_error(turn, pr.error, err)) return Step::fail;
    return res_.exit_reason == ExitReason::none ? Step::ok : Step::end;
  }
  format_errors_ = 0;
  std::string source = pr.code;
  if (cfg_.mode == Mode::agent) {
    bool submitted = false;
    s = command(turn, pr.code, &source, &submitted, err);
    if (s == Step::cut) return after_cut(turn, TurnPart::agent_command, before, "", err);
    if (s != Step::ok || !submitted) return s;
  }
  sandbox::Verdict v;
  s = evaluate(turn, source, &v, err);
  if (s == Step::cut)
    return after_cut(turn, stage_.rfind("compiling", 0) == 0 ? TurnPart::compile : TurnPart::eval,
                     before, source, err);
  if (s != Step::ok) return s;
  if (target_met(v, cfg_.target)) {
    res_.exit_reason = ExitReason::target;
    res_.target_met = true;
    return Step::end;
  }
  std::string feedback;
  if (!render_feedback(cfg_.prompts_dir, v, turn, cfg_.target, &feedback, err)) return Step::fail;
  if (!profile(turn, v, &feedback, err)) return Step::fail;
  if (sandbox::stop_requested()) return after_cut(turn, TurnPart::eval, before, source, err);
  // Logged before the menu: a run killed there resumes with it (as after `next`).
  push_user(turn, feedback);
  sources_[turn] = source, feedback_[turn] = feedback;
  Decision d = obs_.between_turns(source, prev_source_, res_.best_source, v);
  prev_source_ = source;
  if (sandbox::interrupted()) return end_interrupted(turn, TurnPart::menu);  // Ctrl-C at the menu
  tw_.event(trace::EventType::decision, {{"turn", turn}, {"action", action_name(d.action)}});
  if (d.action == Action::retry) msgs_.resize(before);
  return decide(turn + 1, d, err);
}

// The menu a person asked for between two steps (before turn's model call): a hint
// goes into the prompt about to be sent; accept and quit end the run; next and retry
// go on with it.
Step Run::step_menu(int turn, std::string* err) {
  Decision d = obs_.menu_between_steps(turn, res_.last_source, prev_source_);
  if (sandbox::interrupted()) return end_interrupted(turn, TurnPart::menu);
  tw_.event(trace::EventType::decision,
            {{"turn", turn}, {"action", action_name(d.action)}, {"after", "menu_key"}});
  return decide(turn, d, err);
}

// Accept and quit end the run; a hint goes into the prompt of turn `next_turn` (the
// last message).
Step Run::decide(int next_turn, const Decision& d, std::string* err) {
  // Only a kernel that was evaluated can be accepted (the menu says so; this is the floor).
  if (d.action == Action::accept)
    return (res_.exit_reason = res_.has_last ? ExitReason::accepted : ExitReason::quit, Step::end);
  if (d.action == Action::rewind) rewind(next_turn, d.turn);
  if (d.action == Action::quit) return (res_.exit_reason = ExitReason::quit, Step::end);
  if (d.action == Action::hint && !d.hint.empty()) {
    std::string h;
    if (!render_prompt_file(cfg_.prompts_dir, "hint.md", {{"hint", d.hint}}, &h, err))
      return Step::fail;
    msgs_.back().content += h;
    tw_.event(trace::EventType::hint, {{"turn", next_turn}, {"text", d.hint}});
    emit(next_turn, TurnPhase::hint, d.hint);
  }
  return Step::ok;
}

void Run::rewind(int next_turn, int to) {
  auto fb = feedback_.find(to);
  if (fb == feedback_.end() || !rewind_messages(&msgs_, fb->second)) {
    tw_.event(trace::EventType::rewind, {{"turn", next_turn}, {"to_turn", to}, {"done", false}});
    emit(next_turn, TurnPhase::rewind,
         fmt::format("turn {}'s kernel is not in the conversation (no such candidate, or a retry "
                     "dropped it): going on from here",
                     to));
    return;
  }
  prev_source_ = sources_[to];
  tw_.event(trace::EventType::rewind,
            {{"turn", next_turn}, {"to_turn", to}, {"done", true}, {"messages", msgs_.size()}});
  emit(next_turn, TurnPhase::rewind,
       fmt::format("the prompt of turn {} goes on from turn {}'s kernel; "
                   "what came after it is dropped from the conversation",
                   next_turn, to));
}

// A signal or the deadline stopped `phase` of the turn: its children are dead and
// nothing of it counts. The deadline ends the run; a signal asks the observer, which
// may resume (the turn is asked again, its reply forgotten).
Step Run::after_cut(int turn, TurnPart phase, size_t before, const std::string& current,
                    std::string* err) {
  const std::string part = sandbox::enum_name(phase);
  if (!sandbox::interrupted()) {
    end_budget(turn, part,
               {"max_wall", part_elapsed(), cfg_.max_wall_s, "the " + part + " was stopped"});
    return Step::end;
  }
  int sig = sandbox::interrupt_signal();
  tw_.event(
      trace::EventType::interrupted,
      {{"turn", turn}, {"signal", sandbox::signal_name(sig)}, {"signo", sig}, {"phase", part}});
  emit(turn, TurnPhase::interrupted,
       fmt::format("{} stopped the {}", sandbox::signal_name(sig), part));
  if (!obs_.can_resume_after_interrupt()) return end_interrupted(turn, phase);
  sandbox::clear_interrupt();
  Decision d = obs_.interrupted(turn, phase, current, prev_source_);
  if (sandbox::interrupted()) return end_interrupted(turn, TurnPart::menu);  // a Ctrl-C at its menu
  tw_.event(trace::EventType::decision,
            {{"turn", turn}, {"action", action_name(d.action)}, {"after", "interrupted"}});
  msgs_.resize(before);
  return decide(turn + 1, d, err);
}

Step Run::end_interrupted(int turn, TurnPart phase) {
  res_.exit_reason = ExitReason::interrupted;
  res_.interrupt_signal = sandbox::interrupt_signal();
  res_.interrupt_phase = phase;
  if (phase == TurnPart::menu)
    tw_.event(trace::EventType::interrupted,
              {{"turn", turn},
               {"signal", sandbox::signal_name(res_.interrupt_signal)},
               {"signo", res_.interrupt_signal},
               {"phase", sandbox::enum_name(phase)}});
  return Step::end;
}

void Run::end_budget(int turn, const std::string& phase, const BudgetEnd& b) {
  // The budgets are named as the reasons are (agent/budget.h); an unknown one is kforge's.
  if (!sandbox::parse_enum(b.name, &res_.exit_reason))
    res_.exit_reason = ExitReason::internal_error;
  res_.budget = b;
  tw_.event(trace::EventType::budget, {{"turn", turn},
                                       {"budget", b.name},
                                       {"spent", b.spent},
                                       {"limit", b.limit},
                                       {"phase", phase},
                                       {"note", b.note}});
  emit(turn, TurnPhase::budget, b.name + ": " + b.text());
}

// Before a model call: the budgets leave room for it, and req_cap_ is its output cap.
bool Run::budget_left(int turn, const std::string& phase) {
  Limits lim{cfg_.max_tokens, cfg_.max_cost_usd, cfg_.max_wall_s};
  // A resumed run's budgets are for this part: what the earlier parts spent is not counted.
  Spent spent{res_.tokens_in + res_.tokens_out - res_.prior.tokens_in - res_.prior.tokens_out,
              res_.cost_usd - res_.prior.cost_usd, part_elapsed()};
  BudgetEnd b;
  if (next_call_cap(lim, spent, estimate_prompt_tokens(msgs_), model_.price(), &req_cap_, &b))
    return true;
  end_budget(turn, phase, b);
  return false;
}

void Run::emit(int turn, TurnPhase phase, const std::string& detail, int64_t tokens,
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
  tw_.event(trace::EventType::prompt, prompt_event(turn, logged_, msgs_));
  logged_ = msgs_;
}

void Run::finish() {
  res_.seconds = elapsed();
  std::string detail;
  tw_.event(trace::EventType::summary, summary_json(res_, best_hash_, &detail));
  emit(res_.turns, TurnPhase::done, detail, res_.tokens_in + res_.tokens_out,
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
  out->exit_reason =
      out->setup_fault != SetupFault::none ? ExitReason::setup_error : ExitReason::internal_error;
  out->seconds = tw.elapsed();
  tw.event(trace::EventType::summary, failed_summary_json(*out, *err));
  return false;
}

}  // namespace agent
