// cli/event_text.h: the words a person reads for the solve loop's events, the same on a
// terminal (live.h) and in a log without one (solve_text.h): one status line an event, and
// why a run ended.
#pragma once

#include <string>

#include "agent/exit_reason.h"
#include "agent/observer.h"

namespace cli {

// The one-line status of an event (no escape codes) for a log without a terminal;
// `model` names the model when the event does not ("waiting on <model>").
std::string status_text(const agent::TurnEvent& ev, const std::string& model);

// What an exit reason means, in words (target: "a kernel met the target").
std::string exit_reason_text(agent::ExitReason exit_reason);

}  // namespace cli
