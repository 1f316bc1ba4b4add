#include "process.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <sstream>
#include <thread>

#include "deadline.h"
#include "interrupt.h"

using namespace sandbox;

namespace {
ProcessSpec sh(const std::string& script) {
  ProcessSpec s;
  s.argv = {"/bin/sh", "-c", script};
  s.env = {"PATH=/usr/bin:/bin"};
  return s;
}
}  // namespace

TEST_CASE("process: echo is captured with stderr in the same buffer") {
  ProcessResult r;
  std::string err;
  REQUIRE(run_process(sh("echo hello; echo oops >&2"), &r, &err));
  CHECK(r.ok());
  CHECK(r.exit_code == 0);
  CHECK(r.output == "hello\noops\n");
}

TEST_CASE("process: the environment is exactly the one given") {
  ProcessSpec s = sh("echo \"[$FOO][$HOME]\"");
  s.env.push_back("FOO=bar");
  setenv("KF_PROCESS_TEST_PLANTED", "1", 1);
  ProcessResult r;
  std::string err;
  REQUIRE(run_process(s, &r, &err));
  CHECK(r.output == "[bar][]\n");
  ProcessSpec e = sh("env");
  REQUIRE(run_process(e, &r, &err));
  CHECK(r.output.find("KF_PROCESS_TEST_PLANTED") == std::string::npos);
}

TEST_CASE("process: working directory") {
  ProcessSpec s = sh("pwd");
  s.cwd = "/tmp";
  ProcessResult r;
  std::string err;
  REQUIRE(run_process(s, &r, &err));
  CHECK(r.output == "/tmp\n");
}

TEST_CASE("process: exit codes and signals") {
  ProcessResult r;
  std::string err;
  REQUIRE(run_process(sh("exit 3"), &r, &err));
  CHECK(r.exit_code == 3);
  CHECK(!r.ok());
  REQUIRE(run_process(sh("kill -SEGV $$"), &r, &err));
  CHECK(r.signal == SIGSEGV);
  CHECK(signal_name(r.signal) == "SIGSEGV");
  CHECK(!r.killed);
}

TEST_CASE("process: a missing program is an error naming it") {
  ProcessSpec s;
  s.argv = {"kf-no-such-program"};
  s.env = {"PATH=/usr/bin:/bin"};
  ProcessResult r;
  std::string err;
  CHECK(!run_process(s, &r, &err));
  CHECK(err.find("kf-no-such-program") != std::string::npos);
}

TEST_CASE("process: the time limit kills the child and its grandchild") {
  ProcessSpec s = sh("sleep 100 & echo $!; sleep 100");
  s.limit_s = 0.5;
  ProcessResult r;
  std::string err;
  REQUIRE(run_process(s, &r, &err));
  CHECK(r.timed_out);
  CHECK(r.killed);
  CHECK(r.signal == SIGKILL);
  CHECK(r.kill_reason.find("time limit") != std::string::npos);
  int grandchild = 0;
  std::istringstream(r.output) >> grandchild;
  REQUIRE(grandchild > 0);
  CHECK(wait_gone({grandchild, r.pid}, 5));
}

TEST_CASE("process: the poll callback kills with its reason") {
  ProcessSpec s = sh("sleep 100");
  int calls = 0;
  s.poll = [&](std::string* reason) {
    if (++calls < 3) return false;
    *reason = "watchdog says so";
    return true;
  };
  ProcessResult r;
  std::string err;
  REQUIRE(run_process(s, &r, &err));
  CHECK(r.killed);
  CHECK(!r.timed_out);
  CHECK(r.kill_reason == "watchdog says so");
  CHECK(calls == 3);
}

TEST_CASE("process: a grandchild left running after a normal exit is killed") {
  ProcessSpec s = sh("sleep 100 & echo $!");
  ProcessResult r;
  std::string err;
  REQUIRE(run_process(s, &r, &err));
  CHECK(r.exit_code == 0);
  int grandchild = 0;
  std::istringstream(r.output) >> grandchild;
  REQUIRE(grandchild > 0);
  CHECK(wait_gone({grandchild}, 5));
}

TEST_CASE("process: process_alive") {
  CHECK(process_alive(getpid()));
  CHECK(!process_alive(0));
}

TEST_CASE("process: /proc of processes that come and go reads as text or nothing, never throws") {
  CHECK(read_proc_file("/proc/self/cmdline").find("kforge_tests") != std::string::npos);
  CHECK(read_proc_file("/proc/kf-no-such-pid/cmdline").empty());
  // Short-lived shells, each naming the marker, while the scans run: a read of a process
  // that exits under it fails with ESRCH (an istreambuf_iterator threw that, once, in CI).
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    while (!stop) {
      ProcessResult r;
      std::string err;
      run_process(sh("exit 0 # kf-proc-churn"), &r, &err);
    }
  });
  for (int i = 0; i < 400; ++i) {
    CHECK_NOTHROW(processes_naming("kf-proc-churn"));
    CHECK_NOTHROW(descendants(getpid()));
  }
  stop = true;
  churn.join();
  CHECK(wait_none_naming("kf-proc-churn", 5));
}

TEST_CASE("process: large output does not deadlock and is capped head+tail") {
  // 8 MB through the pipe, far more than its buffer.
  ProcessSpec s = sh("echo BEGIN; head -c 8000000 /dev/zero | tr '\\0' x; echo; echo END");
  s.output_cap = 1 << 16;
  s.limit_s = 60;
  ProcessResult r;
  std::string err;
  REQUIRE(run_process(s, &r, &err));
  CHECK(r.ok());
  CHECK(r.output.rfind("BEGIN", 0) == 0);
  CHECK(r.output.find("END\n") != std::string::npos);
  CHECK(r.elided_bytes > 7000000);
  CHECK(r.output.find("bytes of output elided") != std::string::npos);
  CHECK(r.output.size() < (1 << 16) + 200);
}

TEST_CASE("process: a kill reaches descendants in process groups of their own") {
  // setsid puts the grandchild in a new session and group, as mpirun does with ranks.
  ProcessSpec s = sh("setsid sleep 100 & sleep 0.2; pgrep -P $$ -x sleep; sleep 100");
  s.env = {"PATH=/usr/bin:/bin"};
  s.limit_s = 1.0;
  ProcessResult r;
  std::string err;
  REQUIRE(run_process(s, &r, &err));
  CHECK(r.timed_out);
  int grandchild = 0;
  std::istringstream(r.output) >> grandchild;
  REQUIRE(grandchild > 0);
  CHECK(wait_gone({grandchild}, 5));
}

TEST_CASE("process: an interrupt kills the child's whole tree, a setsid grandchild too") {
  // The grandchild leaves the process group; the kill still finds it through /proc.
  ProcessSpec s = sh("setsid sleep 100 & echo $!; sleep 100");
  s.limit_s = 30;
  std::thread later([] {
    usleep(300 * 1000);
    request_interrupt(SIGTERM);
  });
  ProcessResult r;
  std::string err;
  REQUIRE(run_process(s, &r, &err));
  later.join();
  clear_interrupt();
  CHECK(r.killed);
  CHECK(r.interrupted == SIGTERM);
  CHECK(r.kill_reason == "interrupted by SIGTERM");
  CHECK(r.seconds < 30);
  int grandchild = atoi(r.output.c_str());
  REQUIRE(grandchild > 0);
  CHECK(wait_gone({grandchild}, 5.0));
}

TEST_CASE("process: a passed deadline kills the tree and says so, apart from an interrupt") {
  ProcessSpec s = sh("setsid sleep 100 & echo $!; sleep 100");
  s.limit_s = 30;
  set_deadline(0.3);
  ProcessResult r;
  std::string err;
  bool ran = run_process(s, &r, &err);
  clear_deadline();
  REQUIRE_MESSAGE(ran, err);
  CHECK(r.killed);
  CHECK(r.deadline);
  CHECK(r.interrupted == 0);
  CHECK_FALSE(r.timed_out);
  CHECK(r.kill_reason.find("deadline") != std::string::npos);
  CHECK(r.seconds < 30);
  int grandchild = atoi(r.output.c_str());
  REQUIRE(grandchild > 0);
  CHECK(wait_gone({grandchild}, 5.0));
  // Cleared: the next child runs to its end.
  ProcessResult r2;
  REQUIRE(run_process(sh("echo ok"), &r2, &err));
  CHECK(r2.ok());
}
