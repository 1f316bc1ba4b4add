// trace/run.h: a trajectory's events as types (trace.h lists them): what `kforge
// replay`, the replay provider, sweeps and the tests read, instead of keys by name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/verdict.h"
#include "trace/trace.h"

namespace trace {

// Each typed event keeps `event`, its position in raw.events, so that a reader that walks
// the events in order (kforge show) takes the typed one where there is one.
struct CandidateEvent {
  size_t event = 0;
  int turn = 0;
  std::string file, sha256, source;
};

struct VerdictEvent {
  size_t event = 0;
  int turn = 0;
  std::string sha256;
  sandbox::Verdict verdict;
  double seconds = 0;
};

struct ReplyEvent {
  size_t event = 0;
  int turn = 0;
  std::string text, thinking, stop_reason = "stop", model, request_id;
  bool usage_reported = false;   // the event carried a usage object
  bool usage_estimated = false;  // counted from the text: the server reported none
  int64_t input_tokens = 0, output_tokens = 0;
  int64_t cache_read_tokens = 0, cache_write_tokens = 0;  // parts of input_tokens
  double cost_usd = 0, seconds = 0;
  int attempts = 0;
};

struct Run {
  Trajectory raw;  // every event, for what has no type here (prompts, commands, ...)
  std::vector<ReplyEvent> replies;
  std::vector<CandidateEvent> candidates;
  std::vector<VerdictEvent> verdicts;
};

// read_trajectory, then the typed events; an event of a known type that does not read
// (a verdict whose status is unknown, say) is an error naming its line.
bool read_run(const std::string& path, Run* out, std::string* err, std::string* warning = nullptr);

}  // namespace trace
