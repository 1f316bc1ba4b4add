// fault: all_reduce world=2 expect=mismatch
// The right sum, then rank 0 zeroes rank 1's x through its peer pointer: inputs must
// stay unchanged on every rank, whoever wrote them.
#include "common.cuh"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  int rc = fault::correct_run(comm, t);
  const kf::Tensor& x = t["x"];
  if (comm.rank == 0)
    cudaMemsetAsync(comm.peer(x.ptr<float>(), 1), 0, x.numel * sizeof(float), comm.stream());
  return rc;
}
