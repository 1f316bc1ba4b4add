#include "agent/reply.h"

#include <doctest/doctest.h>

using agent::parse_agent_reply;
using agent::parse_direct_reply;

namespace {
constexpr sandbox::Backend kCuda = sandbox::Backend::cuda, kHost = sandbox::Backend::host;
}  // namespace

TEST_CASE("reply: direct takes the last kernel block, not an earlier sketch") {
  std::string t =
      "Plan:\n```cuda\n// sketch kf_run\n```\ntext\n```cuda\nint kf_run() { return 1; }\n```\n"
      "```bash\nkforge eval x\n```\n";
  auto r = parse_direct_reply(t, kCuda);
  REQUIRE(r.ok);
  CHECK(r.code == "int kf_run() { return 1; }\n");
}

TEST_CASE("reply: direct accepts cpp and untagged blocks, with CRLF") {
  CHECK(parse_direct_reply("```cpp\nkf_run\n```", kCuda).ok);
  auto r = parse_direct_reply("x\r\n```\r\nkf_run();\r\n```\r\n", kCuda);
  REQUIRE(r.ok);
  CHECK(r.code == "kf_run();\n");
}

TEST_CASE("reply: direct format errors say what is wrong and what is expected") {
  auto none = parse_direct_reply("I think you should use a ring.", kCuda);
  CHECK_FALSE(none.ok);
  CHECK(none.error.find("no fenced code block") != std::string::npos);
  CHECK(none.error.find("```cuda") != std::string::npos);
  auto cut = parse_direct_reply("```cuda\nextern \"C\" int kf_run(", kCuda);
  CHECK_FALSE(cut.ok);
  CHECK(cut.error.find("never closed") != std::string::npos);
  auto py = parse_direct_reply("```python\nkf_run\n```", kCuda);
  CHECK_FALSE(py.ok);
  CHECK(py.error.find("tagged cuda") != std::string::npos);
  auto nokf = parse_direct_reply("```cuda\nint main() {}\n```", kCuda);
  CHECK_FALSE(nokf.ok);
  CHECK(nokf.error.find("kf_run") != std::string::npos);
}

TEST_CASE("reply: agent wants exactly one bash block") {
  auto ok = parse_agent_reply("Let me look.\n```bash\nls -la\n```\n", kCuda);
  REQUIRE(ok.ok);
  CHECK(ok.code == "ls -la");
  auto two = parse_agent_reply("```bash\nls\n```\n```bash\npwd\n```", kCuda);
  CHECK_FALSE(two.ok);
  CHECK(two.error.find("2 bash blocks") != std::string::npos);
  auto none = parse_agent_reply("```cuda\nkf_run\n```", kCuda);
  CHECK_FALSE(none.ok);
  CHECK(none.error.find("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT") != std::string::npos);
}

TEST_CASE("reply: on the host backend the format reminder shows a cpp block and <kf/kf.h>") {
  auto direct = parse_direct_reply("no block", kHost);
  CHECK(direct.error.find("```cpp\n#include <kf/kf.h>") != std::string::npos);
  CHECK(direct.error.find("```cuda") == std::string::npos);
  CHECK(direct.error.find("kf.cuh") == std::string::npos);
  auto agent = parse_agent_reply("no block", kHost);
  CHECK(agent.error.find("kforge eval $KF_PROBLEM kernel.cpp") != std::string::npos);
  CHECK(agent.error.find("kernel.cu\n") == std::string::npos);
  // On cuda, as before.
  CHECK(parse_direct_reply("no block", kCuda).error.find("```cuda\n#include <kf/kf.cuh>") !=
        std::string::npos);
  CHECK(parse_agent_reply("no block", kCuda).error.find("kernel.cu\n") != std::string::npos);
}
