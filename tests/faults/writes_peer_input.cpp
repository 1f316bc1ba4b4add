// fault: all_reduce world=2 expect=mismatch
// The right sum, then rank 0 scribbles on rank 1's x: inputs must stay unchanged on
// every rank, whoever wrote them.
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::barrier(comm);
  fault::sum_peers(comm, t);
  fault::barrier(comm);
  if (comm.rank == 0) comm.peer(t["x"].ptr<float>(), 1)[3] = -1.0f;
  fault::barrier(comm);
  return 0;
}
