// src/sweep/svg.cpp: see svg.h.
#include "sweep/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace sweep {

namespace {
constexpr double kW = 520, kH = 300, kLeft = 50, kRight = 150, kTop = 30, kBottom = 45;
constexpr double kPlotW = kW - kLeft - kRight, kPlotH = kH - kTop - kBottom;

std::string frame_open(const std::string& title) {
  return fmt::format(
      "<svg class=\"chart\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" "
      "aria-label=\"{2}\">\n<text x=\"{3}\" y=\"18\" class=\"title\">{2}</text>\n",
      kW, kH, html_escape(title), kLeft);
}

std::string legend(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    double y = kTop + 10 + 18 * i;
    s += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" "
        "y=\"{}\" class=\"legend\">{}</text>\n",
        kW - kRight + 12, y - 10, series_color(i), kW - kRight + 30, y, html_escape(names[i]));
  }
  return s;
}

// The y axis from 0 to max with 5 grid lines.
std::string y_axis(double max, const char* fmt_str) {
  std::string s;
  for (int i = 0; i <= 4; ++i) {
    double v = max * i / 4, y = kTop + kPlotH - kPlotH * i / 4;
    s += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/><text x=\"{}\" "
        "y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{}</text>\n",
        kLeft, kLeft + kPlotW, y, y, kLeft - 6, y + 4, fmt::format(fmt::runtime(fmt_str), v));
  }
  return s;
}
}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string series_color(size_t i) {
  static const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                  "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};
  return kColors[i % (sizeof kColors / sizeof kColors[0])];
}

std::string svg_lines(const std::string& title, const std::string& x_label,
                      const std::vector<Series>& series) {
  double max_x = 1;
  for (const Series& s : series)
    for (const auto& [x, y] : s.points) max_x = std::max(max_x, x);
  double span = std::max(1.0, std::log2(max_x));
  auto px = [&](double x) { return kLeft + kPlotW * std::log2(std::max(1.0, x)) / span; };
  auto py = [&](double y) { return kTop + kPlotH * (1 - std::clamp(y, 0.0, 1.0)); };
  std::string s = frame_open(title) + y_axis(1.0, "{:.2f}");
  for (double k = 1; k <= max_x; k *= 2)
    s +=
        fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n",
                    px(k), kTop + kPlotH + 16, k);
  s += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n",
                   kLeft + kPlotW / 2, kH - 8, html_escape(x_label));
  std::vector<std::string> names;
  for (size_t i = 0; i < series.size(); ++i) {
    names.push_back(series[i].name);
    std::string pts;
    for (const auto& [x, y] : series[i].points)
      pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", px(x), py(y));
    s += fmt::format("<polyline class=\"series\" fill=\"none\" stroke=\"{}\" points=\"{}\"/>\n",
                     series_color(i), pts);
    for (const auto& [x, y] : series[i].points)
      s += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{} k={}: "
          "{:.3f}</title></circle>\n",
          px(x), py(y), series_color(i), html_escape(series[i].name), x, y);
  }
  return s + legend(names) + "</svg>\n";
}

std::string svg_bars(const std::string& title, const std::vector<std::string>& labels,
                     const std::vector<std::string>& series_names,
                     const std::vector<std::vector<double>>& values) {
  double max = 1;
  for (const auto& row : values)
    for (double v : row) max = std::max(max, v);
  max = std::ceil(max / 4) * 4;  // whole numbers at the four grid lines
  std::string s = frame_open(title) + y_axis(max, "{:.0f}");
  double group = kPlotW / std::max<size_t>(1, labels.size());
  double bar = group * 0.8 / std::max<size_t>(1, series_names.size());
  for (size_t l = 0; l < labels.size(); ++l) {
    double gx = kLeft + group * l + group * 0.1;
    for (size_t i = 0; i < series_names.size(); ++i) {
      double v = l < values[i].size() ? values[i][l] : 0, h = kPlotH * v / max;
      s += fmt::format(
          "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"{}\"><title>{} {}: {}</title></rect>\n",
          gx + bar * i, kTop + kPlotH - h, std::max(1.0, bar - 1), h, series_color(i),
          html_escape(series_names[i]), html_escape(labels[l]), v);
    }
    s +=
        fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>\n",
                    kLeft + group * (l + 0.5), kTop + kPlotH + 16, html_escape(labels[l]));
  }
  return s + legend(series_names) + "</svg>\n";
}

}  // namespace sweep
