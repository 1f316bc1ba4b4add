// tests/solve_profile_test.cpp: `kforge solve --profile` end to end on the host backend
// (CI's machine: no GPU, no Nsight Compute): `never` changes nothing, and `always` asks
// for a tool where one applies, records in the trajectory that it could not run and why,
// and leaves the prompts as they were.
#include <doctest/doctest.h>

#include "tests/solve_harness.h"

using namespace solve_test;

TEST_CASE("solve --profile: never changes nothing; always notes the skipped tool, prompts equal") {
  Harness h;
  json script = json::array(
      {openai_ok(fenced("cpp", wrong_kernel())), openai_ok(fenced("cpp", right_kernel()))});
  // One seed for all three: the same inputs, so the same feedback unless --profile changes it.
  Result plain = h.solve(script, "openai", false, {"--seed", "7"});
  Result never = h.solve(script, "openai", false, {"--seed", "7", "--profile", "never"});
  Result always = h.solve(script, "openai", false, {"--seed", "7", "--profile", "always"});
  INFO(always.output);
  for (Result* r : {&plain, &never, &always}) {
    CHECK(r->code == 0);
    CHECK(verdict_statuses(r->run) == std::vector<std::string>{"mismatch", "correct"});
    REQUIRE(r->requests.size() == 2);
  }
  // The second prompt (the mismatch's feedback) is the same whatever --profile says.
  CHECK(last_message(never.requests, 1) == last_message(plain.requests, 1));
  CHECK(last_message(always.requests, 1) == last_message(plain.requests, 1));
  CHECK(plain.traj.of_type(trace::EventType::profile).empty());
  CHECK(never.traj.of_type(trace::EventType::profile).empty());
  CHECK(never.traj.header["config"]["profile"] == "never");
  CHECK(always.traj.header["config"]["profile"] == "always");
  // The mismatch asked for racecheck, which the host backend cannot run: said, not failed.
  auto ev = always.traj.of_type(trace::EventType::profile);
  REQUIRE(ev.size() == 1);
  CHECK((*ev[0])["turn"] == 1);
  CHECK((*ev[0])["tool"] == "racecheck");
  CHECK((*ev[0])["status"] == "skipped");
  CHECK((*ev[0])["note"].get<std::string>().find("host backend") != std::string::npos);
  // kforge show says so too.
  std::string shown;
  CHECK(h.kforge({"show", always.trajectory_path}, &shown) == 0);
  CHECK(shown.find("profile: racecheck skipped (0.0 s): the host backend") != std::string::npos);
}
