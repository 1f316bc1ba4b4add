// kf/transfer.cuh: register-level transfers: 16-byte loads and stores to any UVA pointer
// (local or a peer's, from comm.peer), and copy / reduce loops built on them.
//
// Cost model (PK paper, H100): register ops reach ~343 GB/s over NVLink but need ~76 SMs
// to get there; they cost no setup and no shared memory, so they win for small and
// medium messages and whenever the data is already in registers (a fused epilogue).
// Remote stores are posted (fire and forget); remote loads wait a full NVLink round
// trip, so keep many in flight (unroll) or prefer pushing (store to the peer) over
// pulling (load from the peer) when either works.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "abi.h"
#include "partition.h"

namespace kf {

// ---- 16-byte accesses ------------------------------------------------------------
// Plain (weak) 16-byte load: data written before a barrier that this thread passed.
__device__ __forceinline__ uint4 ld16(const void* p) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}
// Streaming load that skips L1: for inputs read once (a peer's input, say).
__device__ __forceinline__ uint4 ld16_stream(const void* p) {
  uint4 v;
  asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}
__device__ __forceinline__ void st16(void* p, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w)
               : "memory");
}

// ---- element types -----------------------------------------------------------------
// Elem<T>: how many T fit a 16-byte vector, and how to sum them in fp32.
template <class T>
struct Elem;
template <>
struct Elem<float> {
  static constexpr int kPerVec = 4;
  __device__ static float to_f(float v) { return v; }
  __device__ static float from_f(float v) { return v; }
};
template <>
struct Elem<__nv_bfloat16> {
  static constexpr int kPerVec = 8;
  __device__ static float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 from_f(float v) { return __float2bfloat16_rn(v); }
};

// Acc<T>: an fp32 accumulator for one 16-byte vector of T.
template <class T>
struct Acc {
  float v[Elem<T>::kPerVec];
  __device__ __forceinline__ void zero() {
#pragma unroll
    for (int i = 0; i < Elem<T>::kPerVec; ++i) v[i] = 0.f;
  }
  __device__ __forceinline__ void add(uint4 raw) {
    const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int i = 0; i < Elem<T>::kPerVec; ++i) v[i] += Elem<T>::to_f(e[i]);
  }
  __device__ __forceinline__ uint4 pack() const {
    uint4 raw;
    T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int i = 0; i < Elem<T>::kPerVec; ++i) e[i] = Elem<T>::from_f(v[i]);
    return raw;
  }
};

// ---- loops (every thread of the grid calls them; tid/nthreads span the grid) ------------
// dst[i] = src[i] for i < n. 16-byte vectors when dst and src share their offset within
// 16 bytes (after peeling a scalar head), scalars otherwise.
template <class T>
__device__ __forceinline__ void copy(T* dst, const T* src, int64_t n, int64_t tid,
                                     int64_t nthreads) {
  const int64_t head =
      co_aligned16(dst, src) ? head_elems(reinterpret_cast<uintptr_t>(dst), sizeof(T), n) : n;
  constexpr int V = 16 / sizeof(T);
  const int64_t nvec = (n - head) / V;
  const uint4* s4 = reinterpret_cast<const uint4*>(src + head);
  uint4* d4 = reinterpret_cast<uint4*>(dst + head);
  for (int64_t i = tid; i < nvec; i += nthreads) st16(d4 + i, ld16_stream(s4 + i));
  for (int64_t i = tid; i < head; i += nthreads) dst[i] = src[i];
  for (int64_t i = head + nvec * V + tid; i < n; i += nthreads) dst[i] = src[i];
}

// One load, several stores: dst[d][dst_off + i] = src[i] for every d < ndst, i < n (a
// push-style all-gather or broadcast: read the data once, write it to every rank).
// `vec`: src and every dst[d] + dst_off share one offset within 16 bytes.
template <class T>
__device__ __forceinline__ void copy_push(const Peers<T>& dst, int ndst, int64_t dst_off,
                                          const T* src, int64_t n, bool vec, int64_t tid,
                                          int64_t nthreads) {
  constexpr int V = 16 / sizeof(T);
  const int64_t head = vec ? head_elems(reinterpret_cast<uintptr_t>(src), sizeof(T), n) : n;
  const int64_t nvec = (n - head) / V;
  for (int64_t i = tid; i < nvec; i += nthreads) {
    const uint4 v = ld16_stream(src + head + i * V);
    for (int d = 0; d < ndst; ++d) st16(dst[d] + dst_off + head + i * V, v);
  }
  for (int64_t i = tid; i < head; i += nthreads)
    for (int d = 0; d < ndst; ++d) dst[d][dst_off + i] = src[i];
  for (int64_t i = head + nvec * V + tid; i < n; i += nthreads)
    for (int d = 0; d < ndst; ++d) dst[d][dst_off + i] = src[i];
}

namespace detail {
// The reduction loop; `store(i, vec)` and `store(i, elem)` write element offset i.
template <class T, class Store>
__device__ __forceinline__ void reduce_loop(const Peers<const T>& src, int nsrc, int64_t src_off,
                                            int64_t n, bool vec, Store store, int64_t tid,
                                            int64_t nthreads) {
  constexpr int V = 16 / sizeof(T);
  const int64_t head =
      vec ? head_elems(reinterpret_cast<uintptr_t>(src[0] + src_off), sizeof(T), n) : n;
  const int64_t nvec = (n - head) / V;
  for (int64_t i = tid; i < nvec; i += nthreads) {
    Acc<T> acc;
    acc.zero();
    const int64_t e = src_off + head + i * V;
    for (int s = 0; s < nsrc; ++s) acc.add(ld16_stream(src[s] + e));
    store(head + i * V, acc.pack());
  }
  auto scalar = [&](int64_t i) {
    float a = 0.f;
    for (int s = 0; s < nsrc; ++s) a += Elem<T>::to_f(src[s][src_off + i]);
    store(i, Elem<T>::from_f(a));
  };
  for (int64_t i = tid; i < head; i += nthreads) scalar(i);
  for (int64_t i = head + nvec * V + tid; i < n; i += nthreads) scalar(i);
}
template <class T>
struct StoreOne {
  T* dst;
  __device__ void operator()(int64_t i, uint4 v) const { st16(dst + i, v); }
  __device__ void operator()(int64_t i, T v) const { dst[i] = v; }
};
template <class T>
struct StoreAll {
  const Peers<T>& dst;
  int ndst;
  int64_t off;
  __device__ void operator()(int64_t i, uint4 v) const {
    for (int d = 0; d < ndst; ++d) st16(dst[d] + off + i, v);
  }
  __device__ void operator()(int64_t i, T v) const {
    for (int d = 0; d < ndst; ++d) dst[d][off + i] = v;
  }
};
}  // namespace detail

// dst[i] = sum over s < nsrc of src[s][src_off + i], for i < n, summed in fp32 in the
// order s = 0, 1, ... (every rank that computes an element gets the same bits).
// `vec`: dst and every src[s] + src_off share one offset within 16 bytes (check on the
// host with co_aligned16); otherwise the scalar path runs.
template <class T>
__device__ __forceinline__ void reduce(T* dst, const Peers<const T>& src, int nsrc, int64_t src_off,
                                       int64_t n, bool vec, int64_t tid, int64_t nthreads) {
  detail::reduce_loop<T>(src, nsrc, src_off, n, vec, detail::StoreOne<T>{dst}, tid, nthreads);
}
// The same, the result stored to dst[d][dst_off + i] for every d < ndst: the reduce and
// the all-gather halves of a two-shot all-reduce in one pass.
template <class T>
__device__ __forceinline__ void reduce_push(const Peers<T>& dst, int ndst, int64_t dst_off,
                                            const Peers<const T>& src, int nsrc, int64_t src_off,
                                            int64_t n, bool vec, int64_t tid, int64_t nthreads) {
  detail::reduce_loop<T>(src, nsrc, src_off, n, vec, detail::StoreAll<T>{dst, ndst, dst_off}, tid,
                         nthreads);
}

// Host: true when every rank's copy of a and b (and a, b themselves) start on 16 bytes.
template <class A, class B>
inline bool all_aligned16(const Peers<A>& a, const Peers<B>& b, int world) {
  for (int r = 0; r < world; ++r)
    if (!aligned16(a[r]) || !aligned16(b[r])) return false;
  return true;
}

// Grid-wide thread index and count for the loops above.
__device__ __forceinline__ int64_t grid_tid() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_threads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace kf
