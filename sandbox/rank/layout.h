// sandbox/rank/layout.h: where each tensor and the workspace live in the symmetric heap.
// Every rank computes the same layout from the job, so offsets agree without talking:
// each tensor's slot is sized for the largest rank's shape.
#pragma once

#include <cstdint>
#include <vector>

#include "job.h"

namespace sandbox::rank {

constexpr size_t kHeapAlign = 256;

inline size_t align_up(size_t x, size_t a) {
  return (x + a - 1) / a * a;
}

inline int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

struct HeapLayout {
  std::vector<size_t> offset;  // per tensor, in job order
  std::vector<size_t> slot;    // bytes reserved per tensor (a multiple of kHeapAlign)
  size_t workspace_offset = 0;
  size_t workspace_bytes = 0;
  size_t total = 0;
};

inline HeapLayout heap_layout(const Job& job) {
  HeapLayout l;
  size_t off = 0;
  for (const JobTensor& t : job.tensors) {
    size_t most = 0;
    for (const auto& shape : t.shape_by_rank) {
      size_t b = static_cast<size_t>(numel_of(shape)) * kf::dtype_size(t.dtype);
      if (b > most) most = b;
    }
    // An empty tensor still gets a slot of its own, so that no two tensors share an
    // address.
    size_t slot = align_up(most > 0 ? most : 1, kHeapAlign);
    l.offset.push_back(off);
    l.slot.push_back(slot);
    off += slot;
  }
  l.workspace_offset = off;
  l.workspace_bytes = align_up(job.workspace_bytes, kHeapAlign);
  l.total = off + l.workspace_bytes;
  if (l.total == 0) l.total = kHeapAlign;
  return l;
}

}  // namespace sandbox::rank
