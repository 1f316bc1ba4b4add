// tests/solve_harness.h: whole `kforge solve` runs for the solve tests: the real built
// kforge binary as a child process, on the host backend at world 2 and size small,
// against fake_llm_server, in a scratch HOME/runs folder with test-only keys.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kf_build_paths.h"
#include "llm/provider.h"
#include "sandbox/process.h"
#include "sandbox/text.h"
#include "tests/fake_llm/fixtures.h"
#include "trace/run.h"

extern char** environ;

namespace solve_test {

using nlohmann::json;
namespace fs = std::filesystem;

// The conversation a recorded request sent (the fake server's log), as messages.
inline std::vector<llm::Message> sent_messages(const nlohmann::json& request) {
  std::vector<llm::Message> out;
  for (auto& m : request["body"]["messages"])
    out.push_back({m.value("role", ""), m.value("content", "")});
  return out;
}

inline std::string read_file(const std::string& p) {
  return sandbox::read_text(p);
}

inline std::string fenced(const std::string& tag, const std::string& src) {
  return "Here is my kernel.\n\n```" + tag + "\n" + src +
         (src.empty() || src.back() == '\n' ? "" : "\n") + "```\n";
}

// The three answers: right (the problem's host example), one that does not compile, and
// one that is wrong on every rank (tests/kernels/host/wrong_rank.cpp).
inline std::string right_kernel() {
  return read_file(std::string(KF_SOURCE_ROOT) + "/problems/all_reduce/examples/host.cpp");
}
inline std::string wrong_kernel() {
  return read_file(std::string(KF_SOURCE_ROOT) + "/tests/kernels/host/wrong_rank.cpp");
}
inline std::string broken_kernel() {
  return "#include <kf/kf.h>\n\nextern \"C\" int kf_run(kf::Comm& comm, kf::Tensors& t) {\n"
         "  return undeclared_helper(comm, t);\n}\n";
}

struct Result {
  int code = -1;
  std::string output;       // stdout and stderr together
  std::vector<json> lines;  // the JSON lines of stdout
  json result;              // the last {"event": "result"} line
  std::string trajectory_path;
  trace::Trajectory traj;  // run.raw
  trace::Run run;
  std::vector<json> requests;  // what the fake server received
  std::string out_dir;
};

class Harness {
 public:
  Harness() {
    char tmpl[] = "/tmp/kforge-solve-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl));
    dir_ = tmpl;
    fs::create_directories(dir_ + "/config/kforge");
  }
  ~Harness() { fs::remove_all(dir_); }

  const std::string& dir() const { return dir_; }
  // "K=V" added to kforge's environment after the test's own (e.g. more fake keys).
  std::vector<std::string> extra_env;

  // The scrubbed test environment kforge runs in: a developer's keys, config and folders
  // stay out; HOME, the config and the runs are in this harness's folder.
  std::vector<std::string> env() const {
    std::vector<std::string> out;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e, k = kv.substr(0, kv.find('='));
      if (k.find("API_KEY") != std::string::npos || k == "HOME" || k.rfind("XDG_", 0) == 0 ||
          k.rfind("KFORGE_", 0) == 0)
        continue;
      out.push_back(kv);
    }
    out.push_back("HOME=" + dir_);
    out.push_back("XDG_CONFIG_HOME=" + dir_ + "/config");
    out.push_back("KFORGE_RUNS=" + dir_ + "/runs");
    // Shared between tests and runs: the build cache is keyed by the source's hash, so the
    // baseline and a repeated candidate compile once.
    out.push_back("KFORGE_CACHE=/tmp/kforge-solve-tests-cache");
    out.push_back("OPENAI_API_KEY=sk-test-not-a-real-key");
    out.push_back("ANTHROPIC_API_KEY=sk-test-not-a-real-key");
    for (auto& kv : extra_env) {
      std::string prefix = kv.substr(0, kv.find('=') + 1);
      std::erase_if(out, [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
      out.push_back(kv);
    }
    return out;
  }

  // Runs `kforge ARGS` with the scrubbed test environment; waits at most limit_s.
  int kforge(const std::vector<std::string>& args, std::string* output, double limit_s = 300) {
    sandbox::ProcessSpec spec;
    spec.argv = {std::string(KF_BINARY_DIR) + "/kforge"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env = env();
    spec.limit_s = limit_s;
    sandbox::ProcessResult r;
    std::string err;
    REQUIRE_MESSAGE(sandbox::run_process(spec, &r, &err), err);
    *output = r.output;
    return r.timed_out ? -2 : r.signal ? -1 : r.exit_code;
  }

  // The arguments of `kforge solve all_reduce` (host backend, world 2, small, headless)
  // against `server` in `wire` (openai | anthropic), streaming or not; extra flags last.
  // `config` is merged into the model configuration file it writes.
  std::vector<std::string> solve_args(const fake_llm::Server& server, const std::string& wire,
                                      bool stream, const std::vector<std::string>& extra,
                                      const std::string& out_dir,
                                      const json& config = json::object()) {
    std::string cfg = dir_ + "/llm.json";
    json c = {{"stream", stream},
              {"timeouts", {{"connect_s", 5}, {"idle_s", 20}, {"total_s", 60}}}};
    c.update(config);
    std::ofstream(cfg) << c.dump();
    std::vector<std::string> args = {
        "solve", "all_reduce", "--backend",  "host",     "--world", "2",     "--size",
        "small", "--no-time",  "--headless", "--config", cfg,       "--out", out_dir};
    if (wire == "openai")
      args.insert(args.end(), {"--model", "openai:test-model", "--base-url", server.url() + "/v1"});
    else
      args.insert(args.end(), {"--model", "anthropic:test-model", "--base-url", server.url()});
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  std::string next_out_dir() { return dir_ + "/out-" + std::to_string(++runs_); }

  // A run's output, result line, requests and trajectory, once it has ended.
  void collect(const fake_llm::Server& server, Result* res) {
    std::istringstream in(res->output);
    for (std::string l; std::getline(in, l);) {
      if (l.empty() || l[0] != '{') continue;
      json j = json::parse(l, nullptr, false);
      if (j.is_discarded()) continue;
      res->lines.push_back(j);
      if (j.value("event", "") == "result") res->result = j;
    }
    res->requests = server.requests();
    if (res->result.is_object()) res->trajectory_path = res->result.value("trajectory", "");
    if (!res->trajectory_path.empty()) {
      std::string terr;
      REQUIRE_MESSAGE(trace::read_run(res->trajectory_path, &res->run, &terr), terr);
      res->traj = res->run.raw;
    }
  }

  // `kforge solve all_reduce` against a fake server playing `script`: see solve_args.
  Result solve(const json& script, const std::string& wire, bool stream,
               const std::vector<std::string>& extra = {}, const json& config = json::object()) {
    fake_llm::Server server;
    std::string err;
    REQUIRE_MESSAGE(server.start(script, &err), err);
    Result res;
    res.out_dir = next_out_dir();
    res.code = kforge(solve_args(server, wire, stream, extra, res.out_dir, config), &res.output);
    collect(server, &res);
    return res;
  }

 private:
  std::string dir_;
  int runs_ = 0;
};

// The statuses of the verdict events, in order.
inline std::vector<std::string> verdict_statuses(const trace::Run& run) {
  std::vector<std::string> out;
  for (const trace::VerdictEvent& v : run.verdicts)
    out.push_back(sandbox::status_name(v.verdict.status));
  return out;
}

// The event types of a trajectory, in order (header first).
inline std::vector<std::string> event_types(const trace::Trajectory& t) {
  std::vector<std::string> out = {t.header.value("type", "")};
  for (auto& e : t.events) out.push_back(e.value("type", ""));
  return out;
}

// The content of the last message of request i (what the loop added for that turn).
inline std::string last_message(const std::vector<json>& reqs, size_t i) {
  const json& b = reqs.at(i)["body"];
  return b["messages"].back().value("content", "");
}

// Every candidate's verdict reproduced by `kforge replay`: exit 0, "N matched, 0 differed".
inline void check_replay(Harness& h, const Result& r) {
  std::string out;
  int code = h.kforge({"replay", r.trajectory_path}, &out);
  INFO(out);
  CHECK(code == 0);
  size_t n = r.traj.of_type(trace::EventType::candidate).size();
  CHECK(out.find(std::to_string(n) + " matched, 0 differed") != std::string::npos);
}

inline json openai_ok(const std::string& text) {
  return {{"body", fake_llm::openai_body(text)}};
}
inline json anthropic_ok(const std::string& text) {
  return {{"body", fake_llm::anthropic_body(text)}};
}

}  // namespace solve_test
