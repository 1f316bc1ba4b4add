// kf/tma.cuh: TMA bulk copies (cp.async.bulk, sm_90) between this block's shared memory
// and any global memory, a peer's included, with the mbarrier that tracks them.
//
// Cost model (PK paper, H100): TMA reaches ~350 GB/s over NVLink with only ~15 SMs and
// saturates with 2 KB messages; one thread issues a whole copy, so the other warps stay
// free for compute (the producer/communicator warps of kf/schedule.cuh). Rules: both
// addresses 16-byte aligned, size a multiple of 16 bytes; smem must not be overwritten
// until the store has read it (tma_wait_read), and the data is at the destination only
// after tma_wait (then fence + signal, see tma_flush_for_peers).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kf {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarrier (shared-memory barrier with a transaction count) ------------------------
// One thread: init with the number of arrivals per phase, then make the init visible to
// the async proxy before any TMA uses it.
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(arrivals)
               : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// Arrive and announce that `bytes` more will land through TMA in this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}
// Plain arrive (a consumer releasing a buffer back to the producer, say).
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
// Wait until the phase with parity `phase` (0, 1, 0, ...) has completed.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t phase) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(phase)
        : "memory");
  }
}

// ---- bulk copies ---------------------------------------------------------------------
// global (local or peer) -> shared; completes on `bar` (which must expect the bytes).
__device__ __forceinline__ void tma_load(void* smem, const void* gmem, uint32_t bytes,
                                         uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(smem_addr(smem)),
      "l"(gmem), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}
// shared -> global (local or peer). Group stores with tma_commit, then wait.
__device__ __forceinline__ void tma_store(void* gmem, const void* smem, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem),
               "r"(smem_addr(smem)), "r"(bytes)
               : "memory");
}
// shared -> global with an add at the destination (fp32): a push-style reduce-scatter.
__device__ __forceinline__ void tma_store_add(float* gmem, const float* smem, uint32_t bytes) {
  asm volatile(
      "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(gmem),
      "r"(smem_addr(smem)), "r"(bytes)
      : "memory");
}
__device__ __forceinline__ void tma_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// All committed stores are complete (written at the destination).
__device__ __forceinline__ void tma_wait() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
// At most N committed groups still read their shared source (the rest may be reused).
template <int N>
__device__ __forceinline__ void tma_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// Generic-proxy writes to shared memory (ordinary stores) before a TMA store reads them.
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// After tma_wait: order the async-proxy writes before a following signal (kf::signal).
__device__ __forceinline__ void tma_flush_for_peers() {
  tma_wait();
  asm volatile("fence.proxy.async.global;" ::: "memory");
  __threadfence_system();
}

}  // namespace kf
