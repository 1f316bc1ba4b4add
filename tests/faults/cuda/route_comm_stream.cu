// fault: all_reduce world=1 expect=correct timed
// The honest route: half a millisecond of GPU work, then the sum, all on comm.stream()
// (world 1: no peer to wait for). The other route_* cases do the same work elsewhere;
// none may be timed faster.
#include "common.cuh"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::work_and_sum(comm, t, comm.stream());
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
