// src/sweep/status_text.cpp: `kforge sweep status` as a table and as CSV (status.h).
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "sweep/status.h"

namespace sweep {

namespace {

std::string opt_text(const std::optional<double>& v, const char* f) {
  return v ? fmt::format(fmt::runtime(f), *v) : "-";
}

// One row's CSV cells, by column name, in order.
std::vector<std::pair<std::string, std::string>> csv_cells(const Row& r) {
  auto num = [](double v) { return fmt::format("{:.6g}", v); };
  auto opt = [&](const std::optional<double>& v) { return v ? num(*v) : std::string(); };
  std::vector<std::pair<std::string, std::string>> c = {
      {"model", r.model},
      {"scope", r.scope},
      {"problems", std::to_string(r.problems)},
      {"samples", std::to_string(r.m.n)},
      {"correct", std::to_string(r.m.correct)},
      {"speed_measured", r.m.speed_measured ? "true" : "false"}};
  for (const KValue& kv : r.m.pass) c.push_back({fmt::format("pass@{}", kv.k), num(kv.value)});
  for (const FastP& f : r.m.fast)
    for (const KValue& kv : f.at_k)
      c.push_back({fmt::format("fast_{:.1f}@{}", f.p, kv.k), num(kv.value)});
  c.push_back({"geomean_speedup", opt(r.m.geomean_speedup)});
  c.push_back({"turns_to_correct", opt(r.m.turns_to_correct)});
  c.push_back({"tokens_to_correct", opt(r.m.tokens_to_correct)});
  c.push_back({"cost_to_correct", opt(r.m.cost_to_correct)});
  return c;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

}  // namespace

std::string not_runnable_text(const std::string& problem, const std::string& why) {
  return why.rfind(problem + ":", 0) == 0 ? why : problem + ": " + why;
}

std::string status_csv(const Status& s) {
  // The columns of every row, in first-seen order (rows with fewer samples have fewer
  // ks; their cells are empty there).
  std::vector<std::vector<std::pair<std::string, std::string>>> cells;
  std::vector<std::string> cols;
  for (const Row& r : s.rows) {
    cells.push_back(csv_cells(r));
    for (const auto& [name, v] : cells.back())
      if (std::find(cols.begin(), cols.end(), name) == cols.end()) cols.push_back(name);
  }
  std::string out;
  for (size_t i = 0; i < cols.size(); ++i) out += (i ? "," : "") + cols[i];
  out += "\n";
  for (const auto& row : cells) {
    for (size_t i = 0; i < cols.size(); ++i) {
      out += i ? "," : "";
      for (const auto& [name, v] : row)
        if (name == cols[i]) out += csv_field(v);
    }
    out += "\n";
  }
  return out;
}

std::string status_table(const Status& s) {
  std::string out = fmt::format(
      "{:<22} {:<24} {:>4} {:>4}  {:<26} {:<22} {:>8} {:>6} {:>8} {:>7}\n", "model", "scope", "n",
      "ok", "pass@k (k=1,2,4..)", "fast_1/1.5/2 @1", "geomean", "turns", "tokens", "$");
  for (const Row& r : s.rows) {
    std::string pass;
    for (const KValue& kv : r.m.pass)
      pass += fmt::format("{}{:.2f}", pass.empty() ? "" : " ", kv.value);
    std::string fast = "no speed measured";
    if (r.m.speed_measured) {
      fast.clear();
      for (const FastP& f : r.m.fast)
        fast += fmt::format("{}{}", fast.empty() ? "" : " ",
                            f.at_k.empty() ? "-" : fmt::format("{:.2f}", f.at_k[0].value));
    }
    out += fmt::format(
        "{:<22} {:<24} {:>4} {:>4}  {:<26} {:<22} {:>8} {:>6} {:>8} {:>7}\n", r.model, r.scope,
        r.m.n, r.m.correct, pass, fast, opt_text(r.m.geomean_speedup, "{:.2f}x"),
        opt_text(r.m.turns_to_correct, "{:.1f}"), opt_text(r.m.tokens_to_correct, "{:.0f}"),
        opt_text(r.m.cost_to_correct, "{:.3f}"));
  }
  out += fmt::format("{}: {} done", s.dir, s.done);
  if (s.planned) out += fmt::format(" of {} planned, {} pending", s.planned, s.pending);
  if (s.running)
    out += fmt::format(", {} running (or cut short by a kill: run the sweep again)", s.running);
  if (s.failed)
    out += fmt::format(", {} failed (not counted: run the sweep again to retry them)", s.failed);
  if (s.not_runnable)
    out +=
        fmt::format(", {} not runnable on this setup (not counted; listed below)", s.not_runnable);
  if (s.torn_lines) out += fmt::format(", {} torn ledger lines skipped", s.torn_lines);
  out += "\n";
  for (const auto& [problem, why] : s.not_runnable_problems)
    out += "not runnable here: " + not_runnable_text(problem, why) + "\n";
  out += "turns, tokens and $ are means over the samples that reached a correct kernel, up to it\n";
  return out;
}

}  // namespace sweep
