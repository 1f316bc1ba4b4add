// sandbox/deadline.h: a wall-clock deadline for everything kforge runs on behalf of one
// solve (its --max-wall budget). It is kept apart from interrupt.h on purpose: a budget
// running out is not the user asking kforge to stop, and the two end a run with
// different exit reasons and exit codes. run_process (process.h) kills its child's whole
// tree once the deadline passes (ProcessResult::deadline), and the model call under way
// (llm/http.cpp) is aborted the same way, so a budget is hard rather than checked only
// between turns.
#pragma once

namespace sandbox {

// From now on, seconds_from_now later is the deadline (replaces any earlier one).
void set_deadline(double seconds_from_now);

// No deadline any more.
void clear_deadline();

// True once a deadline is set and has passed.
bool deadline_passed();

// Seconds until the deadline (negative once passed); a huge value when none is set.
double deadline_left_s();

// What every long wait asks: the user interrupted, or the deadline passed.
bool stop_requested();

// A deadline for as long as a scope lasts (none for seconds <= 0).
struct DeadlineScope {
  explicit DeadlineScope(double seconds) {
    if (seconds > 0) set_deadline(seconds);
  }
  ~DeadlineScope() { clear_deadline(); }
  DeadlineScope(const DeadlineScope&) = delete;
  DeadlineScope& operator=(const DeadlineScope&) = delete;
};

}  // namespace sandbox
