// tests/problems_test.cpp: every folder under problems/ held to the same bar, found by
// listing the folder (a new problem is tested by adding it, with no list to edit here):
// its CUDA baseline, example and planted-bug kernel build for sm_90; on the host backend,
// through the real kforge binary and real mpirun ranks, its baseline and example are
// correct against the double-precision oracle at worlds 1, 2 and 4, and its planted-bug
// host kernel (tests/kernels/host/<name>_wrong.cpp) is a mismatch. Running the CUDA
// kernels needs a GPU: bench/gpu_check.sh does it on the H200.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kf_build_paths.h"
#include "tests/kforge_run.h"

namespace {

namespace fs = std::filesystem;
using kforge_run::kforge;
using kforge_run::Run;
using kforge_run::status_of;

const std::string kRoot = KF_SOURCE_ROOT;

// Every problem folder (one with a problem.json), by name; KF_PROBLEMS="a b" keeps only
// those (a person checking the problem they are writing).
std::vector<std::string> problem_names() {
  const char* only = std::getenv("KF_PROBLEMS");
  const std::string keep = only ? " " + std::string(only) + " " : "";
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kRoot + "/problems")) {
    const std::string name = e.path().filename().string();
    if (!fs::exists(e.path() / "problem.json")) continue;
    if (keep.empty() || keep.find(" " + name + " ") != std::string::npos) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string host_eval(const std::string& problem, const std::string& kernel, int world) {
  return "eval " + problem + " " + kernel + " --backend host --world " + std::to_string(world) +
         " --size small --no-time --json";
}

}  // namespace

TEST_CASE("problems: kforge problems lists every folder, as a table and as JSON") {
  const std::vector<std::string> names = problem_names();
  if (std::getenv("KF_PROBLEMS") == nullptr) REQUIRE(names.size() >= 7);
  Run t = kforge("problems");
  CHECK(t.code == 0);
  for (const std::string& p : names) CHECK_MESSAGE(t.out.find(p) != std::string::npos, p);
  Run j = kforge("problems --json");
  REQUIRE(j.code == 0);
  auto arr = nlohmann::json::parse(j.out.substr(j.out.find('[')));
  if (std::getenv("KF_PROBLEMS") == nullptr) CHECK(arr.size() == names.size());
}

TEST_CASE("problems: every CUDA baseline, example and planted-bug kernel builds for sm_90") {
  // A fresh cache: each source really goes through nvcc on this machine.
  std::string cache = (fs::temp_directory_path() / "kf-problems-cache-XXXXXX").string();
  REQUIRE(mkdtemp(cache.data()) != nullptr);
  const std::string env = "KFORGE_CACHE=" + cache;
  for (const std::string& p : problem_names()) {
    const std::string dir = kRoot + "/problems/" + p;
    // --backend cuda: without a GPU here the default backend is host (baseline_host.cpp).
    Run base = kforge("baseline " + p + " --backend cuda --compile-only", env);
    CHECK_MESSAGE(base.code == 0, p, ": ", base.out);
    CHECK_MESSAGE(base.out.find("/baseline.cu") != std::string::npos, base.out);
    for (const std::string& k :
         {dir + "/examples/uva.cu", kRoot + "/tests/kernels/cuda/" + p + "_wrong.cu"}) {
      REQUIRE_MESSAGE(fs::exists(k), p, ": every problem needs ", k);
      Run r = kforge("eval " + p + " " + k + " --backend cuda --compile-only", env);
      CHECK_MESSAGE(r.code == 0, k, ": ", r.out);
    }
  }
  fs::remove_all(cache);
}

TEST_CASE(
    "problems: on the host backend every baseline and example is correct, every planted bug a "
    "mismatch") {
  for (const std::string& p : problem_names()) {
    const std::string dir = kRoot + "/problems/" + p;
    Run base = kforge("baseline " + p + " --backend host --world 2 --size small --no-time --json");
    CHECK_MESSAGE(status_of(base) == "correct", p, ": ", base.out);
    for (int w : {1, 2, 4}) {
      Run ex = kforge(host_eval(p, dir + "/examples/host.cpp", w));
      CHECK_MESSAGE(status_of(ex) == "correct", p, " world ", w, ": ", ex.out);
    }
    const std::string wrong = kRoot + "/tests/kernels/host/" + p + "_wrong.cpp";
    REQUIRE_MESSAGE(fs::exists(wrong), p, ": every problem needs ", wrong);
    Run r = kforge(host_eval(p, wrong, 2));
    CHECK_MESSAGE(status_of(r) == "mismatch", p, ": ", r.out);
  }
}
