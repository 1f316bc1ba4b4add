// tests/isolation_test.cpp: what a hostile candidate, compiler input or agent command can
// reach (sandbox/confine.h). The real kforge binary runs with fake keys in its own
// environment; the hostile parts use system calls as instruction bytes, so that only the
// sandbox stands between them and the machine. Each probe also runs once with
// KFORGE_ISOLATION=none, where it must find what it looks for: proof that the probe works
// and that the sandbox is what stops it.
#include <dirent.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "kf_build_paths.h"
#include "sandbox/process.h"
#include "sandbox/text.h"
#include "tests/has.h"
#include "tests/kforge_child.h"
#include "tests/kforge_run.h"
#include "tests/solve_harness.h"

namespace {

using solve_test::Harness;
using solve_test::json;
namespace fs = std::filesystem;

using kforge_run::kRoot;
const std::string kPlanted = "/tmp/kforge-escape-planted";
const std::string kTarget = "/tmp/kforge-escape-target";
// Every fake secret holds this mark; the probes look for it.
const std::string kMark = "KFTEST-SECRET";
const std::vector<std::string> kSecrets = {
    "OPENAI_API_KEY=sk-KFTEST-SECRET-openai", "ANTHROPIC_API_KEY=sk-ant-KFTEST-SECRET-anthropic",
    "HF_TOKEN=hf_KFTEST-SECRET-token", "MY_SERVICE_PASSWORD=KFTEST-SECRET-password",
    "AWS_SECRET_ACCESS_KEY=KFTEST-SECRET-aws"};

// A TCP listener on 127.0.0.1 (the machine's loopback); its port.
struct Listener {
  int fd = -1, port = 0;
  Listener() {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && listen(fd, 8) == 0 &&
        getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = ntohs(a.sin_port);
  }
  ~Listener() { close(fd); }
};

// The outside world the probes aim at: a planted secret file, a target file whose mode
// and times must not change, a victim process. Undone (and any survivor killed) after.
struct Outside {
  sandbox::ProcessResult victim_result;
  int victim = 0;
  struct stat target_before {};
  Outside() {
    cleanup();
    std::ofstream(kPlanted) << kMark << "-planted-file\n";
    std::ofstream(kTarget) << "target\n";
    chmod(kTarget.c_str(), 0640);
    stat(kTarget.c_str(), &target_before);
    victim = fork();
    if (victim == 0) {
      execl("/bin/sleep", "sleep", "4343.5", static_cast<char*>(nullptr));
      _exit(1);
    }
  }
  ~Outside() {
    kill(victim, SIGKILL);
    waitpid(victim, nullptr, 0);
    cleanup();
  }
  static void cleanup() {
    for (int p : sandbox::processes_naming("sleep 4242.5")) kill(p, SIGKILL);
    for (const std::string& f : {kPlanted, kTarget, std::string("/tmp/kforge-escape-written"),
                                 std::string("/dev/shm/kforge-escape-shm")})
      unlink(f.c_str());
  }
  bool victim_alive() const { return sandbox::process_alive(victim); }
  bool target_unchanged() const {
    struct stat now {};
    stat(kTarget.c_str(), &now);
    return now.st_mode == target_before.st_mode && now.st_mtime == target_before.st_mtime;
  }
};

// Reads a run's file named `name`, wherever under the harness's runs it is.
std::string run_file(Harness& h, const std::string& name) {
  std::error_code ec;
  for (auto& p : fs::recursive_directory_iterator(h.dir() + "/runs", ec))
    if (p.path().filename() == name) return sandbox::read_text(p.path().string());
  return "";
}

// tests/kernels/host/escape.cpp with this run's targets.
std::string escape_source(const Outside& o, int port, bool crash_with_loot) {
  std::string s = "#define KF_VICTIM_PID " + std::to_string(o.victim) + "\n#define KF_PORT " +
                  std::to_string(port) + "\n";
  if (crash_with_loot) s += "#define KF_CRASH_WITH_LOOT 1\n";
  return s + sandbox::read_text(kRoot + "/tests/kernels/host/escape.cpp");
}

// `kforge eval all_reduce FILE --json` with the fake secrets in kforge's environment.
struct Eval {
  int code = -1;
  std::string output;
  std::string verdict_text;  // verdict.json as written
  std::string escape;        // the probe's escape.txt
  std::string syscalls;      // tests/kernels/host/syscalls.cpp's report
};

Eval run_eval(Harness& h, const std::string& source, const std::vector<std::string>& env) {
  std::string file = h.dir() + "/cand-" + std::to_string(rand()) + ".cpp";
  std::ofstream(file) << source;
  Eval e;
  h.extra_env = env;
  h.extra_env.insert(h.extra_env.end(), kSecrets.begin(), kSecrets.end());
  e.code = h.kforge({"eval", "all_reduce", file, "--backend", "host", "--world", "2", "--size",
                     "small", "--no-time", "--json"},
                    &e.output);
  e.escape = run_file(h, "escape.txt");
  e.verdict_text = run_file(h, "verdict.json");
  e.syscalls = run_file(h, "syscalls.txt");
  fs::remove_all(h.dir() + "/runs");
  return e;
}

}  // namespace

TEST_CASE("isolation: a hostile candidate reads no secret and changes nothing outside its sandbox" *
          doctest::timeout(300)) {
  Outside outside;
  Listener listener;
  REQUIRE(listener.port > 0);
  Harness h;
  Eval e = run_eval(h, escape_source(outside, listener.port, false), {});
  INFO(e.output);
  CHECK(e.code == 0);
  CHECK(kforge_run::status_of(e.output) == "correct");
  CHECK(e.escape.empty());  // not one LEAK or ESCAPE line
  CHECK(!has(e.output, kMark));
  CHECK(!fs::exists("/tmp/kforge-escape-written"));
  CHECK(!fs::exists("/dev/shm/kforge-escape-shm"));
  CHECK(outside.target_unchanged());
  CHECK(outside.victim_alive());
  // The process it started with fork + setsid, in a session of its own, is gone too.
  CHECK(sandbox::processes_naming("sleep 4242.5").empty());
  CHECK(has(e.output, "bwrap"));  // the verdict says how it was confined

  SUBCASE("the same probe unconfined finds what it looks for (the probe works)") {
    Outside again;
    Eval n = run_eval(h, escape_source(again, listener.port, false), {"KFORGE_ISOLATION=none"});
    INFO(n.output);
    CHECK(has(n.escape, "LEAK " + kPlanted));
    CHECK(has(n.escape, "ESCAPE chmod " + kTarget));
    // Without a network namespace the loopback listener would be in reach, but the
    // candidate's process may create no socket at all (its runner's seccomp filter).
    CHECK(!has(n.escape, "ESCAPE connected"));
    // What the rank applies to itself holds without bubblewrap too: Landlock (no write
    // outside) and seccomp (no signal to another process).
    CHECK(!has(n.escape, "ESCAPE wrote"));
    CHECK(again.victim_alive());
    // Even unconfined, kforge's own environment holds no key any more (secrets.h).
    CHECK(!has(n.escape, "/environ: "));
    CHECK(has(n.output, "NOT confined"));
  }
}

TEST_CASE("isolation: a crash's log carries no secret into the verdict" * doctest::timeout(300)) {
  Outside outside;
  Harness h;
  Eval e = run_eval(h, escape_source(outside, 0, true), {});
  INFO(e.output);
  CHECK(e.code == 1);
  CHECK(kforge_run::status_of(e.output) == "crash");
  CHECK(has(e.output, "loot:"));  // its log is in the verdict, with nothing in it
  CHECK(!has(e.output, kMark));
  CHECK(!e.verdict_text.empty());
  CHECK(!has(e.verdict_text, kMark));

  Eval n = run_eval(h, escape_source(outside, 0, true), {"KFORGE_ISOLATION=none"});
  CHECK(has(n.output, kMark + "-planted-file"));  // unconfined, the loot reaches the verdict
}

TEST_CASE("isolation: the compiler reads nothing outside the toolchain and the workspace" *
          doctest::timeout(300)) {
  Outside outside;
  Harness h;
  // A computed #include: no path in the source for the static check to see.
  std::string src = "#define KF_PEEK \"" + kPlanted +
                    "\"\n#include KF_PEEK\n#include <kf/kf.h>\n"
                    "extern \"C\" int kf_run(kf::Comm&, kf::Tensors&) { return 0; }\n";
  Eval e = run_eval(h, src, {});
  INFO(e.output);
  CHECK(kforge_run::status_of(e.output) == "compile_error");
  CHECK(has(e.output, "No such file"));
  CHECK(!has(e.output, kMark));
  Eval n = run_eval(h, src, {"KFORGE_ISOLATION=none"});
  CHECK(has(n.output, kMark + "-planted-file"));  // unconfined, the error quotes it
}

TEST_CASE("isolation: a memory hog ends as its own crash verdict, not the machine's OOM killer" *
          doctest::timeout(300)) {
  Harness h;
  std::string src =
      "#include <kf/kf.h>\n#include <cstdlib>\n#include <cstring>\n"
      "extern \"C\" int kf_setup(kf::Comm&, kf::Tensors&) {\n"
      "  for (int i = 0; i < 64; ++i) { char* p = (char*)malloc(64 << 20); if (!p) return 7; "
      "memset(p, 1, 64 << 20); }\n"
      "  return 0;\n}\n"
      "extern \"C\" int kf_run(kf::Comm&, kf::Tensors&) { return 0; }\n";
  Eval e = run_eval(h, src, {"KFORGE_MEMORY_MIB=512"});
  INFO(e.output);
  CHECK(e.code == 1);
  if (has(e.output, "cgroup")) {
    CHECK(kforge_run::status_of(e.output) == "crash");
    CHECK(has(e.output, "out of memory"));
    CHECK(has(e.output, "512 MiB"));
  } else {
    // No cgroup on this machine: RLIMIT_AS per process, and malloc fails in kf_setup.
    MESSAGE("no cgroup here: the memory limit is RLIMIT_AS");
    CHECK(kforge_run::status_of(e.output) == "setup_error");
  }
}

TEST_CASE("isolation: an agent command sees no key, no solution, nothing outside, no network" *
          doctest::timeout(300)) {
  Outside outside;
  Listener listener;
  Harness h;
  h.extra_env = kSecrets;
  std::string probe =
      "tr '\\0' '\\n' < /proc/$PPID/environ; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "
      "$f; done; env; "
      "ls /proc; cat " +
      kPlanted +
      "; ls $KFORGE_ROOT/problems/all_reduce; "
      "cat $KFORGE_ROOT/problems/all_reduce/solution_host.cpp; cat "
      "$KFORGE_ROOT/problems/all_reduce/examples/host.cpp; "
      "ls $HOME/../..; touch /tmp/kforge-escape-written; kill -TERM " +
      std::to_string(outside.victim) +
      "; "
      "(echo hi > /dev/tcp/127.0.0.1/" +
      std::to_string(listener.port) + ") 2>/dev/null && echo NET-REACHED || echo NET-BLOCKED";
  auto bash = [](const std::string& cmd) { return "Next step.\n```bash\n" + cmd + "\n```\n"; };
  json script =
      json::array({solve_test::openai_ok(bash(probe)),
                   solve_test::openai_ok(bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"))});
  solve_test::Result r =
      h.solve(script, "openai", false, {"--mode", "agent", "--command-timeout", "60"});
  INFO(r.output);
  REQUIRE(r.requests.size() >= 2);
  std::string seen = solve_test::last_message(r.requests, 1);
  INFO(seen);
  CHECK(has(seen, "NET-BLOCKED"));
  CHECK(has(seen, "problem.json"));
  CHECK(!has(seen, "examples\n"));
  CHECK(has(seen, "No such file"));
  // Not one line of the problem's solution or example came back.
  for (const char* f : {"solution_host.cpp", "examples/host.cpp"}) {
    std::istringstream in(sandbox::read_text(kRoot + "/problems/all_reduce/" + f));
    for (std::string line; std::getline(in, line);)
      if (line.size() > 40) CHECK_MESSAGE(!has(seen, line), f << ": " << line);
  }
  CHECK(!has(seen, "-planted-file"));
  for (auto& req : r.requests) CHECK(!has(req["body"].dump(), kMark));
  CHECK(!has(sandbox::read_text(r.trajectory_path), kMark));
  CHECK(!has(r.output, kMark));
  CHECK(!fs::exists("/tmp/kforge-escape-written"));
  CHECK(outside.victim_alive());
}

TEST_CASE("isolation: kforge killed with SIGKILL mid-eval leaves no process behind" *
          doctest::timeout(300)) {
  Harness h;
  std::string kernel = kRoot + "/tests/kernels/host/spin.cpp";
  std::vector<std::string> argv = {std::string(KF_BINARY_DIR) + "/kforge",
                                   "eval",
                                   "all_reduce",
                                   kernel,
                                   "--backend",
                                   "host",
                                   "--world",
                                   "2",
                                   "--size",
                                   "small",
                                   "--no-time"};
  kforge_child::Child kforge;
  std::string err;
  REQUIRE_MESSAGE(kforge.start(argv, h.env(), h.dir() + "/eval.out", &err), err);
  // The ranks name their job file, under the harness's runs folder.
  const std::string job = h.dir() + "/runs/evals/";
  REQUIRE(kforge.wait_until(
      [&] { return !sandbox::processes_naming("kforge-rank " + job).empty(); }, 120));
  double seconds = 0;
  kforge.signal_and_wait(SIGKILL, 10, &seconds);
  // No SIGTERM, no handler, no cleanup of kforge's: the kernel's PDEATHSIG and the PID
  // namespace's end do it.
  CHECK(sandbox::wait_none_naming(job, 10));
}

TEST_CASE("isolation: KFORGE_SANDBOXED set from outside does not turn confinement off" *
          doctest::timeout(300)) {
  Outside outside;
  Harness h;
  Eval e = run_eval(h, escape_source(outside, 0, false), {"KFORGE_SANDBOXED=1"});
  INFO(e.output);
  CHECK(kforge_run::status_of(e.output) == "correct");
  CHECK(has(e.output, "sandbox: bwrap"));
  CHECK(e.escape.empty());
}

TEST_CASE(
    "isolation: the rank's seccomp filter refuses what a kernel never needs, by any spelling" *
    doctest::timeout(300)) {
  Harness h;
  const std::string probe = sandbox::read_text(kRoot + "/tests/kernels/host/syscalls.cpp");
  for (const char* mode : {"", "none"}) {
    CAPTURE(mode);
    Eval e = run_eval(h, probe, {std::string("KFORGE_ISOLATION=") + mode});
    INFO(e.output);
    CHECK(kforge_run::status_of(e.output) == "correct");
    for (const char* call : {"fork", "clone (a process)", "execve", "socket(AF_PACKET)",
                             "kill(another process)", "ptrace", "unshare"})
      CHECK_MESSAGE(has(e.syscalls, std::string(call) + ": EPERM\n"), call);
    CHECK(has(e.syscalls, "thread: ran\n"));
    CHECK(has(e.syscalls, "kill(itself): ran\n"));
    CHECK(has(e.output, "isolation: seccomp"));
  }
}

namespace {
// Where kforge may make a run's cgroup (sandbox/confine.cpp): on cgroup v2 our cgroup and
// its ancestors that hand the memory controller down; on v1 our memory and pids groups.
std::vector<std::string> cgroup_parents() {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    std::string ctrls = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.rfind("0::", 0) == 0 && fs::exists("/sys/fs/cgroup/cgroup.controllers")) {
      for (fs::path at = "/sys/fs/cgroup" + path; at.string().size() >= 14; at = at.parent_path()) {
        if (sandbox::read_text((at / "cgroup.subtree_control").string()).find("memory") !=
            std::string::npos)
          out.push_back(at.string());
        if (at == "/sys/fs/cgroup") break;
      }
    } else if (ctrls == "memory" || ctrls == "pids") {
      out.push_back("/sys/fs/cgroup/" + ctrls + (path == "/" ? "" : path));
    }
  }
  return out;
}
}  // namespace

TEST_CASE("isolation: an empty cgroup left by a kforge that died is removed by the next one" *
          doctest::timeout(300)) {
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  std::vector<std::string> planted;
  for (const std::string& parent : cgroup_parents()) {
    std::string d = parent + "/kforge-" + std::to_string(gone) + "-1";
    if (mkdir(d.c_str(), 0755) == 0) planted.push_back(d);
  }
  if (planted.empty()) {
    MESSAGE("no cgroup can be made here: nothing to sweep");
    return;
  }
  Harness h;
  std::string out;
  h.kforge({"eval", "all_reduce", kRoot + "/problems/all_reduce/examples/host.cpp", "--backend",
            "host", "--world", "2", "--size", "small", "--no-time"},
           &out);
  INFO(out);
  int swept = 0;
  for (const std::string& d : planted) {
    swept += !fs::exists(d);
    rmdir(d.c_str());  // those beside the one kforge used, which it does not look at
  }
  CHECK(swept >= 1);
}
