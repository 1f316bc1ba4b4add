// gnn_feature_exchange baseline: what PyTorch runs for ParallelKernelBench's reference
// (PKB 65):
//   local_features[seed_inverse_ids]: an index_select of rows into a fresh tensor
//                                                               -> gather_kernel
//   torch.split of it and of the output into world chunks (views, no copy), both lists
//   rotated by rank, then torch.distributed.all_to_all, which PyTorch's NCCL backend
//   issues as one group of ncclSend/ncclRecv, one pair per peer -> the group below
// So rank r sends gathered chunk (p - r) mod world to rank p and receives rank p's data
// into out chunk (p - r) mod world. Rows are hidden bf16 values with hidden % 8 == 0:
// 16-byte vectors.
#include <nccl.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

void* g_gathered = nullptr;  // [world * rows, hidden] bf16: features[ids]

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

// gathered row p = features row ids[p], 16 bytes a thread.
__global__ void gather_kernel(const uint4* features, const int64_t* ids, uint4* gathered, int64_t n,
                              int64_t vecs) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n * vecs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    gathered[i] = features[ids[i / vecs] * vecs + i % vecs];
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  // The same size on every rank: comm.alloc is collective.
  g_gathered = comm.alloc(t["features"].bytes());
  return g_gathered ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& features = t["features"];
  const int64_t n = features.shape[0], hidden = features.shape[1], vecs = hidden / 8;
  const int world = comm.world;
  const size_t chunk = static_cast<size_t>(n / world * hidden);  // elements per chunk
  cudaStream_t st = comm.stream();
  gather_kernel<<<blocks_for(n * vecs), 256, 0, st>>>(features.ptr<const uint4>(),
                                                      t["ids"].ptr<const int64_t>(),
                                                      static_cast<uint4*>(g_gathered), n, vecs);
  const uint16_t* send = static_cast<const uint16_t*>(g_gathered);
  uint16_t* recv = t["out"].ptr<uint16_t>();
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  if (ncclGroupStart() != ncclSuccess) return 1;
  ncclResult_t r = ncclSuccess;
  for (int p = 0; p < world && r == ncclSuccess; ++p) {
    const size_t c = static_cast<size_t>(((p - comm.rank) % world + world) % world);
    r = ncclSend(send + c * chunk, chunk, ncclBfloat16, p, nc, st);
    if (r == ncclSuccess) r = ncclRecv(recv + c * chunk, chunk, ncclBfloat16, p, nc, st);
  }
  // The group must be closed even after an error, or the communicator stays in a group.
  const ncclResult_t end = ncclGroupEnd();
  return r == ncclSuccess && end == ncclSuccess && cudaGetLastError() == cudaSuccess ? 0 : 1;
}
