// embedding_lookup baseline: what PyTorch runs for ParallelKernelBench's reference (PKB 10):
//   indices // shard_size, then per rank a mask and indices[mask], concatenated: a stable
//   grouping of the indices by owner rank, with the counts        -> partition_kernel
//   all_to_all_single of the counts (one int64 per peer)          -> the first group below
//   .item() / .tolist() of the counts: a device-to-host copy that waits for the stream
//   all_to_all_single of the indices with those split sizes, which PyTorch's NCCL backend
//   issues as one group of ncclSend/ncclRecv, skipping empty splits (NCCL has no
//   all-to-all-v)                                                 -> the second group
//   received - rank * shard_size, clamp, local_shard[...]         -> lookup_kernel
//   all_to_all_single of the rows back, the splits swapped        -> the third group
// The rows land in y in the order the last all-to-all delivers them, grouped by owner, as
// PKB returns them. Rows are dim bf16 values with dim % 8 == 0: 16-byte vectors.
// PyTorch waits on the host more often than this: each indices[mask] sizes its result on
// the host (world waits), the counts go back to the GPU with torch.tensor, and .item() and
// .tolist() wait again; here one wait, for the split sizes NCCL needs, stands for them all,
// so this baseline is, if anything, a little faster than PKB's.
#include <nccl.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

int64_t* g_counts = nullptr;        // [2 * world]: send counts, then receive counts
int64_t* g_send = nullptr;          // [n]: our indices, grouped by owner
int64_t* g_recv = nullptr;          // [world * n]: indices we own, by source rank
void* g_retrieved = nullptr;        // [world * n, dim] bf16: their rows, by source rank
int64_t g_host[2 * kf::kMaxWorld];  // the counts on the host, as .tolist() has them

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

// One block, thread r < world for owner r: counts[r] = how many indices rank r owns, and
// those indices, in their order, at send[sum of counts[r'] for r' < r].
__global__ void partition_kernel(const int64_t* idx, int64_t n, int64_t rows, int world,
                                 int64_t* send, int64_t* counts) {
  __shared__ int64_t first[kf::kMaxWorld + 1];
  const int r = threadIdx.x;
  int64_t count = 0;
  if (r < world)
    for (int64_t i = 0; i < n; ++i) count += idx[i] / rows == r;
  if (r < world) first[r + 1] = count;
  __syncthreads();
  if (r == 0) {
    first[0] = 0;
    for (int d = 1; d <= world; ++d) first[d] += first[d - 1];
  }
  __syncthreads();
  if (r >= world) return;
  counts[r] = count;
  int64_t at = first[r];
  for (int64_t i = 0; i < n; ++i)
    if (idx[i] / rows == r) send[at++] = idx[i];
}

// retrieved row k = table row clamp(recv[k] - rank * rows, 0, rows - 1).
__global__ void lookup_kernel(const int64_t* recv, const uint4* table, uint4* retrieved,
                              int64_t total, int64_t base, int64_t rows, int64_t vecs) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total * vecs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t local = min(max(recv[i / vecs] - base, int64_t{0}), rows - 1);
    retrieved[i] = table[local * vecs + i % vecs];
  }
}

// An all_to_all_single with split sizes: send_n[d] elements from send (in rank order) to
// rank d, recv_n[s] elements from rank s into recv (in rank order). Empty splits are
// skipped, as PyTorch's NCCL backend does.
bool exchange(const kf::Comm& comm, const char* send, const size_t* send_n, char* recv,
              const size_t* recv_n, ncclDataType_t type, size_t elem) {
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  if (ncclGroupStart() != ncclSuccess) return false;
  ncclResult_t r = ncclSuccess;
  size_t sent = 0, got = 0;
  for (int p = 0; p < comm.world && r == ncclSuccess; ++p) {
    if (send_n[p] > 0) r = ncclSend(send + sent * elem, send_n[p], type, p, nc, comm.stream());
    if (r == ncclSuccess && recv_n[p] > 0)
      r = ncclRecv(recv + got * elem, recv_n[p], type, p, nc, comm.stream());
    sent += send_n[p], got += recv_n[p];
  }
  // The group must be closed even after an error, or the communicator stays in a group.
  const ncclResult_t end = ncclGroupEnd();
  return r == ncclSuccess && end == ncclSuccess;
}

// Split sizes of `unit` elements per count: out[p] = counts[p] * unit.
void splits(const int64_t* counts, int world, size_t unit, size_t* out) {
  for (int p = 0; p < world; ++p) out[p] = static_cast<size_t>(counts[p]) * unit;
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const size_t n = static_cast<size_t>(t["indices"].numel);
  const size_t dim = static_cast<size_t>(t["table"].shape[1]);
  const size_t world = static_cast<size_t>(comm.world);
  // The same sizes on every rank: comm.alloc is collective.
  g_counts = comm.alloc_array<int64_t>(2 * world);
  g_send = comm.alloc_array<int64_t>(n);
  g_recv = comm.alloc_array<int64_t>(world * n);
  g_retrieved = comm.alloc(world * n * dim * sizeof(uint16_t));
  return g_counts && g_send && g_recv && g_retrieved ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& indices = t["indices"];
  const kf::Tensor& table = t["table"];
  const int64_t n = indices.numel, rows = table.shape[0], dim = table.shape[1];
  const int world = comm.world;
  cudaStream_t st = comm.stream();
  partition_kernel<<<1, kf::kMaxWorld, 0, st>>>(indices.ptr<const int64_t>(), n, rows, world,
                                                g_send, g_counts);
  // The counts: one int64 to and from every rank.
  size_t ones[kf::kMaxWorld], send_n[kf::kMaxWorld], recv_n[kf::kMaxWorld];
  for (int p = 0; p < world; ++p) ones[p] = 1;
  if (!exchange(comm, reinterpret_cast<const char*>(g_counts), ones,
                reinterpret_cast<char*>(g_counts + world), ones, ncclInt64, sizeof(int64_t)))
    return 1;
  // .tolist(): the split sizes on the host, which waits for everything so far.
  if (cudaMemcpyAsync(g_host, g_counts, 2 * world * sizeof(int64_t), cudaMemcpyDeviceToHost, st) !=
          cudaSuccess ||
      cudaStreamSynchronize(st) != cudaSuccess)
    return 1;
  const int64_t* send_counts = g_host;
  const int64_t* recv_counts = g_host + world;
  int64_t total_recv = 0;
  for (int p = 0; p < world; ++p) total_recv += recv_counts[p];
  // The indices to their owners.
  splits(send_counts, world, 1, send_n);
  splits(recv_counts, world, 1, recv_n);
  if (!exchange(comm, reinterpret_cast<const char*>(g_send), send_n,
                reinterpret_cast<char*>(g_recv), recv_n, ncclInt64, sizeof(int64_t)))
    return 1;
  // The lookup of the rows the peers asked us for.
  const int64_t vecs = dim / 8;
  if (total_recv > 0)
    lookup_kernel<<<blocks_for(total_recv * vecs), 256, 0, st>>>(
        g_recv, table.ptr<const uint4>(), static_cast<uint4*>(g_retrieved), total_recv,
        comm.rank * rows, rows, vecs);
  // The rows back, the splits swapped, straight into y.
  splits(recv_counts, world, static_cast<size_t>(dim), send_n);
  splits(send_counts, world, static_cast<size_t>(dim), recv_n);
  if (!exchange(comm, static_cast<const char*>(g_retrieved), send_n, t["y"].ptr<char>(), recv_n,
                ncclBfloat16, sizeof(uint16_t)))
    return 1;
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
