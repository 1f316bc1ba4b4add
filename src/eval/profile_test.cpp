// eval/profile_test.cpp: what runs under which tool, and what happens where a tool is
// missing or profiles nothing (no GPU needed: no rank gets as far as the GPU).
#include "eval/profile.h"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>

#include "kf_build_paths.h"
#include "suite/paths.h"
#include "suite/test_util.h"
#include "tests/has.h"

using namespace eval;

namespace {

// Sets an environment variable for the test's scope, and puts back what it was (PATH
// unset for the rest of the process broke every later test that runs a compiler).
struct EnvVar {
  std::string name, before;
  bool had = false;
  EnvVar(const std::string& n, const std::string& v) : name(n) {
    if (const char* b = std::getenv(n.c_str())) had = true, before = b;
    setenv(n.c_str(), v.c_str(), 1);
  }
  ~EnvVar() {
    if (had)
      setenv(name.c_str(), before.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("profile: the metric sets; a word that is no set and no metric is none") {
  auto brief = metric_set("brief");
  CHECK(std::count(brief.begin(), brief.end(), "gpu__time_duration.sum") == 1);
  CHECK(std::count(brief.begin(), brief.end(), stall_metric("sleeping")) == 1);
  CHECK(metric_set("time").size() < brief.size());
  CHECK(metric_set("a__b.sum,c__d.max") == std::vector<std::string>{"a__b.sum", "c__d.max"});
  CHECK(metric_set("bogus").empty());
}

TEST_CASE("profile: ncu's command line profiles only the kf_profile range, one report per rank") {
  auto w = tool_wrapper(Tool::ncu, "/t/ncu", "/r/full/profile", {"m1", "m2"});
  std::string line;
  for (auto& a : w) line += a + " ";
  CHECK(w[0] == "/t/ncu");
  CHECK(has(line, "--clock-control none"));
  CHECK(has(line, "--target-processes all"));
  CHECK(has(line, "--nvtx --nvtx-include kf_profile]"));
  CHECK(has(line, "--metrics m1,m2"));
  CHECK(has(line, "-o /r/full/profile/rank%q{OMPI_COMM_WORLD_RANK}"));
  auto s = tool_wrapper(Tool::racecheck, "/t/compute-sanitizer", "/r/small/profile", {});
  line.clear();
  for (auto& a : s) line += a + " ";
  CHECK(has(line, "--tool racecheck"));
  CHECK(has(line, "--log-file /r/small/profile/sanitizer-rank%q{OMPI_COMM_WORLD_RANK}.log"));
  // A person's own options go right after the program, before kforge's.
  auto e = tool_wrapper(Tool::ncu, "/t/ncu", "/r", {"m1"}, {"--replay-mode", "application"});
  CHECK(e[1] == "--replay-mode");
  CHECK(e[2] == "application");
  CHECK(e[3] == "--clock-control");
}

TEST_CASE("profile: a tool named by its variable but missing says which and what to do") {
  EnvVar v("KFORGE_NCU", "/nonexistent/ncu");
  std::string why;
  CHECK(find_tool(Tool::ncu, &why).empty());
  CHECK(has(why, "KFORGE_NCU=/nonexistent/ncu is not an executable file"));
}

TEST_CASE("profile: where no ncu is installed, the note names the places looked in") {
  // Only meaningful on a machine without Nsight Compute (CI's); elsewhere find_tool finds it.
  const std::string cuda_bin = std::string(KF_NVCC).substr(0, std::string(KF_NVCC).rfind('/'));
  if (access((cuda_bin + "/ncu").c_str(), X_OK) == 0 || access("/opt/nvidia", F_OK) == 0 ||
      access("/usr/local/cuda/bin/ncu", X_OK) == 0)
    return;
  EnvVar path("PATH", "/nonexistent");
  std::string why;
  CHECK(find_tool(Tool::ncu, &why).empty());
  CHECK(has(why, "ncu not found"));
  CHECK(has(why, "KFORGE_NCU"));
}

TEST_CASE("profile: a missing tool or the host backend skips the run with a note, not a failure") {
  EvalConfig cfg;
  cfg.paths = suite::default_paths();
  std::string err;
  REQUIRE(suite::load_problem(cfg.paths.problems_dir + "/all_reduce", &cfg.problem, &err));
  cfg.settings.backend = sandbox::Backend::cuda;
  ProfileReport r;
  {
    EnvVar v("KFORGE_NCU", "/nonexistent/ncu");
    REQUIRE(profile_file(cfg, cfg.problem.dir + "/solution.cu", sandbox::Role::candidate, {}, &r,
                         &err));
  }
  CHECK(r.status == ProfileStatus::skipped);
  CHECK(has(r.note, "KFORGE_NCU"));
  CHECK(r.dir.empty());                           // nothing ran
  cfg.settings.backend = sandbox::Backend::host;  // memcheck of the host backend: nothing to run
  ProfileOptions memcheck;
  memcheck.tool = Tool::memcheck;
  REQUIRE(profile_file(cfg, cfg.problem.dir + "/examples/host.cpp", sandbox::Role::candidate,
                       memcheck, &r, &err));
  CHECK(r.status == ProfileStatus::skipped);
  CHECK(has(r.note, "host backend"));
  ProfileOptions bad;
  bad.metrics = "bogus";
  CHECK_FALSE(profile_file(cfg, cfg.problem.dir + "/examples/host.cpp", sandbox::Role::candidate,
                           bad, &r, &err));
  CHECK(has(err, "--metrics bogus"));
}

TEST_CASE("profile: a several-pass set that profiles nothing is launched again with one pass") {
  // A stand-in ncu that starts no rank (/bin/true): every launch under it profiles nothing,
  // as a kernel that does not survive ncu's replays would.
  if (access("/bin/true", X_OK) != 0) return;
  suite::test::TempDir runs;
  EvalConfig cfg;
  cfg.paths = suite::default_paths();
  cfg.paths.runs_dir = runs.path;
  std::string err;
  REQUIRE(suite::load_problem(cfg.paths.problems_dir + "/all_reduce", &cfg.problem, &err));
  cfg.settings.backend = sandbox::Backend::cuda;
  cfg.settings.world = 1;
  EnvVar ncu("KFORGE_NCU", "/bin/true");
  ProfileReport r;
  REQUIRE_MESSAGE(
      profile_file(cfg, cfg.problem.dir + "/solution.cu", sandbox::Role::candidate, {}, &r, &err),
      err);
  INFO(r.note);
  CHECK(r.status == ProfileStatus::failed);
  CHECK(has(r.note, "--metrics brief profiled nothing (no kernel was profiled"));
  CHECK(has(r.note, "measured again with the one-pass set (time): no kernel was profiled"));
  ProfileOptions one_pass;
  one_pass.metrics = "time";
  REQUIRE(profile_file(cfg, cfg.problem.dir + "/solution.cu", sandbox::Role::candidate, one_pass,
                       &r, &err));
  CHECK(r.status == ProfileStatus::failed);
  CHECK_FALSE(has(r.note, "measured again"));  // one pass already: nothing to fall back to
  one_pass.metrics = "gpu__time_duration.sum,launch__grid_size";  // a list no longer than time
  REQUIRE(profile_file(cfg, cfg.problem.dir + "/solution.cu", sandbox::Role::candidate, one_pass,
                       &r, &err));
  CHECK_FALSE(has(r.note, "measured again"));
}
