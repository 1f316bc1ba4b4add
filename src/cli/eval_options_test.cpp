// cli/eval_options_test.cpp: the words a sweep gives its `kforge solve` children carry
// every option the person set, and none they did not.
#include "cli/eval_options.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

namespace {

// The options parsed from `words` as `kforge eval` parses them.
cli::EvalOptions parsed(std::vector<std::string> words) {
  CLI::App app;
  cli::EvalOptions o;
  cli::add_eval_options(&app, &o);
  std::reverse(words.begin(), words.end());  // CLI11 takes them last first
  app.parse(words);
  return o;
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) s += w + " ";
  return s;
}

}  // namespace

TEST_CASE("eval options: the defaults give a child no words") {
  CHECK(cli::eval_option_args(parsed({})).empty());
}

TEST_CASE("eval options: a PKB sweep's options reach its children, the checkout made absolute") {
  std::string line = joined(cli::eval_option_args(
      parsed({"--world", "1", "--trials", "3", "--suite", "pkb:rel/pkb", "--timed-check", "clones",
              "--warmup-s", "0", "--python", "/opt/py/bin/python3"})));
  CHECK_MESSAGE(line.find("--world 1 ") != std::string::npos, line);
  CHECK_MESSAGE(line.find("--trials 3 ") != std::string::npos, line);
  CHECK_MESSAGE(line.find("--timed-check clones ") != std::string::npos, line);
  CHECK_MESSAGE(line.find("--warmup-s 0 ") != std::string::npos, line);  // 0 is not the default
  CHECK_MESSAGE(line.find("--python /opt/py/bin/python3 ") != std::string::npos, line);
  std::string abs = std::filesystem::absolute("rel/pkb").string();
  CHECK_MESSAGE(line.find("--suite pkb:" + abs + " ") != std::string::npos, line);
}

TEST_CASE("eval options: a fractional warm-up limit survives the trip") {
  std::string line = joined(cli::eval_option_args(parsed({"--warmup-s", "2.5"})));
  CHECK_MESSAGE(line == "--warmup-s 2.5 ", line);
}

TEST_CASE("eval options: a PKB job's limit reaches a sweep's children") {
  std::string line = joined(cli::eval_option_args(parsed({"--job-limit", "1200"})));
  CHECK_MESSAGE(line == "--job-limit 1200 ", line);
}

TEST_CASE("eval options: the one reader fills the settings, the backend's defaults first") {
  eval::EvalConfig cfg;
  std::string err;
  REQUIRE_MESSAGE(cli::apply_eval_options(
                      parsed({"--backend", "host", "--world", "4", "--size", "small", "--size",
                              "n=64", "--no-race-pass", "--call-limit", "7", "--seed", "9"}),
                      {"dtype=bf16"}, &cfg, &err),
                  err);
  const sandbox::Settings& s = cfg.settings;
  CHECK(s.backend == sandbox::Backend::host);
  CHECK(s.world == 4);
  CHECK(s.sizes == std::vector<std::string>{"small"});
  CHECK(s.overrides == std::vector<std::string>{"dtype=bf16", "n=64"});
  CHECK(s.iters == 10);  // the host's default, not cuda's 50
  CHECK(s.warmup == 2);
  CHECK_FALSE(s.race_pass);
  CHECK(s.time);
  CHECK(s.limits.call_s == 7);
  CHECK(s.seed == 9);

  REQUIRE(cli::apply_eval_options(parsed({"--backend", "cuda", "--no-time", "--iters", "3"}), {},
                                  &cfg, &err));
  CHECK(cfg.settings.iters == 3);
  CHECK(cfg.settings.warmup == 5);
  CHECK(cfg.settings.race_pass);
  CHECK_FALSE(cfg.settings.time);
}

TEST_CASE("eval options: --no-race-pass reaches a sweep's children") {
  std::string line = joined(cli::eval_option_args(parsed({"--no-race-pass"})));
  CHECK_MESSAGE(line == "--no-race-pass ", line);
}
