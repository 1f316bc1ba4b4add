// Fault (problem all_reduce): calls NCCL itself, which only baselines may do. It compiles
// and links (-lnccl), but the sandbox's static checks must refuse it. Verdict: rejected.
#include <nccl.h>

#include <kf/kf.cuh>

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  const ncclResult_t r = ncclAllReduce(t["x"].data, t["y"].data, static_cast<size_t>(t["y"].numel),
                                       ncclFloat, ncclSum, nc, comm.stream());
  return r == ncclSuccess ? 0 : 1;
}
