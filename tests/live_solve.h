// tests/live_solve.h: what the live-view tests of `kforge solve` share
// (interactive_live_test.cpp, interactive_agent_live_test.cpp): a reply as the fake LLM
// server streams it, a folder of the test's own, and kforge solve's arguments and
// environment on the pseudo terminal.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kf_build_paths.h"
#include "tests/fake_llm/harness.h"
#include "tests/pty.h"

namespace kf_live {

namespace fs = std::filesystem;
using nlohmann::json;

// An OpenAI stream: one chunk per text, then the finish with usage, then [DONE].
inline json sse_stream(const std::vector<std::string>& texts, int out_tokens = 300) {
  json pieces = json::array();
  for (const std::string& t : texts)
    pieces.push_back(
        "data: " + json{{"choices", {{{"index", 0}, {"delta", {{"content", t}}}}}}}.dump() +
        "\n\n");
  pieces.push_back(
      "data: " +
      json{{"choices", {{{"index", 0}, {"delta", json::object()}, {"finish_reason", "stop"}}}},
           {"usage", {{"prompt_tokens", 4000}, {"completion_tokens", out_tokens}}}}
          .dump() +
      "\n\n");
  pieces.push_back("data: [DONE]\n\n");
  return pieces;
}

// The text split in pieces of about n bytes (a stream as a server sends it).
inline std::vector<std::string> chunks(const std::string& s, size_t n = 64) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size(); i += n) out.push_back(s.substr(i, n));
  return out;
}

inline std::string bash_reply(const std::string& thought, const std::string& cmd) {
  return thought + "\n\n```bash\n" + cmd + "\n```\n";
}

// A folder of the test's own, emptied first and removed at the end.
struct TestDir {
  std::string path;
  explicit TestDir(const std::string& name)
      : path(fs::temp_directory_path().string() + "/kf_" + name + "_" + std::to_string(getpid())) {
    fs::remove_all(path);
    fs::create_directories(path + "/runs");
  }
  ~TestDir() { fs::remove_all(path); }
};

inline std::vector<std::string> solve_args(const fake_llm::Server& server,
                                           std::vector<std::string> extra) {
  std::vector<std::string> a = {std::string(KF_BINARY_DIR) + "/kforge",
                                "solve",
                                "all_reduce",
                                "--backend",
                                "host",
                                "--world",
                                "2",
                                "--size",
                                "small",
                                "--no-time",
                                "--model",
                                "openai:test-model",
                                "--base-url",
                                server.url() + "/v1"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// The environment without a PAGER of the caller's (the view's default, less, is tested).
inline std::vector<std::string> env_for(const std::string& runs,
                                        std::vector<std::string> extra = {}) {
  std::vector<std::string> env;
  for (const std::string& kv : kf_pty::child_env(runs))
    if (kv.rfind("PAGER=", 0) != 0 && kv.rfind("LESS=", 0) != 0) env.push_back(kv);
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

}  // namespace kf_live
