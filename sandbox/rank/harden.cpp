// sandbox/rank/harden.cpp: see harden.h.
#include "harden.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#if __has_include(<linux/landlock.h>)
#include <linux/landlock.h>
#define KF_HAVE_LANDLOCK 1
#endif

namespace sandbox::rank {

namespace {
bool set_limit(int what, rlim_t v, const char* name, std::vector<std::string>* notes) {
  struct rlimit rl {
    v, v
  };
  if (setrlimit(what, &rl) == 0) return true;
  notes->push_back(std::string("isolation: setrlimit(") + name +
                   ") failed: " + std::strerror(errno));
  return false;
}
}  // namespace

#if defined(KF_HAVE_LANDLOCK)
namespace {
#ifndef SYS_landlock_create_ruleset  // the same numbers on every architecture
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
constexpr uint64_t kTruncate = 1ull << 14;  // LANDLOCK_ACCESS_FS_TRUNCATE (ABI 3)
constexpr uint64_t kRefer = 1ull << 13;     // LANDLOCK_ACCESS_FS_REFER (ABI 2)
}  // namespace

bool apply_landlock(const std::vector<std::string>& writable, std::string* why) {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 0) {
    *why = errno == ENOSYS       ? "the kernel has no Landlock"
           : errno == EOPNOTSUPP ? "Landlock is disabled at boot"
                                 : std::string("landlock_create_ruleset: ") + std::strerror(errno);
    return false;
  }
  // Only writes are handled: what is not handled stays allowed (reads, execution, ioctl
  // on device nodes, which CUDA needs).
  uint64_t handled = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) handled |= kRefer;
  if (abi >= 3) handled |= kTruncate;
  struct landlock_ruleset_attr attr {};
  attr.handled_access_fs = handled;
  int fd = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (fd < 0) {
    *why = std::string("landlock_create_ruleset: ") + std::strerror(errno);
    return false;
  }
  for (const std::string& p : writable) {
    int pfd = open(p.c_str(), O_PATH | O_CLOEXEC);
    if (pfd < 0) continue;  // a path that does not exist needs no rule
    struct stat st {};
    fstat(pfd, &st);
    struct landlock_path_beneath_attr rule {};
    // On a file only file rights apply; beneath a directory, all of them.
    rule.allowed_access =
        S_ISDIR(st.st_mode)
            ? handled
            : handled & (LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? kTruncate : 0));
    rule.parent_fd = pfd;
    long r = syscall(SYS_landlock_add_rule, fd, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    int e = errno;
    close(pfd);
    if (r != 0) {
      *why = "landlock_add_rule(" + p + "): " + std::strerror(e);
      close(fd);
      return false;
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *why = std::string("prctl(PR_SET_NO_NEW_PRIVS): ") + std::strerror(errno);
    close(fd);
    return false;
  }
  if (syscall(SYS_landlock_restrict_self, fd, 0) != 0) {
    *why = std::string("landlock_restrict_self: ") + std::strerror(errno);
    close(fd);
    return false;
  }
  close(fd);
  return true;
}
#else
bool apply_landlock(const std::vector<std::string>&, std::string* why) {
  *why = "built without <linux/landlock.h>";
  return false;
}
#endif

void harden_process(const std::string& scratch, double cpu_s,
                    const std::vector<std::string>& writable, bool no_sockets,
                    std::vector<std::string>* notes) {
  if (mkdir(scratch.c_str(), 0755) != 0 && errno != EEXIST)
    notes->push_back("isolation: cannot create " + scratch + ": " + std::strerror(errno));
  else if (chdir(scratch.c_str()) != 0)
    notes->push_back("isolation: cannot chdir into " + scratch + ": " + std::strerror(errno));

  set_limit(RLIMIT_CORE, 0, "RLIMIT_CORE", notes);
  // Not dumpable: a peer rank (same user, no CAP_SYS_PTRACE in the sandbox) cannot open
  // this process's /proc/<pid>/mem, where this rank's input secret lives.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    notes->push_back(std::string("isolation: prctl(PR_SET_DUMPABLE) failed: ") +
                     std::strerror(errno));
  set_limit(RLIMIT_FSIZE, rlim_t{1} << 30, "RLIMIT_FSIZE", notes);
  {
    // A CPU-time backstop behind the host's watchdog: SIGXCPU at the soft limit,
    // SIGKILL at the hard one.
    rlim_t soft = static_cast<rlim_t>(cpu_s);
    struct rlimit rl {
      soft, soft + 5
    };
    if (setrlimit(RLIMIT_CPU, &rl) != 0)
      notes->push_back(std::string("isolation: setrlimit(RLIMIT_CPU) failed: ") +
                       std::strerror(errno));
  }
  std::string why;
  if (apply_landlock(writable, &why)) {
    std::string list;
    for (const auto& p : writable) list += (list.empty() ? "" : ", ") + p;
    notes->push_back("isolation: landlock");
    notes->push_back("isolation: writes only beneath " + list);
  } else {
    notes->push_back("isolation: landlock unavailable (" + why + ")");
  }
  // Last: Landlock's set-up needs calls the filter does not forbid, but nothing after
  // this line should need what it does.
  if (apply_seccomp(no_sockets, &why))
    notes->push_back(no_sockets
                         ? "isolation: seccomp (no exec, fork, sockets, or signals to others)"
                         : "isolation: seccomp (no exec, fork, raw sockets, or signals to others)");
  else
    notes->push_back("isolation: seccomp unavailable (" + why + ")");
}

double cpu_budget_s(const std::vector<Job>& jobs) {
  double wall_s = 60;
  for (const Job& job : jobs)
    wall_s += job.settings.limits.total_s > 0 ? job.settings.limits.total_s : 600;
  // The judge may keep every core busy for its whole wall time: an oracle runs on all of
  // them (conv2d's full size at world 1 spent ~700 CPU s in 68 s and died of SIGXCPU on
  // the H100 when this was wall time alone). The watchdog's wall limit stays the limit.
  return wall_s * std::max(1u, std::thread::hardware_concurrency());
}

void set_cpu_budget(double more_s) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double used = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1;
  struct rlimit rl {};
  if (getrlimit(RLIMIT_CPU, &rl) != 0) return;
  const rlim_t want = static_cast<rlim_t>(used + more_s);
  rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || want < rl.rlim_max ? want : rl.rlim_max;
  setrlimit(RLIMIT_CPU, &rl);
}

void harden(const std::vector<Job>& jobs, const std::string& serve_root,
            std::vector<std::string>* notes) {
  std::vector<std::string> writable = {"/dev"};
  // A warm set's later evals have folders of their own, beneath its root; nothing else is
  // there. Its CPU backstop is set per request (set_cpu_budget) under a hard limit far off.
  double cpu_s = serve_root.empty() ? cpu_budget_s(jobs) : 30 * 24 * 3600.0;
  if (serve_root.empty())
    for (const Job& job : jobs) writable.push_back(job.dir);
  else
    writable.push_back(serve_root);
  // OpenMPI's session directory (where its shared-memory files and PMIx store live):
  // the most precise variable that is set. The launcher points TMPDIR into <dir>.
  for (const char* var : {"OMPI_MCA_orte_jobfam_session_dir", "OMPI_MCA_orte_top_session_dir",
                          "PMIX_SERVER_TMPDIR", "TMPDIR"}) {
    const char* v = std::getenv(var);
    if (v && *v) {
      writable.push_back(v);
      break;
    }
  }
  // Under ncu or compute-sanitizer (job.h `under_tool`) their injected library keeps its
  // files in the sandbox's private /tmp.
  if (jobs.at(0).settings.under_tool) writable.push_back("/tmp");
  harden_process(jobs.at(0).dir + "/scratch", cpu_s, writable, false, notes);
  if (!serve_root.empty()) set_cpu_budget(cpu_budget_s(jobs));
}

}  // namespace sandbox::rank
