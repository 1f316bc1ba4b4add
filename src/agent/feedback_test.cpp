#include "agent/feedback.h"

#include <doctest/doctest.h>

#include "agent/template.h"
#include "tests/has.h"

namespace {

sandbox::Verdict base(sandbox::Status status) {
  sandbox::Verdict v;
  v.status = status;
  v.problem = "all_reduce";
  v.world = 4;
  v.backend = sandbox::Backend::cuda;
  v.size = "full";
  return v;
}

std::string render(const sandbox::Verdict& v, double target = 1.0) {
  std::string out, err;
  REQUIRE_MESSAGE(agent::render_feedback(agent::default_prompts_dir(), v, 3, target, &out, &err),
                  err);
  return out;
}

}  // namespace

TEST_CASE("feedback: every verdict status renders through its template") {
  for (int i = 0; i <= static_cast<int>(sandbox::Status::correct); ++i) {
    std::string s = render(base(static_cast<sandbox::Status>(i)));
    CHECK(has(s, "Turn 3"));
    CHECK(has(s, "world 4, cuda backend"));
  }
}

TEST_CASE("feedback: mismatch names rank, tensor and indices; timeout the stuck ranks and phases") {
  sandbox::Verdict v = base(sandbox::Status::mismatch);
  sandbox::Failure f;
  f.kind = sandbox::Status::mismatch;
  f.who = sandbox::Role::candidate;
  f.tensor = "y";
  f.bad_count = 3;
  f.total = 10;
  f.first_bad = {{{7}, 2.0, 1.0}};
  v.failures = {f};
  v.failure_ranks = {2};
  std::string s = render(v);
  CHECK(has(s, "rank 2, tensor y, 3 of 10 elements wrong; first bad: y[7] = 2 (want 1)"));
  CHECK(has(s, "poisoned with NaN"));  // the native suite's advice (prompts/advice_mismatch.md)
  // A PKB mismatch gets PKB's advice: its outputs are not poisoned, there is no kf_run.
  std::string pkb, err;
  REQUIRE_MESSAGE(
      agent::render_feedback(agent::default_prompts_dir() + "/pkb", v, 3, 1.0, &pkb, &err), err);
  CHECK(has(pkb, "rank 2"));
  CHECK(has(pkb, "cast to float32"));
  CHECK_FALSE(has(pkb, "NaN"));
  CHECK_FALSE(has(pkb, "kf_run"));
  sandbox::Verdict t = base(sandbox::Status::timeout);
  t.stuck = {{1, "check", "trial 0 call 1", 10.5, true}};
  t.others = {{0, "check", "trial 0 call 2", 0.1, false}};
  t.limit_s = 10;
  s = render(t);
  CHECK(has(s, "rank 1 was stuck in check (trial 0 call 1, inside kf_run) for 10.5 s"));
  CHECK(has(s, "rank 0 was in check (trial 0 call 2)"));
}

size_t count(const std::string& s, const std::string& w) {
  size_t n = 0;
  for (size_t at = s.find(w); at != std::string::npos; at = s.find(w, at + 1)) ++n;
  return n;
}

TEST_CASE("feedback: a failure the summary line states is not listed again below it") {
  sandbox::Verdict v = base(sandbox::Status::mismatch);
  sandbox::Failure f;
  f.kind = sandbox::Status::mismatch;
  f.who = sandbox::Role::candidate;
  f.tensor = "y";
  f.bad_count = 3;
  f.total = 10;
  f.first_bad = {{{7}, 2.0, 1.0}};
  v.failures = {f};
  v.failure_ranks = {2};
  std::string s = render(v);
  CHECK(count(s, "3 of 10 elements wrong") == 1);
  CHECK_FALSE(has(s, "\n\n\n"));  // no empty list left behind
  // A second rank's failure: the summary names rank 2 (and "also rank 3"); the list, rank 3.
  sandbox::Failure g = f;
  g.bad_count = 5;
  v.failures = {f, g};
  v.failure_ranks = {2, 3};
  s = render(v);
  CHECK(count(s, "rank 2, tensor y, 3 of 10 elements wrong") == 1);
  CHECK(count(s, "rank 3, tensor y, 5 of 10 elements wrong") == 1);
  CHECK(has(s, "(also rank 3)\n\n- mismatch: rank 3"));
  // A crash: "rank 1 died with ..." once.
  sandbox::Verdict c = base(sandbox::Status::crash);
  c.crashes = {{1, "signal 11 (SIGSEGV) in check trial 0 call 0"}};
  s = render(c);
  CHECK(count(s, "rank 1 died with") == 1);
  CHECK_FALSE(has(s, "\n\n\n"));
  // Unstable, the same.
  sandbox::Verdict u = base(sandbox::Status::unstable);
  f.kind = sandbox::Status::unstable;
  u.failures = {f};
  u.failure_ranks = {0};
  CHECK(count(render(u), "3 of 10 elements differ between calls") == 1);
}

TEST_CASE("feedback: correct against the target; best and target rules") {
  sandbox::Verdict v = base(sandbox::Status::correct);
  v.timed = true;
  v.speedup = 0.8;
  v.candidate_time.median_ms = 1.25;
  v.baseline_time.n = 10;
  v.baseline_time.median_ms = 1.0;
  v.roofline_ms = 0.5;
  v.pct_roofline = 40;
  v.notes = {"the size was small"};
  v.harness_notes = {"sandbox: bwrap (own mount, PID and network namespaces)",
                     "isolation: writes only beneath /dev, /tmp/runs/evals/x/full"};
  std::string s = render(v);
  CHECK(has(s, "speedup: 0.80x"));
  CHECK(has(s, "- note: the size was small"));
  CHECK_FALSE(has(s, "bwrap"));  // the sandbox's notes are the person's, not the model's
  CHECK_FALSE(has(s, "writes only beneath"));
  CHECK(has(s, "not fast enough yet"));
  CHECK_FALSE(agent::target_met(v, 1.0));
  CHECK(agent::target_met(v, 0.75));
  sandbox::Verdict w = v;
  w.speedup = 1.5;
  CHECK(agent::better_than(w, v));
  CHECK_FALSE(agent::better_than(v, w));
  sandbox::Verdict host = base(sandbox::Status::correct);
  host.backend = sandbox::Backend::host;
  CHECK(agent::target_met(host, 5.0));  // no speedup can be measured: correct is the goal
  CHECK(has(render(host), "not a speed measurement"));
  CHECK(agent::better_than(host, base(sandbox::Status::mismatch)));
}

TEST_CASE("feedback: clip keeps head or tail and says what was cut") {
  std::string log;
  for (int i = 0; i < 100; ++i) log += "line " + std::to_string(i) + "\n";
  std::string h = agent::clip_head(log, 10, 10000);
  CHECK(has(h, "line 9\n"));
  CHECK_FALSE(has(h, "line 10\n"));
  CHECK(has(h, "[90 more lines cut]"));
  std::string t = agent::clip_tail(log, 10, 10000);
  CHECK(has(t, "line 99\n"));
  CHECK(has(t, "[90 earlier lines cut]"));
}
