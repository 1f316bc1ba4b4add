// reduce_scatter baseline: torch.distributed.reduce_scatter_tensor(y, x), i.e. one
// ncclReduceScatter whose count is the per-rank output length.
#include <nccl.h>

#include <kf/kf.cuh>

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const ncclDataType_t type = x.dtype == kf::DType::bf16 ? ncclBfloat16 : ncclFloat;
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  ncclResult_t r = ncclReduceScatter(x.data, y.data, static_cast<size_t>(y.numel), type, ncclSum,
                                     nc, comm.stream());
  return r == ncclSuccess ? 0 : 1;
}
