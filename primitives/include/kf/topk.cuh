// kf/topk.cuh: top-k across ranks, one warp per row.
//
// A row of n values is split over the ranks (vocab parallel). The k largest of the whole
// row, ties with the k-th included, need from each rank only a record of its shard: its
// min(k, shard) largest values, the smallest of them h, and how many of its other entries
// equal h (ties are kept, so they count). Every rank that merges the same records in the
// same (rank) order computes the same threshold bits, with no further exchange.
//
// Why a record suffices: let H be the row's k-th largest. A shard whose h < H sent every
// entry > h, so all of its entries >= H; one whose h == H sent k entries >= H; h > H
// cannot happen. So H is also the k-th largest of the union of the sent values, and the
// entries >= H are the sent values >= H plus the ties of every shard with h == H.
//
// Values are ordered through 32-bit keys (topk_key): the k-th largest is a bitwise radix
// select, 32 rounds of one warp-wide count each; no sort, no shared memory, any k <= n.
// A warp reads its values through WarpKeys: the first 32 * R from registers, the rest
// re-read with the loader each round (fine for shards of a few thousand).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kf {

namespace topk_detail {
constexpr unsigned kFull = 0xffffffffu;
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;  // the butterfly adds commutatively: every lane holds the same bits
}
__device__ __forceinline__ unsigned lane_id() {
  return threadIdx.x % 32;
}
}  // namespace topk_detail

// Order-preserving key of a float: a < b exactly when topk_key(a) < topk_key(b); -0 maps
// to +0's key (they compare equal). NaN is not a value here.
__device__ __forceinline__ uint32_t topk_key(float v) {
  uint32_t b = __float_as_uint(v);
  if (b == 0x80000000u) b = 0;
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float topk_value(uint32_t key) {
  return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}

// The n values a warp reads through load(i) (float), as keys. each(f) visits them in
// rounds: in round j, lane l gets element 32 j + l, f(key, ok, index) with ok false past
// n. Every lane runs every round, so f may use warp collectives (ballot, shuffles).
template <int R, class Load>
struct WarpKeys {
  static_assert(R >= 1, "WarpKeys keeps at least one round in registers");
  Load load;
  int64_t n;
  uint32_t cache[R];  // rounds < R

  __device__ WarpKeys(Load l, int64_t count) : load(l), n(count) {
    const unsigned lane = topk_detail::lane_id();
#pragma unroll
    for (int j = 0; j < R; ++j) {
      const int64_t i = 32 * j + lane;
      cache[j] = i < n ? topk_key(load(i)) : 0u;
    }
  }

  template <class F>
  __device__ __forceinline__ void each(F f) const {
    const unsigned lane = topk_detail::lane_id();
#pragma unroll
    for (int j = 0; j < R; ++j)
      if (32 * j < n) f(cache[j], 32 * j + lane < n, 32 * j + lane);  // warp-uniform test
    for (int64_t base = 32 * R; base < n; base += 32) {
      const int64_t i = base + lane;
      const bool ok = i < n;
      f(ok ? topk_key(load(i)) : 0u, ok, i);
    }
  }
};

// The k-th largest key (1-based, counting repeats) of a warp's keys, 1 <= k <= n, on every
// lane: the largest K with at least k keys >= K, built bit by bit from the top.
template <class Keys>
__device__ uint32_t warp_kth_largest(const Keys& keys, int64_t k) {
  uint32_t prefix = 0;
  for (int bit = 31; bit >= 0; --bit) {
    const uint32_t cand = prefix | (1u << bit);
    uint32_t count = 0;
    keys.each([&](uint32_t key, bool ok, int64_t) { count += ok && key >= cand; });
    if (__reduce_add_sync(topk_detail::kFull, count) >= static_cast<uint64_t>(k)) prefix = cand;
  }
  return prefix;
}

// A shard's record of one row: kr = min(k, n) floats (its kr largest values, in no
// particular order), then h (the smallest of them, the kr-th largest), then ties (its
// unsent entries equal to h). The caller may append fields after these.
__host__ __device__ constexpr int64_t topk_record_floats(int64_t kr) {
  return kr + 2;
}

// Writes the record of a warp's keys through store(slot, value) (slot < kr + 2): each slot
// once, by one lane. Values above h go to slots in the warp's visiting order, so the
// record is a pure function of the keys.
template <class Keys, class Store>
__device__ void warp_topk_record(const Keys& keys, int64_t kr, Store store) {
  const uint32_t h = warp_kth_largest(keys, kr);
  const unsigned lane = topk_detail::lane_id(), below = (1u << lane) - 1u;
  int64_t above = 0;
  uint32_t equal = 0;
  keys.each([&](uint32_t key, bool ok, int64_t) {
    const bool gt = ok && key > h;
    const unsigned ballot = __ballot_sync(topk_detail::kFull, gt);
    if (gt) store(above + __popc(ballot & below), topk_value(key));
    above += __popc(ballot);
    equal += ok && key == h;
  });
  const int64_t eq = __reduce_add_sync(topk_detail::kFull, equal);
  for (int64_t s = above + lane; s < kr; s += 32) store(s, topk_value(h));  // sent copies of h
  if (lane == 0) {
    store(kr, topk_value(h));
    store(kr + 1, static_cast<float>(eq - (kr - above)));
  }
}

// The values of nrec records as one warp's keys: record r starts at recs + r * stride,
// and its kr values come first.
struct TopkUnion {
  const float* recs;
  int64_t stride;
  int64_t kr;
  __device__ __forceinline__ float operator()(int64_t e) const {
    return recs[(e / kr) * stride + e % kr];
  }
};
template <int R>
__device__ __forceinline__ WarpKeys<R, TopkUnion> topk_union(const float* recs, int64_t stride,
                                                             int nrec, int64_t kr) {
  return WarpKeys<R, TopkUnion>(TopkUnion{recs, stride, kr}, nrec * kr);
}

// The merged cut: h, the k-th largest key of the whole row, and ties, the entries equal
// to h that no record sent (all of them belong to the row's top k).
struct TopkCut {
  uint32_t h;
  float ties;
};

// Merges nrec records (as topk_union) into the cut of the row's top k, k <= the row's
// length: the union's k-th largest, and the ties of the records whose own h equals it,
// added in record order. Every lane of every rank gets the same bits.
template <class Keys>
__device__ TopkCut warp_topk_merge(const Keys& all, const float* recs, int64_t stride, int nrec,
                                   int64_t kr, int64_t k) {
  TopkCut cut{warp_kth_largest(all, k), 0.0f};
  for (int r = 0; r < nrec; ++r) {
    const float* rec = recs + r * stride;
    if (topk_key(rec[kr]) == cut.h) cut.ties += rec[kr + 1];
  }
  return cut;
}

}  // namespace kf
