// kf/route.cuh: numbering items by a key without a sort, so that every block of a kernel can
// work out where its items go on its own (MoE dispatch and combine, grouping lookups by
// owner rank). A block that must not wait for another block of its rank cannot share a
// prefix sum with it; it recomputes the counts it needs instead, which is cheap where the
// keys (router logits, indices) are small and stay in L2.
//
// - block_scan: a block-wide exclusive scan of one flag per thread (ballots, no atomics).
// - moe_next_expert / moe_chosen: one token's top-k experts in PyTorch's order (larger logit
//   first, equal logits to the lower expert), as "the best expert below the previous
//   pick" and as a membership test; both follow the same total order, so counts made with
//   one and numbers made with the other agree.
// - moe_expert_starts: for every expert, the first position of its (token, expert) pairs
//   of tokens >= t0 in expert-major order, computed by one block over all M tokens.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "schedule.cuh"  // lane_id, warp_id

namespace kf {

// Exclusive scan of f over the block's threads in thread order; *total gets the block's
// count. Every thread of the block calls it (it holds two __syncthreads); wsum holds one
// int per warp (kWarps = blockDim.x / 32) and is free again when it returns.
template <int kWarps>
__device__ __forceinline__ int block_scan(bool f, int* wsum, int* total) {
  const unsigned b = __ballot_sync(0xffffffffu, f);
  const int lane = lane_id(), w = warp_id();
  if (lane == 0) wsum[w] = __popc(b);
  __syncthreads();
  int before = 0, all = 0;
  for (int i = 0; i < kWarps; ++i) {
    const int c = wsum[i];
    before += i < w ? c : 0;
    all += c;
  }
  __syncthreads();  // wsum is free for the next scan
  *total = all;
  return before + __popc(b & ((1u << lane) - 1u));
}

// The expert ranked just below `prev` in row's top-k order (-1: the best of all).
__device__ __forceinline__ int moe_next_expert(const float* row, int e, int prev) {
  const float pl = prev >= 0 ? row[prev] : 0.f;
  int best = -1;
  float bl = 0.f;
  for (int x = 0; x < e; ++x) {
    const float v = row[x];
    const bool below = prev < 0 || v < pl || (v == pl && x > prev);
    if (below && (best < 0 || v > bl)) best = x, bl = v;  // strict >: ties keep the lower
  }
  return best;
}

// Expert x is among the row's topk: fewer than topk experts rank above it.
__device__ __forceinline__ bool moe_chosen(const float* row, int e, int x, int topk) {
  const float v = row[x];
  int above = 0;
  for (int z = 0; z < e && above < topk; ++z) above += row[z] > v || (row[z] == v && z < x);
  return above < topk;
}

// next[x] = the number of (token, expert) pairs with an expert below x, plus those of
// expert x from tokens < t0: where the block owning tokens [t0, ...) numbers expert x's
// pairs from. logits is [m, e]; cnt and next hold e ints each (shared memory). Every
// thread of the block calls it.
__device__ inline void moe_expert_starts(const float* logits, int64_t m, int e, int topk,
                                         int64_t t0, int* cnt, int* next) {
  for (int x = threadIdx.x; x < e; x += blockDim.x) cnt[x] = 0, next[x] = 0;
  __syncthreads();
  for (int64_t base = 0; base < m; base += blockDim.x) {  // uniform trip count
    const int64_t t = base + threadIdx.x;
    const bool valid = t < m;
    int prev = -1;
    for (int k = 0; k < topk; ++k) {
      const int x = valid ? moe_next_expert(logits + t * e, e, prev) : -1;
      prev = x;
      const int key = valid ? 2 * x + (t < t0) : -1;  // one leader per (expert, before t0)
      const unsigned same = __match_any_sync(0xffffffffu, key);
      if (valid && lane_id() == __ffs(same) - 1) {
        atomicAdd(&cnt[x], __popc(same));
        if (t < t0) atomicAdd(&next[x], __popc(same));
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {  // E is small: a serial exclusive scan
    int run = 0;
    for (int x = 0; x < e; ++x) next[x] += run, run += cnt[x];
  }
  __syncthreads();
}

}  // namespace kf
