// agent/loop_run.h: the state of one solve run (agent/loop.h), shared by the two files
// that make it up: agent/loop.cpp (a turn: budgets, the menu, interrupts, the end) and
// agent/loop_steps.cpp (the steps of a turn: the prompt, the model call, an agent command,
// the evaluation, the profile). Not for use outside them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agent/bash_env.h"
#include "agent/loop.h"
#include "agent/reply.h"

namespace agent::detail {

// What one step of a turn came to. cut: a signal or the deadline stopped it.
enum class Step { ok, cut, end, fail };

class Run {
 public:
  Run(const SolveConfig& c, Model& m, Observer& o, trace::Writer& w, SolveResult* r)
      : cfg_(c), model_(m), obs_(o), tw_(w), res_(*r) {}

  bool go(std::string* err);

 private:
  double elapsed() const { return tw_.elapsed(); }
  // Since this part of the run began (a resumed run's budgets count from there).
  double part_elapsed() const { return elapsed() - res_.prior.seconds; }

  // --resume: the earlier parts' conversation, candidates and spend; the `resumed` event.
  void start_resumed();

  // A user message after a reply (feedback, a format error, an observation): logged as it
  // is added, so that a run killed before its next prompt resumes with it.
  void push_user(int turn, const std::string& content);

  bool first_messages(std::string* sys, std::string* task, std::string* err);

  ParsedReply parse(const std::string& text) const;

  std::string extension() const;

  // One model call and what follows it. ok: on to the next turn; end: the run is over
  // (exit_reason set); fail: kforge failed (*err).
  Step one_turn(int turn, std::string* err);

  // The menu a person asked for between two steps (before turn's model call): a hint
  // goes into the prompt about to be sent; accept and quit end the run; next and retry
  // go on with it.
  Step step_menu(int turn, std::string* err);

  // Accept and quit end the run; a hint goes into the prompt of turn `next_turn` (the
  // last message).
  Step decide(int next_turn, const Decision& d, std::string* err);

  // The person went back to turn `to`'s kernel: the conversation is cut to just after its
  // feedback, so the prompt of `next_turn` goes on from it.
  void rewind(int next_turn, int to);

  // A signal or the deadline stopped `phase` of the turn: its children are dead and
  // nothing of it counts. The deadline ends the run; a signal asks the observer, which
  // may resume (the turn is asked again, its reply forgotten).
  Step after_cut(int turn, TurnPart phase, size_t before, const std::string& current,
                 std::string* err);

  Step end_interrupted(int turn, TurnPart phase);

  void end_budget(int turn, const std::string& phase, const BudgetEnd& b);

  // Before a model call: the budgets leave room for it, and req_cap_ is its output cap.
  bool budget_left(int turn, const std::string& phase);

  void emit(int turn, TurnPhase phase, const std::string& detail, int64_t tokens = 0,
            const sandbox::Verdict* v = nullptr, const std::string& output = "");

  void log_prompt(int turn);

  Step ask(int turn, llm::Reply* reply);

  bool format_error(int turn, const std::string& why, std::string* err);

  // What the commands are told about. Not the problem's folder: it holds the expert
  // solutions and examples, and the prompt already carries all the model may read of it.
  bool init_env(std::string* err);

  // Agent mode: runs one command; on a submission, *source is the workspace's kernel.
  Step command(int turn, const std::string& proposed, std::string* source, bool* submitted,
               std::string* err);

  // --confirm: the person rejected the command; it never ran, and the model is told so
  // (with the person's reason, when one was given) as that turn's observation.
  Step reject_command(int turn, const std::string& reason, std::string* err);

  Step evaluate(int turn, const std::string& source, sandbox::Verdict* v, std::string* err);

  // --profile: the candidate once more under the tool its verdict calls for; what it found
  // joins the feedback, what ran and what it cost goes to the trajectory.
  bool profile(int turn, const sandbox::Verdict& v, std::string* feedback, std::string* err);

  void finish();

  const SolveConfig& cfg_;
  Model& model_;
  Observer& obs_;
  trace::Writer& tw_;
  SolveResult& res_;
  std::vector<llm::Message> msgs_, logged_;
  std::vector<sandbox::Verdict> verdicts_;
  std::map<int, std::string> sources_, feedback_;  // by turn: where a rewind can go back to
  std::string prev_source_, best_hash_;
  std::string stage_;    // the evaluation's stage, for which phase a signal stopped
  int64_t req_cap_ = 0;  // the next call's output cap from the budgets (0: none)
  int format_errors_ = 0;
  BashEnv env_;
};

}  // namespace agent::detail
