#include "llm/pricing.h"

#include <doctest/doctest.h>

#include "kf_build_paths.h"
#include "llm/provider.h"

namespace llm {

TEST_CASE("llm pricing: cost from input, cached and output tokens") {
  PriceTable t;
  std::string err, note;
  REQUIRE(t.parse(R"({"_comment": "x", "models": {
      "m": {"input": 2, "output": 10, "cache_read": 0.5},
      "together:m": {"input": 1, "output": 1}}})",
                  "test.json", &err));
  Usage u;
  u.input_tokens = 1'000'000;
  u.cache_read_tokens = 200'000;
  u.output_tokens = 100'000;
  u.reasoning_tokens = 60'000;  // already inside output_tokens: not charged twice
  CHECK(t.cost("openai", "m", u, &note) == doctest::Approx(0.8 * 2 + 0.2 * 0.5 + 0.1 * 10));
  CHECK(t.cost("together", "m", u, &note) == doctest::Approx(0.8 + 0.2 + 0.1));
  CHECK(note.empty());
}

TEST_CASE("llm pricing: cache reads and writes unpriced in the file: the provider's multipliers") {
  PriceTable t;
  std::string err, note;
  REQUIRE(t.parse(R"({"models": {"c": {"input": 10, "output": 50}},
      "cache_multipliers": {"anthropic": {"cache_read": 0.1, "cache_write": 1.25}}})",
                  "p.json", &err));
  Usage u;
  u.input_tokens = 1'000'000;  // 100k uncached, 600k read from the cache, 300k written to it
  u.cache_read_tokens = 600'000;
  u.cache_write_tokens = 300'000;
  // Anthropic: a read costs 0.1x the input price, a write 1.25x.
  CHECK(t.cost("anthropic", "c", u, &note) == doctest::Approx(0.1 * 10 + 0.6 * 1 + 0.3 * 12.5));
  // Elsewhere nothing is known of a discount: the input price.
  CHECK(t.cost("openai", "c", u, &note) == doctest::Approx(1.0 * 10));
  CHECK(t.resolved("anthropic", {10, 50, -1, -1}).cache_write == doctest::Approx(12.5));
  CHECK(t.resolved("anthropic", {10, 50, -1, -1}).cache_read == doctest::Approx(1));
  CHECK(t.resolved("openai", {10, 50, -1, -1}).cache_write == doctest::Approx(10));
  // Nothing in the code knows a vendor: a table without the section prices cache
  // tokens at the input price for every provider.
  PriceTable bare;
  REQUIRE(bare.parse(R"({"models": {"c": {"input": 10, "output": 50}}})", "p.json", &err));
  CHECK(bare.cost("anthropic", "c", u, &note) == doctest::Approx(1.0 * 10));
  // A price in the file wins.
  t.set("c", {10, 50, 2, 20});
  CHECK(t.cost("anthropic", "c", u, &note) == doctest::Approx(0.1 * 10 + 0.6 * 2 + 0.3 * 20));
}

TEST_CASE("llm pricing: an unknown model costs 0 with a note") {
  PriceTable t;
  std::string err, note;
  REQUIRE(t.parse(R"({"models": {}})", "p.json", &err));
  Usage u;
  u.output_tokens = 5;
  CHECK(t.cost("openai", "mystery", u, &note) == 0);
  CHECK(note.find("mystery") != std::string::npos);
  CHECK(note.find("p.json") != std::string::npos);
}

TEST_CASE("llm pricing: bad files are named") {
  PriceTable t;
  std::string err;
  CHECK_FALSE(t.parse("{", "p.json", &err));
  CHECK(err.find("p.json") != std::string::npos);
  CHECK_FALSE(t.parse(R"({"models": {"m": {"input": "cheap", "output": 1}}})", "p.json", &err));
  CHECK(err.find("models.\"m\".input") != std::string::npos);
  CHECK_FALSE(t.parse(R"({"models": {"m": {"input": 1}}})", "p.json", &err));
  CHECK_FALSE(
      t.parse(R"({"models": {}, "cache_multipliers": {"x": {"cache_read": -1}}})", "p.json", &err));
  CHECK(err.find("cache_multipliers.\"x\".cache_read") != std::string::npos);
  CHECK_FALSE(t.load("/nonexistent/prices.json", &err));
  CHECK(err.find("/nonexistent/prices.json") != std::string::npos);
}

TEST_CASE("llm pricing: the shipped price file parses") {
  PriceTable t;
  std::string err;
  CHECK_MESSAGE(t.load(std::string(KF_SOURCE_ROOT) + "/config/prices.json", &err), err);
  CHECK(t.find("openai", "gpt-5") != nullptr);
  // Anthropic's published multipliers come from the file, not from code.
  CHECK(t.resolved("anthropic", {10, 50, -1, -1}).cache_write == doctest::Approx(12.5));
}

}  // namespace llm
