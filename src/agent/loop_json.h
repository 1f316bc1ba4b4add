// agent/loop_json.h: what the solve loop writes into the trajectory as JSON: a prompt, a
// reply's usage, a decision's name and the run's summary (the format: src/trace/trace.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "agent/bash_env.h"
#include "agent/loop.h"

namespace agent {

nlohmann::json usage_json(const llm::Usage& u);

// "next", "hint", "accept", "retry", "quit", "rewind".
const char* action_name(Action a);

// The prompt event of `turn`: what is sent (msgs), as the part of the last prompt logged
// that is kept plus what is new (so a retry truncates).
nlohmann::json prompt_event(int turn, const std::vector<llm::Message>& logged,
                            const std::vector<llm::Message>& msgs);

// A reply's event; a failed model call's (llm_error, or llm_stopped when a signal or the
// deadline cut it).
nlohmann::json reply_event(int turn, const llm::Reply& r);
nlohmann::json llm_failure_event(int turn, const llm::Error& e, const llm::Reply& r);

// Agent mode: what a command gave back.
nlohmann::json observation_event(int turn, const BashResult& r);

// What the part of a (resumed) run that just ran spent: its totals less the earlier parts'.
Spend this_part(const SolveResult& r);

// The summary of a run that kforge itself failed (`message` says how).
nlohmann::json failed_summary_json(const SolveResult& r, const std::string& message);

// The summary event of a finished run; *detail gets its one-line reason for views
// ("max_cost: $0.0152 of --max-cost $0.015", "interrupted by SIGTERM during the eval").
nlohmann::json summary_json(const SolveResult& r, const std::string& best_hash,
                            std::string* detail);

}  // namespace agent
