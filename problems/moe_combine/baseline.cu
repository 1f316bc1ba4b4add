// moe_combine baseline: what PyTorch runs for Megatron's combine (PKB 29):
//   _sort_chunks_by_idxs back to source-rank order: torch.split + torch.cat -> unsort_kernel
//   all_to_all_single with split sizes, which PyTorch's NCCL backend issues as one group
//   of ncclSend/ncclRecv (NCCL has no all-to-all-v)                        -> the group below
//   torch.topk(logits), softmax of the selected logits into bf16 weights,
//   the routing map                                                       -> routing_kernel
//   the permutation (masked_select of token ids, a scan)                  -> positions_kernel
//   _unpermute: rows * weights in bf16, scatter_add into [M, N]           -> combine_kernel
#include <cuda_bf16.h>
#include <nccl.h>

#include <cstdint>
#include <kf/kf.cuh>

namespace {

void* g_send = nullptr;         // [world * S(world - 1), N] bf16: x in source-rank order
void* g_received = nullptr;     // [R, N] bf16: our rows back, in permuted order
uint8_t* g_map = nullptr;       // [E, M]: 1 where token t goes to expert e
float* g_weight = nullptr;      // [E, M]: w(t, e) rounded to bf16, where routed
int32_t* g_position = nullptr;  // [E, M]: p(t, e), where routed

int blocks_for(int64_t n) {
  const int64_t b = (n + 255) / 256;
  return static_cast<int>(b < 4096 ? (b < 1 ? 1 : b) : 4096);
}

// send row s*size + l*chunk + j = x row world*l*chunk + s*n(l) + j: from (local expert,
// source rank) order back to (source rank, local expert) order.
__global__ void unsort_kernel(const uint4* x, uint4* send, int64_t size, int64_t chunk,
                              int64_t local, int64_t world, int64_t vecs) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < world * size * vecs; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = i / vecs;
    const int64_t l = min(o / (world * chunk), local - 1);
    const int64_t n = l == local - 1 ? size - (local - 1) * chunk : chunk;
    const int64_t k = o - world * l * chunk, s = k / n, j = k % n;
    send[(s * size + l * chunk + j) * vecs + i % vecs] = x[i];
  }
}

// For token t: map[x][t] = 1 for its topk experts (highest logit, ties to the lower
// index) and weight[x][t] = softmax over their logits, rounded to bf16 as PyTorch's bf16
// routing weights are.
__global__ void routing_kernel(const float* logits, uint8_t* map, float* weight, int64_t m, int e,
                               int topk) {
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < m;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float* row = logits + t * e;
    for (int x = 0; x < e; ++x) map[x * m + t] = 0;
    int top = -1;
    for (int k = 0; k < topk; ++k) {
      int best = -1;
      for (int x = 0; x < e; ++x)
        if (map[x * m + t] == 0 && (best < 0 || row[x] > row[best])) best = x;
      map[best * m + t] = 1;
      if (top < 0) top = best;
    }
    float sum = 0.0f;
    for (int x = 0; x < e; ++x)
      if (map[x * m + t]) sum += expf(row[x] - row[top]);
    for (int x = 0; x < e; ++x)
      weight[x * m + t] = map[x * m + t]
                              ? __bfloat162float(__float2bfloat16_rn(expf(row[x] - row[top]) / sum))
                              : 0.0f;
  }
}

// position[f] = the number of set map entries before f in row-major (expert, token)
// order, for every set entry f. One block: per-thread counts over contiguous stretches,
// a block-wide scan, then each thread numbers its stretch.
constexpr int kScanThreads = 1024;
__global__ void __launch_bounds__(kScanThreads)
    positions_kernel(const uint8_t* map, int64_t total, int32_t* position) {
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
    if (map[f] != 0) position[f] = pos++;
}

// y[t][k] = sum over the experts x of t, in expert order, of bf16(weight * row), the rows
// read from `received` at p(t, x); the sum in float, rounded once.
__global__ void combine_kernel(const __nv_bfloat16* received, const uint8_t* map,
                               const float* weight, const int32_t* position, __nv_bfloat16* y,
                               int64_t m, int64_t n, int e) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < m * n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = i / n, k = i % n;
    float acc = 0.0f;
    for (int x = 0; x < e; ++x) {
      if (!map[x * m + t]) continue;
      const float v = __bfloat162float(received[position[x * m + t] * n + k]);
      acc += __bfloat162float(__float2bfloat16_rn(weight[x * m + t] * v));
    }
    y[i] = __float2bfloat16_rn(acc);
  }
}

// The uneven all-to-all back: block s of `send` (S(rank) rows) to rank s; S(d) rows from
// every rank d into rows [d*q, d*q + S(d)) of `received`.
bool exchange(const kf::Comm& comm, int64_t rows, int64_t n) {
  const int64_t q = rows / comm.world;
  auto size = [&](int d) { return d == comm.world - 1 ? rows - (comm.world - 1) * q : q; };
  const uint16_t* src = static_cast<const uint16_t*>(g_send);
  uint16_t* dst = static_cast<uint16_t*>(g_received);
  const int64_t mine = size(comm.rank) * n;
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  if (ncclGroupStart() != ncclSuccess) return false;
  ncclResult_t r = ncclSuccess;
  for (int d = 0; d < comm.world && r == ncclSuccess; ++d) {
    r = ncclSend(src + d * mine, static_cast<size_t>(mine), ncclBfloat16, d, nc, comm.stream());
    if (r == ncclSuccess)
      r = ncclRecv(dst + d * q * n, static_cast<size_t>(size(d) * n), ncclBfloat16, d, nc,
                   comm.stream());
  }
  // The group must be closed even after an error, or the communicator stays in a group.
  const ncclResult_t end = ncclGroupEnd();
  return r == ncclSuccess && end == ncclSuccess;
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const int64_t m = t["logits"].shape[0], e = t["logits"].shape[1], n = t["y"].shape[1];
  const int64_t rows = m * t.iparam("topk");
  const int64_t last = rows - (comm.world - 1) * (rows / comm.world);  // S(world - 1)
  // The same sizes on every rank: comm.alloc is collective.
  g_send = comm.alloc(static_cast<size_t>(comm.world * last * n) * sizeof(uint16_t));
  g_received = comm.alloc(static_cast<size_t>(rows * n) * sizeof(uint16_t));
  g_map = comm.alloc_array<uint8_t>(static_cast<size_t>(e * m));
  g_weight = comm.alloc_array<float>(static_cast<size_t>(e * m));
  g_position = comm.alloc_array<int32_t>(static_cast<size_t>(e * m));
  return g_send && g_received && g_map && g_weight && g_position ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const kf::Tensor& logits = t["logits"];
  kf::Tensor& y = t["y"];
  const int64_t m = logits.shape[0], n = x.shape[1], vecs = n / 8;
  const int e = static_cast<int>(t.iparam("E")), topk = static_cast<int>(t.iparam("topk"));
  const int64_t rows = m * topk, size = x.shape[0] / comm.world, local = e / comm.world;
  cudaStream_t st = comm.stream();
  unsort_kernel<<<blocks_for(x.shape[0] * vecs), 256, 0, st>>>(
      x.ptr<const uint4>(), static_cast<uint4*>(g_send), size, size / local, local, comm.world,
      vecs);
  // World 1: PyTorch skips the all-to-all; the unsorted rows are the permuted rows.
  if (comm.world > 1 && !exchange(comm, rows, n)) return 1;
  const void* received = comm.world > 1 ? g_received : g_send;
  routing_kernel<<<blocks_for(m), 256, 0, st>>>(logits.ptr<const float>(), g_map, g_weight, m, e,
                                                topk);
  positions_kernel<<<1, kScanThreads, 0, st>>>(g_map, e * m, g_position);
  combine_kernel<<<blocks_for(m * n), 256, 0, st>>>(static_cast<const __nv_bfloat16*>(received),
                                                    g_map, g_weight, g_position,
                                                    y.ptr<__nv_bfloat16>(), m, n, e);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
