// src/sweep/svg.h: the few inline SVG charts a sweep's report draws. Plain strings, no
// script and no external reference, so the report is one file that opens offline.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sweep {

// &, <, >, " and ' as entities.
std::string html_escape(const std::string& s);

// A colour per series (model), stable by position.
std::string series_color(size_t i);

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
};

// Lines over x (drawn on a log2 axis: k = 1, 2, 4, ...), y from 0 to 1, a dot and the
// value's title at each point, a legend.
std::string svg_lines(const std::string& title, const std::string& x_label,
                      const std::vector<Series>& series);

// Grouped bars: one group per label, one bar per series (values[series][label]).
std::string svg_bars(const std::string& title, const std::vector<std::string>& labels,
                     const std::vector<std::string>& series_names,
                     const std::vector<std::vector<double>>& values);

}  // namespace sweep
