// src/sweep/report_table.h: a sweep's metrics by model, by model and category, and by
// model and problem, from its ledgers (what `kforge sweep status` prints).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sweep/ledger.h"
#include "sweep/metrics.h"

namespace sweep {

struct Row {
  std::string model, scope;  // scope: "all", "category:NAME" or the problem's name
  int problems = 0;          // problems averaged over
  Metrics m;                 // per problem; averaged over problems above that
};

// Rows from the finished records: per (model, problem) the metrics of its samples; per
// (model, category) and per model the mean over their problems of each metric.
std::vector<Row> summarize(const std::vector<Record>& finished_records);

nlohmann::json rows_json(const std::vector<Row>& rows);
std::string rows_csv(const std::vector<Row>& rows);
std::string rows_table(const std::vector<Row>& rows);

}  // namespace sweep
