// src/sweep/ledger.h: a sweep's record of its samples, one JSON line per event, appended
// and fsync'd as it happens (DIR/ledger.jsonl).
//
// Why a log and not SQLite: every writer appends whole lines with one write(2) to a file
// opened O_APPEND, so a kill -9 leaves at most one torn last line, which the reader
// skips; several writers (Slurm array tasks on a shared folder) each append to a file of
// their own (ledger-<task>.jsonl) and the reader merges them, with no locking to get
// wrong on a network file system; and nothing is added to what kforge must install on a
// cluster's nodes.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/enum_names.h"

namespace sweep {

// One sample's state, as it changes: running when its solve starts, then done (it ran to
// an outcome, correct or not), failed (kforge or the model's provider failed: no outcome;
// the next run of the sweep retries it) or not_runnable (the problem's reference fails on
// this setup: message says how; in no metric; the next run tries the problem again). A
// sample with no record is pending. In the ledger, the names below.
enum class SampleState { running, done, failed, not_runnable };

}  // namespace sweep

template <>
struct sandbox::EnumNames<sweep::SampleState> {
  static constexpr const char* what = "sample state";
  static constexpr const char* names[] = {"running", "done", "failed", "not_runnable"};
};

namespace sweep {

KF_ENUM_JSON(SampleState)

inline const char* state_name(SampleState s) {
  return sandbox::enum_name(s);
}

// One sample's record: a line of the ledger.
struct Record {
  SampleState state = SampleState::running;
  std::string problem, category, model;
  int index = 0;     // the sample's number within (problem, model)
  int64_t seed = 0;  // the model's sampling seed (the index)
  // done / failed:
  std::string status;  // the best (else last) verdict's status; "error" when failed
  bool correct = false;
  double speedup = 0;  // 0: no speed measured
  // The speedup rests on times the judges' clocks confirmed (false: the timing audit
  // refuted the candidate's claims; the speedup is then on the audited time, not counted
  // by fast_p). Older ledgers, without it, read as confirmed.
  bool speed_confirmed = true;
  int turns = 0, best_turn = 0;
  long long tokens = 0;  // the whole run's, input + output
  double cost_usd = 0, seconds = 0;
  bool usage_estimated = false;  // tokens and cost counted from text: the server reported none
  // The first correct kernel: its turn (0: none) and the tokens and dollars spent until
  // its verdict, from the trajectory (a run may go on after it, for speed).
  int first_correct_turn = 0;
  long long tokens_to_correct = 0;
  double cost_to_correct = 0;
  int exit_code = 0;
  std::string dir, trajectory, kernel, message;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Record, state, problem, category, model, index,
                                                seed, status, correct, speedup, speed_confirmed,
                                                turns, best_turn, tokens, cost_usd, usage_estimated,
                                                seconds, first_correct_turn, tokens_to_correct,
                                                cost_to_correct, exit_code, dir, trajectory, kernel,
                                                message)

// "problem/model/index": what identifies a sample across runs and tasks.
std::string sample_key(const Record& r);

// Appends one record as one line, then fsyncs.
bool append_record(const std::string& path, const Record& r, std::string* err);

// Every ledger*.jsonl in dir, in file then line order. A line that does not parse (the
// torn last line of a killed writer) is skipped and counted in *torn.
bool read_ledgers(const std::string& dir, std::vector<Record>* out, int* torn, std::string* err);

// Each sample's latest record by key: its state now (a "running" one of a killed sweep
// stays "running" until the sample runs again).
std::map<std::string, Record> latest(const std::vector<Record>& records);

// The finished samples by key (the last "done" of each; a sample is finished once).
std::map<std::string, Record> finished(const std::vector<Record>& records);

}  // namespace sweep
