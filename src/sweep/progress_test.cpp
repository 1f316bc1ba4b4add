// src/sweep/progress_test.cpp: the progress line, its ETA, and plain lines off a terminal.
#include "sweep/progress.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace sweep {

namespace {
std::string printed(bool live, bool color, const std::vector<Progress>& updates) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  REQUIRE(f);
  ProgressPrinter pp(f, live, color);
  for (const Progress& p : updates) pp.update(p);
  pp.finish();
  std::fclose(f);
  std::string out(buf, len);
  std::free(buf);
  return out;
}
}  // namespace

TEST_CASE("sweep progress: durations, and the ETA from what this run finished") {
  CHECK(duration_text(45) == "45s");
  CHECK(duration_text(200) == "3m20s");
  CHECK(duration_text(3720) == "1h02m");
  Progress p;
  p.total = 10;
  p.done = 3;
  p.skipped = 2;  // finished by an earlier run: says nothing about this run's pace
  p.running = 2;
  auto t0 = p.started;
  // One sample finished here in 10 s; 5 left and 2 running: 70 s.
  CHECK(eta_text(p, t0 + std::chrono::seconds(10)) == "1m10s");
  p.done = 2;  // none finished here yet
  CHECK(eta_text(p, t0 + std::chrono::seconds(10)) == "-");
  p.done = 10;
  p.running = 0;
  CHECK(eta_text(p, t0) == "0s");
}

TEST_CASE("sweep progress: the line says done, running, left, pass, spend, failures") {
  Progress p;
  p.total = 8;
  p.done = 3;
  p.running = 2;
  p.correct = 1;
  p.failed = 1;
  p.cost_usd = 0.25;
  std::string line = progress_line(p, p.started, false);
  CHECK(line.find("3/8 done, 2 running, 2 left | pass 1 of 3 | 1 failed | $0.250") !=
        std::string::npos);
  CHECK(line.find('\033') == std::string::npos);
  CHECK(progress_line(p, p.started, true).find("\033[32m1\033[0m") != std::string::npos);
  p.not_runnable = 2;  // a problem whose reference fails here: neither left nor failed
  line = progress_line(p, p.started, false);
  CHECK(line.find("3/8 done, 2 running, 0 left | pass 1 of 3 | 1 failed | 2 not runnable here") !=
        std::string::npos);
}

TEST_CASE("sweep progress: off a terminal one plain line per finished sample") {
  Progress start, running, finished;
  start.total = running.total = finished.total = 2;
  running.running = 1;
  finished.done = 1;
  std::string plain = printed(false, false, {start, running, finished});
  // The start and the finish; a sample starting prints nothing.
  std::string first = "sweep: 0/2 done, 0 running, 2 left | pass 0 of 0 | $0.000 | ETA -\n";
  REQUIRE(plain.rfind(first, 0) == 0);
  CHECK(plain.substr(first.size())
            .rfind("sweep: 1/2 done, 0 running, 1 left | pass 0 of 1 | $0.000 | ETA ", 0) == 0);
  CHECK(std::count(plain.begin(), plain.end(), '\n') == 2);
  CHECK(plain.find('\033') == std::string::npos);
  std::string live = printed(true, false, {start, running});
  CHECK(live.find("\r\033[K") != std::string::npos);
  CHECK(live.find("\033[32m") == std::string::npos);  // NO_COLOR: no colours, still live
  CHECK(live.back() == '\n');
}

}  // namespace sweep
