// sandbox/rank/status.h: what a rank tells the host side while it runs (the status file)
// and when it dies (the crash file). The formats are the contract of sandbox/job.h:
//
//   <dir>/status/rank<R>        one JSON line, replaced atomically (tmp file + rename):
//     {"pid":123,"phase":"check","detail":"trial 0 call 2","in_candidate":true,
//      "since_ms":1712345678901,"limit_s":10}
//     since_ms is the wall-clock time (ms since the epoch) when the current limit window
//     began: a rank is overdue when now_ms > since_ms + 1000 * limit_s.
//   <dir>/status/rank<R>.crash  one line written by the fatal-signal handler:
//     "signal 11 (SIGSEGV) in check trial 0 call 2"
//     optionally followed by ": <note>" (e.g. the missing tensor's name).
#pragma once

#include <string>

#include "rank_status.h"

namespace sandbox::rank {

// Creates <dir>/status and preformats the paths the signal handler uses.
bool status_init(const std::string& dir, int rank, std::string* err);

// Rewrites the status file. `restart` begins a new limit window (since_ms = now);
// otherwise since_ms stays that of the previous call (the timing phase keeps one window
// while its detail changes per iteration).
void status_set(RankPhase phase, const std::string& detail, bool in_candidate, double limit_s,
                bool restart = true);

// The phase of the last status_set.
RankPhase status_phase();

// The phase and detail of the last status_set ("check trial 0 call 2").
std::string status_where();

// Writes the crash file's line for a death this process saw but did not die of: the
// candidate's process (the runner) killed by a signal.
void write_crash_file(const std::string& line);

// Installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT (on an alternate
// stack, so a stack overflow is reported too) that write the crash file and re-raise
// the signal with its default action.
void install_crash_handlers();

// Text the crash handler appends after the phase and detail (async-signal-safe to read).
void set_crash_note(const std::string& note);

// The kf::Tensors::missing_fn the sandbox installs: names the tensor and the known
// ones on stderr and in the crash file, then aborts. `known` is e.g. "x, y".
void set_known_tensors(const std::string& known);
[[noreturn]] void missing_tensor(const char* name);

long long now_ms();

}  // namespace sandbox::rank
