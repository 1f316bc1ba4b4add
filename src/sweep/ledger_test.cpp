// src/sweep/ledger_test.cpp: the ledger's lines, a torn last line, several writers.
#include "sweep/ledger.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace sweep {

TEST_CASE("ledger: records come back in order; a torn line is skipped; files merge") {
  char tmpl[] = "/tmp/kf-ledger-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  std::string dir = tmpl, err;
  Record r;
  r.problem = "all_reduce";
  r.model = "builtin";
  r.state = SampleState::running;
  REQUIRE(append_record(dir + "/ledger.jsonl", r, &err));
  r.state = SampleState::done;
  r.correct = true;
  r.speedup = 1.5;
  REQUIRE(append_record(dir + "/ledger.jsonl", r, &err));
  // A writer killed mid-line (the only way a line can be partial: one write per line).
  std::ofstream(dir + "/ledger.jsonl", std::ios::app) << "{\"state\":\"done\",\"probl";
  // A second writer's own file (a Slurm task).
  Record other = r;
  other.index = 1;
  REQUIRE(append_record(dir + "/ledger-1.jsonl", other, &err));

  std::vector<Record> recs;
  int torn = 0;
  REQUIRE(read_ledgers(dir, &recs, &torn, &err));
  CHECK(torn == 1);
  REQUIRE(recs.size() == 3);
  std::map<std::string, Record> done = finished(recs);
  REQUIRE(done.size() == 2);
  CHECK(done["all_reduce/builtin/0"].speedup == doctest::Approx(1.5));
  CHECK(done.count("all_reduce/builtin/1") == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("ledger: a folder that is not there is an error naming it") {
  std::vector<Record> recs;
  int torn = 0;
  std::string err;
  CHECK_FALSE(read_ledgers("/nonexistent/kf-sweep", &recs, &torn, &err));
  CHECK(err.find("/nonexistent/kf-sweep") != std::string::npos);
}

}  // namespace sweep
