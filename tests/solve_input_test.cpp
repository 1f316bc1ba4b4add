// `kforge solve`'s model inputs refused up front, as bad input (exit 2), with messages
// that say the working form: a key variable that is not set, a base URL that is not
// one; and a keyless local server reached with --api-key-env none.
#include <doctest/doctest.h>

#include <chrono>

#include "tests/has.h"
#include "tests/solve_harness.h"

using namespace solve_test;

TEST_CASE("solve input: a missing API key exits 2 and names --api-key-env none and key_env") {
  Harness h;
  std::string out;
  int code =
      h.kforge({"solve", "all_reduce", "--backend", "host", "--headless", "--model", "openai:x",
                "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "KF_TEST_SURELY_UNSET_KEY"},
               &out);
  INFO(out);
  CHECK(code == 2);
  CHECK(has(out, "KF_TEST_SURELY_UNSET_KEY is not set"));
  CHECK(has(out, "--api-key-env none"));
  CHECK(has(out, "\"key_env\": {\"openai\": \"none\"}"));
  CHECK_FALSE(has(out, "api_key_env"));  // the name the config file refuses
  CHECK(has(out, "\"error\":\"bad_input\""));
}

TEST_CASE("solve input: --api-key-env none reaches a keyless server without a key") {
  Harness h;
  Result r = h.solve(json::array({openai_ok(fenced("cpp", right_kernel()))}), "openai", false,
                     {"--api-key-env", "none"});
  INFO(r.output);
  CHECK(r.code == 0);
  REQUIRE(r.requests.size() == 1);
  CHECK(r.requests[0]["auth"]["present"] == false);
  // The same through the config file's key_env, which the message names.
  Result c = h.solve(json::array({openai_ok(fenced("cpp", right_kernel()))}), "openai", false, {},
                     {{"key_env", {{"openai", "none"}}}});
  CHECK(c.code == 0);
  REQUIRE(c.requests.size() == 1);
  CHECK(c.requests[0]["auth"]["present"] == false);
}

TEST_CASE("solve input: a malformed --base-url exits 2 at once with a correct example") {
  Harness h;
  for (const char* bad : {"htp:/x", "localhost:8000", "http://local host:8000/v1"}) {
    CAPTURE(bad);
    std::string out;
    auto t0 = std::chrono::steady_clock::now();
    int code = h.kforge({"solve", "all_reduce", "--backend", "host", "--headless", "--model",
                         "openai:x", "--base-url", bad},
                        &out);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(out);
    CHECK(code == 2);
    CHECK(has(out, std::string("--base-url \"") + bad + "\" is not a URL"));
    CHECK(has(out, "e.g. http://localhost:8000/v1"));
    CHECK_FALSE(has(out, "attempts"));  // refused, not retried as a connection error
    CHECK(took < 30);                   // a loose sanity bound: three retries took longer
  }
}

TEST_CASE("solve input: --confirm needs agent mode and a person at a terminal") {
  Harness h;
  std::string out;
  CHECK(h.kforge({"solve", "all_reduce", "--backend", "host", "--headless", "--confirm", "--model",
                  "openai:x", "--api-key-env", "none"},
                 &out) == 2);
  CHECK(has(out, "--confirm asks before each agent command: add --mode agent"));
  CHECK(h.kforge({"solve", "all_reduce", "--backend", "host", "--headless", "--mode", "agent",
                  "--confirm", "--model", "openai:x", "--api-key-env", "none"},
                 &out) == 2);
  CHECK(has(out, "--confirm needs a person at a terminal"));
}
