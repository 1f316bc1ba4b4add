// Whole `kforge solve` runs (the real binary, host backend, world 2) against the loopback
// fake LLM server: right first time, two fixes with exactly that feedback, never in the
// format, both wire formats streaming; each trajectory complete and reproduced by replay.
#include <doctest/doctest.h>

#include "sandbox/verdict_read.h"
#include "tests/has.h"
#include "tests/solve_harness.h"

using namespace solve_test;

TEST_CASE("solve: a model that answers right the first time (openai)") {
  Harness h;
  Result r = h.solve(json::array({openai_ok(fenced("cpp", right_kernel()))}), "openai", false);
  INFO(r.output);
  CHECK(r.code == 0);
  REQUIRE(r.result.is_object());
  CHECK(r.result["target_met"] == true);
  CHECK(r.result["exit_reason"] == "target");
  // The trajectory: header, then every event of the one turn, then the summary.
  CHECK(event_types(r.traj) ==
        std::vector<std::string>{"header", "prompt", "reply", "candidate", "verdict", "summary"});
  CHECK(r.traj.complete);
  CHECK(r.traj.header["problem"] == "all_reduce");
  CHECK(r.traj.header["model"] == "openai:test-model");
  CHECK(r.traj.header["config"]["eval"]["world"] == 2);
  CHECK(r.traj.header["config"]["eval"]["timing"] == "isolated");  // replay evaluates the same way
  CHECK(r.traj.header["topology"]["source"] == "none");
  CHECK(verdict_statuses(r.run) == std::vector<std::string>{"correct"});
  CHECK((*r.traj.summary())["best"]["turn"] == 1);
  // The best kernel and the verdict file.
  CHECK(read_file(r.out_dir + "/best.cpp") == right_kernel());
  sandbox::Verdict verdict;
  std::string err;
  REQUIRE_MESSAGE(sandbox::read_verdict(r.out_dir + "/verdict.json", &verdict, &err), err);
  CHECK(verdict.status == sandbox::Status::correct);
  json v = json::parse(read_file(r.out_dir + "/verdict.json"));  // solve's own part
  CHECK(v["solve"]["target_met"] == true);
  // One request: the system prompt and the task, which carries the problem.
  REQUIRE(r.requests.size() == 1);
  auto& msgs = r.requests[0]["body"]["messages"];
  REQUIRE(msgs.size() == 2);
  CHECK(msgs[0]["role"] == "system");
  CHECK(has(msgs[0]["content"], "kf_run"));
  CHECK(has(msgs[1]["content"], "# Problem: all_reduce"));
  CHECK(has(msgs[1]["content"], "baseline_host.cpp"));
  // What was sent is what the trajectory says was sent.
  auto prompts = trace::rebuild_prompts(r.traj);
  REQUIRE(prompts.size() == 1);
  CHECK(prompts[0][1].second == msgs[1]["content"].get<std::string>());
  check_replay(h, r);
}

TEST_CASE(
    "solve: two fixes (compile error, then mismatch); the 2nd and 3rd prompts carry exactly that "
    "feedback") {
  Harness h;
  std::string a1 = fenced("cpp", broken_kernel()), a2 = fenced("cpp", wrong_kernel()),
              a3 = fenced("cpp", right_kernel());
  Result r = h.solve(json::array({openai_ok(a1), openai_ok(a2), openai_ok(a3)}), "openai", false);
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK(verdict_statuses(r.run) ==
        std::vector<std::string>{"compile_error", "mismatch", "correct"});
  REQUIRE(r.requests.size() == 3);
  // Turn 2's prompt: the task, the first reply verbatim, then the compile error.
  auto& m2 = r.requests[1]["body"]["messages"];
  REQUIRE(m2.size() == 4);
  CHECK(m2[2]["role"] == "assistant");
  CHECK(m2[2]["content"] == a1);
  std::string fb2 = last_message(r.requests, 1);
  CHECK(has(fb2, "Turn 1: your kernel does not compile"));
  CHECK(has(fb2, "undeclared_helper"));
  CHECK(has(fb2, "error"));
  CHECK_FALSE(has(fb2, "mismatch"));
  // Turn 3's prompt: everything before, the second reply, then the mismatch with rank,
  // tensor and indices.
  auto& m3 = r.requests[2]["body"]["messages"];
  REQUIRE(m3.size() == 6);
  CHECK(m3[3]["content"] == fb2);
  CHECK(m3[4]["content"] == a2);
  std::string fb3 = last_message(r.requests, 2);
  CHECK(has(fb3, "Turn 2: your kernel ran but its outputs are wrong"));
  CHECK(has(fb3, "mismatch: rank "));
  CHECK(has(fb3, "tensor y"));
  CHECK(has(fb3, "first bad: y[0] = "));
  CHECK_FALSE(has(fb3, "undeclared_helper"));
  // The feedback sent is the feedback the trajectory recorded.
  auto prompts = trace::rebuild_prompts(r.traj);
  REQUIRE(prompts.size() == 3);
  CHECK(prompts[1].back().second == fb2);
  CHECK(prompts[2].back().second == fb3);
  CHECK((*r.traj.summary())["candidates"] == 3);
  CHECK((*r.traj.summary())["best"]["turn"] == 3);
  check_replay(h, r);
}

TEST_CASE("solve: a model that never answers in the format ends after three format errors") {
  Harness h;
  json script = json::array({openai_ok("I would use a ring all-reduce."),
                             openai_ok("```python\nprint('hi')\n```"), openai_ok("Still thinking."),
                             openai_ok(fenced("cpp", right_kernel()))});
  Result r = h.solve(script, "openai", false);
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(r.result["exit_reason"] == "format_errors");
  CHECK(r.requests.size() == 3);  // the fourth (right) answer is never asked for
  CHECK(r.traj.of_type(trace::EventType::format_error).size() == 3);
  CHECK(r.traj.of_type(trace::EventType::candidate).empty());
  CHECK(r.traj.complete);
  CHECK(has(last_message(r.requests, 1), "no fenced code block"));
  CHECK(has(last_message(r.requests, 2), "tagged cuda or cpp"));
  CHECK(has(last_message(r.requests, 1), "(2 more replies in the wrong format will end the run.)"));
  CHECK(has(last_message(r.requests, 2), "(1 more reply in the wrong format will end the run.)"));
  CHECK_FALSE(fs::exists(r.out_dir + "/best.cpp"));
}

TEST_CASE("solve: anthropic wire, streamed, split mid-event") {
  Harness h;
  json text = right_kernel();
  std::string body = fenced("cpp", right_kernel());
  std::string delta = json{{"type", "content_block_delta"},
                           {"index", 0},
                           {"delta", {{"type", "text_delta"}, {"text", body}}}}
                          .dump();
  std::string sse =
      "event: message_start\ndata: "
      "{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"test-model\","
      "\"usage\":{\"input_tokens\":50,\"output_tokens\":1}}}\n\n"
      "event: content_block_start\ndata: "
      "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":"
      "\"\"}}\n\n"
      "event: content_block_delta\ndata: " +
      delta +
      "\n\n"
      "event: message_delta\ndata: "
      "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_"
      "tokens\":400}}\n\n"
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  // Pieces cut inside the "event:" line, inside the JSON of the delta and between \n\n.
  size_t a = sse.find("content_block_start") + 7, b = sse.find("kf_run") + 3,
         c = sse.find("message_delta") - 3;
  std::vector<std::string> pieces = {sse.substr(0, a), sse.substr(a, b - a), sse.substr(b, c - b),
                                     sse.substr(c)};
  Result r = h.solve(json::array({{{"stream", fake_llm::raw_pieces(pieces)}}}), "anthropic", true);
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK(verdict_statuses(r.run) == std::vector<std::string>{"correct"});
  auto reply = r.traj.of_type(trace::EventType::reply);
  REQUIRE(reply.size() == 1);
  CHECK((*reply[0])["text"] == body);
  CHECK((*reply[0])["usage"]["output_tokens"] == 400);
  REQUIRE(r.requests.size() == 1);
  CHECK(r.requests[0]["path"] == "/v1/messages");
  CHECK(r.requests[0]["body"]["stream"] == true);
  CHECK(has(r.requests[0]["body"]["system"].dump(), "kf_run"));
  check_replay(h, r);
}

TEST_CASE("solve: openai wire, streamed, split mid-event and mid-line") {
  Harness h;
  std::string body = fenced("cpp", right_kernel());
  std::string half1 = body.substr(0, body.size() / 2), half2 = body.substr(body.size() / 2);
  auto chunk = [](const std::string& t) {
    return "data: " + json{{"choices", {{{"index", 0}, {"delta", {{"content", t}}}}}}}.dump() +
           "\n\n";
  };
  std::string sse =
      chunk(half1) + chunk(half2) +
      "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":70,\"completion_tokens\":300}}\n\ndata: "
      "[DONE]\n\n";
  size_t a = sse.find("\"content\"") + 4, b = chunk(half1).size() + 3, c = sse.find("[DONE]") - 2;
  std::vector<std::string> pieces = {sse.substr(0, a), sse.substr(a, b - a), sse.substr(b, c - b),
                                     sse.substr(c)};
  Result r = h.solve(json::array({{{"stream", fake_llm::raw_pieces(pieces)}}}), "openai", true);
  INFO(r.output);
  CHECK(r.code == 0);
  auto reply = r.traj.of_type(trace::EventType::reply);
  REQUIRE(reply.size() == 1);
  CHECK((*reply[0])["text"] == body);
  CHECK((*reply[0])["usage"]["input_tokens"] == 70);
  CHECK(r.requests[0]["body"]["stream"] == true);
  check_replay(h, r);
}

TEST_CASE("solve: bad input exits 2 before any model call") {
  Harness h;
  std::string out;
  CHECK(h.kforge(
            {"solve", "no_such_problem", "--backend", "host", "--headless", "--model", "openai:x"},
            &out) == 2);
  CHECK(has(out, "no problem 'no_such_problem'"));
  CHECK(h.kforge({"solve", "all_reduce", "--backend", "host", "--headless", "--model", "openai:x",
                  "bogus=1"},
                 &out) == 2);
  CHECK(h.kforge({"solve", "all_reduce", "--backend", "host", "--headless", "--model", "nosuch:x"},
                 &out) == 2);
}

TEST_CASE(
    "solve: agent mode: one command a turn in the workspace, kforge eval inside, the sentinel "
    "submits") {
  Harness h;
  auto bash = [](const std::string& cmd) { return "Next step.\n```bash\n" + cmd + "\n```\n"; };
  std::string write = "cat > kernel.cpp <<'KFEOF'\n" + right_kernel() + "KFEOF\n" +
                      "kforge eval $KF_PROBLEM kernel.cpp --world 2 --backend host --size small "
                      "--no-time | head -1";
  json script =
      json::array({openai_ok(bash("pwd; ls; env | grep ^KF_ | sort")), openai_ok(bash(write)),
                   openai_ok(bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"))});
  Result r = h.solve(script, "openai", false, {"--mode", "agent", "--command-timeout", "120"});
  INFO(r.output);
  CHECK(r.code == 0);
  REQUIRE(r.requests.size() == 3);
  // The second prompt carries the first command's observation; the third the eval's verdict.
  CHECK(has(last_message(r.requests, 1), "<returncode>0</returncode>"));
  CHECK(has(last_message(r.requests, 1), "/agent"));
  // Told about the problem's name and the headers, never the problem's folder (its
  // solutions and examples).
  CHECK(has(last_message(r.requests, 1), "KF_PROBLEM=all_reduce\n"));
  CHECK(has(last_message(r.requests, 1), "KF_INCLUDE="));
  CHECK_FALSE(has(last_message(r.requests, 1), "KF_PROBLEM_DIR"));
  CHECK_FALSE(has(last_message(r.requests, 1), "/problems/"));
  CHECK(has(last_message(r.requests, 2), "correct (not timed)"));
  CHECK(r.traj.of_type(trace::EventType::command).size() == 3);
  auto obs = r.traj.of_type(trace::EventType::observation);
  REQUIRE(obs.size() == 3);
  CHECK((*obs[2])["submitted"] == true);
  CHECK(verdict_statuses(r.run) == std::vector<std::string>{"correct"});
  CHECK(read_file(r.out_dir + "/best.cpp") == right_kernel());
  check_replay(h, r);
}
