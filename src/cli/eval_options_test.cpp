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
