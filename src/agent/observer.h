// agent/observer.h: how the solve loop reports progress and asks a person (or a test)
// what to do between turns. The loop calls on_event as each phase of a turn starts or
// ends; the terminal live view (src/cli/live.*) and the headless JSON printer implement
// it. between_turns is the only place the loop waits on a person.
#pragma once

#include <cstdint>
#include <string>

#include "sandbox/verdict.h"

namespace agent {

struct TurnEvent {
  int turn = 0;
  // waiting_model | streaming | evaluating | verdict | format_error | command |
  // observation | done
  std::string phase;
  std::string detail;
  int64_t tokens = 0;  // streaming: output tokens so far; verdict/done: tokens so far in the run
  const sandbox::Verdict* verdict = nullptr;  // verdict phase only
  double cost_usd = 0;                        // the run's cost so far
  double elapsed_s = 0;                       // since the run started
};

enum class Action { next, hint, accept, retry, quit };

struct Decision {
  Action action = Action::next;
  std::string hint;  // Action::hint: appended to the next user prompt, marked as the user's
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
};

}  // namespace agent
