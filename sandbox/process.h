// sandbox/process.h: run one child process under control. The child gets exactly the
// environment it is given, its own process group (so that everything it starts can be
// killed at once), stdin from /dev/null, and stdout+stderr into one pipe that the parent
// drains while it waits (a child that writes a lot never blocks on a full pipe).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace sandbox {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] without a '/' is looked up in env's PATH
  std::vector<std::string> env;   // "K=V": the child's whole environment
  std::string cwd;                // "" keeps the parent's
  double limit_s = 0;             // wall-clock limit; 0 for none. Past it: SIGKILL the group
  size_t output_cap = 1 << 20;    // bytes of output kept: the first and last halves
  // Called about every 20 ms while the child runs. Returning true kills the group; the
  // callback sets *reason (and may kill other processes it knows of first).
  std::function<bool(std::string* reason)> poll;
  // When the child exits on its own, SIGKILL whatever is left in its process group, so
  // that no grandchild outlives the run. (A kill by limit or poll uses kill_tree: the
  // group and every descendant, wherever its group.)
  bool kill_group_on_exit = true;
  // Each piece of output as it arrives, on the caller's thread (a live view's tail of a
  // command still running); the capture in ProcessResult::output is the same either way.
  std::function<void(const char* data, size_t n)> on_output;
};

struct ProcessResult {
  int pid = 0;
  int exit_code = -1;            // when it exited normally
  int signal = 0;                // when a signal ended it (SIGKILL after a kill, too)
  bool timed_out = false;        // limit_s passed
  bool killed = false;           // by the limit, by poll, or by an interrupt
  int interrupted = 0;           // the signal that asked kforge to stop (interrupt.h), or 0
  bool deadline = false;         // killed because kforge's deadline passed (deadline.h)
  std::string kill_reason;       // poll's reason, or "time limit of N s"
  std::vector<int> killed_pids;  // every process a kill signalled (to wait for them)
  std::string output;            // stdout+stderr, head and tail when over output_cap
  size_t elided_bytes = 0;       // bytes dropped from the middle of output
  double seconds = 0;
  bool ok() const { return !killed && signal == 0 && exit_code == 0; }
};

// Runs the child to its end. False (with *err) only when it could not be started.
bool run_process(const ProcessSpec& spec, ProcessResult* out, std::string* err);

// True when pid names a live process (a zombie does not count).
bool process_alive(int pid);

// Every live descendant of pid (children, their children, ...), from /proc. mpirun puts
// each rank in a process group of its own, so killing mpirun's group misses them.
std::vector<int> descendants(int pid);

// SIGKILL pid's process group and every descendant (and the groups they lead), found
// before any of them dies so that none is reparented out of sight first.
// Returns the pids it signalled.
std::vector<int> kill_tree(int pid);

// Waits up to timeout_s for every pid to be gone (SIGKILL is delivered asynchronously:
// a process may run for a moment after killpg returns). True when all are gone.
bool wait_gone(const std::vector<int>& pids, double timeout_s);

// The whole of a /proc file (or any file) read with read(2), "" when it cannot be read.
// A process may exit while its /proc entry is read: the read then fails with ESRCH,
// which istreambuf_iterator would throw as an exception; this returns what it had.
std::string read_proc_file(const std::string& path);

// Every live process whose command line (arguments joined by spaces) contains needle.
// A run's processes name its directory: this finds them whatever PID namespace they
// report their pids in.
std::vector<int> processes_naming(const std::string& needle);

// Waits up to timeout_s until no live process names needle; true when none does.
bool wait_none_naming(const std::string& needle, double timeout_s);

// "SIGSEGV" for 11; "signal N" for one without a name.
std::string signal_name(int sig);

// The parent's environment entry "K=V" for name, or "" when unset.
std::string env_entry(const char* name);

}  // namespace sandbox
