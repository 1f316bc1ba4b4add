#include "agent/template.h"

#include <doctest/doctest.h>

TEST_CASE("template: fills placeholders, spaces inside braces allowed") {
  std::string out, err;
  REQUIRE(agent::render_template("a {{x}} b {{ y }} {{x}}", {{"x", "1"}, {"y", "two"}}, "t", &out,
                                 &err));
  CHECK(out == "a 1 b two 1");
}

TEST_CASE("template: an unknown placeholder is an error naming it") {
  std::string out, err;
  CHECK_FALSE(agent::render_template("{{nope}}", {{"x", "1"}}, "t.md", &out, &err));
  CHECK(err.find("{{nope}}") != std::string::npos);
  CHECK(err.find("t.md") != std::string::npos);
}

TEST_CASE("template: an unused value is an error unless allowed") {
  std::string out, err;
  CHECK_FALSE(agent::render_template("{{x}}", {{"x", "1"}, {"y", "2"}}, "t", &out, &err));
  CHECK(err.find("{{y}}") != std::string::npos);
  CHECK(agent::render_template("{{x}}", {{"x", "1"}, {"y", "2"}}, "t", &out, &err, true));
  CHECK(out == "1");
}

TEST_CASE("template: unterminated and malformed placeholders are errors") {
  std::string out, err;
  CHECK_FALSE(agent::render_template("a {{x", {{"x", "1"}}, "t", &out, &err, true));
  CHECK(err.find("unterminated") != std::string::npos);
  CHECK_FALSE(agent::render_template("a {{x-y}}", {{"x", "1"}}, "t", &out, &err, true));
}

TEST_CASE("template: values are not re-expanded") {
  std::string out, err;
  REQUIRE(agent::render_template("{{a}}", {{"a", "{{b}}"}}, "t", &out, &err));
  CHECK(out == "{{b}}");
}
