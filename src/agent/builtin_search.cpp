// agent/builtin_search.cpp: the template search's order and bookkeeping.
#include <algorithm>
#include <set>

#include "agent/builtin.h"
#include "suite/instance.h"

namespace agent {

namespace {

// Index of v among the sorted distinct values of `all`; -1 if absent.
int rank_of(const std::set<int64_t>& all, int64_t v) {
  auto it = all.find(v);
  return it == all.end() ? -1 : static_cast<int>(std::distance(all.begin(), it));
}

// Why a problem has nothing to search: no search.json at all, or none of its families
// runs on this backend. Names the problem and the file, and says what to do instead.
std::string no_templates_message(const eval::EvalConfig& cfg) {
  const std::string file = cfg.problem.dir + "/search.json";
  const std::string head = "problem " + cfg.problem.name + " is not supported by the builtin: ";
  if (cfg.problem.search.file.empty())
    return head + "it has no templates, " + file +
           " is missing (it declares the expert kernels' knobs, see problems/README.md "
           "\"search.json\"); add it, or solve with an LLM (--model provider:name)";
  return head + "no template for the " + sandbox::backend_name(cfg.settings.backend) +
         " backend, no family in " + file + " has a " +
         (cfg.settings.backend == sandbox::Backend::host ? "host (.cpp)" : "CUDA (.cu)") +
         " source; add one, or pick the other backend (--backend)";
}

}  // namespace

TemplateSearch::TemplateSearch(std::vector<suite::Prediction> ranked)
    : ranked_(std::move(ranked)) {}

bool TemplateSearch::tried(const suite::Template& t) const {
  return std::any_of(trials_.begin(), trials_.end(), [&](const Trial& x) {
    return x.pred.tmpl.name() == t.name() && x.pred.tmpl.source == t.source;
  });
}

bool TemplateSearch::family_dropped(const std::string& family) const {
  return std::find(dropped_.begin(), dropped_.end(), family) != dropped_.end();
}

bool TemplateSearch::live(const suite::Template& t) const {
  return !family_dropped(t.family()) && !tried(t);
}

// One knob one step away in the family's own values (blocks 32 -> 16 or 64, ...).
bool TemplateSearch::neighbour(const suite::Template& a, const suite::Template& b) const {
  if (a.family() != b.family() || a.source != b.source) return false;
  // Each knob's values over the family, as (knob, value) lists: blocks, threads, chunk,
  // then the GEMM knobs (0 where a template leaves one at its default).
  auto values = [](const suite::Template& t) {
    std::vector<int64_t> v = {t.blocks, t.threads, t.chunk};
    for (suite::Knob k : suite::all_knobs()) v.push_back(t.gemm.count(k) ? t.gemm.at(k) : 0);
    return v;
  };
  const std::vector<int64_t> va = values(a), vb = values(b);
  std::vector<std::set<int64_t>> all(va.size());
  for (const suite::Prediction& p : ranked_) {
    if (p.tmpl.family() != a.family()) continue;
    const std::vector<int64_t> v = values(p.tmpl);
    for (size_t i = 0; i < v.size(); ++i) all[i].insert(v[i]);
  }
  int d = 0;
  for (size_t i = 0; i < va.size(); ++i)
    d += std::abs(rank_of(all[i], va[i]) - rank_of(all[i], vb[i]));
  return d == 1;
}

const suite::Prediction* TemplateSearch::next() {
  // 1. A family not yet measured: its best-predicted template (ranked_ is fastest first,
  //    so the first untried template of an unseen family is that family's best).
  std::set<std::string> seen;
  for (const Trial& t : trials_) seen.insert(t.pred.tmpl.family());
  for (const suite::Prediction& p : ranked_)
    if (!seen.count(p.tmpl.family()) && live(p.tmpl)) return &p;
  // 2. Refine around the best measured: its untried neighbours, best predicted first.
  if (const Trial* b = best())
    for (const suite::Prediction& p : ranked_)
      if (live(p.tmpl) && neighbour(b->pred.tmpl, p.tmpl)) return &p;
  // 3. Everything else still live, by prediction.
  for (const suite::Prediction& p : ranked_)
    if (live(p.tmpl)) return &p;
  return nullptr;
}

void TemplateSearch::record(const suite::Prediction& p, const sandbox::Verdict& v) {
  Trial t;
  t.pred = p;
  t.status = v.status;
  t.summary = v.summary;
  t.correct = v.status == sandbox::Status::correct;
  t.timed = t.correct && v.timed && v.candidate_time.median_ms > 0;
  t.median_ms = t.timed ? v.candidate_time.median_ms : 0;
  t.speedup = v.speedup;
  trials_.push_back(t);
  // One failing instance rules the family out: its knobs change speed, not correctness.
  if (!t.correct && !family_dropped(p.tmpl.family())) dropped_.push_back(p.tmpl.family());
}

const Trial* TemplateSearch::best() const {
  const Trial* b = nullptr;
  for (const Trial& t : trials_) {
    if (!t.correct) continue;
    if (!b)
      b = &t;
    else if (t.timed && (!b->timed || t.median_ms < b->median_ms))
      b = &t;
  }
  return b;
}

bool run_search(const suite::Problem& problem, TemplateSearch* search, int budget,
                const TemplateEvaluator& eval, std::string* err,
                const std::function<void(const Trial&)>& on_trial) {
  for (int i = 0; i < budget; ++i) {
    const suite::Prediction* p = search->next();
    if (!p) break;
    const suite::Prediction pred = *p;  // record() may not invalidate it, but be safe
    std::string source;
    if (!suite::instantiate_file(problem, pred.tmpl, &source, err)) return false;
    sandbox::Verdict v;
    if (!eval(pred, source, &v, err)) return false;
    search->record(pred, v);
    if (on_trial) on_trial(search->trials().back());
  }
  return true;
}

bool search_instance(const eval::EvalConfig& cfg, suite::Instance* inst, std::string* err) {
  const std::string size = eval::sizes_to_run(cfg, false).back();
  return suite::resolve_instance(cfg.problem, cfg.settings.world, size, cfg.settings.overrides,
                                 inst, err);
}

bool builtin_supports(const eval::EvalConfig& cfg, std::string* why) {
  suite::Instance inst;
  std::string err;  // an instance that does not resolve is make_search's error to report
  if (!search_instance(cfg, &inst, &err)) return true;
  if (!suite::template_space(cfg.problem, inst, cfg.settings.backend).empty()) return true;
  *why = no_templates_message(cfg);
  return false;
}

bool make_search(const eval::EvalConfig& cfg, std::unique_ptr<TemplateSearch>* out,
                 std::string* err) {
  suite::Instance inst;
  if (!search_instance(cfg, &inst, err)) return false;
  const std::vector<suite::Template> space =
      suite::template_space(cfg.problem, inst, cfg.settings.backend);
  if (space.empty()) {
    *err = no_templates_message(cfg);
    return false;
  }
  *out = std::make_unique<TemplateSearch>(suite::rank_templates(space, inst, cfg.machine));
  return true;
}

}  // namespace agent
