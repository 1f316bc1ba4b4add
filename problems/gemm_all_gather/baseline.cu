// gemm_all_gather baseline: what PyTorch runs for
//   piece = torch.matmul(a, b); dist.all_gather(pieces, piece); c = torch.cat(pieces, dim=1)
// one cuBLAS GEMM (bf16 in, fp32 accumulation, bf16 out) into an [M, N/w] scratch, one
// ncclAllGather of it into a [world, M, N/w] scratch, and one copy kernel that lays the
// pieces side by side along the columns (torch.cat's copy).
//
// cuBLAS is column-major. A row-major [R, C] matrix is the column-major [C, R] matrix
// (its transpose) with leading dimension C, so the row-major product P = a @ b is, read
// column-major, P^T = b^T a^T: cuBLAS multiplies b's buffer (N/w x K, ld N/w) by a's
// buffer (K x M, ld K) into P's buffer (N/w x M, ld N/w), with no transposition flags.
#include <cublas_v2.h>
#include <nccl.h>

#include <kf/kf.cuh>

namespace {

cublasHandle_t g_blas = nullptr;  // one per process, as PyTorch keeps one per device
void* g_piece = nullptr;          // [M, N/w] bf16: this rank's product
uint4* g_pieces = nullptr;        // [world, M, N/w] bf16, as all_gather leaves them
int64_t g_m = 0, g_nl = 0;

// c[i][s*nl + j] = pieces[s][i][j], 8 bf16 (16 bytes) at a time: nl is a multiple of 8, so
// a vector never straddles two pieces.
__global__ void cat_kernel(const uint4* pieces, uint4* c, int64_t m, int64_t nl, int world) {
  const int64_t vl = nl / 8, vrow = vl * world, total = m * vrow;
  for (int64_t q = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; q < total;
       q += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = q / vrow, s = q % vrow / vl, j = q % vl;
    c[q] = pieces[(s * m + i) * vl + j];
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  g_m = t["a"].shape[0];
  g_nl = t["b"].shape[1];
  const size_t bytes = static_cast<size_t>(g_m * g_nl) * sizeof(uint16_t);
  g_piece = comm.alloc(bytes);
  g_pieces = static_cast<uint4*>(comm.alloc(bytes * comm.world));
  if (!g_piece || !g_pieces) return 1;
  if (!g_blas && cublasCreate(&g_blas) != CUBLAS_STATUS_SUCCESS) return 1;
  return 0;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& a = t["a"];
  const kf::Tensor& b = t["b"];
  kf::Tensor& c = t["c"];
  const int64_t m = a.shape[0], k = a.shape[1], nl = b.shape[1];
  if (m != g_m || nl != g_nl) return 1;  // not the shapes kf_setup sized the scratch for
  if (cublasSetStream(g_blas, comm.stream()) != CUBLAS_STATUS_SUCCESS) return 1;
  const float one = 1.0f, zero = 0.0f;
  cublasStatus_t s =
      cublasGemmEx(g_blas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(nl), static_cast<int>(m),
                   static_cast<int>(k), &one, b.data, CUDA_R_16BF, static_cast<int>(nl), a.data,
                   CUDA_R_16BF, static_cast<int>(k), &zero, g_piece, CUDA_R_16BF,
                   static_cast<int>(nl), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS) return 1;
  ncclComm_t nc = static_cast<ncclComm_t>(comm.nccl_);
  if (ncclAllGather(g_piece, g_pieces, static_cast<size_t>(m * nl), ncclBfloat16, nc,
                    comm.stream()) != ncclSuccess)
    return 1;
  const int64_t vectors = c.numel / 8;
  const int blocks = static_cast<int>(kf::min64(kf::ceil_div(vectors, 256), 1024));
  cat_kernel<<<blocks, 256, 0, comm.stream()>>>(g_pieces, c.ptr<uint4>(), m, nl, comm.world);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
