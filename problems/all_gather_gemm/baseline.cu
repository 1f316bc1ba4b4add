// all_gather_gemm baseline: what PyTorch runs for
//   pieces = all_gather(a); A = torch.cat(pieces, dim=1); c = torch.matmul(A, b)
// one ncclAllGather of a into a [world, M, K/world] scratch, one copy kernel that lays
// the pieces side by side along k (torch.cat's copy), and one cuBLAS GEMM (bf16 in, fp32
// accumulation, bf16 out).
//
// cuBLAS is column-major. A row-major [R, C] matrix is the column-major [C, R] matrix
// (its transpose) with leading dimension C, so the row-major product c = A @ b is, read
// column-major, c^T = b^T A^T: cuBLAS multiplies b's buffer (N x K, ld N) by A's buffer
// (K x M, ld K) into c's buffer (N x M, ld N), with no transposition flags.
#include <cublas_v2.h>
#include <nccl.h>

#include <kf/kf.cuh>

namespace {

cublasHandle_t g_blas = nullptr;  // one per process, as PyTorch keeps one per device
uint4* g_pieces = nullptr;        // [world, M, K/world] bf16, as all_gather leaves them
uint4* g_full = nullptr;          // [M, K] bf16, torch.cat(pieces, dim=1)
int64_t g_m = 0, g_k = 0;

// full[i][s*kl + k] = pieces[s][i][k], 8 bf16 (16 bytes) at a time: kl is a multiple of 8,
// so a vector never straddles two pieces.
__global__ void cat_kernel(const uint4* pieces, uint4* full, int64_t m, int64_t kl, int world) {
  const int64_t vk = kl / 8, vrow = vk * world, total = m * vrow;
  for (int64_t q = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; q < total;
       q += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = q / vrow, s = q % vrow / vk, k = q % vk;
    full[q] = pieces[(s * m + i) * vk + k];
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  g_m = t["a"].shape[0];
  g_k = t["b"].shape[0];
  const size_t bytes = static_cast<size_t>(g_m * g_k) * sizeof(uint16_t);
  g_pieces = static_cast<uint4*>(comm.alloc(bytes));
  g_full = static_cast<uint4*>(comm.alloc(bytes));
  if (!g_pieces || !g_full) return 1;
  if (!g_blas && cublasCreate(&g_blas) != CUBLAS_STATUS_SUCCESS) return 1;
  return 0;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& a = t["a"];
  const kf::Tensor& b = t["b"];
  kf::Tensor& c = t["c"];
  const int64_t m = a.shape[0], kl = a.shape[1], k = b.shape[0], n = b.shape[1];
  if (m != g_m || k != g_k) return 1;  // not the shapes kf_setup sized the scratch for
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  if (ncclAllGather(a.data, g_pieces, static_cast<size_t>(a.numel), ncclBfloat16, nc,
                    comm.stream()) != ncclSuccess)
    return 1;
  const int64_t vectors = m * k / 8;
  const int blocks = static_cast<int>(kf::min64(kf::ceil_div(vectors, 256), 1024));
  cat_kernel<<<blocks, 256, 0, comm.stream()>>>(g_pieces, g_full, m, kl, comm.world);
  if (cudaGetLastError() != cudaSuccess) return 1;
  if (cublasSetStream(g_blas, comm.stream()) != CUBLAS_STATUS_SUCCESS) return 1;
  const float one = 1.0f, zero = 0.0f;
  cublasStatus_t s =
      cublasGemmEx(g_blas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                   static_cast<int>(k), &one, b.data, CUDA_R_16BF, static_cast<int>(n), g_full,
                   CUDA_R_16BF, static_cast<int>(k), &zero, c.data, CUDA_R_16BF,
                   static_cast<int>(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  return s == CUBLAS_STATUS_SUCCESS ? 0 : 1;
}
