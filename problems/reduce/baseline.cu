// reduce baseline: what ParallelKernelBench's reference does, out = x.clone() then
// torch.distributed.reduce(out, dst=root), i.e. a device-to-device copy of x into y and
// one in-place ncclReduce of y to rank `root`, both on the stream the sandbox times. NCCL
// leaves a non-root rank's buffer untouched, so there y stays the copy of x.
#include <nccl.h>

#include <kf/kf.cuh>

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int root = static_cast<int>(t.iparam("root", 0));
  const ncclDataType_t type = x.dtype == kf::DType::bf16 ? ncclBfloat16 : ncclFloat;
  if (cudaMemcpyAsync(y.data, x.data, x.bytes(), cudaMemcpyDeviceToDevice, comm.stream()) !=
      cudaSuccess)
    return 1;
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  ncclResult_t r = ncclReduce(y.data, y.data, static_cast<size_t>(y.numel), type, ncclSum, root, nc,
                              comm.stream());
  return r == ncclSuccess ? 0 : 1;
}
