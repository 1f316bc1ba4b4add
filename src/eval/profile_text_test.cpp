// eval/profile_text_test.cpp: the model's lines from real compute-sanitizer logs
// (tests/data/profile/README.md) and from a profile's kernels.
#include "eval/profile_text.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "eval/ncu_csv.h"
#include "eval/sanitizer_log.h"
#include "kf_build_paths.h"
#include "tests/has.h"

using namespace eval;

namespace {

std::string data(const std::string& name) {
  std::ifstream in(std::string(KF_SOURCE_ROOT) + "/tests/data/profile/" + name);
  REQUIRE_MESSAGE(in.good(), name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (auto& l : v) s += l + "\n";
  return s;
}

}  // namespace

TEST_CASE("profile text: memcheck's report of the planted store names the kernel's line 23") {
  ProfileReport r;
  r.tool = Tool::memcheck;
  r.status = ProfileStatus::ran;
  parse_sanitizer_log(data("memcheck-oob-rank0.log"), 0, &r.findings, &r.errors);
  CHECK(r.errors == 2);
  REQUIRE(r.findings.size() == 2);
  CHECK(r.findings[0].what == "Invalid __global__ write of size 4 bytes");
  CHECK(r.findings[0].line == 23);
  std::string text = joined(feedback_lines(r, 8));
  INFO(text);
  CHECK(has(text, "memcheck"));
  CHECK(has(text, "Invalid __global__ write of size 4 bytes"));
  CHECK(has(text, "line 23 of the kernel"));
  CHECK(has(text, "sum_kernel"));
  CHECK(has(text, "is out of bounds"));
  CHECK_FALSE(has(text, "Host Frame"));
  CHECK(has(text, "2 errors"));
}

TEST_CASE("profile text: racecheck's report of the planted race names both lines") {
  ProfileReport r;
  r.tool = Tool::racecheck;
  r.status = ProfileStatus::ran;
  parse_sanitizer_log(data("racecheck-race-rank0.log"), 0, &r.findings, &r.errors);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.errors == 1);
  CHECK(r.findings[0].line == 21);
  std::string text = joined(feedback_lines(r, 8));
  INFO(text);
  CHECK(has(text, "Race reported between Write access"));
  CHECK(has(text, "line 21 of the kernel"));
  CHECK(has(text, ".cu:23"));  // the read, on the report's next line
}

TEST_CASE("profile text: a skipped run is one line with its reason; a clean rerun says so") {
  ProfileReport r;
  r.tool = Tool::ncu;
  r.status = ProfileStatus::skipped;
  r.note = "ncu not found (looked in ...)";
  auto lines = feedback_lines(r, 8);
  REQUIRE(lines.size() == 1);
  CHECK(has(lines[0], "Nsight Compute skipped: ncu not found"));
  r.tool = Tool::memcheck;
  r.status = ProfileStatus::ran;
  CHECK(has(joined(feedback_lines(r, 8)), "reported no error"));
}

TEST_CASE("profile text: the limit named from the counters") {
  KernelProfile k;
  k.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 82},
               {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 20}};
  CHECK(has(limit_of(k), "HBM bandwidth"));
  k.metrics = {{"dram__throughput.avg.pct_of_peak_sustained_elapsed", 18},
               {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 5},
               {"launch__grid_size", 16},
               {"device__attribute_multiprocessor_count", 132}};
  CHECK(limit_of(k) == "too few blocks: 16 blocks leave 116 of 132 SMs idle");
  k.metrics["launch__grid_size"] = 1024;
  k.metrics["smsp__warp_issue_stalled_sleeping_per_warp_active.pct"] = 41;
  k.metrics["smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct"] = 12;
  k.metrics["smsp__warp_issue_stalled_selected_per_warp_active.pct"] = 60;  // not a stall
  CHECK(has(limit_of(k), "41% of warp cycles asleep"));
  auto top = top_stalls(k, 3);
  REQUIRE(top.size() == 2);
  CHECK(top[0].first == "sleeping");
  CHECK(top[1].first == "long_scoreboard");
}

TEST_CASE("profile text: real Nsight Compute CSVs of the expert kernels (H200, world 1)") {
  struct Want {
    const char* file;
    const char* kernel;  // the candidate's (the longest)
    double ns, grid, regs;
    int baseline_kernels;
  };
  const Want wants[] = {
      {"ncu-all_gather-w1-rank0.csv", "kernel(globals)", 25024, 16, 40, 0},
      {"ncu-all_reduce-w1-rank0.csv", "void one_shot<float>(globals<T1>)", 17760, 32, 32, 0},
      {"ncu-all_to_all-w1-rank0.csv", "all_to_all::kernel(all_to_all::globals)", 10624, 32, 58, 1},
      {"ncu-all_gather_gemm-w1-rank0.csv", "ag_gemm::kernel(ag_gemm::globals)", 16544, 128, 167,
       2}};
  for (const Want& w : wants) {
    CAPTURE(w.file);
    std::vector<KernelProfile> k;
    std::string err;
    REQUIRE_MESSAGE(parse_ncu_csv(data(w.file), 0, sandbox::Role::baseline, &k, &err), err);
    const KernelProfile* cand = nullptr;
    int base = 0;
    for (const KernelProfile& x : k) {
      if (x.side == sandbox::Role::baseline) ++base;
      if (x.side == sandbox::Role::candidate && x.process == "kforge-runner") cand = &x;
    }
    REQUIRE(cand != nullptr);
    CHECK(cand->kernel == w.kernel);
    CHECK(cand->get("gpu__time_duration.sum") == doctest::Approx(w.ns).epsilon(0.01));
    CHECK(cand->get("launch__grid_size") == w.grid);
    CHECK(cand->get("launch__registers_per_thread") == w.regs);
    CHECK(cand->get("device__attribute_multiprocessor_count") == 132);
    CHECK(base == w.baseline_kernels);
  }
  // The model's lines for all_gather: 16 blocks on 132 SMs is what the counters name.
  ProfileReport r;
  r.tool = Tool::ncu;
  r.status = ProfileStatus::ran;
  r.roofline_ms = 0.00195;
  std::string err;
  REQUIRE(parse_ncu_csv(data("ncu-all_gather-w1-rank0.csv"), 0, sandbox::Role::baseline, &r.kernels,
                        &err));
  std::string text = joined(feedback_lines(r, 8));
  INFO(text);
  CHECK(has(text, "your kernel kernel: 25 us"));
  CHECK(has(text, "16 blocks of 256 threads on 132 SMs, 40 registers/thread"));
  CHECK(has(text, "Limit: too few blocks: 16 blocks leave 116 of 132 SMs idle"));
  CHECK(has(text, "roofline"));
}

TEST_CASE("profile text: real brief CSVs (H200, world 1): throughputs, occupancy, stalls") {
  ProfileReport r;
  r.tool = Tool::ncu;
  r.status = ProfileStatus::ran;
  r.roofline_ms = 0.00195;
  std::string err;
  REQUIRE(parse_ncu_csv(data("ncu-brief-all_reduce-w1-rank0.csv"), 0, sandbox::Role::baseline,
                        &r.kernels, &err));
  REQUIRE(r.kernels.size() == 1);
  const KernelProfile& k = r.kernels[0];
  CHECK(k.get("sm__throughput.avg.pct_of_peak_sustained_elapsed") ==
        doctest::Approx(2.6).epsilon(0.1));
  CHECK(k.get("dram__throughput.avg.pct_of_peak_sustained_elapsed") ==
        doctest::Approx(5.0).epsilon(0.1));
  CHECK(k.get("sm__warps_active.avg.pct_of_peak_sustained_active") ==
        doctest::Approx(25).epsilon(0.05));
  auto top = top_stalls(k, 3);
  REQUIRE(top.size() == 3);
  CHECK(top[0].first == "long_scoreboard");  // 41%, then the barrier (27%) and membar (14%)
  CHECK(top[1].first == "barrier");
  CHECK(top[2].first == "membar");
  std::string text = joined(feedback_lines(r, 8));
  INFO(text);
  CHECK(has(text, "your kernel void one_shot<float>: 17.4 us; SM throughput 3%, DRAM 5%"));
  CHECK(has(text, "warps stalled: 41% waiting on global or peer memory loads (long scoreboard)"));
  CHECK(has(text, "Limit: too few blocks: 32 blocks leave 100 of 132 SMs idle"));

  // The fused problem: the candidate beside the baseline's two kernels (a copy, cuBLAS).
  ProfileReport g;
  g.tool = Tool::ncu;
  g.status = ProfileStatus::ran;
  REQUIRE(parse_ncu_csv(data("ncu-brief-all_gather_gemm-w1-rank0.csv"), 0, sandbox::Role::baseline,
                        &g.kernels, &err));
  int baseline = 0;
  for (const KernelProfile& x : g.kernels) baseline += x.side == sandbox::Role::baseline;
  CHECK(baseline == 2);
  std::string fused = joined(feedback_lines(g, 8));
  INFO(fused);
  CHECK(has(fused, "your kernel ag_gemm::kernel: 16.4 us"));
  CHECK(has(fused, "Limit: latency: 46% of warp cycles on fixed-latency dependencies (wait)"));
  CHECK(has(fused, "for comparison, the baseline's kernel nvjet_sm90"));
}

TEST_CASE("profile: a time taken under the profiler is not printed as a speed") {
  sandbox::Verdict v;
  v.status = sandbox::Status::correct;
  v.timed = true;
  v.candidate_time.median_ms = 889;
  v.baseline_time.median_ms = 1734;
  v.speedup = 1.95;
  v.pct_roofline = 3;
  v.flags = {"faster_than_roofline"};
  v.summary = "correct: 889 ms median vs NCCL 1734 ms: 1.95x";
  eval::not_a_speed(&v, "Nsight Compute");
  CHECK(v.speedup == 0);
  CHECK(v.pct_roofline == 0);
  CHECK(v.flags.empty());
  CHECK(v.summary.find("1.95x") == std::string::npos);
  CHECK(v.summary.find("not a speed measurement") != std::string::npos);
  CHECK(v.summary.find("Nsight Compute") != std::string::npos);
  // Untimed (compute-sanitizer runs --no-time): nothing to say.
  sandbox::Verdict u;
  u.status = sandbox::Status::correct;
  u.summary = "correct (not timed)";
  eval::not_a_speed(&u, "compute-sanitizer");
  CHECK(u.summary == "correct (not timed)");
}
