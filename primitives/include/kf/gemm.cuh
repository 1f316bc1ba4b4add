// kf/gemm.cuh: a block-level bf16 tensor-core GEMM tile for fused GEMM + collective
// kernels (sm_80+ wmma, cp.async), and the 16-byte async copy it is built on.
//
// One block of TileGemm<...>::kThreads threads accumulates a BM x BN tile of A @ B, A and
// B row-major bf16 anywhere in global memory (a peer's copy included), in fp32
// fragments, over any k range; then stage_f32 puts the tile in shared memory for an
// epilogue that converts it and sends it where it belongs (our output, a peer's buffer
// through kf::tma_store, ...). Splitting k into pieces (several mma calls on one tile)
// is how an all-gather + GEMM consumes the shards as they arrive.
//
// Rules: every row of A and B starts on 16 bytes (lda, ldb and the k offsets multiples
// of 8 elements), the k extent is a multiple of 8 and the tile's valid columns are a
// multiple of 8 (copies move 8 bf16 at a time); rows, columns and k beyond the valid
// range read as zero, so edge tiles need no special case. Every member is a block-wide
// call (all threads, no divergence) that synchronizes the block as it needs.
//
// Cost: wmma lowers to the same mma.sync tensor-core instructions as hand-written
// fragments; expect well under the wgmma peak of sm_90a (a TMA + wgmma pipeline is what
// cuBLAS runs) but enough to hide NVLink behind compute when K is large (PK's per-tile
// condition K >= s*R / (2B), docs/schedule.md).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstddef>
#include <cstdint>

#include "tma.cuh"  // smem_addr

namespace kf {

// ---- 16-byte asynchronous copies, global -> shared (cp.async, L2 only) -------------------
// Copies 16 bytes, or writes 16 zero bytes when !valid (gmem is then not read, but must
// still be a mapped address: pass the tensor's base).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(smem)), "l"(gmem),
               "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
// Wait until at most N committed groups of this thread are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// Eight floats rounded to bf16 (nearest even) in one 16-byte vector.
__device__ __forceinline__ uint4 pack_bf16x8(const float* f) {
  uint4 v;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) h[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
  return v;
}

// A BM x BN output tile computed by WM x WN warps (each a (BM/WM) x (BN/WN) piece of
// 16 x 16 fragments), k in steps of BK through a STAGES-deep cp.async pipeline.
template <int BM, int BN, int BK, int WM, int WN, int STAGES>
struct TileGemm {
  static constexpr int kThreads = WM * WN * 32;
  static constexpr int kFragM = BM / WM / 16;
  static constexpr int kFragN = BN / WN / 16;
  // Padded shared rows (+16 bytes): fragment rows fall in different banks, and every
  // fragment start stays on the 32 bytes wmma requires.
  static constexpr int kLdA = BK + 8;
  static constexpr int kLdB = BN + 8;
  static constexpr int kLdC = BN + 4;  // floats
  static constexpr int kStageElems = BM * kLdA + BK * kLdB;
  static constexpr size_t kPipeBytes = size_t(STAGES) * kStageElems * 2;
  static constexpr size_t kCBytes = size_t(BM) * kLdC * 4;
  // Shared memory one tile needs (the pipeline, reused for the fp32 tile), 128-aligned.
  static constexpr size_t kSmemBytes =
      ((kPipeBytes > kCBytes ? kPipeBytes : kCBytes) + 127) / 128 * 128;
  static_assert(BM % (16 * WM) == 0 && BN % (16 * WN) == 0, "warps must tile BM x BN by 16 x 16");
  static_assert(BK % 16 == 0 && STAGES >= 2, "BK a multiple of 16, at least 2 stages");

  using FragA = nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, __nv_bfloat16,
                                       nvcuda::wmma::row_major>;
  using FragB = nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, __nv_bfloat16,
                                       nvcuda::wmma::row_major>;
  using FragC = nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float>;

  FragC acc[kFragM][kFragN];

  __device__ __forceinline__ void zero() {
#pragma unroll
    for (int i = 0; i < kFragM; ++i)
#pragma unroll
      for (int j = 0; j < kFragN; ++j) nvcuda::wmma::fill_fragment(acc[i][j], 0.0f);
  }

  // acc += A[0:rows, 0:kext] @ B[0:kext, 0:cols]. A points at the tile's first row and
  // first k (lda elements per row), B at the first k row and the tile's first column.
  // smem: kSmemBytes, 128-aligned.
  __device__ __forceinline__ void mma(char* smem, const __nv_bfloat16* A, int64_t lda,
                                      const __nv_bfloat16* B, int64_t ldb, int rows, int cols,
                                      int64_t kext) {
    __nv_bfloat16* s = reinterpret_cast<__nv_bfloat16*>(smem);
    const int nk = static_cast<int>((kext + BK - 1) / BK);
    __syncthreads();  // the caller's last use of smem (an epilogue) is over
#pragma unroll
    for (int st = 0; st < STAGES - 1; ++st) {
      if (st < nk) load(s + st * kStageElems, A, lda, B, ldb, rows, cols, kext, st);
      cp_async_commit();  // empty groups keep the count of groups per stage fixed
    }
    for (int kt = 0; kt < nk; ++kt) {
      cp_async_wait<STAGES - 2>();  // stage kt has landed (for this thread) ...
      __syncthreads();              // ... for every thread; and stage kt-1 is read
      const int next = kt + STAGES - 1;
      if (next < nk)
        load(s + (next % STAGES) * kStageElems, A, lda, B, ldb, rows, cols, kext, next);
      cp_async_commit();
      compute(s + (kt % STAGES) * kStageElems);
    }
    cp_async_wait<0>();
  }

  // The tile as fp32 in smem, row-major with kLdC floats per row; valid for the whole
  // block when this returns, until the next mma call.
  __device__ __forceinline__ float* stage_f32(char* smem) {
    float* c = reinterpret_cast<float*>(smem);
    __syncthreads();  // every warp is done reading the pipeline's last stage
    const int warp = threadIdx.x / 32, wm = warp / WN, wn = warp % WN;
#pragma unroll
    for (int i = 0; i < kFragM; ++i)
#pragma unroll
      for (int j = 0; j < kFragN; ++j)
        nvcuda::wmma::store_matrix_sync(c + (wm * kFragM + i) * 16 * kLdC + (wn * kFragN + j) * 16,
                                        acc[i][j], kLdC, nvcuda::wmma::mem_row_major);
    __syncthreads();
    return c;
  }

 private:
  // One stage: BM x BK of A and BK x BN of B, in 16-byte chunks spread over the block.
  __device__ __forceinline__ void load(__nv_bfloat16* st, const __nv_bfloat16* A, int64_t lda,
                                       const __nv_bfloat16* B, int64_t ldb, int rows, int cols,
                                       int64_t kext, int kt) const {
    __nv_bfloat16* sa = st;
    __nv_bfloat16* sb = st + BM * kLdA;
    const int64_t k0 = static_cast<int64_t>(kt) * BK;
    for (int c = threadIdx.x; c < BM * BK / 8; c += kThreads) {
      const int r = c / (BK / 8), kc = c % (BK / 8) * 8;
      const bool ok = r < rows && k0 + kc < kext;
      cp_async16(sa + r * kLdA + kc, ok ? A + r * lda + k0 + kc : A, ok);
    }
    for (int c = threadIdx.x; c < BK * BN / 8; c += kThreads) {
      const int kr = c / (BN / 8), nc = c % (BN / 8) * 8;
      const bool ok = k0 + kr < kext && nc < cols;
      cp_async16(sb + kr * kLdB + nc, ok ? B + (k0 + kr) * ldb + nc : B, ok);
    }
  }

  __device__ __forceinline__ void compute(const __nv_bfloat16* st) {
    const __nv_bfloat16* sa = st;
    const __nv_bfloat16* sb = st + BM * kLdA;
    const int warp = threadIdx.x / 32, wm = warp / WN, wn = warp % WN;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      FragA fa[kFragM];
      FragB fb[kFragN];
#pragma unroll
      for (int i = 0; i < kFragM; ++i)
        nvcuda::wmma::load_matrix_sync(fa[i], sa + (wm * kFragM + i) * 16 * kLdA + kk, kLdA);
#pragma unroll
      for (int j = 0; j < kFragN; ++j)
        nvcuda::wmma::load_matrix_sync(fb[j], sb + kk * kLdB + (wn * kFragN + j) * 16, kLdB);
#pragma unroll
      for (int i = 0; i < kFragM; ++i)
#pragma unroll
        for (int j = 0; j < kFragN; ++j) nvcuda::wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
  }
};

// Writes rows x cols (cols a multiple of 8) of an fp32 tile in smem (ldc floats per row)
// to a row-major bf16 matrix (ldd elements per row, 16-byte aligned rows), 16 bytes per
// store: our output, or a peer's (the stores are posted over NVLink). Whole block.
__device__ __forceinline__ void store_tile_bf16(__nv_bfloat16* dst, int64_t ldd, const float* c,
                                                int ldc, int rows, int cols) {
  const int chunks = cols / 8;
  for (int q = threadIdx.x; q < rows * chunks; q += blockDim.x) {
    const int r = q / chunks, cc = q % chunks * 8;
    *reinterpret_cast<uint4*>(dst + r * ldd + cc) = pack_bf16x8(c + r * ldc + cc);
  }
}

}  // namespace kf
