// broadcast baseline: torch.distributed.broadcast into the output, i.e. one out-of-place
// ncclBroadcast from rank `root` (the root sends its x, every rank receives into y).
#include <nccl.h>

#include <kf/kf.cuh>

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int root = static_cast<int>(t.iparam("root", 0));
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  ncclResult_t r = ncclBroadcast(x.data, y.data, static_cast<size_t>(y.numel), ncclFloat, root, nc,
                                 comm.stream());
  return r == ncclSuccess ? 0 : 1;
}
