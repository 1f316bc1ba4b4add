// fault: all_reduce world=2 expect=correct
// Tries to fork without end by raw system call (the seccomp filter answers EPERM), then
// computes the right answer: correct, and no process of it is left.
#include <sys/syscall.h>

#include "common.h"

namespace {
long raw_fork() {
  long ret;
  __asm__ volatile(".byte 0x0f, 0x05" : "=a"(ret) : "a"(SYS_fork) : "rcx", "r11", "memory");
  return ret;
}
}  // namespace

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  for (int i = 0; i < 64; ++i)
    if (raw_fork() == 0)
      for (;;) raw_fork();
  return fault::correct_run(comm, t);
}
