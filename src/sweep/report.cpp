// src/sweep/report.cpp: see report.h. The charts are in svg.cpp, the sections here.
#include "sweep/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "sandbox/text.h"
#include "sweep/svg.h"
#include "sweep/sweep.h"

namespace sweep {

using sandbox::read_text;

namespace fs = std::filesystem;

namespace {

const char* kStyle = R"(<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
td.l,th.l{text-align:left}.chart{margin:8px 16px 8px 0;background:#fafafa;border:1px solid #eee}
.title{font-weight:600;font-size:13px}.tick,.legend{font-size:11px;fill:#444}.grid{stroke:#e4e4e4}
polyline.series{stroke-width:2}.note{color:#666;font-style:italic}
a.s{display:inline-block;min-width:18px;margin:1px;padding:0 3px;border-radius:3px;color:#fff;
text-decoration:none;font-size:12px;text-align:center}.correct{background:#2ca02c}.failed{background:#777}
.running,.not_runnable{background:#bbb}.wrong{background:#d62728}pre{background:#f6f6f6;padding:8px;overflow:auto;
max-height:480px;font-size:12px}details{margin:4px 0}summary{cursor:pointer}
</style>
)";

std::string sample_id(const Record& r) {
  return fmt::format("s-{}-{}-{}", model_dir(r.model), r.problem, r.index);
}

std::string sample_class(const Record& r) {
  if (r.state == SampleState::failed) return "failed";
  if (r.state == SampleState::running || r.state == SampleState::not_runnable)
    return state_name(r.state);
  return r.correct ? "correct" : "wrong";
}

std::string opt(const std::optional<double>& v, const char* f) {
  return v ? fmt::format(fmt::runtime(f), *v) : "-";
}

std::string fmt_k(const std::vector<KValue>& kvs) {
  std::string s;
  for (const KValue& kv : kvs)
    s += fmt::format("{}{}: {:.2f}", s.empty() ? "" : ", ", kv.k, kv.value);
  return s.empty() ? "-" : s;
}

std::string summary_section(const ReportInput& in) {
  const Status& st = in.status;
  std::string s =
      fmt::format("<h1>kforge sweep: {}</h1>\n<p>{} samples done", html_escape(st.dir), st.done);
  if (st.planned) s += fmt::format(" of {} planned ({} pending)", st.planned, st.pending);
  s += fmt::format(
      ", {} failed (kforge or the provider; not counted), {} running or cut short.</p>\n",
      st.failed, st.running);
  for (const auto& [problem, why] : st.not_runnable_problems)
    s += "<p class=note>Not runnable on this setup, in no metric: " +
         html_escape(not_runnable_text(problem, why)) + "</p>\n";
  s += "<table><tr><th class=l>model</th><th class=l>scope</th><th>problems</th><th>n</th>"
       "<th>correct</th><th class=l>pass@k</th><th class=l>fast_1.0@k</th><th>geomean</th>"
       "<th>turns</th><th>tokens</th><th>$</th></tr>\n";
  for (const Row& r : st.rows) {
    if (r.scope != "all" && r.scope.rfind("category:", 0) != 0) continue;
    std::string fast =
        r.m.speed_measured && !r.m.fast.empty() ? fmt_k(r.m.fast[0].at_k) : "no speed measured";
    s += fmt::format(
        "<tr><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td "
        "class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        html_escape(r.model), html_escape(r.scope), r.problems, r.m.n, r.m.correct, fmt_k(r.m.pass),
        fast, opt(r.m.geomean_speedup, "{:.2f}x"), opt(r.m.turns_to_correct, "{:.1f}"),
        opt(r.m.tokens_to_correct, "{:.0f}"), opt(r.m.cost_to_correct, "{:.3f}"));
  }
  return s +
         "</table>\n<p class=note>pass@k and fast_p@k: the unbiased estimator from n samples, "
         "averaged over problems; turns, tokens and $: means over the samples that reached "
         "a correct kernel, up to it.</p>\n";
}

std::string curves_section(const Status& st) {
  std::vector<Series> pass;
  std::vector<std::vector<Series>> fast(3);
  bool speed = false;
  for (const Row& r : st.rows) {
    if (r.scope != "all") continue;
    Series s{r.model, {}};
    for (const KValue& kv : r.m.pass) s.points.push_back({kv.k, kv.value});
    pass.push_back(s);
    for (size_t f = 0; f < 3; ++f) {
      Series fs{r.model, {}};
      if (f < r.m.fast.size())
        for (const KValue& kv : r.m.fast[f].at_k) fs.points.push_back({kv.k, kv.value});
      fast[f].push_back(fs);
    }
    speed = speed || r.m.speed_measured;
  }
  std::string s = "<h2>pass@k and fast_p@k</h2>\n" + svg_lines("pass@k", "k", pass);
  if (!speed)
    return s +
           "<p class=note>No speed was measured (host backend or emulated ranks): no "
           "fast_p@k.</p>\n";
  const char* ps[] = {"1.0", "1.5", "2.0"};
  for (size_t f = 0; f < 3; ++f) s += svg_lines(fmt::format("fast_{}@k", ps[f]), "k", fast[f]);
  return s;
}

std::string speedup_section(const ReportInput& in, const std::vector<std::string>& models) {
  const std::vector<std::string> labels = {"<0.5", "0.5-1", "1-1.5", "1.5-2", "2-4", ">=4"};
  const double edges[] = {0.5, 1, 1.5, 2, 4};
  std::vector<std::vector<double>> counts(models.size(), std::vector<double>(labels.size()));
  int any = 0;
  for (const Record& r : in.samples) {
    if (!r.correct || r.speedup <= 0) continue;
    size_t m = std::find(models.begin(), models.end(), r.model) - models.begin(), b = 0;
    while (b < 5 && r.speedup >= edges[b]) ++b;
    if (m < models.size()) counts[m][b] += 1, ++any;
  }
  std::string s = "<h2>Speedup over the baseline (correct samples)</h2>\n";
  if (!any)
    return s + "<p class=note>No speed was measured (host backend or emulated ranks).</p>\n";
  return s + svg_bars("correct samples by speedup", labels, models, counts);
}

std::string failures_section(const ReportInput& in, const std::vector<std::string>& models) {
  std::map<std::string, std::map<std::string, int>> by;  // model -> outcome -> samples
  std::set<std::string> outcomes;
  for (const Record& r : in.samples) {
    if (r.state == SampleState::running) continue;
    std::string o = r.state == SampleState::failed         ? "failed (kforge/provider)"
                    : r.state == SampleState::not_runnable ? "not runnable (setup)"
                                                           : r.status;
    ++by[r.model][o];
    outcomes.insert(o);
  }
  std::vector<std::string> labels(outcomes.begin(), outcomes.end());
  std::vector<std::vector<double>> v(models.size());
  std::string table = "<table><tr><th class=l>model</th>";
  for (const std::string& l : labels) table += "<th>" + html_escape(l) + "</th>";
  table += "</tr>\n";
  for (size_t m = 0; m < models.size(); ++m) {
    table += "<tr><td class=l>" + html_escape(models[m]) + "</td>";
    for (const std::string& l : labels) {
      int n = by[models[m]].count(l) ? by[models[m]][l] : 0;
      v[m].push_back(n);
      table += fmt::format("<td>{}</td>", n);
    }
    table += "</tr>\n";
  }
  return "<h2>Outcomes by verdict</h2>\n" +
         svg_bars("samples by final verdict", labels, models, v) + table + "</table>\n";
}

std::string problems_section(const ReportInput& in) {
  std::map<std::string, std::vector<const Record*>> by;  // "model\tproblem" -> samples
  for (const Record& r : in.samples) by[r.model + "\t" + r.problem].push_back(&r);
  std::string s =
      "<h2>Problems</h2>\n<table><tr><th class=l>model</th><th class=l>problem</th><th>n</th>"
      "<th>correct</th><th class=l>pass@k</th><th>geomean</th><th class=l>samples</th></tr>\n";
  for (const Row& r : in.status.rows) {
    if (r.scope == "all" || r.scope.rfind("category:", 0) == 0) continue;
    std::string chips;
    for (const Record* x : by[r.model + "\t" + r.scope])
      chips += fmt::format("<a class=\"s {}\" href=\"#{}\" title=\"{}\">{}</a>", sample_class(*x),
                           sample_id(*x), html_escape(x->status), x->index);
    s += fmt::format(
        "<tr><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td class=l>{}</td>"
        "<td>{}</td><td class=l>{}</td></tr>\n",
        html_escape(r.model), html_escape(r.scope), r.m.n, r.m.correct, fmt_k(r.m.pass),
        opt(r.m.geomean_speedup, "{:.2f}x"), chips);
  }
  return s + "</table>\n";
}

std::string link(const std::string& dir, const std::string& path, const char* what) {
  if (path.empty()) return "";
  std::error_code ec;
  std::string rel = fs::relative(path, dir, ec).string();
  return fmt::format(" <a href=\"{}\">{}</a>", html_escape(ec ? path : rel), what);
}

std::string samples_section(const ReportInput& in) {
  std::string s = "<h2>Samples</h2>\n";
  for (const Record& r : in.samples) {
    s += fmt::format(
        "<details id=\"{}\"><summary><span class=\"s {}\">&nbsp;</span> {} / {} #{}: {}{} "
        "(turns {}, tokens {}, ${:.4f}{})</summary>\n<p>{}{}{}</p>\n",
        sample_id(r), sample_class(r), html_escape(r.problem), html_escape(r.model), r.index,
        html_escape(r.state == SampleState::done ? r.status : state_name(r.state)),
        r.speedup > 0 ? fmt::format(", {:.2f}x", r.speedup) : "", r.turns, r.tokens, r.cost_usd,
        r.usage_estimated ? ", estimated" : "", html_escape(r.message),
        link(in.dir, r.trajectory, "trajectory (JSONL)"), link(in.dir, r.kernel, "best kernel"));
    std::string traj = r.trajectory.empty() ? "" : in.render_trajectory(r.trajectory);
    if (!traj.empty()) s += "<pre class=\"trajectory\">" + html_escape(traj) + "</pre>\n";
    if (!r.kernel.empty() && fs::exists(r.kernel))
      s += "<p>best kernel:</p><pre class=\"kernel\">" + html_escape(read_text(r.kernel)) +
           "</pre>\n";
    s += "</details>\n";
  }
  return s;
}

}  // namespace

std::string report_html(const ReportInput& in) {
  std::vector<std::string> models;
  for (const Row& r : in.status.rows)
    if (r.scope == "all") models.push_back(r.model);
  for (const Record& r : in.samples)
    if (std::find(models.begin(), models.end(), r.model) == models.end()) models.push_back(r.model);
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>kforge sweep " +
         html_escape(in.status.dir) + "</title>\n" + kStyle + "</head><body>\n" +
         summary_section(in) + curves_section(in.status) + speedup_section(in, models) +
         failures_section(in, models) + problems_section(in) + samples_section(in) +
         "</body></html>\n";
}

bool write_report(const std::string& dir, const std::string& file,
                  const std::function<std::string(const std::string&)>& render, std::string* err) {
  ReportInput in;
  std::vector<Record> fin, recs;
  if (!read_status(dir, &in.status, &fin, err)) return false;
  int torn = 0;
  if (!read_ledgers(dir, &recs, &torn, err)) return false;
  for (const auto& [key, r] : latest(recs)) in.samples.push_back(r);
  std::sort(in.samples.begin(), in.samples.end(), [](const Record& a, const Record& b) {
    return std::tie(a.model, a.problem, a.index) < std::tie(b.model, b.problem, b.index);
  });
  in.render_trajectory = render;
  std::string out = file.empty() ? dir + "/report.html" : file, tmp = out + ".tmp";
  in.dir = fs::absolute(out).parent_path().string();  // links are relative to the report
  {
    std::ofstream o(tmp, std::ios::binary);
    o << report_html(in);
    if (!o) {
      *err = tmp + ": cannot write the report (is the folder writable?)";
      return false;
    }
  }
  std::error_code ec;
  fs::rename(tmp, out, ec);
  if (ec) *err = out + ": cannot write the report: " + ec.message();
  return !ec;
}

}  // namespace sweep
