// agent/loop.h: the solve loop. The conversation is the state: each turn sends the
// messages so far, parses the reply (a kernel, or in agent mode one bash command),
// evaluates the candidate through eval::evaluate_file, and appends the verdict's
// feedback as the next user message, until the target is met or a budget is spent.
// Everything that happens goes to the trajectory as it happens.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/budget.h"
#include "agent/exit_reason.h"
#include "agent/mode.h"
#include "agent/model.h"
#include "agent/observer.h"
#include "agent/profile_step.h"
#include "agent/reply.h"
#include "agent/resume.h"
#include "agent/setup_fault.h"
#include "eval/eval.h"
#include "sandbox/verdict.h"
#include "suite/topology.h"
#include "trace/trace.h"

namespace agent {

// A suite with problems of its own (a ParallelKernelBench checkout, src/pkb/): its prompts,
// its candidates' language and its evaluator take the place of the native problem's.
// Direct mode only. The feedback comes from cfg.prompts_dir's templates as for any verdict.
struct ForeignSuite {
  std::string suite;    // "pkb:PATH", for the trajectory
  std::string problem;  // the problem's name, for the trajectory
  std::string system_prompt, task_prompt;
  std::string extension;  // of a candidate's file, e.g. ".py"
  std::function<ParsedReply(const std::string& reply)> parse;
  // A verdict for the candidate in `file`; false (with *err) when none came: kforge failed,
  // or (*fault set) the user's setup cannot run the suite's jobs or this problem's.
  std::function<bool(const std::string& file, sandbox::Verdict* v, std::string* err,
                     SetupFault* fault)>
      evaluate;
};

struct SolveConfig {
  eval::EvalConfig eval;
  std::shared_ptr<const ForeignSuite> foreign;  // null: the native problem in `eval`
  Mode mode = Mode::direct;
  double target = 1.0;        // speedup over the baseline (where one can be measured)
  int max_turns = 10;         // model calls
  int64_t max_tokens = 0;     // input + output tokens over the run; 0: no limit
  double max_cost_usd = 0;    // 0: no limit
  double max_wall_s = 0;      // 0: no limit
  int max_format_errors = 3;  // in a row
  int reply_max_tokens = 0;   // per reply; 0: the provider's
  int64_t llm_seed = -1;      // >= 0: every request's sampling seed (a sweep's sample)
  std::string workspace;      // where candidates are written (turn_<n>.cu); created
  std::string prompts_dir;
  suite::Topology topology;
  std::string baseline_time;           // for the task prompt: measured, or why not
  double command_timeout_s = 120;      // agent mode: one command
  std::vector<std::string> agent_env;  // agent mode: extra "K=V" for the commands
  // What a verdict sends under a GPU tool before the next prompt (agent/profile_step.h).
  ProfileMode profile = ProfileMode::never;
  // --resume: the earlier parts of this run (agent/resume.h); null for a fresh run. The
  // budgets above are then limits for the resumed part alone.
  std::shared_ptr<const ResumeFrom> resume;
};

struct SolveResult {
  ExitReason exit_reason = ExitReason::none;  // agent/exit_reason.h
  bool target_met = false;
  int turns = 0, candidates = 0;
  int64_t tokens_in = 0, tokens_out = 0;
  // Parts of tokens_in: read from the provider's prompt cache (priced lower) and written
  // to it (Anthropic's cache creation, priced higher); cost_usd prices each as such.
  int64_t tokens_cache_read = 0, tokens_cache_write = 0;
  double cost_usd = 0, seconds = 0;
  bool tokens_estimated = false;  // some reply's usage was counted from text (llm::Usage)
  bool has_best = false;          // a correct candidate exists
  int best_turn = 0;
  std::string best_source, best_file;
  sandbox::Verdict best;
  bool has_last = false;
  sandbox::Verdict last;  // the last candidate's verdict
  std::string last_source;
  int last_turn = 0;
  llm::Error llm_error;      // exit_reason llm_error
  BudgetEnd budget;          // exit_reason max_tokens | max_cost | max_wall: spent vs limit
  int interrupt_signal = 0;  // exit_reason interrupted: the signal (SIGINT 2, SIGTERM 15)
  TurnPart interrupt_phase = TurnPart::model_call;  // where exit_reason is interrupted
  // solve() failed on the user's setup (a foreign suite's evaluator said so), not kforge.
  SetupFault setup_fault = SetupFault::none;
  // A resumed run: which part this is, and what the earlier parts spent (the fields above
  // are totals over every part).
  int part = 1;
  Spend prior;
};

// False (with *err) only when kforge itself failed: a template, the workspace, the
// sandbox (a baseline that does not build). Model errors end the run with
// exit_reason "llm_error"; bad candidates are verdicts. A signal (sandbox/interrupt.h)
// stops the model call, command or eval under way and, unless the observer resumes,
// ends the run as "interrupted"; --max-wall is a deadline (sandbox/deadline.h) for the
// whole run, model calls and evals included. Either way the trajectory gets the event
// and the summary.
bool solve(const SolveConfig& cfg, Model& model, Observer& obs, trace::Writer& tw, SolveResult* out,
           std::string* err);

// The config part of the trajectory header.
nlohmann::json solve_config_json(const SolveConfig& cfg);

}  // namespace agent
