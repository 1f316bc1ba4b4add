#include "agent/reply.h"

#include <doctest/doctest.h>

using agent::parse_agent_reply;
using agent::parse_direct_reply;

TEST_CASE("reply: direct takes the last kernel block, not an earlier sketch") {
  std::string t =
      "Plan:\n```cuda\n// sketch kf_run\n```\ntext\n```cuda\nint kf_run() { return 1; }\n```\n"
      "```bash\nkforge eval x\n```\n";
  auto r = parse_direct_reply(t);
  REQUIRE(r.ok);
  CHECK(r.code == "int kf_run() { return 1; }\n");
}

TEST_CASE("reply: direct accepts cpp and untagged blocks, with CRLF") {
  CHECK(parse_direct_reply("```cpp\nkf_run\n```").ok);
  auto r = parse_direct_reply("x\r\n```\r\nkf_run();\r\n```\r\n");
  REQUIRE(r.ok);
  CHECK(r.code == "kf_run();\n");
}

TEST_CASE("reply: direct format errors say what is wrong and what is expected") {
  auto none = parse_direct_reply("I think you should use a ring.");
  CHECK_FALSE(none.ok);
  CHECK(none.error.find("no fenced code block") != std::string::npos);
  CHECK(none.error.find("```cuda") != std::string::npos);
  auto cut = parse_direct_reply("```cuda\nextern \"C\" int kf_run(");
  CHECK_FALSE(cut.ok);
  CHECK(cut.error.find("never closed") != std::string::npos);
  auto py = parse_direct_reply("```python\nkf_run\n```");
  CHECK_FALSE(py.ok);
  CHECK(py.error.find("tagged cuda") != std::string::npos);
  auto nokf = parse_direct_reply("```cuda\nint main() {}\n```");
  CHECK_FALSE(nokf.ok);
  CHECK(nokf.error.find("kf_run") != std::string::npos);
}

TEST_CASE("reply: agent wants exactly one bash block") {
  auto ok = parse_agent_reply("Let me look.\n```bash\nls -la\n```\n");
  REQUIRE(ok.ok);
  CHECK(ok.code == "ls -la");
  auto two = parse_agent_reply("```bash\nls\n```\n```bash\npwd\n```");
  CHECK_FALSE(two.ok);
  CHECK(two.error.find("2 bash blocks") != std::string::npos);
  auto none = parse_agent_reply("```cuda\nkf_run\n```");
  CHECK_FALSE(none.ok);
  CHECK(none.error.find("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT") != std::string::npos);
}
