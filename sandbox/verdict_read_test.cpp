// sandbox/verdict_read_test.cpp: a verdict, a rank status line, read back as written;
// a verdict.json of an older kforge (fewer keys) still reads.
#include "verdict_read.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "rank_status.h"

using namespace sandbox;
using nlohmann::json;

namespace {

Verdict full_verdict() {
  Verdict v;
  v.status = Status::mismatch;
  v.summary = "mismatch: rank 1, tensor y";
  v.problem = "p";
  v.candidate = "/k.cu";
  v.world = 2;
  v.backend = Backend::host;
  v.emulated = true;
  v.size = "small";
  v.log = "line 1\nline 2";
  v.findings = {{"mpi", "k.cu", 12, "uses MPI_Send", "no MPI", "use comm"}};
  Failure f;
  f.kind = Status::mismatch;
  f.who = Role::candidate;
  f.message = "m";
  f.phase = "check";
  f.tensor = "y";
  f.trial = 0;
  f.call = 1;
  f.bad_count = 3;
  f.total = 8;
  f.max_abs = 0.5;
  f.first_bad = {{{1, 2}, 1.5, 0.5}};
  v.failures = {f};
  v.failure_ranks = {1};
  v.stuck = {{0, "check", "trial 0 call 1", 11.5, true}};
  v.others = {{1, "time", "", 2, false}};
  v.limit_s = 10;
  v.crashes = {{1, "signal 11 (SIGSEGV) in check"}};
  v.tolerances = {{"y", 1e-5, 1e-4}};
  v.timed = true;
  v.candidate_time = {50, 1.0, 0.9, 1.1, 0.8, 1.2, 0, 0};
  v.baseline_time = {50, 2.0, 1.9, 2.1, 1.8, 2.2, 0, 0};
  v.baseline_label = "the reference";  // not the default, so that a reader that drops it fails
  v.speedup = 2;
  v.roofline_ms = 0.5;
  v.pct_roofline = 50;
  v.busbw_gbps = 100;
  v.baseline_busbw_gbps = 50;
  v.off_stream_slack_ms = 0.01;
  v.timer_margin_ms = 0.02;
  v.notes = {"a note"};
  v.harness_notes = {"sandbox: a harness note"};
  v.flags = {"a flag"};
  v.seconds = {{"static", 0.1}, {"compile", 2.0}};
  return v;
}

}  // namespace

TEST_CASE("verdict reader: what verdict_json writes reads back equal") {
  Verdict v = full_verdict();
  Verdict back;
  std::string err;
  REQUIRE_MESSAGE(verdict_from_json(verdict_json(v), &back, &err), err);
  CHECK(verdict_json(back) == verdict_json(v));
  CHECK(back.failure_ranks == v.failure_ranks);
  CHECK(back.findings[0].render() == v.findings[0].render());

  auto path = std::filesystem::temp_directory_path() / "kf-verdict-read-test.json";
  json file = verdict_json(v);
  file["solve"] = {{"exit_reason", "target_met"}};  // kforge solve's extra object
  std::ofstream(path) << file.dump(2);
  Verdict from_file;
  REQUIRE_MESSAGE(read_verdict(path.string(), &from_file, &err), err);
  CHECK(verdict_json(from_file) == verdict_json(v));
  std::filesystem::remove(path);
}

TEST_CASE("verdict reader: an older file's keys read; an unknown status is named") {
  json old = {{"status", "correct"},
              {"summary", "correct: 1 ms"},
              {"world", 2},
              {"backend", "cuda"},
              {"timed", true},
              {"speedup", 1.5},
              {"candidate_time", {{"n", 50}, {"median_ms", 1.0}}},
              {"failures", json::array()}};
  Verdict v;
  std::string err;
  REQUIRE_MESSAGE(verdict_from_json(old, &v, &err), err);
  CHECK(v.status == Status::correct);
  CHECK(v.backend == Backend::cuda);
  CHECK(v.speedup == 1.5);
  CHECK(v.candidate_time.median_ms == 1.0);
  CHECK(v.timer_margin_ms == 0);  // newer than the file: the default

  // Before harness_notes, the sandbox's notes were among the notes, which reach the model.
  old["notes"] = {"sandbox: bwrap, cgroup /sys/fs/cgroup/kf", "inputs: from --seed 1",
                  "isolation: no network"};
  REQUIRE_MESSAGE(verdict_from_json(old, &v, &err), err);
  CHECK(v.notes == std::vector<std::string>{"inputs: from --seed 1"});
  CHECK(v.harness_notes == std::vector<std::string>{"sandbox: bwrap, cgroup /sys/fs/cgroup/kf",
                                                    "isolation: no network"});

  CHECK_FALSE(verdict_from_json({{"status", "passed"}}, &v, &err));
  CHECK(err.find("\"passed\"") != std::string::npos);
  CHECK_FALSE(verdict_from_json({{"summary", "no status"}}, &v, &err));
  CHECK_FALSE(read_verdict("/nonexistent/verdict.json", &v, &err));
  CHECK(err.find("/nonexistent/verdict.json") != std::string::npos);
}

TEST_CASE("rank status reader: every phase's name is the one its line carries") {
  for (int i = 0; i <= static_cast<int>(RankPhase::done); ++i) {
    const RankPhase p = static_cast<RankPhase>(i);
    CHECK(json(p) == rank_phase_name(p));
    CHECK(json(rank_phase_name(p)).get<RankPhase>() == p);
  }
}

TEST_CASE("rank status reader: the rank's line reads back; a torn one is an error") {
  RankStatusLine s{123, RankPhase::check, "trial 0 call 2", true, 1712345678901, 10};
  RankStatusLine back;
  std::string err;
  REQUIRE(parse_rank_status(json(s).dump(), &back, &err));
  CHECK(json(back) == json(s));
  // The line as job.h documents it, keys in any order.
  REQUIRE(parse_rank_status(R"({"phase":"load","pid":7,"since_ms":5,"limit_s":20})", &back, &err));
  CHECK(back.pid == 7);
  CHECK(back.phase == RankPhase::load);
  CHECK(back.detail.empty());
  CHECK_FALSE(parse_rank_status(R"({"pid":7,"pha)", &back, &err));
}

TEST_CASE("verdict read: the timing audit reads back, and an older verdict is unaudited") {
  Verdict v;
  v.status = Status::correct;
  v.timed = true;
  v.audit.check = TimeCheck::refuted;
  v.audit.batches = 3;
  v.audit.calls = 67;
  v.audit.audited_ms = 0.020;
  v.audit.claimed_ms = 0.0049;
  v.audit.bound_ms = 0.0006;
  v.audit.raised = 50;
  json j = verdict_json(v);
  CHECK(j["time_check"] == "refuted");
  Verdict back;
  std::string err;
  REQUIRE(verdict_from_json(j, &back, &err));
  CHECK(back.audit.check == TimeCheck::refuted);
  CHECK(back.audit.calls == 67);
  CHECK(back.audit.audited_ms == doctest::Approx(0.020));
  CHECK(back.audit.raised == 50);
  Verdict old;
  REQUIRE(verdict_from_json(json{{"status", "correct"}, {"speedup", 2.9}}, &old, &err));
  CHECK(old.audit.check == TimeCheck::unaudited);
}
