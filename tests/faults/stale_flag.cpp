// fault: all_reduce world=2,4 expect=unstable
// Sets its arrival flag to 1 and never resets it: call 0 is right, and from call 1 on the
// waits pass at once, so with the staggered start an early rank reads a peer's old x.
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  for (int r = 0; r < comm.world; ++r)
    std::atomic_ref<uint32_t>(comm.peer(fault::g_arrived, r)[comm.rank]).store(1);
  for (int r = 0; r < comm.world; ++r)
    while (std::atomic_ref<uint32_t>(fault::g_arrived[r]).load() != 1) sched_yield();
  fault::sum_peers(comm, t);
  return 0;
}
