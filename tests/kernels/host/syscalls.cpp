// Probe (problem all_reduce, fp32): a correct all_reduce whose rank 0, in kf_setup, makes
// the calls a kernel never needs by their instruction's bytes (so no identifier or symbol
// check sees them) and writes to ./syscalls.txt how each ended: "NAME: EPERM" when the
// rank's seccomp filter refused it, "NAME: ran" when it did not. A thread must still start
// ("thread: ran"). Verdict: correct; tests/isolation_test.cpp reads the file.
#include <kf/host.h>
#include <kf/kf.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <thread>

namespace {

kf::host::Barrier g_barrier;

long sc(long n, long a = 0, long b = 0, long c = 0) {
  long ret;
  register long r10 __asm__("r10") = 0;
  __asm__ volatile(".byte 0x0f, 0x05"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                   : "rcx", "r11", "memory");
  return ret;
}

void report(FILE* f, const char* name, long ret) {
  std::fprintf(f, "%s: %s\n", name, ret == -EPERM ? "EPERM" : ret == -ENOSYS ? "ENOSYS" : "ran");
  if (ret == 0 && (name[0] == 'f' || name[0] == 'c')) sc(SYS_exit, 0);  // a child that got through
}

void probe(FILE* f) {
  static const char* argv[] = {"/bin/true", nullptr};
  report(f, "fork", sc(SYS_fork));
  report(f, "clone (a process)", sc(SYS_clone, SIGCHLD));
  report(f, "execve",
         sc(SYS_execve, reinterpret_cast<long>(argv[0]), reinterpret_cast<long>(argv), 0));
  long s = sc(SYS_socket, AF_PACKET, SOCK_RAW, 0);
  report(f, "socket(AF_PACKET)", s);
  if (s >= 0) close(static_cast<int>(s));
  report(f, "kill(another process)", sc(SYS_kill, getppid(), 0));
  report(f, "ptrace", sc(SYS_ptrace, PTRACE_TRACEME));
  report(f, "unshare", sc(SYS_unshare, CLONE_NEWUSER));
  bool ran = false;
  std::thread t([&] { ran = true; });
  t.join();
  std::fprintf(f, "thread: %s\n", ran ? "ran" : "failed");
  report(f, "kill(itself)", sc(SYS_kill, getpid(), 0));
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  if (!g_barrier.setup(comm)) return 1;
  if (comm.rank != 0) return 0;
  FILE* f = std::fopen("syscalls.txt", "w");
  if (!f) return 2;
  probe(f);
  std::fclose(f);
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
