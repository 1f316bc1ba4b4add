// src/sweep/report_html.h: a sweep as one self-contained HTML file (`kforge report DIR`):
// inline SVG charts and CSS, no script and nothing fetched at view time.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sweep/ledger.h"

namespace sweep {

struct ReportInput {
  std::string dir;              // the sweep's folder (the report's links are relative to it)
  std::vector<Record> samples;  // the finished samples
  // A trajectory file as `kforge show` renders it ("" when it cannot be read).
  std::function<std::string(const std::string& path)> render_trajectory;
  std::string generated;  // when, for the header
};

std::string report_html(const ReportInput& in);

}  // namespace sweep
