// all_to_all baseline: torch.distributed.all_to_all_single(y, x) with equal splits, which
// PyTorch's NCCL backend issues as one group of ncclSend/ncclRecv, one pair per peer.
#include <nccl.h>

#include <kf/kf.cuh>

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const size_t n = static_cast<size_t>(x.numel) / static_cast<size_t>(comm.world);
  const float* src = x.ptr<const float>();
  float* dst = y.ptr<float>();
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  if (ncclGroupStart() != ncclSuccess) return 1;
  ncclResult_t r = ncclSuccess;
  for (int p = 0; p < comm.world && r == ncclSuccess; ++p) {
    r = ncclSend(src + static_cast<size_t>(p) * n, n, ncclFloat, p, nc, comm.stream());
    if (r == ncclSuccess)
      r = ncclRecv(dst + static_cast<size_t>(p) * n, n, ncclFloat, p, nc, comm.stream());
  }
  // The group must be closed even after an error, or the communicator stays in a group.
  const ncclResult_t end = ncclGroupEnd();
  return r == ncclSuccess && end == ncclSuccess ? 0 : 1;
}
