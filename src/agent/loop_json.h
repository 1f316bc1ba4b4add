// agent/loop_json.h: what the solve loop writes into the trajectory as JSON: a reply's
// usage and the run's summary (its format: src/trace/trace.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "agent/loop.h"

namespace agent {

nlohmann::json usage_json(const llm::Usage& u);

// The summary event of a finished run; *detail gets its one-line reason for views
// ("max_cost: $0.0152 of --max-cost $0.015", "interrupted by SIGTERM during the eval").
nlohmann::json summary_json(const SolveResult& r, const std::string& best_hash,
                            std::string* detail);

}  // namespace agent
