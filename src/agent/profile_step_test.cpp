// agent/profile_step_test.cpp: which verdicts send a candidate under which tool, and a
// step whose tool is missing (no GPU needed).
#include "agent/profile_step.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include "suite/paths.h"

using namespace agent;

namespace {

sandbox::Verdict verdict(sandbox::Status s) {
  sandbox::Verdict v;
  v.status = s;
  v.backend = sandbox::Backend::cuda;
  return v;
}

}  // namespace

TEST_CASE("profile step: never asks for nothing; auto for slow, bad addresses and unstable") {
  eval::Tool t;
  for (auto s : {sandbox::Status::correct, sandbox::Status::crash, sandbox::Status::unstable})
    CHECK_FALSE(profile_wanted(ProfileMode::never, verdict(s), "", &t));
  REQUIRE(profile_wanted(ProfileMode::automatic, verdict(sandbox::Status::correct), "", &t));
  CHECK(t == eval::Tool::ncu);
  sandbox::Verdict crash = verdict(sandbox::Status::crash);
  crash.failures.push_back({});
  crash.failures.back().message =
      "CUDA error after kf_run: an illegal memory access was encountered";
  REQUIRE(profile_wanted(ProfileMode::automatic, crash, "", &t));
  CHECK(t == eval::Tool::memcheck);
  CHECK_FALSE(profile_wanted(ProfileMode::automatic, verdict(sandbox::Status::crash), "", &t));
  CHECK(profile_wanted(ProfileMode::always, verdict(sandbox::Status::crash), "", &t));
  REQUIRE(profile_wanted(ProfileMode::automatic, verdict(sandbox::Status::unstable), "", &t));
  CHECK(t == eval::Tool::racecheck);
  // A mismatch: only when its failures differ between calls (or always).
  sandbox::Verdict mm = verdict(sandbox::Status::mismatch);
  sandbox::Failure f;
  f.kind = sandbox::Status::mismatch;
  f.tensor = "y";
  f.bad_count = 3;
  mm.failures = {f, f};
  mm.failure_ranks = {0, 0};
  CHECK_FALSE(profile_wanted(ProfileMode::automatic, mm, "", &t));
  mm.failures[1].bad_count = 736;
  CHECK(profile_wanted(ProfileMode::automatic, mm, "", &t));
  mm.failures[1].bad_count = 3;  // the same every call, but the kernel has shared memory
  CHECK(profile_wanted(ProfileMode::automatic, mm, "__shared__ float tile[256];", &t));
  CHECK(t == eval::Tool::racecheck);
  CHECK(profile_wanted(ProfileMode::always, verdict(sandbox::Status::mismatch), "", &t));
  CHECK_FALSE(profile_wanted(ProfileMode::always, verdict(sandbox::Status::timeout), "", &t));
}

TEST_CASE("profile step: a missing ncu is a note in the event, and nothing for the model") {
  eval::EvalConfig cfg;
  cfg.paths = suite::default_paths();
  std::string err;
  REQUIRE(suite::load_problem(cfg.paths.problems_dir + "/all_reduce", &cfg.problem, &err));
  cfg.settings.backend = sandbox::Backend::cuda;
  setenv("KFORGE_NCU", "/nonexistent/ncu", 1);
  ProfileStep step;
  bool ok = profile_step(cfg, ProfileMode::automatic, 3, cfg.problem.dir + "/solution.cu",
                         verdict(sandbox::Status::correct), &step, &err);
  unsetenv("KFORGE_NCU");
  REQUIRE(ok);
  CHECK(step.ran);
  CHECK(step.feedback.empty());
  CHECK(step.event["turn"] == 3);
  CHECK(step.event["tool"] == "ncu");
  CHECK(step.event["status"] == "skipped");
  CHECK(step.event["note"].get<std::string>().find("KFORGE_NCU") != std::string::npos);
  ProfileStep none;
  REQUIRE(
      profile_step(cfg, ProfileMode::never, 3, "", verdict(sandbox::Status::correct), &none, &err));
  CHECK_FALSE(none.ran);
  CHECK(none.event.is_null());
}
