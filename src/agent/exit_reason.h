// agent/exit_reason.h: why a solve ended, as a type with one name table. The names are
// what trajectories, verdict.json's "solve" and sweeps' ledgers have always carried.
#pragma once

#include "sandbox/enum_names.h"

namespace agent {

enum class ExitReason {
  none,        // still running
  target,      // a kernel met the target
  accepted,    // the person accepted the last kernel (interactive)
  quit,        // the person quit
  max_turns,   // every turn was used
  max_tokens,  // a budget was spent (agent/budget.h names them alike)
  max_cost,
  max_wall,
  format_errors,   // too many replies without a kernel
  llm_error,       // the model's provider failed
  interrupted,     // a signal
  setup_error,     // solve() false: the person's setup (a foreign suite's evaluator said so)
  internal_error,  // solve() false: kforge
};

}  // namespace agent

template <>
struct sandbox::EnumNames<agent::ExitReason> {
  static constexpr const char* what = "exit reason";
  static constexpr const char* names[] = {"",
                                          "target",
                                          "accepted",
                                          "quit",
                                          "max_turns",
                                          "max_tokens",
                                          "max_cost",
                                          "max_wall",
                                          "format_errors",
                                          "llm_error",
                                          "interrupted",
                                          "setup_error",
                                          "internal_error"};
};

namespace agent {

KF_ENUM_JSON(ExitReason)

inline const char* exit_reason_name(ExitReason r) {
  return sandbox::enum_name(r);
}

}  // namespace agent
