// kf/signal.cuh: flags between ranks: signal, signal_all, wait, barrier.
//
// Model. A SignalSet is `slots * world` 32-bit words in the symmetric heap. Word
// (slot, src) on rank r is written only by rank src (one writer per word: no data race,
// the vLLM #2760 lesson) and read only by rank r. A signal stores a value with release
// semantics at system scope into the peer's word; a wait spins on the local word with
// acquire loads until it holds at least the expected value. Values are call epochs
// (a host counter incremented per kf_run), compared wrap-safely with >=: a flag never
// needs a reset, a stale flag from an earlier call is always smaller, and a peer that
// is already one call ahead satisfies the wait too (it can only be there after it
// passed this call's barrier).
//
// Deadline. Every wait reads %globaltimer and, after KF_WAIT_TIMEOUT_NS (default 5 s;
// define it to 0 before including kf to disable), prints one line naming the rank, the
// slot, the peer, the address and the expected and seen values, then __trap()s: the
// host sees "unspecified launch failure" at its next synchronize instead of a hang.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "abi.h"

#ifndef KF_WAIT_TIMEOUT_NS
#define KF_WAIT_TIMEOUT_NS 5000000000ull
#endif

namespace kf {

// ---- memory-model building blocks -------------------------------------------------
__device__ __forceinline__ void st_release_sys(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ uint32_t ld_acquire_sys(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t ld_acquire_gpu(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t ld_relaxed_sys(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// Atomic add with release: for counters that several writers bump (then one word has
// many writers, which is fine for atomics; wait for `count * epoch`).
__device__ __forceinline__ void red_add_release_sys(uint32_t* p, uint32_t v) {
  asm volatile("red.release.sys.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// Wrap-safe "seen >= want" for 32-bit epochs.
__host__ __device__ __forceinline__ bool reached(uint32_t seen, uint32_t want) {
  return static_cast<int32_t>(seen - want) >= 0;
}

namespace detail {
static __device__ unsigned int g_timeout_reported;  // one line per process, not per thread
}

// Spin until *flag >= want (acquire at system scope; kGpu: at GPU scope, for flags
// between blocks of one GPU). rank/slot/src only label the timeout message.
template <bool kGpu = false>
__device__ __forceinline__ void wait_flag(const uint32_t* flag, uint32_t want, int rank, int slot,
                                          int src) {
  uint32_t seen = kGpu ? ld_acquire_gpu(flag) : ld_acquire_sys(flag);
  if (reached(seen, want)) return;
  const uint64_t t0 = globaltimer();
  for (uint32_t it = 1;; ++it) {
    seen = kGpu ? ld_acquire_gpu(flag) : ld_acquire_sys(flag);
    if (reached(seen, want)) return;
    if (it > 64) __nanosleep(64);
    if (KF_WAIT_TIMEOUT_NS != 0 && (it & 255u) == 0 &&
        globaltimer() - t0 > static_cast<uint64_t>(KF_WAIT_TIMEOUT_NS)) {
      if (atomicExch(&detail::g_timeout_reported, 1u) == 0u)
        printf(
            "kf: rank %d timed out after %llu ms waiting for signal slot %d from rank %d "
            "at %p: expected >= %u, seen %u (block %d, thread %d)\n",
            rank, static_cast<unsigned long long>(KF_WAIT_TIMEOUT_NS / 1000000ull), slot, src,
            static_cast<const void*>(flag), want, seen, static_cast<int>(blockIdx.x),
            static_cast<int>(threadIdx.x));
      __trap();
    }
  }
}

// ---- the signal set ----------------------------------------------------------------
// By value into kernels (about 540 bytes of parameters).
struct SignalSet {
  uint32_t* local;       // this rank's words
  Peers<uint32_t> peer;  // peer[r]: rank r's words (peer[rank] == local)
  int32_t rank;
  int32_t world;
  int32_t slots;

  __host__ __device__ __forceinline__ uint32_t* word(int r, int slot, int src) const {
    return peer.ptr[r] + static_cast<size_t>(slot) * world + src;
  }
};

// Setup only (collective, zeroed): `slots` slots of `world` words each. Returns a set
// with local == nullptr when the workspace is exhausted.
inline SignalSet make_signals(Comm& comm, int slots) {
  SignalSet s{};
  s.rank = comm.rank;
  s.world = comm.world;
  s.slots = slots;
  s.local = comm.signals(static_cast<size_t>(slots) * comm.world);
  if (s.local) s.peer = peers(comm, s.local);
  return s;
}

// One thread: make this thread's earlier writes (and, after a __syncthreads, its
// block's) visible system-wide, then set word (slot, my rank) on rank dst to value.
__device__ __forceinline__ void signal(const SignalSet& s, int dst, int slot, uint32_t value) {
  __threadfence_system();
  st_release_sys(s.word(dst, slot, s.rank), value);
}
// One thread: signal every rank (itself included).
__device__ __forceinline__ void signal_all(const SignalSet& s, int slot, uint32_t value) {
  __threadfence_system();
  for (int r = 0; r < s.world; ++r) st_release_sys(s.word(r, slot, s.rank), value);
}
// One thread: wait until rank src has signalled `value` (or later) in `slot`.
__device__ __forceinline__ void wait(const SignalSet& s, int src, int slot, uint32_t value) {
  wait_flag(s.word(s.rank, slot, src), value, s.rank, slot, src);
}
// One thread: wait for every rank in `slot`.
__device__ __forceinline__ void wait_all(const SignalSet& s, int slot, uint32_t value) {
  for (int r = 0; r < s.world; ++r) wait(s, r, slot, value);
}

// Whole block: every rank's block that uses the same slot has arrived. Thread t handles
// ranks t, t + blockDim.x, ...: it signals them, then waits for them; the block's writes
// before the barrier are visible to every peer after it, and the peers' writes before
// theirs are visible to this block after it. Use one slot per block (slot_base +
// blockIdx.x) so that blocks never wait for one another inside a rank.
__device__ __forceinline__ void barrier(const SignalSet& s, int slot, uint32_t value) {
  __syncthreads();
  for (int r = threadIdx.x; r < s.world; r += blockDim.x) signal(s, r, slot, value);
  for (int r = threadIdx.x; r < s.world; r += blockDim.x) wait(s, r, slot, value);
  __threadfence_system();
  __syncthreads();
}

// A one-block barrier kernel, for host code that orders copy-engine transfers (or any
// other stream work) with the peers: launch_barrier(s, slot, epoch, stream).
template <int kThreads = 64>
__global__ void __launch_bounds__(kThreads) barrier_kernel(SignalSet s, int slot, uint32_t value) {
  barrier(s, slot, value);
}
inline cudaError_t launch_barrier(const SignalSet& s, int slot, uint32_t value, cudaStream_t st) {
  barrier_kernel<64><<<1, 64, 0, st>>>(s, slot, value);
  return cudaGetLastError();
}

// The host's per-call epoch: call once per kf_run and pass the value to every kernel of
// that call. Starts at 1, so zeroed signal words are always "not yet". Internal linkage
// on purpose: a static local of an ordinary inline function is one process-wide
// (STB_GNU_UNIQUE) object shared by every library that includes this header, so two
// libraries loaded in one process would advance each other's epochs.
namespace {
inline uint32_t next_epoch() {
  static uint64_t epoch = 0;
  return static_cast<uint32_t>(++epoch);
}
}  // namespace

}  // namespace kf
