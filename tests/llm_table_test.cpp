// The provider table is the one every command resolves a --model through: `kforge solve`
// and `kforge sweep` refuse an unknown provider with the same message, naming the
// table's rows, and `--model replay:FILE` is built by the table's replay row.
#include <doctest/doctest.h>

#include "tests/has.h"
#include "tests/solve_harness.h"

using namespace solve_test;

TEST_CASE("llm table: solve and sweep refuse an unknown provider listing the table's names") {
  Harness h;
  const std::string names = "(providers: " + llm::provider_names_text() + ")";
  std::string out;
  int code = h.kforge({"solve", "all_reduce", "--backend", "host", "--world", "2", "--headless",
                       "--model", "nope:some-model", "--out", h.dir() + "/solve"},
                      &out);
  INFO(out);
  CHECK(code == 2);
  CHECK(has(out, "unknown provider \"nope\""));
  CHECK(has(out, names));
  std::string sweep_out;
  code = h.kforge({"sweep", "all_reduce", "--backend", "host", "--world", "2", "--samples", "1",
                   "--model", "nope:some-model", "--out", h.dir() + "/sweep"},
                  &sweep_out);
  INFO(sweep_out);
  CHECK(code == 2);
  CHECK(has(sweep_out, "unknown provider \"nope\""));
  CHECK(has(sweep_out, names));
  // Refused before any sample ran: no ledger.
  CHECK_FALSE(fs::exists(h.dir() + "/sweep/ledger.jsonl"));
}

TEST_CASE("llm table: --model replay:FILE is the table's replay row") {
  Harness h;
  std::string out;
  int code =
      h.kforge({"solve", "all_reduce", "--backend", "host", "--world", "2", "--headless", "--model",
                "replay:" + h.dir() + "/missing.jsonl", "--out", h.dir() + "/solve"},
               &out);
  INFO(out);
  CHECK(code == 2);
  CHECK(has(out, "replay: "));
  CHECK(has(out, "--model replay:FILE names a trajectory .jsonl"));
  // A row without a model name says what the row expects.
  code = h.kforge({"solve", "all_reduce", "--backend", "host", "--world", "2", "--headless",
                   "--model", "replay:", "--out", h.dir() + "/solve2"},
                  &out);
  CHECK(code == 2);
  CHECK(has(out, "provider replay needs a model name after the colon"));
}
