// src/sweep/status.h: what `kforge sweep status DIR` says: how many samples are done,
// failed, running and pending, and the metrics by model, by model and category, and by
// model and problem, from the sweep's ledgers and plan. One struct per JSON contract.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sweep/ledger.h"
#include "sweep/metrics.h"

namespace sweep {

struct Row {
  std::string model, scope;  // scope: "all", "category:NAME" or the problem's name
  int problems = 0;          // problems averaged over
  Metrics m;                 // per problem; the mean over problems above that
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Row, model, scope, problems, m)

// `kforge sweep status --json`.
struct Status {
  std::string dir;
  int planned = 0;  // samples in DIR/sweep.json (0 when it has none)
  int done = 0, failed = 0, running = 0, pending = 0;
  int torn_lines = 0;  // ledger lines a killed writer left half-written (skipped)
  std::vector<Row> rows;
  // model -> final verdict status -> samples: what the models got wrong.
  std::map<std::string, std::map<std::string, int>> verdicts;
  int not_runnable = 0;  // samples whose problem's reference fails on this setup
  // problem -> why it is not runnable here (in no metric; a rerun tries it again).
  std::map<std::string, std::string> not_runnable_problems;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Status, dir, planned, done, failed, running,
                                                pending, torn_lines, rows, verdicts, not_runnable,
                                                not_runnable_problems)

// Rows from the finished records: per (model, problem) the metrics of its samples; per
// (model, category) and per model the mean over their problems of each metric.
std::vector<Row> summarize(const std::vector<Record>& finished_records);

// The whole status of the sweep in dir. False with *err when dir holds no ledger.
bool read_status(const std::string& dir, Status* out, std::vector<Record>* finished_records,
                 std::string* err);

// "PROBLEM: why", the name once where why begins with it.
std::string not_runnable_text(const std::string& problem, const std::string& why);

std::string status_csv(const Status& s);
std::string status_table(const Status& s);

}  // namespace sweep
