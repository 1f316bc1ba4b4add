// src/sweep/status.cpp: see status.h.
#include "sweep/status.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "sweep/sweep.h"

namespace sweep {

namespace {

SampleOutcome outcome(const Record& r) {
  SampleOutcome o;
  o.correct = r.correct;
  if (r.speedup > 0) o.speedup = r.speedup;
  o.speed_confirmed = r.speed_confirmed;
  if (r.correct) {
    o.turns_to_correct = r.first_correct_turn > 0 ? r.first_correct_turn : r.best_turn;
    o.tokens_to_correct = r.tokens_to_correct;
    o.cost_to_correct = r.cost_to_correct;
  }
  return o;
}

// The mean over problems of each k's value, for the ks every problem has (problems with
// fewer samples have fewer ks).
std::vector<KValue> mean_by_k(const std::vector<const std::vector<KValue>*>& lists) {
  std::map<int, std::pair<double, size_t>> by_k;
  for (const auto* l : lists)
    for (const KValue& kv : *l) by_k[kv.k].first += kv.value, ++by_k[kv.k].second;
  std::vector<KValue> out;
  for (const auto& [k, sum_count] : by_k)
    if (sum_count.second == lists.size()) out.push_back({k, sum_count.first / lists.size()});
  return out;
}

std::optional<double> mean_opt(const std::vector<std::optional<double>>& vs, bool geometric) {
  double sum = 0;
  int n = 0;
  for (const auto& v : vs)
    if (v) sum += geometric ? std::log(*v) : *v, ++n;
  if (n == 0) return std::nullopt;
  return geometric ? std::exp(sum / n) : sum / n;
}

// The mean over problems of each metric (pass@k and fast_p@k by k; the others over the
// problems that have them; speedups geometrically).
Metrics mean_of(const std::vector<Metrics>& ms) {
  Metrics out;
  std::vector<const std::vector<KValue>*> pass;
  std::vector<std::optional<double>> geo, turns, tokens, cost;
  for (const Metrics& m : ms) {
    out.n += m.n;
    out.correct += m.correct;
    out.speed_measured = out.speed_measured || m.speed_measured;
    pass.push_back(&m.pass);
    geo.push_back(m.geomean_speedup);
    turns.push_back(m.turns_to_correct);
    tokens.push_back(m.tokens_to_correct);
    cost.push_back(m.cost_to_correct);
  }
  out.pass = mean_by_k(pass);
  if (out.speed_measured) {
    for (size_t f = 0; f < 3; ++f) {
      std::vector<const std::vector<KValue>*> at;
      FastP fp;
      for (const Metrics& m : ms) {
        if (f >= m.fast.size()) continue;  // a problem with no speed: not in the mean
        fp.p = m.fast[f].p;
        fp.count += m.fast[f].count;
        at.push_back(&m.fast[f].at_k);
      }
      fp.at_k = mean_by_k(at);
      out.fast.push_back(fp);
    }
  }
  out.geomean_speedup = mean_opt(geo, true);
  out.turns_to_correct = mean_opt(turns, false);
  out.tokens_to_correct = mean_opt(tokens, false);
  out.cost_to_correct = mean_opt(cost, false);
  return out;
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

bool read_status(const std::string& dir, Status* out, std::vector<Record>* fin, std::string* err) {
  *out = Status{};
  out->dir = dir;
  std::vector<Record> recs;
  if (!read_ledgers(dir, &recs, &out->torn_lines, err)) return false;
  PlanFile plan;
  bool planned = read_plan(dir, &plan, err);
  if (!err->empty()) return false;
  if (!planned && recs.empty()) {
    *err = dir + " holds no sweep (no sweep.json, no ledger*.jsonl): name the --out of a sweep";
    return false;
  }
  std::map<std::string, Record> now = latest(recs);
  for (const auto& [key, r] : now) {
    out->done += r.state == SampleState::done;
    out->failed += r.state == SampleState::failed;
    out->running += r.state == SampleState::running;
    out->not_runnable += r.state == SampleState::not_runnable;
    if (r.state == SampleState::not_runnable) out->not_runnable_problems[r.problem] = r.message;
    if (r.state == SampleState::done) ++out->verdicts[r.model][r.status];
  }
  if (planned) {
    std::vector<Sample> all =
        sweep::plan(plan.problems, plan.categories, plan.models, plan.samples);
    out->planned = static_cast<int>(all.size());
    for (const Sample& s : all)
      if (!now.count(s.problem + "/" + s.model + "/" + std::to_string(s.index))) ++out->pending;
  }
  fin->clear();
  for (const auto& [key, r] : finished(recs)) fin->push_back(r);
  out->rows = summarize(*fin);
  return true;
}

}  // namespace sweep
