// agent/builtin.cpp: the template search as an agent::Model.
#include "agent/builtin.h"

#include <fmt/format.h>

namespace agent {

namespace {

std::string fence(sandbox::Backend backend, const std::string& source) {
  return fmt::format("```{}\n{}{}```\n", backend == sandbox::Backend::cuda ? "cuda" : "cpp", source,
                     !source.empty() && source.back() == '\n' ? "" : "\n");
}

std::string trial_line(const Trial& t) {
  std::string s = fmt::format("- {}: {}", t.pred.tmpl.name(), sandbox::status_name(t.status));
  if (t.timed) s += fmt::format(", median {:.4f} ms", t.median_ms);
  if (t.speedup > 0) s += fmt::format(", {:.2f}x the baseline", t.speedup);
  s += fmt::format(" (predicted {:.4f} ms)\n", t.pred.ms);
  return s;
}

class BuiltinModel : public Model {
 public:
  BuiltinModel(const eval::EvalConfig& cfg, std::unique_ptr<TemplateSearch> s)
      : cfg_(cfg), search_(std::move(s)) {}

  std::string name() const override { return "builtin"; }

  bool next(const llm::Request& /*req*/, const std::vector<sandbox::Verdict>& verdicts,
            llm::Reply* out, llm::Error* err) override {
    // verdicts[i] judged our i-th proposal (the loop evaluates every well-formed reply;
    // ours always are). Repeats of the best after exhaustion are not new trials.
    while (recorded_ < verdicts.size() && recorded_ < proposed_.size()) {
      search_->record(proposed_[recorded_], verdicts[recorded_]);
      ++recorded_;
    }
    std::string text, source, why;
    if (recorded_ < proposed_.size()) {
      // The loop asked again before judging the last proposal: propose it again.
      text = "Proposing the same template again (it has no verdict yet): " +
             proposed_.back().tmpl.name() + "\n\n";
      if (!suite::instantiate_file(cfg_.problem, proposed_.back().tmpl, &source, &why))
        return fail(why, err);
    } else if (const suite::Prediction* p = search_->next()) {
      proposed_.push_back(*p);
      // A GEMM's compute overlaps the data terms in a fused kernel and precedes them in an
      // unfused one.
      const bool fused = p->tmpl.model.overlap;
      const std::string compute = fmt::format("compute {:.4f}", p->compute_ms);
      const std::string data = fmt::format(
          "{}max(comm {:.4f}, hbm {:.4f}{})", p->compute_ms > 0 && !fused ? compute + " + " : "",
          p->comm_ms, p->mem_ms, p->compute_ms > 0 && fused ? ", " + compute : "");
      text = fmt::format(
          "Template {} of {}: {} (from {}). The cost model predicts {:.4f} ms ({}-bound: launch "
          "{:.4f} + sync {:.4f} + {} ms; {} blocks at {:.0f} GB/s).\n",
          proposed_.size(), search_->space_size(), p->tmpl.name(), p->tmpl.source, p->ms, p->bound,
          p->launch_ms, p->sync_ms, data, p->blocks, p->bw_gbps);
      if (!suite::instantiate_file(cfg_.problem, p->tmpl, &source, &why)) return fail(why, err);
    } else if (const Trial* b = search_->best()) {
      text = fmt::format(
          "The template space is exhausted ({} tried of {}); the best is {} "
          "again{}.\n",
          search_->trials().size(), search_->space_size(), b->pred.tmpl.name(),
          b->timed ? fmt::format(" at a median of {:.4f} ms", b->median_ms) : "");
      if (!suite::instantiate_file(cfg_.problem, b->pred.tmpl, &source, &why))
        return fail(why, err);
    } else {
      return fail("every template of " + cfg_.problem.name +
                      " failed or was ruled out: the builtin search has nothing left to propose",
                  err);
    }
    if (!search_->trials().empty()) {
      text += "\nResults so far:\n";
      for (const Trial& t : search_->trials()) text += trial_line(t);
    }
    out->text = text + "\n" + fence(cfg_.settings.backend, source);
    out->stop_reason = "stop";
    out->raw_stop_reason = "builtin";
    out->model = "builtin";
    out->cost_note = "the builtin search calls no model";
    out->attempts = 1;
    return true;
  }

 private:
  static bool fail(const std::string& why, llm::Error* err) {
    err->kind = llm::ErrorKind::bad_request;
    err->message = why;
    err->retryable = false;
    return false;
  }

  eval::EvalConfig cfg_;
  std::unique_ptr<TemplateSearch> search_;
  std::vector<suite::Prediction> proposed_;
  size_t recorded_ = 0;
};

}  // namespace

std::unique_ptr<Model> make_builtin_model(const eval::EvalConfig& cfg, std::string* err) {
  std::unique_ptr<TemplateSearch> s;
  if (!make_search(cfg, &s, err)) return nullptr;
  return std::make_unique<BuiltinModel>(cfg, std::move(s));
}

}  // namespace agent
