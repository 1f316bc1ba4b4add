// tests/problems_test.cpp: every folder under problems/ held to the same bar, found by
// listing the folder (a new problem is tested by adding it, with no list to edit here):
// its oracle builds from the folder and loads as kforge-rank loads it; its CUDA baseline,
// example and planted bugs build for sm_90; on the host backend, through the real kforge
// binary and real mpirun ranks, its baseline and example are correct against the
// double-precision oracle at worlds 1, 2 and 4, and each planted host bug (bugs/*.patch of
// its examples, tests/planted_bugs.h) is a mismatch at worlds 2 and 4; where it has an expert
// kernel (search.json), every host family the builtin searches is correct at worlds 1, 2 and 4
// (tests/primitives_test.cpp builds every solution*.cu). Running the CUDA kernels needs a GPU:
// bench/gpu_check.sh does it on the H200.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kf_build_paths.h"
#include "suite/instance.h"
#include "suite/problem.h"
#include "suite/search.h"
#include "suite/templates.h"
#include "tests/kforge_run.h"
#include "tests/oracle_fake.h"
#include "tests/planted_bugs.h"
#include "tests/two_at_a_time.h"

namespace {

namespace fs = std::filesystem;
using kforge_run::kforge;
using kforge_run::Run;
using kforge_run::status_of;

using kforge_run::kRoot;

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

std::string temp_dir(const char* what) {
  std::string dir = (fs::temp_directory_path() / (std::string(what) + "-XXXXXX")).string();
  REQUIRE(mkdtemp(dir.data()) != nullptr);
  return dir;
}

// The problem's planted bugs for `backend`, as kernel files under out_dir; each problem
// needs at least one per backend.
std::vector<std::string> bug_kernels(const std::string& p, sandbox::Backend backend,
                                     const std::string& out_dir) {
  const std::string dir = kRoot + "/problems/" + p;
  std::string err;
  std::vector<std::string> kernels;
  for (const planted_bugs::Bug& b : planted_bugs::find(dir, &err)) {
    if (b.backend != backend) continue;
    std::string path;
    fs::create_directories(out_dir + "/" + p);
    CHECK_MESSAGE(planted_bugs::kernel(dir, b, out_dir + "/" + p, &path, &err), err);
    kernels.push_back(path);
  }
  CHECK_MESSAGE(err.empty(), err);
  CHECK_MESSAGE(!kernels.empty(), p, ": every problem needs a planted ",
                sandbox::backend_name(backend), " bug in ", dir,
                "/bugs (a .patch of an example, or a kernel file)");
  return kernels;
}

std::string host_eval(const std::string& problem, const std::string& kernel, int world) {
  return "eval " + problem + " " + kernel + " --backend host --world " + std::to_string(world) +
         " --size small --no-time --json";
}

}  // namespace

TEST_CASE("problems: kforge problems lists every folder, as a table and as JSON") {
  const std::vector<std::string> names = problem_names();
  // The suite's 24 twins of ParallelKernelBench problems.
  if (std::getenv("KF_PROBLEMS") == nullptr) REQUIRE(names.size() >= 24);
  Run t = kforge("problems");
  CHECK(t.code == 0);
  for (const std::string& p : names) CHECK_MESSAGE(t.out.find(p) != std::string::npos, p);
  Run j = kforge("problems --json");
  REQUIRE(j.code == 0);
  auto arr = nlohmann::json::parse(j.out.substr(j.out.find('[')));
  if (std::getenv("KF_PROBLEMS") == nullptr) CHECK(arr.size() == names.size());
  for (const auto& p : arr)  // each names the PKB problem it twins
    CHECK_MESSAGE(p.value("mirrors", nlohmann::json::object()).value("id", 0) > 0, p.dump());
}

TEST_CASE(
    "problems: every problem has an expert kernel for each backend, and the builtin searches "
    "both") {
  for (const std::string& p : problem_names()) {
    const std::string dir = kRoot + "/problems/" + p;
    CHECK_MESSAGE(fs::exists(dir + "/solution.cu"), p, ": no CUDA expert kernel (solution.cu)");
    CHECK_MESSAGE(fs::exists(dir + "/solution_host.cpp"), p,
                  ": no host expert (solution_host.cpp)");
    suite::Problem prob;
    suite::SearchSpec search;
    std::string err;
    REQUIRE_MESSAGE(suite::load_problem(dir, &prob, &err), err);
    REQUIRE_MESSAGE(suite::load_search(prob, &search, &err), err);
    REQUIRE_MESSAGE(!search.file.empty(), p, ": no search.json, so the builtin cannot answer it");
    int cuda = 0, host = 0;
    for (const suite::Family& f : search.families)
      (f.backend() == sandbox::Backend::cuda ? cuda : host) += 1;
    CHECK_MESSAGE(cuda > 0, p, ": search.json has no family of a CUDA kernel");
    CHECK_MESSAGE(host > 0, p, ": search.json has no family of a host kernel");
  }
}

TEST_CASE("problems: every folder's oracle builds from the folder and loads") {
  for (const std::string& p : problem_names()) {
    std::string err;
    CHECK_MESSAGE(problem_oracle(p, &err).loaded(), p, ": ", err);
  }
}

TEST_CASE("problems: every CUDA baseline, example and planted-bug kernel builds for sm_90") {
  // A fresh cache: each source really goes through nvcc on this machine.
  const std::string cache = temp_dir("kf-problems-cache");
  const std::string bugs = temp_dir("kf-problems-bugs");
  const std::string env = "KFORGE_CACHE=" + cache;
  struct Build {
    std::string what, args;
    bool baseline = false;  // `kforge baseline`, which names the baseline.cu it built
    Run run{};
  };
  std::vector<Build> builds;
  for (const std::string& p : problem_names()) {
    const std::string dir = kRoot + "/problems/" + p;
    // --backend cuda: without a GPU here the default backend is host (baseline_host.cpp).
    builds.push_back({p + "'s baseline", "baseline " + p + " --backend cuda --compile-only", true});
    std::vector<std::string> kernels = bug_kernels(p, sandbox::Backend::cuda, bugs);
    kernels.insert(kernels.begin(), dir + "/examples/uva.cu");
    for (const std::string& k : kernels) {
      REQUIRE_MESSAGE(fs::exists(k), p, ": every problem needs ", k);
      builds.push_back({k, "eval " + p + " " + k + " --backend cuda --compile-only"});
    }
  }
  kf_test::two_at_a_time(builds.size(),
                         [&](size_t i) { builds[i].run = kforge(builds[i].args, env); });
  for (const Build& b : builds) {
    CHECK_MESSAGE(b.run.code == 0, b.what, ": ", b.run.out);
    if (b.baseline) CHECK_MESSAGE(b.run.out.find("/baseline.cu") != std::string::npos, b.run.out);
  }
  fs::remove_all(cache);
  fs::remove_all(bugs);
}

namespace {

// One host eval and the verdict it must get.
struct FolderEval {
  std::string what, args, want;
  Run run{};
};

// Runs every eval, two at a time (each has its own run folder and ranks, and correct and
// mismatch do not depend on timing), then checks each verdict.
void run_and_check(std::vector<FolderEval>& evals) {
  kf_test::two_at_a_time(evals.size(), [&](size_t i) { evals[i].run = kforge(evals[i].args); });
  for (const FolderEval& e : evals)
    CHECK_MESSAGE(status_of(e.run) == e.want, e.what, ": ", e.run.out);
}

}  // namespace

TEST_CASE(
    "problems: on the host backend every baseline and example is correct, every planted bug a "
    "mismatch") {
  const std::string bugs = temp_dir("kf-problems-bugs");
  std::vector<FolderEval> evals;
  for (const std::string& p : problem_names()) {
    const std::string dir = kRoot + "/problems/" + p;
    evals.push_back({p + " baseline",
                     "baseline " + p + " --backend host --world 2 --size small --no-time --json",
                     "correct"});
    for (int w : {1, 2, 4})
      evals.push_back({p + " example world " + std::to_string(w),
                       host_eval(p, dir + "/examples/host.cpp", w), "correct"});
    // Worlds 2 and 4: most planted bugs misplace a peer's data, which world 1 cannot show.
    for (const std::string& wrong : bug_kernels(p, sandbox::Backend::host, bugs))
      for (int w : {2, 4})
        evals.push_back(
            {p + " " + wrong + " world " + std::to_string(w), host_eval(p, wrong, w), "mismatch"});
  }
  run_and_check(evals);
  fs::remove_all(bugs);
}

namespace {

// Per problem with a search.json, one template of each host family at each of worlds 1, 2
// and 4, a different one of the family's knob values at each world (every value must be
// correct), instantiated under dir.
std::vector<FolderEval> host_expert_evals(const std::string& dir) {
  std::vector<FolderEval> evals;
  for (const std::string& name : problem_names()) {
    suite::Problem p;
    std::string err;
    REQUIRE_MESSAGE(suite::load_problem(kRoot + "/problems/" + name, &p, &err), err);
    if (!fs::exists(p.dir + "/search.json")) continue;
    suite::Instance inst;
    REQUIRE_MESSAGE(suite::resolve_instance(p, 2, "small", {}, &inst, &err), err);
    std::map<std::string, std::vector<suite::Template>> families;
    for (suite::Template& t : suite::template_space(p, inst, sandbox::Backend::host))
      families[t.family()].push_back(t);
    CHECK_MESSAGE(!families.empty(), name, ": its search.json has no host family");
    for (const auto& [family, space] : families) {
      const int worlds[] = {1, 2, 4};
      for (size_t i = 0; i < 3; ++i) {
        const suite::Template& t = space[i * (space.size() - 1) / 2];
        std::string text;
        REQUIRE_MESSAGE(suite::instantiate_file(p, t, &text, &err), err);
        std::string file = dir + "/" + name + "-" + std::to_string(evals.size()) + ".cpp";
        std::ofstream(file) << text;
        evals.push_back({name + " " + t.name() + " world " + std::to_string(worlds[i]),
                         host_eval(name, file, worlds[i]), "correct"});
      }
    }
  }
  return evals;
}

}  // namespace

TEST_CASE("problems: every host expert family is correct at worlds 1, 2 and 4") {
  const std::string dir = temp_dir("kf-problems-experts");
  std::vector<FolderEval> evals = host_expert_evals(dir);
  run_and_check(evals);
  fs::remove_all(dir);
}
