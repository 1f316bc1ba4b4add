// sandbox/rank/seccomp.cpp: see harden.h. A denylist, not an allowlist: CUDA, NCCL and
// OpenMPI make hundreds of ordinary calls that a kernel's host code may make too; what a
// kernel never needs, and what reaches outside its process, is what goes.
#include <sched.h>
#include <seccomp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "harden.h"

namespace sandbox::rank {

bool apply_seccomp(bool no_sockets, std::string* why) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) {
    *why = "seccomp_init failed";
    return false;
  }
  // Every thread of the process, those MPI and CUDA started before this one included.
  seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  int rc = 0;
  auto rule = [&](uint32_t action, int nr, unsigned n = 0, scmp_arg_cmp a = {}) {
    if (rc == 0)
      rc = n ? seccomp_rule_add(ctx, action, nr, 1, a) : seccomp_rule_add(ctx, action, nr, 0);
  };
  // No new program, no new process: threads only (clone with CLONE_THREAD). clone3 says
  // ENOSYS, so that glibc's pthread_create falls back to clone, which is checked.
  for (int nr : {SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(fork), SCMP_SYS(vfork)})
    rule(deny, nr);
  rule(deny, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  rule(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3));
  // No raw frames. IPv4 and IPv6 sockets stay: NCCL opens one to its own proxy thread to
  // stop it in ncclCommDestroy (denied, the destroy waited forever on an H200), and one per
  // peer when a send/recv first connects it. The sandbox's network namespace is what keeps
  // them off the machine's network (confine.h).
  // The runner (no NCCL, no MPI) gets no new socket of any family: it talks to its judge
  // over the one it inherited.
  if (no_sockets)
    for (int nr : {SCMP_SYS(socket), SCMP_SYS(socketpair)}) rule(deny, nr);
  else
    rule(deny, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(AF_PACKET)));
  // Signals to itself only; no reading or writing other processes.
  const scmp_datum_t self = static_cast<scmp_datum_t>(getpid());
  for (int nr :
       {SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo)})
    rule(deny, nr, 1, SCMP_A0(SCMP_CMP_NE, self));
  for (int nr :
       {SCMP_SYS(tkill), SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_send_signal), SCMP_SYS(pidfd_getfd),
        SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(kcmp)})
    rule(deny, nr);
  // The machine's own business, and the ways around a filter (io_uring runs calls that
  // seccomp does not see).
  for (int nr : {SCMP_SYS(mount),
                 SCMP_SYS(umount2),
                 SCMP_SYS(pivot_root),
                 SCMP_SYS(chroot),
                 SCMP_SYS(unshare),
                 SCMP_SYS(setns),
                 SCMP_SYS(bpf),
                 SCMP_SYS(perf_event_open),
                 SCMP_SYS(keyctl),
                 SCMP_SYS(add_key),
                 SCMP_SYS(request_key),
                 SCMP_SYS(init_module),
                 SCMP_SYS(finit_module),
                 SCMP_SYS(delete_module),
                 SCMP_SYS(reboot),
                 SCMP_SYS(swapon),
                 SCMP_SYS(swapoff),
                 SCMP_SYS(kexec_load),
                 SCMP_SYS(kexec_file_load),
                 SCMP_SYS(userfaultfd),
                 SCMP_SYS(io_uring_setup),
                 SCMP_SYS(io_uring_enter),
                 SCMP_SYS(io_uring_register),
                 SCMP_SYS(open_by_handle_at),
                 SCMP_SYS(name_to_handle_at)})
    rule(deny, nr);
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) {
    *why = std::string("seccomp: ") + std::strerror(-rc);
    return false;
  }
  return true;
}

}  // namespace sandbox::rank
