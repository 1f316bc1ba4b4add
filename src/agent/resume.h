// agent/resume.h: a solve run continued where it stopped (`kforge solve --resume RUN`).
// Everything comes from the trajectory on disk, which is written as things happen, so a
// run killed with SIGKILL resumes as well as one that ended with a summary: the
// conversation as the next prompt would have sent it, the candidates (best and last),
// and what the earlier parts spent. The resumed part appends to the same trajectory,
// after a `resumed` event, and its budgets (--max-turns, --max-tokens, --max-cost,
// --max-wall) are limits for that part alone; the summary holds the totals of all parts.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "llm/provider.h"
#include "sandbox/verdict.h"
#include "trace/run.h"

namespace agent {

// What a run (all its parts) has spent.
struct Spend {
  int turns = 0, candidates = 0;
  int64_t tokens_in = 0, tokens_out = 0, tokens_cache_read = 0, tokens_cache_write = 0;
  double cost_usd = 0, seconds = 0;
  bool tokens_estimated = false;  // some earlier reply's usage was counted from text
};

struct ResumeFrom {
  int part = 2;  // the part about to run (2 for the first resume)
  Spend spent;   // by the earlier parts
  // The conversation the next prompt continues, and the last prompt as logged (the next
  // prompt event's `keep` is counted against it).
  std::vector<llm::Message> messages, logged;
  std::vector<sandbox::Verdict> verdicts;  // every candidate's, in order (builtin's history)
  bool has_best = false, has_last = false;
  int best_turn = 0, last_turn = 0;
  sandbox::Verdict best, last;
  std::string best_source, best_file, best_hash, last_source;
  std::string how;  // how the earlier part ended: its exit_reason, or "killed" (no summary)
  // Each evaluated turn's kernel and the feedback that followed it: where a rewind at the
  // menu can go back to.
  std::map<int, std::string> sources, feedback;
};

// A rewind: the conversation cut just after the last user message that begins with
// `feedback` (a hint may have been added to it). False, and msgs as they were, when no
// message does (a retry dropped that turn).
bool rewind_messages(std::vector<llm::Message>* msgs, const std::string& feedback);

// The state to resume `run` from. prompts_dir renders what the trajectory does not hold
// word for word (a hint's wrapping; the feedback of a verdict whose feedback was never
// logged). False with *err naming the trajectory when it has no prompt to continue.
bool resume_from(const trace::Run& run, const std::string& prompts_dir, double target,
                 ResumeFrom* out, std::string* err);

nlohmann::json spend_json(const Spend& s);

}  // namespace agent
