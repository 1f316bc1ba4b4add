// moe_dispatch baseline: what PyTorch runs for Megatron's dispatch (PKB 28):
//   torch.topk(logits) and a one-hot routing map       -> routing_kernel
//   _permute: masked_select of token ids (a scan), then index_select of x rows
//                                                      -> positions_kernel, gather_kernel
//   all_to_all_single with split sizes, which PyTorch's NCCL backend issues as one group
//   of ncclSend/ncclRecv (NCCL has no all-to-all-v)     -> the group below
//   _sort_chunks_by_idxs: torch.split + torch.cat      -> regroup_kernel
// Rows are N bf16 values with N % 8 == 0, so the copies move 16-byte vectors.
#include <nccl.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

void* g_permuted = nullptr;  // [R, N] bf16: this rank's rows in expert order
void* g_received = nullptr;  // [world * S(world - 1), N] bf16: blocks by source rank

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

// routing_map[x][t] = 1 for the topk experts of token t: highest logit first, equal
// logits to the lower index (the strict > keeps the first, lowest, maximum).
__global__ void routing_kernel(const float* logits, uint8_t* map, int64_t m, int e, int topk) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < m;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float* row = logits + t * e;
    for (int x = 0; x < e; ++x) map[x * m + t] = 0;
    for (int k = 0; k < topk; ++k) {
      int best = -1;
      for (int x = 0; x < e; ++x)
        if (map[x * m + t] == 0 && (best < 0 || row[x] > row[best])) best = x;
      map[best * m + t] = 1;
    }
  }
}

// perm[p] = the token of the p-th set entry of the [E, M] map in row-major order (expert,
// then token). One block: each thread counts a contiguous stretch, a block-wide scan
// gives each stretch its first position, and the thread writes its stretch's tokens.
constexpr int kScanThreads = 1024;
__global__ void __launch_bounds__(kScanThreads)
    positions_kernel(const uint8_t* map, int64_t m, int64_t total, int32_t* perm) {
  __shared__ int32_t sums[kScanThreads];
  const int64_t per = (total + kScanThreads - 1) / kScanThreads;
  const int64_t lo = min(total, threadIdx.x * per), hi = min(total, lo + per);
  int32_t count = 0;
  for (int64_t f = lo; f < hi; ++f) count += map[f] != 0;
  sums[threadIdx.x] = count;
  __syncthreads();
  for (int off = 1; off < kScanThreads; off <<= 1) {  // inclusive Hillis-Steele scan
    const int32_t add = threadIdx.x >= off ? sums[threadIdx.x - off] : 0;
    __syncthreads();
    sums[threadIdx.x] += add;
    __syncthreads();
  }
  int32_t pos = sums[threadIdx.x] - count;
  for (int64_t f = lo; f < hi; ++f)
    if (map[f] != 0) perm[pos++] = static_cast<int32_t>(f % m);
}

// permuted[p] = x[perm[p]], `vecs` 16-byte vectors a row.
__global__ void gather_kernel(const uint4* x, const int32_t* perm, uint4* permuted, int64_t rows,
                              int64_t vecs) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < rows * vecs;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    permuted[i] = x[static_cast<int64_t>(perm[i / vecs]) * vecs + i % vecs];
}

// y row world*l*chunk + s*n(l) + j = received row s*size + l*chunk + j: from (source rank,
// local expert) order to (local expert, source rank) order.
__global__ void regroup_kernel(const uint4* received, uint4* y, int64_t size, int64_t chunk,
                               int64_t local, int64_t world, int64_t vecs) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < world * size * vecs; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = i / vecs;
    const int64_t l = min(o / (world * chunk), local - 1);
    const int64_t n = l == local - 1 ? size - (local - 1) * chunk : chunk;
    const int64_t k = o - world * l * chunk, s = k / n, j = k % n;
    y[i] = received[(s * size + l * chunk + j) * vecs + i % vecs];
  }
}

// The uneven all-to-all: rows [d*q, d*q + S(d)) of `permuted` to rank d; S(rank) rows
// from every rank s into block s of `received`.
bool exchange(const kf::Comm& comm, int64_t rows, int64_t n) {
  const int64_t q = rows / comm.world;
  auto size = [&](int d) { return d == comm.world - 1 ? rows - (comm.world - 1) * q : q; };
  const uint16_t* src = static_cast<const uint16_t*>(g_permuted);
  uint16_t* dst = static_cast<uint16_t*>(g_received);
  const size_t mine = static_cast<size_t>(size(comm.rank) * n);
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  if (ncclGroupStart() != ncclSuccess) return false;
  ncclResult_t r = ncclSuccess;
  for (int d = 0; d < comm.world && r == ncclSuccess; ++d) {
    r = ncclSend(src + d * q * n, static_cast<size_t>(size(d) * n), ncclBfloat16, d, nc,
                 comm.stream());
    if (r == ncclSuccess) r = ncclRecv(dst + d * mine, mine, ncclBfloat16, d, nc, comm.stream());
  }
  // The group must be closed even after an error, or the communicator stays in a group.
  const ncclResult_t end = ncclGroupEnd();
  return r == ncclSuccess && end == ncclSuccess;
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const int64_t rows = t["perm"].numel, n = t["x"].shape[1];
  const int64_t last = rows - (comm.world - 1) * (rows / comm.world);  // S(world - 1)
  // The same sizes on every rank: comm.alloc is collective.
  g_permuted = comm.alloc(static_cast<size_t>(rows * n) * sizeof(uint16_t));
  g_received = comm.alloc(static_cast<size_t>(comm.world * last * n) * sizeof(uint16_t));
  return g_permuted && g_received ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const kf::Tensor& logits = t["logits"];
  kf::Tensor& y = t["y"];
  kf::Tensor& perm = t["perm"];
  kf::Tensor& map = t["routing_map"];
  const int64_t m = x.shape[0], n = x.shape[1], vecs = n / 8, rows = perm.numel;
  const int e = static_cast<int>(t.iparam("E")), topk = static_cast<int>(t.iparam("topk"));
  cudaStream_t st = comm.stream();
  routing_kernel<<<blocks_for(m), 256, 0, st>>>(logits.ptr<const float>(), map.ptr<uint8_t>(), m, e,
                                                topk);
  positions_kernel<<<1, kScanThreads, 0, st>>>(map.ptr<const uint8_t>(), m, e * m,
                                               perm.ptr<int32_t>());
  gather_kernel<<<blocks_for(rows * vecs), 256, 0, st>>>(
      x.ptr<const uint4>(), perm.ptr<const int32_t>(), static_cast<uint4*>(g_permuted), rows, vecs);
  // World 1: PyTorch skips the all-to-all and regroups the permuted rows themselves.
  if (comm.world > 1 && !exchange(comm, rows, n)) return 1;
  const void* received = comm.world > 1 ? g_received : g_permuted;
  const int64_t size = y.shape[0] / comm.world, local = e / comm.world;
  regroup_kernel<<<blocks_for(y.shape[0] * vecs), 256, 0, st>>>(static_cast<const uint4*>(received),
                                                                y.ptr<uint4>(), size, size / local,
                                                                local, comm.world, vecs);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
