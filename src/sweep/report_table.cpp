// src/sweep/report_table.cpp: see report_table.h.
#include "sweep/report_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace sweep {

namespace {

SampleOutcome outcome(const Record& r) {
  SampleOutcome o;
  o.correct = r.correct;
  if (r.speedup > 0) o.speedup = r.speedup;
  if (r.correct && r.correct_turn > 0) {  // from the trajectory (sweep.cpp)
    o.turns_to_correct = r.correct_turn;
    o.tokens_to_correct = r.tokens_to_correct;
    o.cost_to_correct = r.cost_to_correct;
  }
  return o;
}

void add_opt(std::optional<double>* sum, const std::optional<double>& v) {
  if (v) *sum = sum->value_or(0) + *v;
}

// The mean over problems of each metric (pass@k and fast_p@k by k; the others over the
// problems that have them).
Metrics mean_of(const std::vector<Metrics>& ms) {
  Metrics out;
  if (ms.empty()) return out;
  out = ms[0];
  std::optional<double> geo, turns, tokens, cost;
  int n_geo = 0, n_reach = 0;
  for (size_t i = 0; i < ms.size(); ++i) {
    const Metrics& m = ms[i];
    if (i > 0) {
      out.n += m.n;
      out.correct += m.correct;
      out.speed_measured = out.speed_measured || m.speed_measured;
      for (size_t k = 0; k < out.pass.size() && k < m.pass.size(); ++k)
        out.pass[k].second += m.pass[k].second;
      for (size_t f = 0; f < out.fast.size() && f < m.fast.size(); ++f) {
        out.fast[f].count += m.fast[f].count;
        for (size_t k = 0; k < out.fast[f].at_k.size() && k < m.fast[f].at_k.size(); ++k)
          out.fast[f].at_k[k].second += m.fast[f].at_k[k].second;
      }
    }
    if (m.geomean_speedup) add_opt(&geo, std::log(*m.geomean_speedup)), ++n_geo;
    if (m.turns_to_correct) {
      add_opt(&turns, m.turns_to_correct);
      add_opt(&tokens, m.tokens_to_correct);
      add_opt(&cost, m.cost_to_correct);
      ++n_reach;
    }
  }
  double n = static_cast<double>(ms.size());
  for (auto& [k, v] : out.pass) v /= n;
  for (auto& f : out.fast)
    for (auto& [k, v] : f.at_k) v /= n;
  out.geomean_speedup = n_geo ? std::optional<double>(std::exp(*geo / n_geo)) : std::nullopt;
  out.turns_to_correct = n_reach ? std::optional<double>(*turns / n_reach) : std::nullopt;
  out.tokens_to_correct = n_reach ? std::optional<double>(*tokens / n_reach) : std::nullopt;
  out.cost_to_correct = n_reach ? std::optional<double>(*cost / n_reach) : std::nullopt;
  return out;
}

std::string opt_text(const std::optional<double>& v, const char* f) {
  return v ? fmt::format(fmt::runtime(f), *v) : "-";
}

}  // namespace

std::vector<Row> summarize(const std::vector<Record>& recs) {
  // model -> problem -> outcomes; and each problem's category.
  std::map<std::string, std::map<std::string, std::vector<SampleOutcome>>> by;
  std::map<std::string, std::string> category;
  for (const Record& r : recs) {
    by[r.model][r.problem].push_back(outcome(r));
    category[r.problem] = r.category;
  }
  std::vector<Row> rows;
  for (const auto& [model, problems] : by) {
    std::vector<Metrics> all;
    std::map<std::string, std::vector<Metrics>> cats;
    std::vector<Row> per_problem;
    for (const auto& [problem, outcomes] : problems) {
      Metrics m = compute_metrics(outcomes);
      all.push_back(m);
      cats[category[problem]].push_back(m);
      per_problem.push_back({model, problem, 1, m});
    }
    rows.push_back({model, "all", static_cast<int>(all.size()), mean_of(all)});
    for (const auto& [cat, ms] : cats)
      rows.push_back({model, "category:" + (cat.empty() ? "none" : cat),
                      static_cast<int>(ms.size()), mean_of(ms)});
    rows.insert(rows.end(), per_problem.begin(), per_problem.end());
  }
  return rows;
}

nlohmann::json rows_json(const std::vector<Row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows) {
    nlohmann::json j = {{"model", r.model},       {"scope", r.scope},
                        {"problems", r.problems}, {"samples", r.m.n},
                        {"correct", r.m.correct}, {"speed_measured", r.m.speed_measured}};
    for (const auto& [k, v] : r.m.pass) j["pass@" + std::to_string(k)] = v;
    for (const auto& f : r.m.fast)
      for (const auto& [k, v] : f.at_k) j[fmt::format("fast_{:.1f}@{}", f.p, k)] = v;
    auto put = [&](const char* name, const std::optional<double>& v) {
      j[name] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    put("geomean_speedup", r.m.geomean_speedup);
    put("turns_to_correct", r.m.turns_to_correct);
    put("tokens_to_correct", r.m.tokens_to_correct);
    put("cost_to_correct", r.m.cost_to_correct);
    out.push_back(j);
  }
  return out;
}

std::string rows_csv(const std::vector<Row>& rows) {
  nlohmann::json js = rows_json(rows);
  // The identifying columns first, then the figures (nlohmann's objects sort their keys).
  std::vector<std::string> cols = {"model", "scope", "problems", "samples", "correct"};
  for (const auto& j : js)
    for (const auto& [k, v] : j.items())
      if (std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
  std::string out;
  for (size_t i = 0; i < cols.size(); ++i) out += (i ? "," : "") + cols[i];
  out += "\n";
  for (const auto& j : js) {
    for (size_t i = 0; i < cols.size(); ++i) {
      out += i ? "," : "";
      if (!j.contains(cols[i]) || j[cols[i]].is_null()) continue;
      out += j[cols[i]].is_string() ? j[cols[i]].get<std::string>() : j[cols[i]].dump();
    }
    out += "\n";
  }
  return out;
}

std::string rows_table(const std::vector<Row>& rows) {
  std::string out = fmt::format(
      "{:<22} {:<24} {:>4} {:>4}  {:<26} {:<22} {:>8} {:>6} {:>8} {:>7}\n", "model", "scope", "n",
      "ok", "pass@k (k=1,2,4..)", "fast_1/1.5/2 @1", "geomean", "turns", "tokens", "$");
  for (const Row& r : rows) {
    std::string pass;
    for (const auto& [k, v] : r.m.pass) pass += fmt::format("{}{:.2f}", pass.empty() ? "" : " ", v);
    std::string fast = "no speed measured";
    if (r.m.speed_measured) {
      fast.clear();
      for (const auto& f : r.m.fast)
        fast +=
            fmt::format("{}{:.2f}", fast.empty() ? "" : " ", f.at_k.empty() ? 0 : f.at_k[0].second);
    }
    out += fmt::format(
        "{:<22} {:<24} {:>4} {:>4}  {:<26} {:<22} {:>8} {:>6} {:>8} {:>7}\n", r.model, r.scope,
        r.m.n, r.m.correct, pass, fast, opt_text(r.m.geomean_speedup, "{:.2f}x"),
        opt_text(r.m.turns_to_correct, "{:.1f}"), opt_text(r.m.tokens_to_correct, "{:.0f}"),
        opt_text(r.m.cost_to_correct, "{:.3f}"));
  }
  return out;
}

}  // namespace sweep
