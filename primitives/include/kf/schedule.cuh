// kf/schedule.cuh: how to overlap compute and communication inside one kernel.
//
// Intra-SM (warp specialization): inside each block, some warps compute and one warp
// (or one thread of it) communicates; they hand tiles over through shared memory and an
// mbarrier (~64 ns). Use it when a tile's result goes to a peer right after it is
// computed (GEMM + reduce-scatter: PK 1.2x over inter-SM) and registers are not the
// limit. sm_90a adds setmaxnreg (reg_alloc / reg_dealloc) to move registers from the
// communicating warps to the computing ones.
//
// Inter-SM (dedicated communication blocks): the last `comm` blocks of the grid only
// communicate; compute blocks publish tiles with a flag in global memory (~832 ns
// across SMs through HBM). Use it when communication needs many threads or must wait on
// peers (all-reduce after GEMM: PK 3.62x; all-gather before GEMM: 1.57x). The grid must
// be co-resident (every block running at once), or a compute block may wait on a
// communication block that never gets an SM: size it with max_coresident_blocks.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "signal.cuh"

namespace kf {

// ---- intra-SM -------------------------------------------------------------------------
__device__ __forceinline__ int warp_id() {
  return static_cast<int>(threadIdx.x) / 32;
}
__device__ __forceinline__ int lane_id() {
  return static_cast<int>(threadIdx.x) % 32;
}

// Warp roles of a block of kWarps warps: the last kCommWarps communicate.
template <int kWarps, int kCommWarps>
struct WarpRoles {
  static_assert(kCommWarps > 0 && kCommWarps < kWarps, "need compute and comm warps");
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kComputeWarps = kWarps - kCommWarps;
  static constexpr int kComputeThreads = kComputeWarps * 32;
  __device__ static bool is_comm() { return warp_id() >= kComputeWarps; }
  __device__ static int comm_warp() { return warp_id() - kComputeWarps; }
};

// Named barriers (ids 1..15; 0 is __syncthreads) among a subset of the block's threads:
// the compute warps sync among themselves without stalling the communicator.
__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// sm_90a only (compile with -gencode=arch=compute_90a,code=sm_90a): per-warpgroup
// register budget; every warp of the warpgroup must call it, and the kernel needs
// __launch_bounds__(threads, 1) or ptxas ignores setmaxnreg (C7508).
template <int kRegs>
__device__ __forceinline__ void reg_alloc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void reg_dealloc() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}
#endif

// ---- inter-SM -------------------------------------------------------------------------
// A grid of `compute` blocks followed by `comm` communication blocks.
struct BlockSplit {
  int compute;
  int comm;
  __host__ __device__ int total() const { return compute + comm; }
  __device__ bool is_comm() const { return static_cast<int>(blockIdx.x) >= compute; }
  __device__ int comm_index() const { return static_cast<int>(blockIdx.x) - compute; }
};

// Inside one GPU: a compute block publishes "tile i is written" and a communication
// block waits for it. GPU scope (cheaper than system scope); epochs as in signal.cuh.
__device__ __forceinline__ void tile_ready(uint32_t* flag, uint32_t epoch) {
  __threadfence();
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(epoch) : "memory");
}
// (With the KF_WAIT_TIMEOUT_NS deadline; the message names `tile` as the slot.)
__device__ __forceinline__ void wait_tile(const uint32_t* flag, uint32_t epoch, int rank,
                                          int tile) {
  wait_flag<true>(flag, epoch, rank, tile, rank);
}

// Host: how many blocks of `kernel` (with `threads` threads and `smem` dynamic shared
// bytes) can run at once on this device; a grid above it is not co-resident.
template <class Kernel>
inline int max_coresident_blocks(Kernel kernel, int threads, size_t smem) {
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) return 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem) != cudaSuccess)
    return 0;
  return sms * per_sm;
}

}  // namespace kf
