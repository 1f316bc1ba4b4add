// fault: all_reduce world=2 expect=correct
// Asks for a raw packet socket with the system-call instruction itself (no call to
// socket() for the source or symbol checks to see): the rank's seccomp filter must
// refuse it. Returns 0 with the right sum only when it was refused (4 otherwise, which
// the verdict shows).
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "common.h"

namespace {
long raw_socket(long domain, long type, long protocol) {
  long ret = SYS_socket;
  asm volatile(".byte 0x0f, 0x05"  // the syscall instruction, spelled as bytes
               : "+a"(ret)
               : "D"(domain), "S"(type), "d"(protocol)
               : "rcx", "r11", "memory");
  return ret;
}
}  // namespace

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  long fd = raw_socket(AF_PACKET, SOCK_RAW, htons(0x0003));
  fault::correct_run(comm, t);
  return fd >= 0 ? 4 : 0;
}
