// tests/cli_test.cpp: `kforge problems`, `kforge eval` and `kforge baseline` as a user
// runs them: the real binary, real mpirun ranks on the host backend, real nvcc for the
// CUDA sources (compiled, not run: there is no GPU here). Exit codes, messages that name
// the bad input, and JSON that parses.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "kf_build_paths.h"
#include "tests/kforge_run.h"

namespace {

namespace fs = std::filesystem;
using kforge_run::kforge;
using kforge_run::Run;

// The verdict a --json run printed, through the one reader (stderr lines before it skipped).
sandbox::Verdict verdict_of(const Run& r) {
  sandbox::Verdict v;
  std::string err;
  REQUIRE_MESSAGE(kforge_run::verdict_in(r.out, &v, &err), err, "\n", r.out);
  return v;
}

bool has_note(const sandbox::Verdict& v, const std::string& text) {
  for (const std::string& n : v.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

using kforge_run::kRoot;

std::string temp_dir(const char* tag) {
  std::string t = (fs::temp_directory_path() / (std::string("kf-cli-") + tag + "-XXXXXX")).string();
  REQUIRE(mkdtemp(t.data()) != nullptr);
  return t;
}

}  // namespace

TEST_CASE("cli: the problems table keeps its columns aligned past the longest name") {
  // (tests/problems_test.cpp checks that every folder is listed.)
  Run t = kforge("problems");
  CHECK(t.code == 0);
  // The row's category starts under the header's CATEGORY.
  const size_t header = t.out.find("PROBLEM"), row = t.out.find("\ngemm_reduce_scatter ") + 1;
  REQUIRE(header != std::string::npos);
  CHECK(t.out.find("CATEGORY", header) - header == t.out.find("tensor-parallel", row) - row);
  Run j = kforge("problems --json");
  REQUIRE(j.code == 0);
  auto arr = nlohmann::json::parse(j.out.substr(j.out.find('[')));
  CHECK(arr[0].contains("mirrors"));
}

TEST_CASE("cli: bad input exits 2 with a message that names it") {
  Run unknown = kforge("eval all_reduce --bogus");
  CHECK(unknown.code == 2);
  CHECK(unknown.out.find("--bogus") != std::string::npos);
  CHECK(unknown.out.find("--help") != std::string::npos);

  Run noproblem = kforge("eval no_such_problem");
  CHECK(noproblem.code == 2);
  CHECK(noproblem.out.find("no_such_problem") != std::string::npos);
  CHECK(noproblem.out.find("all_reduce") != std::string::npos);  // lists what exists

  Run nofile = kforge("eval all_reduce /nonexistent/kernel.cpp --backend host");
  CHECK(nofile.code == 2);
  CHECK(nofile.out.find("/nonexistent/kernel.cpp") != std::string::npos);

  Run badparam = kforge("eval all_reduce --backend host nn=5");
  CHECK(badparam.code == 2);
  CHECK(badparam.out.find("nn") != std::string::npos);

  Run badworld = kforge("eval all_reduce --backend host --world 0");
  CHECK(badworld.code == 2);

  // A parameter given twice (here once positionally, once through --size) is refused.
  Run twice = kforge("eval all_reduce --backend host n=1 --size n=7");
  CHECK(twice.code == 2);
  CHECK(twice.out.find("n is given twice (n=1 and n=7)") != std::string::npos);

  // The same refusal from every command that evaluates (one reader of the options).
  for (const char* cmd :
       {"baseline all_reduce", "tune all_reduce", "solve all_reduce --model builtin"}) {
    Run t = kforge(std::string(cmd) + " --backend host n=1 --size n=7");
    CHECK_MESSAGE(t.code == 2, cmd);
    CHECK_MESSAGE(t.out.find("n is given twice (n=1 and n=7)") != std::string::npos,
                  cmd << ": " << t.out);
  }

  // A .cu cannot run without a GPU: the message says what can be done instead.
  Run cu =
      kforge("eval all_reduce " + kRoot + "/problems/all_reduce/examples/uva.cu --backend host");
  CHECK(cu.code == 2);
  CHECK(cu.out.find("--compile-only") != std::string::npos);
}

TEST_CASE("cli: a malformed problem file is named, with the field") {
  std::string root = temp_dir("problems");
  fs::create_directories(root + "/broken");
  std::ofstream(root + "/broken/problem.json")
      << "{\"name\": \"broken\", \"category\": \"collective\",";
  Run r = kforge("eval broken --backend host", "KFORGE_PROBLEMS=" + root);
  CHECK(r.code == 2);
  CHECK(r.out.find(root + "/broken/problem.json") != std::string::npos);

  std::ofstream(root + "/broken/problem.json")
      << R"({"name": "broken", "category": "collective", "description": "x", "typo_field": 1})";
  Run t = kforge("eval broken --backend host", "KFORGE_PROBLEMS=" + root);
  CHECK(t.code == 2);
  CHECK(t.out.find("typo_field") != std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("cli: eval of the shipped host example is correct; a wrong kernel is not") {
  Run ok = kforge("eval all_reduce --backend host --world 2 --size small --json");
  REQUIRE_MESSAGE(ok.code == 0, ok.out);
  sandbox::Verdict v = verdict_of(ok);
  CHECK(v.status == sandbox::Status::correct);
  CHECK(v.backend == sandbox::Backend::host);
  CHECK(v.speedup == 0);  // host times are not a speed measurement

  Run bad = kforge("eval all_reduce " + kRoot +
                   "/tests/kernels/host/wrong_rank.cpp --backend host --world 2");
  CHECK(bad.code == 1);
  CHECK(bad.out.find("mismatch") != std::string::npos);
  CHECK(bad.out.find("rank") != std::string::npos);
}

TEST_CASE("cli: baseline times the host baseline; CPU times get no busbw or speed claim") {
  Run b = kforge("baseline all_gather --backend host --world 2 --iters 3 --json");
  REQUIRE_MESSAGE(b.code == 0, b.out);
  sandbox::Verdict v = verdict_of(b);
  CHECK(v.status == sandbox::Status::correct);
  CHECK(v.timed);
  CHECK(v.candidate_time.n == 3);
  CHECK(v.roofline_ms > 0);  // the cost model's floor on the H200
  CHECK(v.busbw_gbps == 0);  // not from CPU times
  CHECK(v.pct_roofline == 0);
  CHECK(has_note(v, "not a speed measurement"));

  Run text = kforge("baseline all_gather --backend host --world 2 --iters 3");
  CHECK(text.code == 0);
  CHECK(text.out.find("roofline") != std::string::npos);
}

TEST_CASE("cli: --timing batched times batches of back-to-back calls, as nccl-tests does") {
  // 12 calls a side in batches: min(12, 5) = 5 samples of ceil(12 / 5) = 3 calls.
  Run b = kforge("baseline all_reduce --backend host --world 2 --iters 12 --timing batched --json");
  REQUIRE_MESSAGE(b.code == 0, b.out);
  sandbox::Verdict v = verdict_of(b);
  CHECK(v.status == sandbox::Status::correct);
  CHECK(v.candidate_time.n == 5);
  CHECK(has_note(v, "timing: batched, nccl-tests' method (5 samples"));
  // Fewer iterations than batches: one call a sample. The candidate is checked after
  // every batch as well, so a batched eval still says correct only for correct outputs.
  Run e = kforge(
      "eval all_reduce --backend host --world 2 --size small --iters 3 --timing batched --json");
  REQUIRE_MESSAGE(e.code == 0, e.out);
  sandbox::Verdict ev = verdict_of(e);
  CHECK(ev.candidate_time.n == 3);
  CHECK(ev.baseline_time.n == 3);
  Run bad = kforge("eval all_reduce --backend host --timing sometimes");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("--timing") != std::string::npos);
}

TEST_CASE(
    "cli: the fault kernels build for sm_90 and NCCL in a candidate is rejected (compile only)") {
  // (tests/problems_test.cpp builds every problem's baseline, example and planted bug.)
  // A fresh cache: each source really goes through nvcc on this machine.
  std::string cache = temp_dir("cache");
  std::string env = "KFORGE_CACHE=" + cache;
  for (const char* f : {"deadlock.cu", "deadline.cu", "oob.cu", "race.cu"}) {
    Run dl =
        kforge("eval all_reduce " + kRoot + "/tests/kernels/cuda/" + f + " --compile-only", env);
    CHECK_MESSAGE(dl.code == 0, f, ": ", dl.out);
  }

  Run nccl = kforge(
      "eval all_reduce " + kRoot + "/tests/kernels/cuda/rejected_nccl.cu --compile-only", env);
  CHECK(nccl.code == 1);
  CHECK(nccl.out.find("rejected") != std::string::npos);
  CHECK(nccl.out.find("rejected_nccl.cu:") != std::string::npos);  // names file and line

  Run ce = kforge(
      "eval all_reduce " + kRoot + "/tests/kernels/cuda/compile_error.cu --compile-only", env);
  CHECK(ce.code == 1);
  CHECK(ce.out.find("compile_error") != std::string::npos);
  CHECK(ce.out.find("compile_error.cu(") != std::string::npos);  // nvcc's file(line) kept
  fs::remove_all(cache);
}

// The helps of the four commands list one option group with the same words, so their
// options and defaults cannot drift apart again (eval said world 1, solve and tune 2).
TEST_CASE("cli: eval, baseline, tune and solve share one Evaluation option group") {
  auto group = [](const std::string& help) {
    size_t at = help.find("Evaluation:");
    REQUIRE_MESSAGE(at != std::string::npos, help);
    size_t end = help.find("\n\n", at);
    return help.substr(at, end == std::string::npos ? std::string::npos : end - at);
  };
  const std::string want = group(kforge("eval --help").out);
  CHECK(want.find("--world") != std::string::npos);
  CHECK(want.find("default 2") != std::string::npos);
  CHECK(want.find("--timing") != std::string::npos);
  for (const char* cmd : {"baseline", "tune", "solve"})
    CHECK_MESSAGE(group(kforge(std::string(cmd) + " --help").out) == want, cmd);
}
