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

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace sweep {

// One sample's state: "started" when its run began, then "done" with its outcome.
struct Record {
  std::string state;  // started | done
  std::string problem, category, model;
  int index = 0;  // the sample's number within (problem, model)
  // done:
  std::string status;  // the best (else last) verdict's status; "error" if kforge failed
  bool correct = false;
  double speedup = 0;  // 0: no speed measured
  int turns = 0, best_turn = 0;
  long long tokens = 0;
  double cost_usd = 0, seconds = 0;
  int exit_code = 0;
  std::string dir, trajectory, message;
  // From the trajectory: the turn of the first correct kernel (0: none) and the tokens
  // and dollars spent up to and including it.
  int correct_turn = 0;
  long long tokens_to_correct = 0;
  double cost_to_correct = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Record, state, problem, category, model, index,
                                                status, correct, speedup, turns, best_turn, tokens,
                                                cost_usd, seconds, exit_code, dir, trajectory,
                                                message, correct_turn, tokens_to_correct,
                                                cost_to_correct)

// "problem/model/index": what identifies a sample across runs and tasks.
std::string sample_key(const Record& r);

// Appends one record as one line, then fsyncs.
bool append_record(const std::string& path, const Record& r, std::string* err);

// Every ledger*.jsonl in dir, in file then line order. A line that does not parse (the
// torn last line of a killed writer) is skipped and counted in *torn.
bool read_ledgers(const std::string& dir, std::vector<Record>* out, int* torn, std::string* err);

// The finished samples by key (the last "done" of each).
std::map<std::string, Record> finished(const std::vector<Record>& records);

}  // namespace sweep
