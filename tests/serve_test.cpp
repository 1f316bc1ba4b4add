// tests/serve_test.cpp: `kforge serve` end to end on the host backend: the real server
// process on a real Unix socket, `kforge eval` with KFORGE_SERVE as a script would run
// it, real mpirun and ranks. Evals one after another share a warm set; a crash ends the
// set and the next eval is correct on a new one; --ranks cold and a socket nobody
// listens on evaluate on ranks of their own and say so; a second server on a live socket
// is refused; SIGINT ends the server, its ranks and its socket; kill -9 leaves no rank,
// and no PKB interpreter of the server's.
#include <doctest/doctest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "cli/pkb_serve.h"
#include "kf_build_paths.h"
#include "pkb/test_util.h"
#include "sandbox/process.h"
#include "suite/spec_json.h"
#include "tests/has.h"
#include "tests/kforge_child.h"
#include "tests/solve_harness.h"

namespace serve_test {

namespace fs = std::filesystem;
using solve_test::Harness;
using solve_test::json;

const std::string kKforge = std::string(KF_BINARY_DIR) + "/kforge";

struct Server {
  Harness& h;
  std::string socket;
  kforge_child::Child child;
  explicit Server(Harness& harness) : h(harness), socket(harness.dir() + "/serve.sock") {}
  bool start() {
    std::string err;
    REQUIRE_MESSAGE(
        child.start({kKforge, "serve", "--socket", socket}, h.env(), h.dir() + "/serve.out", &err),
        err);
    return child.wait_until([&] { return fs::is_socket(socket); }, 30);
  }
};

// `kforge eval all_reduce [KERNEL] --backend host --world 2 --json` with extra args and
// KFORGE_SERVE=socket (none when ""): the verdict, and the exit code in *code.
json eval_via(Harness& h, const std::string& socket, const std::string& kernel,
              const std::vector<std::string>& extra = {}, int* code = nullptr) {
  h.extra_env = {"KFORGE_SERVE=" + socket};
  std::vector<std::string> args = {"eval", "all_reduce"};
  if (!kernel.empty()) args.push_back(kernel);
  args.insert(args.end(), {"--backend", "host", "--world", "2", "--size", "small", "--json"});
  args.insert(args.end(), extra.begin(), extra.end());
  std::string out;
  int rc = h.kforge(args, &out);
  if (code) *code = rc;
  INFO(out);
  size_t brace = out.find("{\n");
  REQUIRE(brace != std::string::npos);
  return json::parse(out.substr(brace));
}

std::string notes(const json& v) {
  std::string all;
  for (const auto& n : v.value("harness_notes", json::array())) all += n.get<std::string>() + "\n";
  return all;
}

}  // namespace serve_test

using namespace serve_test;

TEST_CASE("serve: evals of kforge eval share the server's warm set; a crash ends it" *
          doctest::timeout(300)) {
  Harness h;
  Server s(h);
  REQUIRE(s.start());
  json first = eval_via(h, s.socket, "");
  CHECK(first["status"] == "correct");
  CHECK(has(notes(first), "warm ranks: this eval started the set"));
  json second = eval_via(h, s.socket, "");
  CHECK(second["status"] == "correct");
  CHECK(has(notes(second), "warm ranks: eval 2 of the set"));
  // The set's folder is the server's, under its runs; the client's runs hold no eval.
  CHECK(has(notes(second), h.dir() + "/runs/evals/warm/"));

  const std::string crash = std::string(KF_SOURCE_ROOT) + "/tests/kernels/host/segfault.cpp";
  json bad = eval_via(h, s.socket, crash);
  CHECK(bad["status"] == "crash");
  json after = eval_via(h, s.socket, "");
  CHECK(after["status"] == "correct");
  CHECK(has(notes(after), "warm ranks: this eval started the set"));

  // --ranks cold keeps the eval off the server.
  json cold = eval_via(h, s.socket, "", {"--ranks", "cold"});
  CHECK(cold["status"] == "correct");
  CHECK(!has(notes(cold), "warm ranks"));

  // A second server on the live socket is refused, naming it.
  std::string out;
  h.extra_env.clear();
  CHECK(h.kforge({"serve", "--socket", s.socket}, &out, 30) == 2);
  CHECK(has(out, s.socket + ": a kforge serve already listens there"));

  // SIGINT: the server ends its sets' ranks and removes its socket.
  double seconds = 0;
  CHECK(s.child.signal_and_wait(SIGINT, 30, &seconds) == 128 + SIGINT);
  CHECK(!fs::exists(s.socket));
  CHECK(sandbox::wait_none_naming(h.dir() + "/runs/evals/warm", 30));
  CHECK(has(kforge_child::slurp(h.dir() + "/serve.out"), "stopped; its ranks have ended"));
}

TEST_CASE(
    "serve: with no server at KFORGE_SERVE, or one killed with SIGKILL, an eval runs on "
    "ranks of its own and says why" *
    doctest::timeout(300)) {
  Harness h;
  json lone = eval_via(h, h.dir() + "/nobody.sock", "");
  CHECK(lone["status"] == "correct");
  CHECK(has(notes(lone), "kforge serve (KFORGE_SERVE) not used: " + h.dir() + "/nobody.sock"));

  Server s(h);
  REQUIRE(s.start());
  CHECK(eval_via(h, s.socket, "")["status"] == "correct");
  REQUIRE(!sandbox::processes_naming("--serve " + h.dir() + "/runs/evals/warm").empty());
  double seconds = 0;
  s.child.signal_and_wait(SIGKILL, 10, &seconds);
  // Its ranks see their request FIFO lose its writer, or die with their jail.
  CHECK(sandbox::wait_none_naming(h.dir() + "/runs/evals/warm", 30));
  json after = eval_via(h, s.socket, "");
  CHECK(after["status"] == "correct");
  CHECK(has(notes(after), "kforge serve (KFORGE_SERVE) not used"));
}

namespace serve_test {

// The warm-ranks note of every verdict in a sweep's sample trajectories, by sample index.
std::map<int, std::string> sample_notes(const std::string& sweep_dir, const std::string& problem) {
  std::map<int, std::string> out;
  for (auto& e : fs::recursive_directory_iterator(sweep_dir + "/samples/" + problem)) {
    if (e.path().extension() != ".jsonl") continue;
    // samples/<problem>/<model>/<index>/runs/<problem>/<trajectory>.jsonl
    int index = std::stoi(e.path().parent_path().parent_path().parent_path().filename());
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      json ev = json::parse(line, nullptr, false);
      if (ev.is_discarded() || ev.value("type", "") != "verdict") continue;
      out[index] += notes(ev["verdict"]);
    }
  }
  return out;
}

}  // namespace serve_test

TEST_CASE(
    "serve: a sweep's samples of a problem share the sweep's warm set; --ranks cold "
    "does not; nothing is left after it" *
    doctest::timeout(600)) {
  Harness h;
  for (const char* ranks : {"warm", "cold"}) {
    CAPTURE(ranks);
    const std::string out = h.dir() + "/sweep-" + ranks;
    std::string text;
    int code = h.kforge({"sweep", "all_reduce", "--model", "builtin", "--samples", "3",
                         "--max-turns", "1", "--backend", "host", "--world", "2", "--size", "small",
                         "--no-time", "--ranks", ranks, "--out", out},
                        &text, 500);
    INFO(text);
    REQUIRE(code == 0);
    std::map<int, std::string> by_sample = sample_notes(out, "all_reduce");
    REQUIRE(by_sample.size() == 3);
    if (std::string(ranks) == "warm") {
      CHECK(has(by_sample[0], "warm ranks: this eval started the set at " + out + "/evals/warm/"));
      CHECK(has(by_sample[1], "warm ranks: eval 2 of the set at " + out + "/evals/warm/"));
      CHECK(has(by_sample[2], "warm ranks: eval 3 of the set"));
    } else {
      for (auto& [i, n] : by_sample) CHECK(!has(n, "warm ranks"));
    }
    CHECK(!has(text, "no eval server"));
    CHECK(sandbox::wait_none_naming(out, 30));
  }
}

TEST_CASE("serve: a PKB eval on the server's warm interpreter; kill -9 of the server ends it" *
          doctest::timeout(120)) {
  Harness h;
  Server s(h);
  REQUIRE(s.start());
  pkb::test::FakeCheckout f;
  pkb::EvalSpec spec;
  std::string err;
  REQUIRE_MESSAGE(pkb::test::stand_in_spec(f, &spec, &err), err);
  f.write("solution.py", "def solution(x):\n    return x\n");
  spec.solution = f.root + "/solution.py";
  sandbox::Verdict v;
  agent::SetupFault fault = agent::SetupFault::none;
  REQUIRE_MESSAGE(
      cli::evaluate_pkb_on_server(s.socket, spec, &v, &fault, &err) == cli::Served::verdict, err);
  CHECK(v.status == sandbox::Status::correct);
  const std::string evals = h.dir() + "/runs/evals/pkb/";
  const std::string notes = suite::spec_join(v.harness_notes, "\n");
  REQUIRE_MESSAGE(has(notes, "warm interpreter: eval 1 of " + evals), notes);
  REQUIRE(!sandbox::processes_naming(evals).empty());  // the interpreter, idle
  double seconds = 0;
  s.child.signal_and_wait(SIGKILL, 10, &seconds);
  CHECK(sandbox::wait_none_naming(evals, 30));
}
