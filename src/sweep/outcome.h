// src/sweep/outcome.h: what one finished sample came to, read from its folder: the
// verdict.json its `kforge solve --headless` wrote and the trajectory that names.
#pragma once

#include <string>

#include "sweep/ledger.h"

namespace sweep {

// Fills r's outcome and sets r->state: "done" when the solve ran to an outcome (exit 0
// or 1 with its verdict.json), "not_runnable" when it said the problem's reference fails
// on this setup (exit 2, solve.error "problem_not_runnable") or that the builtin cannot
// write it (solve.error "builtin_unsupported"), else "failed" (kforge or the
// provider failed, a signal stopped it, or it left no verdict); r->message says why, with
// the tail of `output`, the child's output, where that helps.
void read_outcome(const std::string& dir, int exit_code, const std::string& output, Record* r);

// The first verdict that says "correct" in a trajectory: its turn and the tokens and
// dollars of the replies up to it. False (turn 0) when there is none or the file does
// not read (*err then says why).
struct FirstCorrect {
  int turn = 0;
  long long tokens = 0;
  double cost_usd = 0;
};
bool first_correct(const std::string& trajectory, FirstCorrect* out, std::string* err);

}  // namespace sweep
