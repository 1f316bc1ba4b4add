// `kforge solve --resume RUN` and `--continue` against the loopback fake LLM server (the
// real binary, host backend, world 2): a run cut by --max-turns goes on to a correct
// kernel with its conversation, in the same trajectory, its spend added up; --continue
// takes the newest run; a run killed with SIGKILL resumes from what is on disk; a RUN
// that is not a run is refused with a message naming it.
#include <doctest/doctest.h>

#include <csignal>
#include <thread>

#include "kf_build_paths.h"
#include "tests/has.h"
#include "tests/kforge_child.h"
#include "tests/solve_harness.h"

using namespace solve_test;

namespace {

// A price for test-model, so that the runs cost something to add up.
json priced_flat(Harness& h) {
  std::string prices = h.dir() + "/prices.json";
  std::ofstream(prices) << R"({"models": {"test-model": {"input": 1.0, "output": 10.0}}})";
  return {{"prices_file", prices}};
}

// `kforge solve --resume RUN --headless --base-url <server>` plus extra, against a new
// server playing `script`.
Result resume(Harness& h, const json& script, const std::vector<std::string>& how,
              const std::vector<std::string>& extra = {}) {
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script, &err), err);
  Result r;
  std::vector<std::string> args = {"solve"};
  args.insert(args.end(), how.begin(), how.end());
  args.insert(args.end(), {"--headless", "--base-url", server.url() + "/v1"});
  args.insert(args.end(), extra.begin(), extra.end());
  r.code = h.kforge(args, &r.output);
  h.collect(server, &r);
  return r;
}

std::string run_dir(const Result& r) {
  return r.trajectory_path.substr(0, r.trajectory_path.size() - std::string(".jsonl").size());
}

}  // namespace

TEST_CASE("resume: a run cut by --max-turns goes on to a correct kernel, in the same trajectory") {
  Harness h;
  json cfg = priced_flat(h);
  std::string wrong = fenced("cpp", wrong_kernel()), right = fenced("cpp", right_kernel());
  Result first = h.solve(json::array({openai_ok(wrong)}), "openai", false,
                         {"--max-turns", "1", "--max-cost", "5"}, cfg);
  INFO(first.output);
  REQUIRE(first.code == 1);
  CHECK(first.result["exit_reason"] == "max_turns");
  const double cost1 = first.result["cost_usd"].get<double>();
  CHECK(cost1 > 0);

  // The run's folder names it; --max-turns 2 is two more turns (one is used).
  Result second = resume(h, json::array({openai_ok(right)}), {"--resume", run_dir(first)},
                         {"--max-turns", "2"});
  INFO(second.output);
  CHECK(second.code == 0);
  REQUIRE(second.result.is_object());
  CHECK(second.result["exit_reason"] == "target");
  CHECK(second.trajectory_path == first.trajectory_path);
  CHECK(second.result["turns"] == 2);
  CHECK(second.result["candidates"] == 2);
  CHECK(second.result["best_turn"] == 2);
  // Its one request continues the conversation: the task, the wrong kernel, its feedback.
  REQUIRE(second.requests.size() == 1);
  auto& msgs = second.requests[0]["body"]["messages"];
  REQUIRE(msgs.size() == 4);
  CHECK(msgs[2]["content"] == wrong);
  CHECK(has(msgs[3]["content"], "Turn 1: your kernel ran but its outputs are wrong"));
  // The run's own options were kept (none was given again): world 2 on the host backend.
  REQUIRE(second.run.verdicts.size() == 2);
  CHECK(second.run.verdicts[1].verdict.world == 2);
  CHECK(second.run.verdicts[1].verdict.backend == sandbox::Backend::host);
  CHECK(second.result["part"] == 2);
  CHECK(second.result["this_part"]["turns"] == 1);
  // The trajectory holds both parts: one header, the first summary, `resumed`, the rest.
  const auto& t = second.traj;
  auto resumed = t.of_type(trace::EventType::resumed);
  REQUIRE(resumed.size() == 1);
  CHECK((*resumed[0])["part"] == 2);
  CHECK((*resumed[0])["from_turn"] == 2);
  CHECK((*resumed[0])["after"] == "max_turns");
  CHECK((*resumed[0])["limits"]["max_turns"] == 2);
  CHECK(t.of_type(trace::EventType::summary).size() == 2);
  CHECK(t.of_type(trace::EventType::prompt).size() == 2);
  CHECK(verdict_statuses(second.run) == std::vector<std::string>{"mismatch", "correct"});
  // The prompt of turn 2, rebuilt from the trajectory, is what was sent.
  auto prompts = trace::rebuild_prompts(t);
  REQUIRE(prompts.size() == 2);
  CHECK(prompts[1].back().second == msgs[3]["content"].get<std::string>());
  // The spend adds up: the totals are both parts', this part's apart.
  const json& sum = *t.summary();
  double cost2 = 0;
  for (const trace::ReplyEvent& r : second.run.replies) cost2 += r.cost_usd;
  CHECK(cost2 > cost1);
  CHECK(sum["cost_usd"].get<double>() == doctest::Approx(cost2));
  CHECK(second.result["cost_usd"].get<double>() == doctest::Approx(cost2));
  CHECK(sum["this_part"]["cost_usd"].get<double>() == doctest::Approx(cost2 - cost1));
  CHECK(sum["this_part"]["turns"] == 1);
  CHECK(sum["part"] == 2);
  CHECK(read_file(run_dir(first) + "/best.cpp") == right_kernel());
  check_replay(h, second);
}

TEST_CASE("resume: --continue goes on with the newest run of the problem") {
  Harness h;
  std::string wrong = fenced("cpp", wrong_kernel()), right = fenced("cpp", right_kernel());
  Result older = h.solve(json::array({openai_ok(wrong)}), "openai", false, {"--max-turns", "1"});
  Result newer = h.solve(json::array({openai_ok(fenced("cpp", broken_kernel()))}), "openai", false,
                         {"--max-turns", "1"});
  INFO(older.output << newer.output);
  REQUIRE(older.trajectory_path != newer.trajectory_path);
  Result r = resume(h, json::array({openai_ok(right)}), {"all_reduce", "--continue"});
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK(r.trajectory_path == newer.trajectory_path);
  REQUIRE(r.requests.size() == 1);
  CHECK(has(last_message(r.requests, 0), "does not compile"));  // the newer run's feedback
  trace::Run untouched;
  std::string err;
  REQUIRE_MESSAGE(trace::read_run(older.trajectory_path, &untouched, &err), err);
  CHECK(untouched.raw.of_type(trace::EventType::resumed).empty());
}

TEST_CASE("resume: a run killed with SIGKILL mid model call resumes from what is on disk") {
  Harness h;
  std::string wrong = fenced("cpp", wrong_kernel()), right = fenced("cpp", right_kernel());
  fake_llm::Server server;
  std::string err;
  // Turn 1 answers; turn 2's answer never comes.
  REQUIRE_MESSAGE(
      server.start(
          json::array({openai_ok(wrong),
                       {{"body", fake_llm::openai_body(right)}, {"stall_after_bytes", 10}}}),
          &err),
      err);
  std::vector<std::string> args =
      h.solve_args(server, "openai", false, {"--max-turns", "5"}, h.next_out_dir());
  args.insert(args.begin(), std::string(KF_BINARY_DIR) + "/kforge");
  kforge_child::Child c;
  REQUIRE_MESSAGE(c.start(args, h.env(), h.dir() + "/kforge.out", &err), err);
  bool asked = c.wait_until([&] { return server.requests().size() >= 2; }, 120);
  INFO(c.output());
  REQUIRE(asked);
  double secs = 0;
  c.signal_and_wait(SIGKILL, 60, &secs);
  // The trajectory has no summary; turn 2's prompt is its last word.
  std::string traj;
  for (auto& e : std::filesystem::directory_iterator(h.dir() + "/runs/all_reduce"))
    if (e.path().extension() == ".jsonl") traj = e.path().string();
  REQUIRE(!traj.empty());
  Result r = resume(h, json::array({openai_ok(right)}), {"--resume", traj});
  INFO(r.output);
  CHECK(r.code == 0);
  auto resumed = r.traj.of_type(trace::EventType::resumed);
  REQUIRE(resumed.size() == 1);
  CHECK((*resumed[0])["after"] == "killed");
  CHECK((*resumed[0])["from_turn"] == 3);  // turn 2's call was made
  // The killed turn's prompt is asked again, as it was.
  REQUIRE(r.requests.size() == 1);
  auto& msgs = r.requests[0]["body"]["messages"];
  REQUIRE(msgs.size() == 4);
  CHECK(msgs[2]["content"] == wrong);
  CHECK(has(msgs[3]["content"], "Turn 1: your kernel ran but its outputs are wrong"));
  CHECK(r.result["turns"] == 3);
  CHECK(r.result["candidates"] == 2);
  CHECK(r.result["best_turn"] == 3);
}

TEST_CASE("resume: a RUN that is not a run, or two ways to name one, is refused with what to do") {
  Harness h;
  std::string out;
  int code = h.kforge({"solve", "--resume", h.dir() + "/nowhere", "--headless"}, &out);
  CHECK(code == 2);
  CHECK(has(out, "--resume " + h.dir() + "/nowhere: no such run"));
  CHECK(has(out, "--continue"));
  code = h.kforge({"solve", "all_reduce", "--continue"}, &out);
  CHECK(code == 2);
  CHECK(has(out, "--continue: no run of all_reduce"));
  CHECK(has(out, "kforge solve all_reduce"));
  std::ofstream(h.dir() + "/notes.jsonl") << "hello\n";
  code = h.kforge({"solve", "--resume", h.dir() + "/notes.jsonl"}, &out);
  CHECK(code == 2);
  CHECK(has(out, h.dir() + "/notes.jsonl"));
  code = h.kforge({"solve", "all_reduce", "--resume", h.dir() + "/notes.jsonl"}, &out);
  CHECK(code == 2);
  CHECK(has(out, "drop 'all_reduce'"));
}
