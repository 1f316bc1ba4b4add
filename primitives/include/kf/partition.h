// kf/partition.h: how to split work, in plain C++ (host and device, no CUDA headers).
//
// Every kernel of a collective must agree, on every rank, about which elements each
// rank, block and vector owns: a rank that computes a different split reads or writes
// the wrong chunk, and nothing crashes. These functions are that agreement. They are
// pure, so the host computes the same numbers as the device, and tests check them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "abi.h"  // KF_HD

namespace kf {

// A half-open range [begin, end) of element indices.
struct Range {
  int64_t begin;
  int64_t end;
  KF_HD int64_t size() const { return end > begin ? end - begin : 0; }
};

KF_HD int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
KF_HD int64_t round_up(int64_t a, int64_t m) {
  return ceil_div(a, m) * m;
}
KF_HD int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

// Part `part` of `parts` near-equal parts of n elements, each part's begin a multiple of
// `align` elements (so a 16-byte vector path stays aligned in every part when the
// whole buffer is aligned). Parts cover [0, n) exactly, in order; the last parts may be
// shorter or empty when n is small. align >= 1.
KF_HD Range split(int64_t n, int parts, int part, int64_t align = 1) {
  const int64_t per = round_up(ceil_div(n, parts), align);
  const int64_t b = min64(n, per * part);
  return Range{b, min64(n, b + per)};
}

// Fixed-size chunks of at most `chunk` elements: how many, and the i-th.
KF_HD int64_t num_chunks(int64_t n, int64_t chunk) {
  return n <= 0 ? 0 : ceil_div(n, chunk);
}
KF_HD Range chunk(int64_t n, int64_t chunk_elems, int64_t i) {
  const int64_t b = min64(n, i * chunk_elems);
  return Range{b, min64(n, b + chunk_elems)};
}

// Elements of size `elem` to peel off the front of n elements at address `addr` before
// the address is 16-byte aligned (0 if it already is; n if it never gets there within
// n, or if elem does not divide the misalignment).
KF_HD int64_t head_elems(uintptr_t addr, int64_t elem, int64_t n) {
  const int64_t mis = static_cast<int64_t>(addr & 15u);
  if (mis == 0) return 0;
  const int64_t gap = 16 - mis;
  if (gap % elem != 0) return n;
  return min64(n, gap / elem);
}

// True when a and b have the same offset within 16 bytes: then one peel aligns both,
// and a copy between them can use 16-byte vectors for its body.
KF_HD bool co_aligned16(const void* a, const void* b) {
  return ((reinterpret_cast<uintptr_t>(a) ^ reinterpret_cast<uintptr_t>(b)) & 15u) == 0;
}
KF_HD bool aligned16(const void* a) {
  return (reinterpret_cast<uintptr_t>(a) & 15u) == 0;
}

// All-reduce algorithm choice by message size (bytes of x per rank) and world, after
// vLLM's custom all-reduce on full NVLink: one-shot (every rank reads every peer's whole
// buffer; 2 barriers, latency-bound) for world 2, or world <= 4 below 512 KB, or
// world <= 8 below 256 KB; two-shot (reduce-scatter then all-gather; each rank moves
// 2(w-1)/w of the data instead of (w-1)) otherwise. See docs/choosing.md.
KF_HD bool allreduce_one_shot(size_t bytes, int world) {
  if (world <= 2) return true;
  if (world <= 4) return bytes < (512u << 10);
  if (world <= 8) return bytes < (256u << 10);
  return false;
}

// Blocks for a grid-stride loop over `work` items with `threads` threads per block,
// at least 1 and at most `max_blocks`.
KF_HD int grid_for(int64_t work, int threads, int max_blocks) {
  int64_t b = ceil_div(work > 0 ? work : 1, threads);
  return static_cast<int>(b < max_blocks ? b : max_blocks);
}

}  // namespace kf
