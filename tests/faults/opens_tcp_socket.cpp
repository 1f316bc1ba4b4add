// fault: all_reduce world=1 expect=correct
// Tries to open TCP and Unix sockets (to reach a helper on 127.0.0.1, or the launcher's
// own socket) with the system-call instruction itself, so that no source or symbol
// check sees it. The candidate's process may create no socket at all: it computes the
// right sum and returns 0 only when every try failed (3 otherwise, which the verdict
// shows).
#include <sys/socket.h>
#include <sys/syscall.h>

#include "common.h"

namespace {
long raw3(long nr, long a, long b, long c, long d = 0) {
  register long r10 asm("r10") = d;
  asm volatile(".byte 0x0f, 0x05"  // the syscall instruction, spelled as bytes
               : "+a"(nr)
               : "D"(a), "S"(b), "d"(c), "r"(r10)
               : "rcx", "r11", "memory");
  return nr;
}
}  // namespace

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  int opened = 0;
  for (long family : {AF_INET, AF_INET6, AF_UNIX})
    if (raw3(SYS_socket, family, SOCK_STREAM, 0) >= 0) ++opened;
  int sv[2];
  if (raw3(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, reinterpret_cast<long>(sv)) >= 0) ++opened;
  int rc = fault::correct_run(comm, t);
  return opened ? 3 : rc;
}
