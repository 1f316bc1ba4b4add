// src/sweep/report_html.cpp: see report_html.h. The charts are drawn here as SVG, so the
// file renders the same anywhere, offline, with scripts off.
#include "sweep/report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "sweep/report_table.h"

namespace sweep {

namespace {

namespace fs = std::filesystem;

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"};

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string rel(const std::string& dir, const std::string& path) {
  std::error_code ec;
  return path.empty() ? "" : fs::relative(path, dir, ec).string();
}

// pass@k (or fast_p@k) against k, one line per series: (name, points).
std::string line_chart(
    const std::string& title,
    const std::vector<std::pair<std::string, std::vector<std::pair<int, double>>>>& series) {
  const int W = 520, H = 280, L = 50, R = 150, T = 30, B = 40;
  int kmax = 1;
  for (const auto& [name, pts] : series)
    for (const auto& [k, v] : pts) kmax = std::max(kmax, k);
  auto x = [&](int k) {
    return L + (W - L - R) * (kmax == 1 ? 0.5 : std::log2(k) / std::log2(kmax));
  };
  auto y = [&](double v) { return T + (H - T - B) * (1 - v); };
  std::string s = fmt::format("<svg class=chart width={} height={} role=img aria-label=\"{}\">", W,
                              H, esc(title));
  s += fmt::format("<text x={} y=18 class=t>{}</text>", L, esc(title));
  for (double v : {0.0, 0.25, 0.5, 0.75, 1.0})
    s += fmt::format(
        "<line x1={} x2={} y1={:.1f} y2={:.1f} class=grid /><text x={} y={:.1f} "
        "class=a>{:.2f}</text>",
        L, W - R, y(v), y(v), 8, y(v) + 4, v);
  for (int k = 1; k <= kmax; k *= 2)
    s += fmt::format("<text x={:.1f} y={} class=a>k={}</text>", x(k) - 10, H - 15, k);
  for (size_t i = 0; i < series.size(); ++i) {
    const char* c = kColors[i % 6];
    std::string pts;
    for (const auto& [k, v] : series[i].second) {
      pts += fmt::format("{:.1f},{:.1f} ", x(k), y(v));
      s += fmt::format("<circle cx={:.1f} cy={:.1f} r=3 fill=\"{}\" />", x(k), y(v), c);
    }
    s += fmt::format("<polyline points=\"{}\" fill=none stroke=\"{}\" stroke-width=2 />", pts, c);
    s += fmt::format("<text x={} y={} fill=\"{}\" class=a>{}</text>", W - R + 10, T + 16 * (i + 1),
                     c, esc(series[i].first));
  }
  return s + "</svg>";
}

// A verdict's colour: green for correct, warm for wrong answers, cool for the rest.
const char* verdict_color(const std::string& status) {
  if (status == "correct") return "#2ca02c";
  if (status == "mismatch" || status == "unstable") return "#d62728";
  if (status == "compile_error" || status == "rejected") return "#ff7f0e";
  if (status == "crash" || status == "timeout") return "#9467bd";
  return "#7f7f7f";
}

// Horizontal bars: (label, count); verdict colours when `verdicts`, else one blue.
std::string bar_chart(const std::string& title,
                      const std::vector<std::pair<std::string, int>>& bars, bool verdicts) {
  const int W = 520, row = 22, L = 190, T = 30;
  int most = 1;
  for (const auto& [l, n] : bars) most = std::max(most, n);
  int H = T + row * static_cast<int>(bars.size()) + 10;
  std::string s = fmt::format("<svg class=chart width={} height={} role=img aria-label=\"{}\">", W,
                              H, esc(title));
  s += fmt::format("<text x=8 y=18 class=t>{}</text>", esc(title));
  for (size_t i = 0; i < bars.size(); ++i) {
    double w = (W - L - 50) * static_cast<double>(bars[i].second) / most;
    int yy = T + row * static_cast<int>(i);
    s += fmt::format(
        "<text x=8 y={} class=a>{}</text><rect x={} y={} width={:.1f} height={} fill=\"{}\" />"
        "<text x={:.1f} y={} class=a>{}</text>",
        yy + 14, esc(bars[i].first), L, yy + 3, w, row - 6,
        verdicts ? verdict_color(bars[i].first) : kColors[0], L + w + 5, yy + 14, bars[i].second);
  }
  return s + "</svg>";
}

std::string speedup_chart(const std::vector<Record>& recs) {
  std::vector<std::pair<std::string, int>> bins;
  const double edges[] = {0, 0.5, 0.8, 1.0, 1.25, 1.5, 2.0, 1e9};
  const char* names[] = {"< 0.5x", "0.5-0.8x", "0.8-1x", "1-1.25x", "1.25-1.5x", "1.5-2x", ">= 2x"};
  int any = 0;
  for (int b = 0; b < 7; ++b) {
    int n = 0;
    for (const Record& r : recs)
      if (r.correct && r.speedup > 0 && r.speedup >= edges[b] && r.speedup < edges[b + 1]) ++n;
    any += n;
    bins.push_back({names[b], n});
  }
  if (any == 0)
    return "<p class=note>No speed measured: every sample ran on the host backend or on emulated "
           "ranks, "
           "whose times are not a speed.</p>";
  return bar_chart("correct samples by speedup over the baseline", bins, false);
}

std::string problems_table(const ReportInput& in) {
  std::map<std::pair<std::string, std::string>, std::vector<const Record*>> by;
  for (const Record& r : in.samples) by[{r.model, r.problem}].push_back(&r);
  std::string s =
      "<table><tr><th>model</th><th>problem</th><th>correct</th><th>best "
      "speedup</th><th>samples</th></tr>";
  for (auto& [key, recs] : by) {
    std::sort(recs.begin(), recs.end(),
              [](const Record* a, const Record* b) { return a->index < b->index; });
    int ok = 0;
    double best = 0;
    std::string cells;
    for (const Record* r : recs) {
      ok += r->correct;
      best = std::max(best, r->correct ? r->speedup : 0.0);
      std::string kernel;
      for (const char* f : {"/best.cu", "/best.cpp"})
        if (fs::exists(r->dir + f)) kernel = rel(in.dir, r->dir + f);
      std::string text = in.render_trajectory ? in.render_trajectory(r->trajectory) : "";
      cells += fmt::format(
          "<details><summary class={}>#{} {}{}</summary>{}{}</details>", r->correct ? "ok" : "bad",
          r->index, esc(r->status), r->speedup > 0 ? fmt::format(" {:.2f}x", r->speedup) : "",
          kernel.empty() ? "" : fmt::format("<a href=\"{}\">best kernel</a> ", esc(kernel)),
          r->trajectory.empty() ? ""
                                : fmt::format("<a href=\"{}\">trajectory</a><pre>{}</pre>",
                                              esc(rel(in.dir, r->trajectory)), esc(text)));
    }
    s += fmt::format("<tr><td>{}</td><td>{}</td><td>{} / {}</td><td>{}</td><td>{}</td></tr>",
                     esc(key.first), esc(key.second), ok, recs.size(),
                     best > 0 ? fmt::format("{:.2f}x", best) : "-", cells);
  }
  return s + "</table>";
}

const char* kStyle =
    "body{font:14px "
    "system-ui,sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;"
    "margin-top:28px}.chart{border:1px solid #ddd;margin:6px 12px 6px "
    "0;background:#fff}.t{font-weight:600}"
    ".a{font-size:11px}.grid{stroke:#eee}table{border-collapse:collapse}td,th{border:1px solid "
    "#ddd;"
    "padding:4px "
    "8px;vertical-align:top;text-align:left}.ok{color:#2a7d2a}.bad{color:#b22}pre{max-height:"
    "320px;overflow:auto;background:#f7f7f7;padding:6px;font-size:12px}.note{color:#666}";

}  // namespace

std::string report_html(const ReportInput& in) {
  std::vector<Row> rows = summarize(in.samples);
  std::vector<std::pair<std::string, std::vector<std::pair<int, double>>>> pass, fast;
  std::map<std::string, std::map<std::string, int>> statuses;
  bool speed = false;
  for (const Row& r : rows)
    if (r.scope == "all") {
      pass.push_back({r.model, r.m.pass});
      speed = speed || r.m.speed_measured;
      for (const auto& f : r.m.fast)
        fast.push_back({fmt::format("{} p={:.1f}", r.model, f.p), f.at_k});
    }
  for (const Record& r : in.samples) ++statuses[r.model][r.status];
  std::string h = fmt::format(
      "<!doctype html><html><head><meta charset=utf-8><title>kforge sweep "
      "report</title><style>{}</style>"
      "</head><body><h1>kforge sweep: {}</h1><p>{} finished samples; generated {}</p>",
      kStyle, esc(in.dir), in.samples.size(), esc(in.generated));
  h += "<h2>pass@k and fast_p@k</h2>" + line_chart("pass@k by model", pass);
  h += speed ? line_chart("fast_p@k (correct and at least p x the baseline)", fast)
             : "<p class=note>fast_p@k: no speed measured (host backend or emulated ranks).</p>";
  h += "<h2>Speedups</h2>" + speedup_chart(in.samples);
  h += "<h2>What went wrong: final verdicts</h2>";
  for (const auto& [model, counts] : statuses) {
    std::vector<std::pair<std::string, int>> bars(counts.begin(), counts.end());
    h += bar_chart(model, bars, true);
  }
  h += "<h2>Metrics</h2><pre>" + esc(rows_table(rows)) + "</pre>";
  h += "<h2>Problems and samples</h2>" + problems_table(in);
  return h + "</body></html>\n";
}

}  // namespace sweep
