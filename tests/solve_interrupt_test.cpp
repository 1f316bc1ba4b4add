// `kforge solve --headless` stopped by SIGTERM in each phase of a turn: a model call that
// stalls, the eval of a kernel that spins forever, and an agent command (`sleep 1000`).
// Each time kforge kills what it started, writes the interrupted event and the summary,
// prints the result line and exits 143; nothing it started is left running.
#include <doctest/doctest.h>

#include <csignal>
#include <functional>

#include "kf_build_paths.h"
#include "tests/kforge_child.h"
#include "tests/solve_harness.h"

using namespace solve_test;

namespace {

struct Stopped {
  Result r;
  double seconds = 0;              // from SIGTERM to kforge's exit
  std::vector<int> tree;           // kforge's descendants just before the signal
  std::vector<std::string> names;  // and their names then
  bool ran(const std::string& prefix) const {
    for (auto& n : names)
      if (n.rfind(prefix, 0) == 0) return true;
    return false;
  }
};

// Runs the solve in the background until ready() says the phase is under way, then
// sends SIGTERM and collects what the run left.
Stopped stop_when(Harness& h, const json& script, const std::vector<std::string>& extra,
                  const std::function<bool(kforge_child::Child&, fake_llm::Server&)>& ready) {
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script, &err), err);
  Stopped s;
  s.r.out_dir = h.next_out_dir();
  std::vector<std::string> args = h.solve_args(server, "openai", false, extra, s.r.out_dir);
  args.insert(args.begin(), std::string(KF_BINARY_DIR) + "/kforge");
  kforge_child::Child c;
  REQUIRE_MESSAGE(c.start(args, h.env(), h.dir() + "/kforge.out", &err), err);
  bool got = c.wait_until([&] { return ready(c, server); }, 120);
  INFO(c.output());
  REQUIRE(got);
  s.tree = sandbox::descendants(c.pid());
  for (int p : s.tree) s.names.push_back(kforge_child::comm(p));
  s.r.code = c.signal_and_wait(SIGTERM, 60, &s.seconds);
  s.r.output = c.output();
  h.collect(server, &s.r);
  return s;
}

void check_stopped(Harness& h, const Stopped& s, const std::string& phase) {
  INFO(s.r.output);
  CHECK(s.r.code == 143);
  REQUIRE(s.r.result.is_object());
  CHECK(s.r.result["exit_reason"] == "interrupted");
  CHECK(s.r.result["exit_code"] == 143);
  CHECK(s.r.result["interrupt"]["signal"] == "SIGTERM");
  CHECK(s.r.result["interrupt"]["phase"] == phase);
  auto ev = s.r.traj.of_type(trace::EventType::interrupted);
  REQUIRE(ev.size() == 1);
  CHECK((*ev[0])["phase"] == phase);
  CHECK((*ev[0])["signal"] == "SIGTERM");
  CHECK(s.r.traj.complete);
  REQUIRE(s.r.traj.summary());
  CHECK((*s.r.traj.summary())["exit_reason"] == "interrupted");
  CHECK((*s.r.traj.summary())["interrupt"]["phase"] == phase);
  CHECK(s.r.traj.of_type(trace::EventType::verdict)
            .empty());  // a killed eval is not the kernel's verdict
  // Nothing kforge started outlived it: neither what ran at the signal (a moment's grace
  // for SIGKILL's delivery) nor anything that names the test's folder.
  CHECK(sandbox::wait_gone(s.tree, 1.0));
  CHECK(kforge_child::processes_naming(h.dir()).empty());
  MESSAGE(phase << ": kforge exited " << s.seconds << " s after SIGTERM");
}

std::string spin_kernel() {
  return read_file(std::string(KF_SOURCE_ROOT) + "/tests/kernels/host/spin.cpp");
}

}  // namespace

TEST_CASE("interrupt: SIGTERM during a model call that stalls") {
  Harness h;
  // Headers, then nothing: the server hangs until the client hangs up.
  json script =
      json::array({{{"body", fake_llm::openai_body("unused")}, {"stall_after_bytes", 0}}});
  Stopped s = stop_when(h, script, {}, [](kforge_child::Child&, fake_llm::Server& srv) {
    return !srv.requests().empty();
  });
  check_stopped(h, s, "model call");
  CHECK(s.r.traj.of_type(trace::EventType::reply).empty());
  CHECK(s.r.traj.of_type(trace::EventType::llm_error)
            .empty());  // an interrupt is not the provider's fault
}

TEST_CASE("interrupt: SIGTERM during the eval of a kernel that spins forever") {
  Harness h;
  json script = json::array({openai_ok(fenced("cpp", spin_kernel()))});
  // --call-limit 60: without the signal the watchdog would end the eval a minute later.
  Stopped s =
      stop_when(h, script, {"--call-limit", "60"}, [](kforge_child::Child& c, fake_llm::Server&) {
        // The ranks start beside the build; the eval proper once the build let them go.
        return c.descendant_named("kforge-rank") != 0 &&
               c.output().find("running 2 ranks") != std::string::npos;
      });
  INFO("running at the signal: " << json(s.names).dump());
  CHECK(s.ran("kforge-rank"));
  CHECK((s.ran("mpirun") || s.ran("orterun") || s.ran("prterun")));
  check_stopped(h, s, "eval");
  CHECK(s.r.traj.of_type(trace::EventType::candidate).size() == 1);
  CHECK(s.r.result["candidates"] == 1);  // as `kforge show` lists it
}

TEST_CASE("interrupt: SIGTERM during an agent command (sleep 1000)") {
  Harness h;
  json script = json::array({openai_ok("Let me wait.\n```bash\nsleep 1000\n```\n")});
  Stopped s = stop_when(
      h, script, {"--mode", "agent"},
      [](kforge_child::Child& c, fake_llm::Server&) { return c.descendant_named("sleep") != 0; });
  INFO("running at the signal: " << json(s.names).dump());
  CHECK(s.ran("sleep"));
  check_stopped(h, s, "agent command");
  CHECK(s.r.traj.of_type(trace::EventType::observation)
            .empty());  // a killed command says nothing to the model
}

TEST_CASE("interrupt: SIGINT during `kforge eval` kills the ranks, says so, exits 130") {
  Harness h;
  std::vector<std::string> args = {std::string(KF_BINARY_DIR) + "/kforge",
                                   "eval",
                                   "all_reduce",
                                   std::string(KF_SOURCE_ROOT) + "/tests/kernels/host/spin.cpp",
                                   "--backend",
                                   "host",
                                   "--world",
                                   "2",
                                   "--size",
                                   "small",
                                   "--no-time",
                                   "--call-limit",
                                   "60"};
  kforge_child::Child c;
  std::string err;
  REQUIRE_MESSAGE(c.start(args, h.env(), h.dir() + "/eval.out", &err), err);
  bool running = c.wait_until([&] { return c.descendant_named("kforge-rank") != 0; }, 120);
  INFO(c.output());
  REQUIRE(running);
  std::vector<int> tree = sandbox::descendants(c.pid());
  double seconds = 0;
  int code = c.signal_and_wait(SIGINT, 60, &seconds);
  std::string out = c.output();
  INFO(out);
  CHECK(code == 130);
  CHECK(out.find("interrupted by SIGINT: the build and the ranks were killed; no verdict") !=
        std::string::npos);
  CHECK(out.find("timeout") == std::string::npos);  // not reported as the kernel's hang
  CHECK(sandbox::wait_gone(tree, 1.0));
  CHECK(kforge_child::processes_naming(h.dir()).empty());
  MESSAGE("kforge eval: exited " << seconds << " s after SIGINT");
}
