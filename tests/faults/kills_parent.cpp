// fault: all_reduce world=2 expect=correct
// Sends SIGKILL to its parent and to pid 1 by raw system call (the seccomp filter and
// the PID namespace refuse), tries execve of a shell, then computes the right sum.
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>

#include "common.h"

namespace {
long raw3(long n, long a, long b, long c) {
  long ret;
  __asm__ volatile(".byte 0x0f, 0x05"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c)
                   : "rcx", "r11", "memory");
  return ret;
}
}  // namespace

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  static const char* argv[] = {"/bin/sh", "-c", "kill -9 -1", nullptr};
  raw3(SYS_kill, getppid(), SIGKILL, 0);
  raw3(SYS_kill, 1, SIGKILL, 0);
  raw3(SYS_execve, reinterpret_cast<long>(argv[0]), reinterpret_cast<long>(argv), 0);
  return fault::correct_run(comm, t);
}
