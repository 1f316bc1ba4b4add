#include "verdict.h"

#include <doctest/doctest.h>

#include "tests/has.h"

using namespace sandbox;

TEST_CASE("verdict: mismatch names rank, tensor, first bad elements, errors and tolerance") {
  Verdict v;
  v.status = Status::mismatch;
  Failure f;
  f.kind = Status::mismatch;
  f.who = Role::candidate;
  f.tensor = "y";
  f.trial = 0;
  f.call = 0;
  f.bad_count = 4099;
  f.total = 4099;
  f.max_abs = 3.1;
  f.max_rel = 2.0;
  f.first_bad = {{{0}, 1.25, 0.5}, {{1}, 2.0, 1.0}};
  v.failures = {f};
  v.failure_ranks = {1};
  v.tolerances = {{"y", 1e-5, 1e-5}};
  CHECK(
      summarize(v) ==
      "mismatch: rank 1, tensor y, 4099 of 4099 elements wrong; first bad: y[0] = 1.25 (want 0.5), "
      "y[1] = 2 (want 1); max abs err 3.1, max rel err 2 (tolerance atol 1e-05 rtol 1e-05); trial "
      "0 call 0");
}

TEST_CASE("verdict: an input written by kf_run") {
  Verdict v;
  v.status = Status::mismatch;
  Failure f;
  f.kind = Status::mismatch;
  f.tensor = "x";
  f.input_modified = true;
  f.bad_count = 10;
  f.total = 100;
  v.failures = {f};
  v.failure_ranks = {0};
  CHECK(has(summarize(v), "rank 0, tensor x, an input, was modified by kf_run"));
  CHECK(has(render_text(v), "must not write its inputs"));
}

TEST_CASE("verdict: a chained call that went wrong names the missing waits, not reset flags") {
  Verdict v;
  v.status = Status::unstable;
  Failure f;
  f.kind = Status::unstable;
  f.tensor = "y";
  f.phase = "chained";
  f.call = 2;
  f.bad_count = 5;
  f.total = 10;
  v.failures = {f};
  v.failure_ranks = {0};
  CHECK(has(summarize(v), "chained call 2"));
  CHECK(has(render_text(v), "wait for every peer to enter before touching its buffers"));
  CHECK(!has(render_text(v), "not reset"));
  v.failures[0].phase = "check";
  CHECK(has(summarize(v), "; call 2"));
  CHECK(has(render_text(v), "not reset"));
}

TEST_CASE("verdict: timeout groups stuck ranks and shows the others") {
  Verdict v;
  v.status = Status::timeout;
  v.limit_s = 10;
  v.stuck = {{0, "check", "trial 0 call 0", 12, true}, {1, "check", "trial 0 call 0", 12, true}};
  v.others = {{2, "barrier", "after trial 0 call 0", 3, false}};
  CHECK(summarize(v) ==
        "timeout: ranks 0, 1 stuck in check (trial 0 call 0, inside kf_run) for more than 10 s; "
        "rank 2 in barrier (after trial 0 call 0)");
}

TEST_CASE("verdict: crash names rank, signal and phase") {
  Verdict v;
  v.status = Status::crash;
  v.crashes = {{1, "signal 11 (SIGSEGV) in check trial 0 call 0"}};
  CHECK(summarize(v) == "crash: rank 1 died with signal 11 (SIGSEGV) in check, trial 0 call 0");
}

TEST_CASE("verdict: a crash after kf::wait's deadline carries the line the device printed") {
  // What the H200 gave for tests/kernels/cuda/deadline.cu at world 2 (bench/RESULTS.md).
  Verdict v;
  v.status = Status::crash;
  Failure f;
  f.kind = Status::crash;
  f.who = Role::candidate;
  f.phase = "check";
  f.message =
      "CUDA error after kf_run (trial 0 call 0): cudaDeviceSynchronize: unspecified launch failure";
  v.failures = {f};
  v.failure_ranks = {0};
  v.log =
      "kf: rank 0 timed out after 1000 ms waiting for signal slot 0 from rank 1 at 0x7f17: "
      "expected >= 1, seen 0 "
      "(block 0, thread 0)\nkforge-rank 0: CUDA error after kf_run; aborting the job\n";
  std::string s = summarize(v);
  CHECK(s.find("crash: rank 0: CUDA error after kf_run") == 0);
  CHECK(s.find("; the device printed: kf: rank 0 timed out after 1000 ms waiting for signal slot 0 "
               "from rank 1") != std::string::npos);
  v.log =
      "kforge-rank 0: CUDA error after kf_run; aborting the job\n";  // no kf line: nothing added
  CHECK(summarize(v).find("device printed") == std::string::npos);
}

TEST_CASE("verdict: correct with times, speedup, busbw and roofline") {
  Verdict v;
  v.status = Status::correct;
  v.backend = Backend::cuda;
  v.timed = true;
  v.candidate_time = {50, 0.123, 0.120, 0.130, 0.11, 0.2};
  v.baseline_time = {50, 0.200, 0.19, 0.21, 0.18, 0.3};
  v.speedup = 0.200 / 0.123;
  v.busbw_gbps = 300;
  v.roofline_ms = 0.091;
  v.pct_roofline = 100 * 0.091 / 0.123;
  CHECK(summarize(v) ==
        "correct: 0.123 ms median (p10 0.120, p90 0.130) vs NCCL 0.200 ms: 1.63x; busbw 300 GB/s; "
        "74% of roofline (0.091 ms)");
  flag_suspicious(&v);
  CHECK(v.flags.empty());
}

TEST_CASE("verdict: host and emulated times are not a speed measurement") {
  Verdict v;
  v.status = Status::correct;
  v.backend = Backend::host;
  v.timed = true;
  v.candidate_time = {10, 1.5, 1.2, 2.0, 1, 3};
  v.speedup = 0;
  std::string s = summarize(v);
  CHECK(has(s, "not a speed measurement"));
  CHECK(!has(s, "x;"));
  v.backend = Backend::cuda;
  v.emulated = true;
  CHECK(has(summarize(v), "emulated"));
  CHECK(has(summarize(v), "not a speed measurement"));
}

TEST_CASE("verdict: suspicious figures are flagged") {
  Verdict v;
  v.status = Status::correct;
  v.backend = Backend::cuda;
  v.timed = true;
  v.candidate_time.median_ms = 0.05;
  v.roofline_ms = 0.1;
  v.speedup = 20;
  flag_suspicious(&v);
  CHECK(v.flags == std::vector<std::string>{"faster_than_roofline", "excessive_speedup"});
  Verdict h = v;
  h.flags.clear();
  h.backend = Backend::host;
  flag_suspicious(&h);
  CHECK(h.flags.empty());
}

TEST_CASE("verdict: work off comm.stream() in most samples is flagged, in a few it is not") {
  Verdict v;
  v.status = Status::correct;
  v.backend = Backend::cuda;
  v.timed = true;
  v.candidate_time.median_ms = 0.5;
  v.candidate_time.n = 10;
  v.candidate_time.off_stream = 6;
  flag_suspicious(&v);
  CHECK(v.flags == std::vector<std::string>{"work_off_stream"});
  v.flags.clear();
  v.candidate_time.off_stream = 2;  // a few late drains: noise, or a sometimes-hidden copy
  flag_suspicious(&v);
  CHECK(v.flags.empty());
}

TEST_CASE("verdict: rejected and compile_error summaries, and JSON") {
  Verdict v;
  v.status = Status::rejected;
  v.findings = {{"mpi", "kernel.cu", 12, "uses MPI_Allreduce", "candidates may not call MPI",
                 "synchronize through comm.signals and peer memory instead"}};
  CHECK(summarize(v) ==
        "rejected: kernel.cu:12: uses MPI_Allreduce: candidates may not call MPI; synchronize "
        "through comm.signals and peer memory instead");
  auto j = verdict_json(v);
  CHECK(j["status"] == "rejected");
  CHECK(j["findings"][0]["line"] == 12);
  CHECK(j["summary"] == summarize(v));

  Verdict c;
  c.status = Status::compile_error;
  c.log = "kernel.cu: In function 'int kf_run()':\nkernel.cu:7:10: error: 'foo' was not declared\n";
  CHECK(summarize(c) == "compile_error: kernel.cu:7:10: error: 'foo' was not declared");
  CHECK(has(render_text(c), "--- log ---"));
}

TEST_CASE("verdict: setup_error from a failure, with the other ranks") {
  Verdict v;
  v.status = Status::setup_error;
  Failure f;
  f.kind = Status::setup_error;
  f.message = "kf_setup returned 3";
  f.phase = "setup";
  v.failures = {f, f};
  v.failure_ranks = {0, 1};
  CHECK(summarize(v) == "setup_error: rank 0: kf_setup returned 3 (also rank 1)");
  auto j = verdict_json(v);
  CHECK(j["failures"][1]["rank"] == 1);
}
