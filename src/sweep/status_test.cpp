// src/sweep/status_test.cpp: the status from a folder's ledger and plan: pending and
// failed counts, means over problems of unequal n, the plan check, CSV.
#include "sweep/status.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>

#include "sweep/sweep.h"

namespace sweep {

namespace {
Record done(const std::string& problem, int index, bool correct, double speedup = 0) {
  Record r;
  r.state = SampleState::done;
  r.problem = problem;
  r.category = "collective";
  r.model = "m";
  r.index = index;
  r.correct = correct;
  r.status = correct ? "correct" : "mismatch";
  r.speedup = speedup;
  r.first_correct_turn = correct ? 2 : 0;
  return r;
}
}  // namespace

TEST_CASE("sweep status: done, failed, running and pending from the ledger and the plan") {
  char t[] = "/tmp/kf-status-test-XXXXXX";
  REQUIRE(mkdtemp(t));
  std::string dir = t, err;
  PlanFile plan{1, {"a", "b"}, {"collective", "collective"}, {"m"}, 4, "direct", {}};
  REQUIRE(write_plan(dir, plan, &err));
  std::string ledger = dir + "/ledger.jsonl";
  for (int i = 0; i < 4; ++i) REQUIRE(append_record(ledger, done("a", i, i < 2), &err));
  Record run = done("b", 0, false);
  run.state = SampleState::running;
  REQUIRE(append_record(ledger, run, &err));
  REQUIRE(append_record(ledger, done("b", 0, true), &err));  // b/0 ran to the end
  run.index = 1;
  REQUIRE(append_record(ledger, run, &err));  // b/1 was cut short
  Record failed = done("b", 2, false);
  failed.state = SampleState::failed;
  REQUIRE(append_record(ledger, failed, &err));
  Record not_runnable = done("c", 0, false);
  not_runnable.state = SampleState::not_runnable;
  not_runnable.status = "not_runnable";
  not_runnable.message = "PKB's reference fails on this setup at world 1";
  REQUIRE(append_record(ledger, not_runnable, &err));
  Status st;
  std::vector<Record> fin;
  REQUIRE(read_status(dir, &st, &fin, &err));
  CHECK(st.planned == 8);
  CHECK(st.done == 5);
  CHECK(st.running == 1);
  CHECK(st.failed == 1);
  CHECK(st.pending == 1);       // b/3
  CHECK(st.not_runnable == 1);  // c/0, in no row below and in no verdict count
  CHECK(st.not_runnable_problems["c"] == not_runnable.message);
  CHECK(st.verdicts["m"]["correct"] == 3);
  CHECK(st.verdicts["m"]["mismatch"] == 2);
  // a: n=4, c=2; b: n=1, c=1. The mean has only the ks both problems have.
  REQUIRE(st.rows.size() == 4);  // all, category, a, b
  const Metrics& all = st.rows[0].m;
  CHECK(st.rows[0].scope == "all");
  REQUIRE(all.pass.size() == 1);
  CHECK(all.pass[0].k == 1);
  CHECK(all.pass[0].value == doctest::Approx((0.5 + 1.0) / 2));
  CHECK(*all.turns_to_correct == doctest::Approx(2.0));
  std::string table = status_table(st);
  CHECK(table.find("5 done of 8 planned, 1 pending, 1 running") != std::string::npos);
  CHECK(table.find("1 failed (not counted") != std::string::npos);
  CHECK(table.find("1 not runnable on this setup") != std::string::npos);
  CHECK(table.find("not runnable here: c: PKB's reference fails") != std::string::npos);
  // The JSON contract round-trips.
  Status back = nlohmann::json(st).get<Status>();
  CHECK(back.rows[0].m.pass == all.pass);
  CHECK(nlohmann::json(back) == nlohmann::json(st));
  std::filesystem::remove_all(dir);
}

TEST_CASE("sweep status: fast_p and the geometric mean over problems with speeds") {
  std::vector<Record> recs = {done("a", 0, true, 2.0), done("a", 1, true, 0.5),
                              done("b", 0, true, 4.0), done("b", 1, false, 0)};
  std::vector<Row> rows = summarize(recs);
  const Metrics& all = rows[0].m;
  REQUIRE(all.speed_measured);
  REQUIRE(all.fast.size() == 3);
  // fast_1.0@1: a 1 of 2, b 1 of 2; fast_2.0@1 likewise (2.0 and 4.0 reach 2x).
  CHECK(all.fast[0].at_k[0].value == doctest::Approx(0.5));
  CHECK(all.fast[2].at_k[0].value == doctest::Approx(0.5));
  CHECK(all.fast[2].count == 2);
  // Geomean per problem (a: sqrt(2 * 0.5) = 1, b: 4), then geometric over problems: 2.
  CHECK(*all.geomean_speedup == doctest::Approx(2.0));
  sweep::Status st;
  st.dir = "d";
  st.rows = rows;
  std::string csv = status_csv(st);
  CHECK(csv.find("fast_1.5@2") != std::string::npos);
  CHECK(csv.find("\nm,a,1,2,2,true,1,1,0.5,1,0.5,1,0.5,1,1,") != std::string::npos);
}

TEST_CASE("sweep plan: other solve options or mode are another sweep; more samples are not") {
  PlanFile a{1, {"x"}, {""}, {"m"}, 4, "direct", {"--max-turns", "3"}};
  PlanFile b = a;
  b.samples = 8;
  b.models.push_back("m2");
  std::string err;
  CHECK(same_sweep(a, b, &err));
  b.solve_args = {"--max-turns", "5"};
  CHECK_FALSE(same_sweep(a, b, &err));
  CHECK(err.find("--max-turns 5") != std::string::npos);
  err.clear();
  b = a;
  b.mode = "agent";
  CHECK_FALSE(same_sweep(a, b, &err));
  CHECK(err.find("agent") != std::string::npos);
}

TEST_CASE("sweep status: a folder with no sweep is an error naming it") {
  char t[] = "/tmp/kf-status-empty-XXXXXX";
  REQUIRE(mkdtemp(t));
  Status st;
  std::vector<Record> fin;
  std::string err;
  CHECK_FALSE(read_status(t, &st, &fin, &err));
  CHECK(err.find(t) != std::string::npos);
  std::filesystem::remove(t);
}

}  // namespace sweep
