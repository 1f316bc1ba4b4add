// sandbox/rank_status.h: the status file's line (job.h: <dir>/status/rank<R>), one type
// for the rank that writes it and the host side that reads it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace sandbox {

// A rank's phases, in the order it passes them (rank/main.cpp); the status line names them.
enum class RankPhase { bootstrap, build, load, setup, check, time, report, done };

NLOHMANN_JSON_SERIALIZE_ENUM(RankPhase, {{RankPhase::bootstrap, "bootstrap"},
                                         {RankPhase::build, "build"},
                                         {RankPhase::load, "load"},
                                         {RankPhase::setup, "setup"},
                                         {RankPhase::check, "check"},
                                         {RankPhase::time, "time"},
                                         {RankPhase::report, "report"},
                                         {RankPhase::done, "done"}})

inline const char* rank_phase_name(RankPhase p) {
  static const char* const kNames[] = {"bootstrap", "build", "load",   "setup",
                                       "check",     "time",  "report", "done"};
  return kNames[static_cast<int>(p)];
}

struct RankStatusLine {
  int pid = 0;
  RankPhase phase = RankPhase::bootstrap;
  std::string detail;
  bool in_candidate = false;
  long long since_ms = 0;  // wall clock (ms since the epoch) when the limit window began
  double limit_s = 0;
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankStatusLine, pid, phase, detail, in_candidate,
                                                since_ms, limit_s)

// False with *err for text that is not such a line (a file caught mid-replace cannot be:
// it is replaced by a rename).
inline bool parse_rank_status(const std::string& text, RankStatusLine* out, std::string* err) {
  try {
    *out = nlohmann::json::parse(text).get<RankStatusLine>();
    return true;
  } catch (const std::exception& e) {
    *err = std::string("not a rank status line: ") + e.what();
    return false;
  }
}

// status/rank<R>.exit: how a rank's process ended, written by the process that started it
// once it had (rank/reaper.h). The one record of an end no handler in the rank sees: a
// SIGKILL, an exit() from a library, the kernel's OOM killer.
struct RankExit {
  int pid = 0;
  int exit_code = -1;      // when it exited
  int signal = 0;          // when a signal ended it
  long long ended_ms = 0;  // wall clock (ms since the epoch): the first rank to end is the cause
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankExit, pid, exit_code, signal, ended_ms)

}  // namespace sandbox
