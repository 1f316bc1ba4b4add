// agent/builtin.h: the builtin "model": a search over the expert kernels' templates
// (suite/templates.h) that proposes by the cost model's prediction first, then follows
// the sandbox's verdicts: a family whose candidate failed is dropped, the knobs around
// the best measured template are refined, and when the space is exhausted the best is
// proposed again. It plugs into the agent loop as an agent::Model (`--model builtin`)
// and drives `kforge tune` directly (run_search, no conversation).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/model.h"
#include "eval/eval.h"
#include "suite/analysis.h"

namespace agent {

// One evaluated template.
struct Trial {
  suite::Prediction pred;
  sandbox::Status status = sandbox::Status::rejected;  // the verdict's status
  std::string summary;                                 // the verdict's one line
  bool correct = false;
  bool timed = false;
  double median_ms = 0;  // the candidate's median (timed only)
  double speedup = 0;    // over the baseline, 0 when not reported
};

class TemplateSearch {
 public:
  // `ranked`: the space's predictions, fastest first (suite::rank_templates).
  explicit TemplateSearch(std::vector<suite::Prediction> ranked);

  // The next template to evaluate, or null when every live template has been tried.
  // Order: each family's best-predicted template (families by their best prediction),
  // then the untried neighbours of the best measured template (one knob one step
  // away), then the rest by prediction.
  const suite::Prediction* next();
  // The verdict of the template next() returned last (or any tried one, by name).
  void record(const suite::Prediction& p, const sandbox::Verdict& v);

  // The best correct trial: the fastest timed one, else the first correct. Null if none.
  const Trial* best() const;
  const std::vector<Trial>& trials() const { return trials_; }
  size_t space_size() const { return ranked_.size(); }
  bool family_dropped(const std::string& family) const;

 private:
  bool tried(const suite::Template& t) const;
  bool live(const suite::Template& t) const;
  bool neighbour(const suite::Template& a, const suite::Template& b) const;

  std::vector<suite::Prediction> ranked_;
  std::vector<Trial> trials_;
  std::vector<std::string> dropped_;  // families
};

// Evaluates one instantiated template: writes nothing itself; `source` is the text.
using TemplateEvaluator = std::function<bool(const suite::Prediction& p, const std::string& source,
                                             sandbox::Verdict* v, std::string* err)>;

// Up to `budget` proposals of `search`, each instantiated from `problem` and evaluated.
// False only when instantiation or the evaluator fails (an internal error, *err).
bool run_search(const suite::Problem& problem, TemplateSearch* search, int budget,
                const TemplateEvaluator& eval, std::string* err,
                const std::function<void(const Trial&)>& on_trial = nullptr);

// The instance the search predicts for: cfg's last size (default "full") at cfg.settings.world
// with cfg.settings.overrides. False with *err when it does not resolve.
bool search_instance(const eval::EvalConfig& cfg, suite::Instance* inst, std::string* err);

// Whether the builtin can write cfg's problem on cfg's backend: false, with *why ("problem X
// is not supported by the builtin: ..."), where its search.json is missing or none of its
// families has a source for the backend (a person's new problem). Such a problem is no
// failure of the builtin's: solve, tune and sweep say so and leave it out of the metrics.
bool builtin_supports(const eval::EvalConfig& cfg, std::string* why);

// The search over cfg's problem and backend as a ranked TemplateSearch.
bool make_search(const eval::EvalConfig& cfg, std::unique_ptr<TemplateSearch>* out,
                 std::string* err);

// The agent::Model of the search: every reply names the template, its prediction and
// the results so far, and carries its instantiated source in a ```cuda (or ```cpp on the
// host backend) block. Null with *err when the problem has no templates.
std::unique_ptr<Model> make_builtin_model(const eval::EvalConfig& cfg, std::string* err);

}  // namespace agent
