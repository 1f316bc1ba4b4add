// agent/builtin_test.cpp: the template search's order, its reaction to verdicts and the
// builtin Model's replies, with a fake evaluator (no sandbox).
#include "agent/builtin.h"

#include <doctest/doctest.h>

#include "agent/reply.h"
#include "kf_build_paths.h"
#include "suite/paths.h"

namespace {

suite::Prediction pred(const std::string& algo, int blocks, double ms) {
  suite::Prediction p;
  p.tmpl.problem = "all_reduce";
  p.tmpl.backend = sandbox::Backend::cuda;
  p.tmpl.source = "solution.cu";
  p.tmpl.mech = "reg";
  p.tmpl.algo = algo;
  p.tmpl.blocks = blocks;
  p.tmpl.threads = 512;
  p.tmpl.macros = {{"KF_ALGO", algo}, {"KF_BLOCKS", std::to_string(blocks)}};
  p.ms = ms;
  return p;
}

sandbox::Verdict verdict(sandbox::Status status, double median_ms) {
  sandbox::Verdict v;
  v.status = status;
  v.summary = sandbox::status_name(status);
  v.timed = median_ms > 0;
  v.candidate_time.median_ms = median_ms;
  return v;
}

// Two families, already fastest-first as rank_templates returns them.
std::vector<suite::Prediction> space() {
  return {pred("two_shot", 64, 0.010), pred("two_shot", 32, 0.011), pred("one_shot", 32, 0.012),
          pred("two_shot", 16, 0.013), pred("one_shot", 16, 0.014), pred("two_shot", 8, 0.020)};
}

std::string name(const suite::Prediction* p) {
  return p ? p->tmpl.name() : "(none)";
}

eval::EvalConfig host_config() {
  eval::EvalConfig cfg;
  std::string err;
  REQUIRE_MESSAGE(
      suite::load_problem(std::string(KF_SOURCE_ROOT) + "/problems/all_reduce", &cfg.problem, &err),
      err);
  cfg.paths = suite::default_paths();
  cfg.machine = suite::default_h200();
  cfg.settings = sandbox::default_settings(sandbox::Backend::host);
  cfg.settings.world = 2;
  return cfg;
}

}  // namespace

TEST_CASE(
    "builtin: search tries each family's best prediction, then refines around the best measured") {
  agent::TemplateSearch s(space());
  const suite::Prediction* p = s.next();
  CHECK(name(p) == "reg/two_shot blocks=64 threads=512");  // best predicted overall
  s.record(*p, verdict(sandbox::Status::correct, 0.05));
  p = s.next();
  CHECK(name(p) == "reg/one_shot blocks=32 threads=512");  // the other family's head
  s.record(*p, verdict(sandbox::Status::correct, 0.03));   // measured faster than predicted
  // Refine around one_shot blocks=32 (the best measured): its neighbour blocks=16 comes
  // before two_shot templates that are predicted faster.
  p = s.next();
  CHECK(name(p) == "reg/one_shot blocks=16 threads=512");
  s.record(*p, verdict(sandbox::Status::correct, 0.04));
  // No neighbour of the best is left: the rest by prediction.
  p = s.next();
  CHECK(name(p) == "reg/two_shot blocks=32 threads=512");
  REQUIRE(s.best());
  CHECK(s.best()->pred.tmpl.name() == "reg/one_shot blocks=32 threads=512");
  CHECK(s.best()->median_ms == doctest::Approx(0.03));
}

TEST_CASE("builtin: a failing family is dropped and the space runs out") {
  agent::TemplateSearch s(space());
  const suite::Prediction* p = s.next();
  s.record(*p, verdict(sandbox::Status::mismatch, 0));
  CHECK(s.family_dropped("reg/two_shot"));
  CHECK(s.best() == nullptr);
  std::vector<std::string> seen;
  while ((p = s.next())) {
    seen.push_back(p->tmpl.name());
    CHECK(p->tmpl.algo == "one_shot");
    s.record(*p, verdict(sandbox::Status::correct, 0.02 + 0.01 * seen.size()));
  }
  CHECK(seen.size() == 2);  // both one_shot templates, then exhausted
  REQUIRE(s.best());
  CHECK(s.best()->pred.tmpl.name() == seen[0]);
  CHECK(s.trials().size() == 3);
}

TEST_CASE("builtin: correct but untimed trials count, a timed one is preferred") {
  agent::TemplateSearch s(space());
  const suite::Prediction* p = s.next();
  s.record(*p, verdict(sandbox::Status::correct, 0));
  REQUIRE(s.best());
  CHECK_FALSE(s.best()->timed);
  p = s.next();
  s.record(*p, verdict(sandbox::Status::correct, 0.5));
  CHECK(s.best()->timed);
  CHECK(s.best()->pred.tmpl.name() == p->tmpl.name());
}

TEST_CASE("builtin: run_search instantiates, evaluates within the budget and records") {
  eval::EvalConfig cfg = host_config();
  std::unique_ptr<agent::TemplateSearch> s;
  std::string err;
  REQUIRE_MESSAGE(agent::make_search(cfg, &s, &err), err);
  int calls = 0;
  auto fake = [&](const suite::Prediction& p, const std::string& source, sandbox::Verdict* v,
                  std::string*) {
    ++calls;
    CHECK(source.find("#define KF_ALGO " + p.tmpl.algo) != std::string::npos);
    CHECK(source.find("kf_run") != std::string::npos);
    *v = verdict(p.tmpl.algo == "push" ? sandbox::Status::crash : sandbox::Status::correct,
                 1.0 / calls);
    return true;
  };
  REQUIRE_MESSAGE(agent::run_search(cfg.problem, s.get(), 3, fake, &err), err);
  CHECK(calls == 3);
  REQUIRE(s->best());
  CHECK(s->best()->pred.tmpl.algo == "pull");
  CHECK(s->family_dropped("host/push"));
  // The evaluator's internal failure stops the search with its message.
  auto broken = [](const suite::Prediction&, const std::string&, sandbox::Verdict*,
                   std::string* e) {
    *e = "sandbox broke";
    return false;
  };
  REQUIRE(agent::make_search(cfg, &s, &err));
  CHECK_FALSE(agent::run_search(cfg.problem, s.get(), 3, broken, &err));
  CHECK(err == "sandbox broke");
}

TEST_CASE(
    "builtin: the model proposes fenced sources, learns from verdicts, repeats the best when "
    "done") {
  eval::EvalConfig cfg = host_config();
  std::string err;
  auto model = agent::make_builtin_model(cfg, &err);
  REQUIRE_MESSAGE(model, err);
  CHECK(model->name() == "builtin");
  std::vector<sandbox::Verdict> verdicts;
  llm::Request req;
  llm::Reply reply;
  llm::Error lerr;
  std::vector<std::string> sources;
  for (int turn = 0; turn < 8; ++turn) {
    REQUIRE_MESSAGE(model->next(req, verdicts, &reply, &lerr), lerr.message);
    agent::ParsedReply parsed = agent::parse_direct_reply(reply.text, sandbox::Backend::host);
    REQUIRE_MESSAGE(parsed.ok, parsed.error);
    CHECK(reply.text.find("```cpp") != std::string::npos);
    CHECK(parsed.code.find("// kforge template all_reduce host/") == 0);
    sources.push_back(parsed.code);
    // The first proposal is correct and fast; every later one slower.
    verdicts.push_back(verdict(sandbox::Status::correct, turn == 0 ? 0.1 : 1.0 + turn));
  }
  // host: 2 algorithms x 2 chunks = 4 templates, then the best (the first) again.
  CHECK(reply.text.find("exhausted") != std::string::npos);
  CHECK(sources.back() == sources.front());
  CHECK(sources[1] != sources[0]);
  CHECK(reply.text.find("Results so far") != std::string::npos);
}

TEST_CASE("builtin: no templates is an error naming the problem") {
  eval::EvalConfig cfg = host_config();
  cfg.problem.name = "not_a_problem";        // a problem without expert kernels:
  cfg.problem.search = suite::SearchSpec();  // no search.json, so no templates
  cfg.settings.backend = sandbox::Backend::cuda;
  std::string err;
  CHECK_FALSE(agent::make_builtin_model(cfg, &err));
  CHECK(err.find("not_a_problem") != std::string::npos);
  std::string why;
  CHECK_FALSE(agent::builtin_supports(cfg, &why));
  CHECK(why.find("problem not_a_problem is not supported by the builtin") == 0);
  cfg.problem.search = host_config().problem.search;  // its own templates again
  cfg.settings.backend = sandbox::Backend::host;
  CHECK(agent::builtin_supports(cfg, &why));
}
