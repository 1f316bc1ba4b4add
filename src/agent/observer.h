// agent/observer.h: how the solve loop reports progress and asks a person (or a test)
// what to do between turns. The loop calls on_event as each phase of a turn starts or
// ends; the terminal live view (src/cli/live.*) and the headless JSON printer implement
// it. between_turns is the only place the loop waits on a person.
#pragma once

#include <cstdint>
#include <string>

#include "sandbox/enum_names.h"
#include "sandbox/verdict.h"

namespace agent {

// What a turn event tells: command_output is a piece of a running command's output (in
// detail), command_rejected a command the person turned down (--confirm), profile a
// profiler's report on the candidate. The names are the headless JSON lines' "event".
enum class TurnPhase {
  waiting_model,
  streaming,
  reply,
  format_error,
  command,
  command_output,
  command_rejected,
  observation,
  evaluating,
  verdict,
  profile,
  hint,
  rewind,
  interrupted,
  budget,
  resumed,
  done
};

// The part of a turn a signal (or the wall-time budget) stopped; menu: the person's menu
// after such a stop, where a second Ctrl-C ends the run.
enum class TurnPart { model_call, compile, eval, agent_command, menu };

}  // namespace agent

namespace sandbox {
template <>
struct EnumNames<agent::TurnPhase> {
  static constexpr const char* what = "turn event";
  static constexpr const char* names[] = {
      "waiting_model",    "streaming",   "reply",      "format_error", "command", "command_output",
      "command_rejected", "observation", "evaluating", "verdict",      "profile", "hint",
      "rewind",           "interrupted", "budget",     "resumed",      "done"};
};
template <>
struct EnumNames<agent::TurnPart> {
  static constexpr const char* what = "part of a turn";
  static constexpr const char* names[] = {"model call", "compile", "eval", "agent command", "menu"};
};
}  // namespace sandbox

namespace agent {

KF_ENUM_JSON(TurnPhase)
KF_ENUM_JSON(TurnPart)

struct TurnEvent {
  int turn = 0;
  TurnPhase phase = TurnPhase::waiting_model;
  // streaming: the reply's text that arrived since the last streaming event; reply: the
  // whole reply; observation: "exit N"; hint: the hint's text; else the phase's words.
  std::string detail;
  // observation: the command's output (head and tail when long); verdict: the candidate's
  // source; resumed: the best kernel so far ("" if none)
  std::string output;
  int64_t tokens = 0;  // streaming: output tokens so far; verdict/done: tokens so far in the run
  const sandbox::Verdict* verdict = nullptr;  // verdict; resumed: the best so far (if any)
  double cost_usd = 0;                        // the run's cost so far
  double elapsed_s = 0;                       // since the run started
};

// rewind: the conversation goes back to just after an earlier turn's feedback, so that
// the next prompt goes on from that turn's kernel; what came after it is dropped (the
// trajectory keeps it).
enum class Action { next, hint, accept, retry, quit, rewind };

struct Decision {
  Action action = Action::next;
  std::string hint;  // Action::hint: appended to the next user prompt, marked as the user's
  int turn = 0;      // Action::rewind: the turn whose kernel to go on from
};

// Agent mode, --confirm: what a person made of a command before it runs.
struct CommandDecision {
  enum Kind { run, edit, reject } kind = run;
  std::string command;  // edit: the command to run instead
  std::string reason;   // reject: what the person told the model (may be empty)
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_event(const TurnEvent&) {}
  // After each evaluated candidate, before the next prompt. `current` is the candidate
  // just evaluated, `previous` the one before ("" if none), `best` the best so far ("" if
  // none is correct yet).
  virtual Decision between_turns(const std::string& current, const std::string& previous,
                                 const std::string& best, const sandbox::Verdict& last) {
    (void)current, (void)previous, (void)best, (void)last;
    return {};
  }
  // A signal (Ctrl-C, SIGTERM) stopped the turn's `phase` (any TurnPart but menu): the children are
  // dead, nothing was recorded as a verdict. When can_resume_after_interrupt() says so (the live
  // view, for a first Ctrl-C) the loop forgets the signal (sandbox::clear_interrupt) and asks
  // interrupted(): next and retry ask the model again for this turn, a hint is added to that
  // prompt, accept and quit end the run; a signal during that question ends it as interrupted.
  // Otherwise (headless, a second Ctrl-C) the run ends as interrupted at once. `current` is the
  // kernel being evaluated, if any.
  virtual bool can_resume_after_interrupt() { return false; }
  // Agent mode: before each command runs (the live view asks with --confirm).
  virtual CommandDecision confirm_command(int turn, const std::string& command) {
    (void)turn;
    return {CommandDecision::run, command, ""};
  }
  // Before every model call after the first: a person who asked to step in (the live
  // view's menu key) gets the menu now, between two steps rather than only after a
  // verdict; false: go on. `current` is the last candidate evaluated ("" if none).
  virtual bool wants_menu() { return false; }
  virtual Decision menu_between_steps(int turn, const std::string& current,
                                      const std::string& previous) {
    (void)turn, (void)current, (void)previous;
    return {};
  }
  virtual Decision interrupted(int turn, TurnPart phase, const std::string& current,
                               const std::string& previous) {
    (void)turn, (void)phase, (void)current, (void)previous;
    return {Action::quit, ""};
  }
};

}  // namespace agent
