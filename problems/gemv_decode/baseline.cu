// gemv_decode baseline: what PyTorch runs for
//   local = torch.matmul(x, w.t()) + bias
//   pieces = [empty_like(local)] * world; dist.all_gather(pieces, local)
//   logits = torch.cat(pieces, dim=1)
// one cuBLAS GEMM (bf16 in, fp32 accumulation, bf16 out) into a [T, V] scratch, one
// elementwise kernel adding the bias into a second scratch, one ncclAllGather into a
// [world, T, V] flat buffer, the world device-to-device copies with which ProcessGroupNCCL
// hands the flat buffer's pieces to the list's tensors, and one copy kernel that lays
// the pieces side by side along the vocabulary (torch.cat's copy).
//
// cuBLAS is column-major. A row-major [R, C] matrix is the column-major [C, R] matrix
// (its transpose) with leading dimension C. The row-major local = x @ w^T is, read
// column-major, local^T = w x^T: cuBLAS multiplies w's buffer (H x V, ld H) transposed by
// x's buffer (H x T, ld H) into local's buffer (V x T, ld V).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <nccl.h>

#include <kf/kf.cuh>

namespace {

using bf16 = __nv_bfloat16;

cublasHandle_t g_blas = nullptr;  // one per process, as PyTorch keeps one per device
bf16* g_product = nullptr;        // [T, V]: matmul's output
bf16* g_local = nullptr;          // [T, V]: + bias
bf16* g_flat = nullptr;           // [world, T, V]: what ncclAllGather leaves
bf16* g_pieces = nullptr;         // [world, T, V]: the list's tensors, one after another
int64_t g_t = 0, g_v = 0;

int blocks_for(int64_t n) {
  return static_cast<int>(kf::min64(kf::ceil_div(n, 256), 1024));
}

// local[i][j] = bf16(product[i][j] + bias[j]), in fp32 as PyTorch's add does for bf16.
__global__ void add_bias_kernel(const bf16* product, const bf16* bias, bf16* local, int64_t t,
                                int64_t v) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < t * v;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x)
    local[e] = __float2bfloat16_rn(__bfloat162float(product[e]) + __bfloat162float(bias[e % v]));
}

// logits[i][s*v + j] = pieces[s][i][j].
__global__ void cat_kernel(const bf16* pieces, bf16* logits, int64_t t, int64_t v, int world) {
  const int64_t cols = v * world, total = t * cols;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = e / cols, s = e % cols / v, j = e % v;
    logits[e] = pieces[(s * t + i) * v + j];
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  g_t = t["x"].shape[0];
  g_v = t["w"].shape[0];
  const size_t piece = static_cast<size_t>(g_t * g_v);
  g_product = comm.alloc_array<bf16>(piece);
  g_local = comm.alloc_array<bf16>(piece);
  g_flat = comm.alloc_array<bf16>(piece * static_cast<size_t>(comm.world));
  g_pieces = comm.alloc_array<bf16>(piece * static_cast<size_t>(comm.world));
  if (!g_product || !g_local || !g_flat || !g_pieces) return 1;
  if (!g_blas && cublasCreate(&g_blas) != CUBLAS_STATUS_SUCCESS) return 1;
  return 0;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const kf::Tensor& w = t["w"];
  const int64_t tokens = x.shape[0], h = x.shape[1], v = w.shape[0];
  if (tokens != g_t || v != g_v) return 1;  // not the shapes kf_setup sized the scratch for
  cudaStream_t st = comm.stream();
  if (cublasSetStream(g_blas, st) != CUBLAS_STATUS_SUCCESS) return 1;
  const float one = 1.0f, zero = 0.0f;
  cublasStatus_t s =
      cublasGemmEx(g_blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(v), static_cast<int>(tokens),
                   static_cast<int>(h), &one, w.data, CUDA_R_16BF, static_cast<int>(h), x.data,
                   CUDA_R_16BF, static_cast<int>(h), &zero, g_product, CUDA_R_16BF,
                   static_cast<int>(v), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS) return 1;
  add_bias_kernel<<<blocks_for(tokens * v), 256, 0, st>>>(g_product, t["bias"].ptr<const bf16>(),
                                                          g_local, tokens, v);
  if (cudaGetLastError() != cudaSuccess) return 1;
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  const size_t count = static_cast<size_t>(tokens * v);
  if (ncclAllGather(g_local, g_flat, count, ncclBfloat16, nc, st) != ncclSuccess) return 1;
  for (int r = 0; r < comm.world; ++r)
    if (cudaMemcpyAsync(g_pieces + r * count, g_flat + r * count, count * sizeof(bf16),
                        cudaMemcpyDeviceToDevice, st) != cudaSuccess)
      return 1;
  cat_kernel<<<blocks_for(t["logits"].numel), 256, 0, st>>>(g_pieces, t["logits"].ptr<bf16>(),
                                                            tokens, v, comm.world);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
