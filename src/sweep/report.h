// src/sweep/report.h: `kforge report DIR`: one self-contained HTML file (inline CSS and
// SVG, no script, no network) of a sweep: pass@k and fast_p@k curves per model, the
// speedup distribution, the failure breakdown by verdict (what the models get wrong),
// a per-problem table, and every sample with its trajectory (as `kforge show` renders
// it) and best kernel inline, linked from the tables.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sweep/ledger.h"
#include "sweep/status.h"

namespace sweep {

struct ReportInput {
  Status status;
  std::vector<Record> samples;  // every sample's latest record (done, failed, running)
  // A trajectory as readable text ("" when it does not read); the report embeds it.
  std::function<std::string(const std::string& path)> render_trajectory;
  std::string dir;  // the sweep's folder: links are relative to it
};

std::string report_html(const ReportInput& in);

// Reads the sweep in dir and writes the report to `file` (default DIR/report.html).
bool write_report(const std::string& dir, const std::string& file,
                  const std::function<std::string(const std::string&)>& render, std::string* err);

}  // namespace sweep
