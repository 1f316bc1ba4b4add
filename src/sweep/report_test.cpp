// src/sweep/report_test.cpp: the HTML report from records: its curves at the right
// points, speeds and fast_p only where measured, every sample linked, text escaped.
#include "sweep/report.h"

#include <doctest/doctest.h>

#include "sweep/svg.h"

namespace sweep {

namespace {
Record sample(const std::string& model, const std::string& problem, int i, bool ok, double x) {
  Record r;
  r.state = SampleState::done;
  r.model = model;
  r.problem = problem;
  r.category = "collective";
  r.index = i;
  r.correct = ok;
  r.status = ok ? "correct" : "mismatch";
  r.speedup = x;
  r.trajectory = "/sweep/samples/" + problem + "/" + std::to_string(i) + ".jsonl";
  return r;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = 0; (at = s.find(what, at)) != std::string::npos; ++at) ++n;
  return n;
}
}  // namespace

TEST_CASE("sweep report: the pass@k curve goes through the hand-computed points") {
  // k = 1, 2, 4 on a log2 axis 320 wide from x = 50; y from 255 (0) up to 30 (1).
  std::string svg = svg_lines("pass@k", "k", {{"m", {{1, 0.5}, {2, 2.0 / 3}, {4, 0.8}}}});
  CHECK(svg.find("points=\"50.0,142.5 210.0,105.0 370.0,75.0\"") != std::string::npos);
  CHECK(html_escape("<a href='x'>&\"") == "&lt;a href=&#39;x&#39;&gt;&amp;&quot;");
}

TEST_CASE("sweep report: two models, speeds, failures, every sample linked and escaped") {
  ReportInput in;
  in.dir = "/sweep";
  for (int i = 0; i < 2; ++i) {
    in.samples.push_back(sample("a", "p", i, true, i ? 2.5 : 1.2));
    in.samples.push_back(sample("b", "p", i, i == 0, i ? 0 : 0.4));
  }
  Record failed = sample("b", "q", 0, false, 0);
  failed.state = SampleState::failed;
  failed.message = "kforge solve exited 3 <provider>";
  in.samples.push_back(failed);
  Record not_runnable = sample("a", "r", 0, false, 0);
  not_runnable.state = SampleState::not_runnable;
  not_runnable.status = "not_runnable";
  not_runnable.message = "r: PKB's reference fails on this setup at world 1";  // names r once
  in.samples.push_back(not_runnable);
  std::vector<Record> fin(in.samples.begin(), in.samples.end() - 2);
  in.status.rows = summarize(fin);
  in.status.done = 4;
  in.status.failed = 1;
  in.status.not_runnable = 1;
  in.status.not_runnable_problems["r"] = not_runnable.message;
  in.render_trajectory = [](const std::string& path) {
    return "== turn 1 == of " + path + " <script>alert(1)</script>";
  };
  std::string html = report_html(in);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  // pass@k, then fast_p@k for the three p: speeds were measured.
  CHECK(count(html, "<svg") == 6);  // + the speedup histogram and the verdicts
  CHECK(html.find("fast_1.5@k") != std::string::npos);
  CHECK(html.find("No speed was measured") == std::string::npos);
  // The histogram: a's 1.2 in 1-1.5 and 2.5 in 2-4; b's 0.4 in <0.5.
  CHECK(html.find("<title>a 1-1.5: 1</title>") != std::string::npos);
  CHECK(html.find("<title>a 2-4: 1</title>") != std::string::npos);
  CHECK(html.find("<title>b &lt;0.5: 1</title>") != std::string::npos);
  // The failure breakdown counts the failed sample apart from verdicts.
  CHECK(html.find("<title>b failed (kforge/provider): 1</title>") != std::string::npos);
  CHECK(html.find("<title>b mismatch: 1</title>") != std::string::npos);
  CHECK(html.find("<title>a not runnable (setup): 1</title>") != std::string::npos);
  CHECK(html.find("in no metric: r: PKB&#39;s reference fails on this setup") != std::string::npos);
  // Every sample has its section, linked from the problem table, its text escaped.
  CHECK(count(html, "<details id=\"s-") == 6);
  CHECK(html.find("href=\"#s-a-p-1\"") != std::string::npos);
  CHECK(html.find("href=\"#s-b-q-0\"") == std::string::npos);  // no finished sample: no row
  CHECK(html.find("<details id=\"s-b-q-0\">") != std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("exited 3 &lt;provider&gt;") != std::string::npos);
  CHECK(html.find("href=\"samples/p/1.jsonl\"") != std::string::npos);  // relative to the report
}

}  // namespace sweep
