// sandbox/settings_test.cpp: the settings block's defaults, its JSON, and the older
// trajectory headers it still reads.
#include "settings.h"

#include <doctest/doctest.h>

using sandbox::Backend;
using sandbox::Settings;

TEST_CASE("settings: each backend has its defaults") {
  Settings c = sandbox::default_settings(Backend::cuda),
           h = sandbox::default_settings(Backend::host);
  CHECK(c.iters == 50);
  CHECK(c.warmup == 5);
  CHECK(h.backend == Backend::host);
  CHECK(h.iters == 10);
  CHECK(h.warmup == 2);
  CHECK(h.race_pass);
  CHECK(h.seed == 0);  // each rank's secret
}

TEST_CASE("settings: the sizes an eval runs") {
  Settings s;
  CHECK(sandbox::sizes_to_run(s, false) == std::vector<std::string>{"small", "full"});
  CHECK(sandbox::sizes_to_run(s, true) == std::vector<std::string>{"full"});
  s.sizes = {"small"};
  CHECK(sandbox::sizes_to_run(s, true) == std::vector<std::string>{"small"});
}

TEST_CASE("settings: JSON round trip, every field") {
  Settings s = sandbox::default_settings(Backend::host);
  s.problem = "all_gather";
  s.sizes = {"full"};
  s.overrides = {"n=64"};
  s.world = 4;
  s.seed = 11;
  s.race_pass = false;
  s.timing = sandbox::Timing::batched;
  s.iters = 7;
  s.limits.call_s = 3;
  s.under_tool = true;
  Settings back;
  std::string err;
  REQUIRE_MESSAGE(sandbox::settings_from_json(nlohmann::json(s), &back, &err), err);
  CHECK(nlohmann::json(back) == nlohmann::json(s));
}

TEST_CASE("settings: an older trajectory header still reads") {
  // kforge before the settings block: 0 and -1 meant the backend's default, and two knobs
  // had other names.
  nlohmann::json old = {{"problem", "all_reduce"},
                        {"backend", "host"},
                        {"world", 2},
                        {"sizes", {"small"}},
                        {"overrides", nlohmann::json::array()},
                        {"iters", 0},
                        {"warmup", -1},
                        {"trials", 0},
                        {"seed", 0},
                        {"call_limit_s", 4.5},
                        {"no_time", true},
                        {"machine", "h200"}};
  Settings s;
  std::string err;
  REQUIRE_MESSAGE(sandbox::settings_from_json(old, &s, &err), err);
  CHECK(s.backend == Backend::host);
  CHECK(s.world == 2);
  CHECK(s.iters == 10);
  CHECK(s.warmup == 2);
  CHECK(s.trials == 2);
  CHECK(s.limits.call_s == 4.5);
  CHECK_FALSE(s.time);
  CHECK(s.timing == sandbox::Timing::isolated);  // older files lack it
  CHECK(s.race_pass);
}

TEST_CASE("settings: a bad value is named") {
  Settings s;
  std::string err;
  CHECK_FALSE(sandbox::settings_from_json({{"backend", "tpu"}}, &s, &err));
  CHECK_MESSAGE(err.find("tpu") != std::string::npos, err);
  CHECK_FALSE(sandbox::settings_from_json({{"world", "two"}}, &s, &err));
  CHECK_MESSAGE(err.find("settings") != std::string::npos, err);
  CHECK_FALSE(sandbox::settings_from_json(nlohmann::json::array(), &s, &err));
}
