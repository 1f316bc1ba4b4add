#include "evaluate.h"

#include <doctest/doctest.h>

#include <filesystem>

using namespace sandbox;
namespace fs = std::filesystem;

namespace {

Job job2() {
  Job j;
  j.settings.world = 2;
  j.settings.backend = Backend::cuda;
  JobTensor y;
  y.name = "y";
  y.output = true;
  y.atol = 1e-5;
  y.rtol = 1e-5;
  j.tensors = {y};
  return j;
}

RunResult ok_run() {
  RunResult r;
  r.exit_code = 0;
  for (int i = 0; i < 2; ++i) {
    RankReport rep;
    rep.rank = i;
    r.reports.push_back(rep);
    RankStatus s;
    s.rank = i;
    s.present = true;
    s.phase = RankPhase::done;
    r.statuses.push_back(s);
  }
  return r;
}

}  // namespace

TEST_CASE("evaluate: make_eval_dir makes fresh unique directories") {
  std::string root = fs::temp_directory_path().string() + "/kf-evaldir-test";
  std::string a = make_eval_dir(root), b = make_eval_dir(root);
  REQUIRE(!a.empty());
  REQUIRE(!b.empty());
  CHECK(a != b);
  CHECK(fs::is_directory(a));
  CHECK(a.rfind(root + "/", 0) == 0);
  fs::remove_all(root);
}

TEST_CASE("evaluate: a timed correct run gets speedup, busbw and roofline") {
  Instance inst;
  inst.label = "full";
  inst.roofline_ms = 0.05;
  inst.busbw_bytes = 4e6;
  inst.busbw_factor = 1.0;
  RunResult r = ok_run();
  RunReport rr;
  rr.timed = true;
  rr.baseline_timed = true;
  rr.candidate.n = 50;
  rr.candidate.median_ms = 0.1;
  rr.baseline.n = 50;
  rr.baseline.median_ms = 0.2;
  r.result = rr;
  Verdict v;
  std::string err;
  REQUIRE(verdict_from_run(inst, job2(), r, &v, &err));
  CHECK(v.status == Status::correct);
  CHECK(v.speedup == doctest::Approx(2.0));
  CHECK(v.busbw_gbps == doctest::Approx(40.0));
  CHECK(v.baseline_busbw_gbps == doctest::Approx(20.0));
  CHECK(v.pct_roofline == doctest::Approx(50.0));
  CHECK(v.size == "full");

  // The same on the host backend: no speed figures.
  Job h = job2();
  h.settings.backend = Backend::host;
  Verdict hv;
  REQUIRE(verdict_from_run(inst, h, r, &hv, &err));
  CHECK(hv.status == Status::correct);
  CHECK(hv.speedup == 0);
  CHECK(hv.busbw_gbps == 0);
  CHECK(summarize(hv).find("not a speed measurement") != std::string::npos);
}

TEST_CASE("evaluate: samples timed past comm.stream()'s end are noted and flagged on a GPU") {
  RunResult r = ok_run();
  RunReport rr;
  rr.timed = true;
  rr.candidate.n = 50;
  rr.candidate.median_ms = 0.5;
  rr.candidate.off_stream = 50;
  rr.off_stream_slack_ms = 0.008;
  // What the rank writes is what kforge reads: the new fields survive result.json.
  nlohmann::json j = rr;
  r.result = j.get<RunReport>();
  Verdict v;
  std::string err;
  REQUIRE(verdict_from_run(Instance{}, job2(), r, &v, &err));
  CHECK(v.status == Status::correct);
  CHECK(v.candidate_time.off_stream == 50);
  CHECK(v.off_stream_slack_ms == doctest::Approx(0.008));
  CHECK(v.flags == std::vector<std::string>{"work_off_stream"});
  auto noted = [](const Verdict& x) {
    for (auto& n : x.notes)
      if (n.find("50 of 50 timed samples left work running") != std::string::npos) return true;
    return false;
  };
  CHECK(noted(v));
  // A few late drains are noise: no note, no flag.
  r.result->candidate.off_stream = 3;
  Verdict few;
  REQUIRE(verdict_from_run(Instance{}, job2(), r, &few, &err));
  CHECK(few.flags.empty());
  CHECK(!noted(few));
  // Emulated ranks' times are no speed: nothing said either.
  r.result->candidate.off_stream = 50;
  r.result->emulated = true;
  Verdict emu;
  REQUIRE(verdict_from_run(Instance{}, job2(), r, &emu, &err));
  CHECK(emu.flags.empty());
  CHECK(!noted(emu));
}

TEST_CASE("evaluate: crash files win over the watchdog") {
  RunResult r = ok_run();
  r.reports[1].reset();
  r.killed_by_watchdog = true;
  r.stuck = {r.statuses[0]};
  r.crashes = {{1, "signal 11 (SIGSEGV) in check trial 0 call 0"}};
  Verdict v;
  std::string err;
  REQUIRE(verdict_from_run(Instance{}, job2(), r, &v, &err));
  CHECK(v.status == Status::crash);
  REQUIRE(v.crashes.size() == 1);
  CHECK(v.crashes[0].rank == 1);
}

TEST_CASE("evaluate: a crash after the report does not hide the failure reported") {
  // Rank 1 reported a mismatch, then a thread the kernel left behind hit it while it
  // shut down: the mismatch decides, the crash is a note.
  RunResult r = ok_run();
  Failure f;
  f.kind = Status::mismatch;
  f.who = Role::candidate;
  f.message = "y is wrong";
  r.reports[1]->failures = {f};
  r.crashes = {{1, "signal 11 (SIGSEGV) in done"}};
  Verdict v;
  std::string err;
  REQUIRE(verdict_from_run(Instance{}, job2(), r, &v, &err));
  CHECK(v.status == Status::mismatch);
  bool noted = false;
  for (auto& n : v.notes) noted = noted || n.find("after its report") != std::string::npos;
  CHECK(noted);
  // A crash before the report (still checking) is the story.
  r.statuses[1].phase = RankPhase::check;
  Verdict c;
  REQUIRE(verdict_from_run(Instance{}, job2(), r, &c, &err));
  CHECK(c.status == Status::crash);
  // So is one after a clean report: the kernel left work that crashed the process.
  r.statuses[1].phase = RankPhase::done;
  r.reports[1]->failures.clear();
  Verdict d;
  REQUIRE(verdict_from_run(Instance{}, job2(), r, &d, &err));
  CHECK(d.status == Status::crash);
}

TEST_CASE("evaluate: the watchdog is a timeout naming stuck and other ranks") {
  RunResult r = ok_run();
  r.killed_by_watchdog = true;
  r.statuses[0].phase = RankPhase::check;
  r.statuses[0].in_candidate = true;
  r.stuck = {r.statuses[0]};
  r.limit_s = 3;
  Verdict v;
  std::string err;
  REQUIRE(verdict_from_run(Instance{}, job2(), r, &v, &err));
  CHECK(v.status == Status::timeout);
  REQUIRE(v.stuck.size() == 1);
  CHECK(v.stuck[0].rank == 0);
  REQUIRE(v.others.size() == 1);
  CHECK(v.others[0].rank == 1);
  CHECK(v.limit_s == 3);
}

TEST_CASE("evaluate: the candidate's failures decide; the baseline's alone are an error") {
  RunResult r = ok_run();
  Failure m;
  m.kind = Status::mismatch;
  m.who = Role::candidate;
  m.tensor = "y";
  r.reports[1]->failures = {m};
  r.exit_code = 1;
  Verdict v;
  std::string err;
  REQUIRE(verdict_from_run(Instance{}, job2(), r, &v, &err));
  CHECK(v.status == Status::mismatch);
  CHECK(v.failure_ranks == std::vector<int>{1});
  CHECK(summarize(v).rfind("mismatch: rank 1, tensor y", 0) == 0);

  RunResult b = ok_run();
  Failure bf;
  bf.kind = Status::setup_error;
  bf.who = Role::baseline;
  bf.message = "kf_setup returned 1";
  b.reports[0]->failures = {bf};
  Verdict bv;
  CHECK(!verdict_from_run(Instance{}, job2(), b, &bv, &err));
  CHECK(err.find("baseline") != std::string::npos);
}

TEST_CASE("evaluate: a rank without a report is a crash told by its exit record") {
  RunResult r = ok_run();
  r.reports[1].reset();
  r.exit_code = 137;
  // mpirun's words are not read: the record of how the rank's process ended is.
  r.output = "mpirun noticed that process rank 0 with PID 1 on node box exited on signal 11.\n";
  r.exits = {RankExit{100, 0, 0}, RankExit{101, -1, 9}};
  Verdict v;
  std::string err;
  REQUIRE(verdict_from_run(Instance{}, job2(), r, &v, &err));
  CHECK(v.status == Status::crash);
  REQUIRE(v.crashes.size() == 1);
  CHECK(v.crashes[0].rank == 1);
  CHECK(v.crashes[0].what.find("signal 9 (SIGKILL) without a report") != std::string::npos);

  r.exits[1] = RankExit{101, 7, 0};  // exit(7) from a library
  Verdict e;
  REQUIRE(verdict_from_run(Instance{}, job2(), r, &e, &err));
  REQUIRE(e.crashes.size() == 1);
  CHECK(e.crashes[0].what.find("exit code 7 without a report") != std::string::npos);

  r.exits[1].reset();  // the reaper went too
  Verdict n;
  REQUIRE(verdict_from_run(Instance{}, job2(), r, &n, &err));
  REQUIRE(n.crashes.size() == 1);
  CHECK(n.crashes[0].what.find("no record") == std::string::npos);
  CHECK(n.crashes[0].what.find("without a report or a record") != std::string::npos);
}

TEST_CASE("evaluate: a rank's sandbox error is kforge's error, not a note or a verdict") {
  RunResult r = ok_run();
  r.reports[1]->sandbox_errors = {"gathering the inputs: short read"};
  r.reports[1]->notes = {"an ordinary note"};
  // What the rank writes is what kforge reads: the field survives rank<R>.json.
  nlohmann::json j = *r.reports[1];
  r.reports[1] = j.get<RankReport>();
  Verdict v;
  std::string err;
  CHECK_FALSE(verdict_from_run(Instance{}, job2(), r, &v, &err));
  CHECK(err.find("the sandbox failed: rank 1: sandbox error: gathering the inputs: short read") ==
        0);
  CHECK(v.notes == std::vector<std::string>{"an ordinary note"});
}
