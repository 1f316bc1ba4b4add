// sandbox/confine.h: everything kforge runs on a model's behalf (the compiler on a
// candidate's source, mpirun and the ranks, agent-mode bash commands) runs confined:
//  - bubblewrap (`bwrap`, Debian's bubblewrap): new mount, PID, network, IPC, UTS and
//    cgroup namespaces, every capability dropped, a filesystem of read-only binds that
//    holds the toolchain and the paths the caller names and nothing else (no home, no
//    kforge config, no problem solutions, no other runs), a private /tmp and /dev/shm,
//    loopback only, and --die-with-parent. In its own PID namespace a child sees no
//    process of kforge's, so no /proc/<pid>/environ of ours; when the namespace's first
//    process dies the kernel kills every other one in it.
//  - a cgroup (v2, or v1's memory and pids controllers) per run where the OS lets kforge
//    make one: a memory limit that ends a hog as its own verdict instead of the machine's
//    OOM killer choosing a victim, a pids limit against fork bombs, and after the run a
//    kill of every process still in it.
//  - kforge-confine (src/agent/confine) between kforge and bwrap: it joins the cgroup,
//    sets the rlimits, runs bwrap as its child and, told by PR_SET_PDEATHSIG that kforge
//    died (even by SIGKILL), kills the whole run and removes its cgroup.
// `KFORGE_ISOLATION=none` runs without bwrap (a machine that cannot make namespaces; only
// for kernels and models you trust); the runs say so. Inside a confined run (an agent
// command's nested `kforge eval`) the run is already confined, and nothing is added.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "process.h"

namespace sandbox {

struct Confinement {
  std::vector<std::string> read_only;  // bound read-only at the same path (absent: skipped)
  std::vector<std::string> writable;   // bound read-write at the same path (must exist)
  bool gpu = false;                    // the NVIDIA device nodes
  uint64_t memory_bytes = 0;           // 0: no memory limit
  int max_pids = 0;                    // 0: no pids limit
  double cpu_s = 0;                    // RLIMIT_CPU per process; 0: none
  uint64_t fsize_bytes = 1ull << 30;   // RLIMIT_FSIZE per process
};

// How a confined run ended, beyond its ProcessResult.
struct ConfinedRun {
  bool oom_killed = false;      // the memory limit was hit and the kernel killed a process
  bool pids_exhausted = false;  // a fork was refused at the pids limit
  int leftovers_killed = 0;     // processes still in the cgroup after the run
  std::string how;              // "bwrap, cgroup v1 (memory 4096 MiB, pids 512)" or what is missing
};

// One confined run: prepare() rewrites spec.argv (and makes the cgroup), run_process runs
// it, finish() kills what is left, reads the OOM counter and removes the cgroup. The
// destructor finishes a run the caller forgot.
class Confined {
 public:
  Confined() = default;
  Confined(const Confined&) = delete;
  Confined& operator=(const Confined&) = delete;
  ~Confined();
  // False (with *err naming the fix) when confinement was asked for and cannot be had.
  bool prepare(const Confinement& c, ProcessSpec* spec, std::string* err);
  ConfinedRun finish();
  // How the run is confined, once prepared (what finish() will say in `how`).
  const std::string& how() const { return run_.how; }

 private:
  std::vector<std::string> cgroups_;  // the cgroup directories made for this run
  std::string memory_cgroup_;
  ConfinedRun run_;
  bool finished_ = true;
};

// How this machine confines runs: by bubblewrap; not at all (KFORGE_ISOLATION=none);
// nested (this process already runs inside kforge's sandbox); or unavailable (bubblewrap
// cannot make a sandbox here: *why_not says what to do). Probed once.
enum class Isolation { bwrap, none, nested, unavailable };
Isolation isolation_mode(std::string* why_not = nullptr);

// The kforge-confine binary beside this process (or KFORGE_CONFINE); "" when absent.
std::string confine_binary();

// The bwrap arguments for c, up to and including "--" (for tests and the record).
std::vector<std::string> bwrap_args(const Confinement& c, const std::string& cwd);

}  // namespace sandbox
