// trace/trace.h: trajectories. One JSONL file per solve run: a header line (problem,
// model, config, versions, topology), then one event per line, each flushed as it is
// written so that a crash loses nothing, ending with a summary. `kforge show`,
// `kforge replay`, the replay provider and sweeps' reports read them back.
//
// Every line is a JSON object with "type" and "t" (seconds since the run started):
//   header        format, problem, model, mode, config{...}, versions{...}, topology{...},
//                 started (UTC ISO 8601)
//   prompt        turn, keep, new[{role, content}]: the messages sent are the first `keep`
//                 messages of the previous prompt, then `new` (so a retry truncates)
//   reply         turn, text, thinking, stop_reason, usage{...}, cost_usd, attempts,
//                 seconds, model, request_id
//   format_error  turn, error, consecutive
//   command       turn, command                    (agent mode: the model's)
//   command_edited   turn, command  (--confirm: the person's command ran instead)
//   command_rejected turn, reason   (--confirm: the command did not run; no observation)
//   observation   turn, returncode, output, elided_chars, timed_out, submitted (agent mode)
//   candidate     turn, file, sha256, source
//   verdict       turn, sha256, verdict{verdict_json}, seconds
//   hint          turn, text          (the user's, appended to the prompt of `turn`)
//   decision      turn, action        (next | hint | accept | retry | quit | rewind)
//   rewind        turn, to_turn, done, messages: the person went back to to_turn's kernel
//                 (the live view's `g N`): the conversation is cut to just after its
//                 feedback (done false: that turn was not in it, nothing changed)
//   decision      (after an interrupt the live view resumed from: after "interrupted";
//                 at the menu the m key asked for before turn's model call: "menu_key")
//   llm_error     turn, kind, message, http_status, attempts
//   llm_stopped   turn, kind (interrupted | deadline), message, attempts, seconds
//   interrupted   turn, signal ("SIGTERM"), signo, phase (model call | compile | eval |
//                 agent command | menu): what the signal stopped; nothing of it counts
//   budget        turn, budget (max_tokens | max_cost | max_wall), spent, limit, phase,
//                 note: the budget that ended the run, and where
//   internal_error turn, message: kforge failed, and the run ends
//   setup_error   turn, message, problem_only: the machine's setup cannot run the suite's
//                 jobs (a PKB job's python without torch or CUDA, ...), or with
//                 problem_only this problem's (its reference fails here); the run ends,
//                 exit code 2
//   feedback      turn, content: the user message added after turn's reply (the verdict's
//                 feedback, a format error, an observation), logged as it is added; the
//                 next prompt carries it unless a retry drops it
//   resumed       part, from_turn, after (how the part before ended, or "killed"),
//                 prior{turns, candidates, tokens_in, tokens_out, ..., cost_usd, seconds},
//                 limits{max_turns, ...}: `kforge solve --resume` appended what follows;
//                 its budgets are the resumed part's, and every later summary holds the
//                 totals of all parts with part and this_part{...}
//   summary       exit_reason, target_met, best{turn, sha256, status, speedup,
//                 median_ms, file}, turns, candidates, tokens_in, tokens_out,
//                 tokens_cache_read, tokens_cache_write (parts of tokens_in), cost_usd,
//                 seconds; budget{name, spent, limit, text} when a budget ended it;
//                 interrupt{signal, signo, phase} when a signal did
#pragma once

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trace/event_type.h"

namespace trace {

inline constexpr const char* kFormat = "kforge-trajectory-1";

class Writer {
 public:
  Writer() = default;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer();

  // Creates <runs_dir>/<problem>/<yyyymmdd-hhmmss>-<model>-<rand>.jsonl (the model name
  // made file-safe). False with *err when it cannot.
  bool open(const std::string& runs_dir, const std::string& problem, const std::string& model,
            std::string* err);
  // Creates exactly `path` (its folder must exist).
  bool open_path(const std::string& path, std::string* err);
  // A resumed run (kforge solve --resume): appends to the trajectory at `path`, after
  // cutting off a last line a killed run left unfinished; its events' "t" go on from
  // `prior_seconds`, the time the earlier parts took.
  bool open_append(const std::string& path, double prior_seconds, std::string* err);

  // The header: `fields` plus type, format and started.
  bool header(nlohmann::json fields);
  // One event: `fields` plus type and t. Flushed before returning.
  bool event(EventType type, nlohmann::json fields);
  void close();

  const std::string& path() const { return path_; }
  bool ok() const { return f_ != nullptr && !failed_; }
  double elapsed() const;

 private:
  bool write_line(const nlohmann::json& j);
  std::FILE* f_ = nullptr;
  std::string path_;
  bool failed_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

struct Trajectory {
  std::string path;
  nlohmann::json header;
  std::vector<nlohmann::json> events;  // after the header, in order
  bool complete = false;               // ends with a summary
  const nlohmann::json* summary() const;
  // Events of one type, in order.
  std::vector<const nlohmann::json*> of_type(EventType type) const;
};

// Reads a trajectory. A torn last line (a crash mid-write) is dropped with a note in
// *warning; any other bad line, or a missing header, is an error naming the line.
bool read_trajectory(const std::string& path, Trajectory* out, std::string* err,
                     std::string* warning = nullptr);

// The messages of each prompt event, rebuilt (what was sent at each request).
std::vector<std::vector<std::pair<std::string, std::string>>> rebuild_prompts(const Trajectory& t);

}  // namespace trace
