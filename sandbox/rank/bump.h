// sandbox/rank/bump.h: comm.alloc's bump allocator over the workspace (zeroed once,
// never reused, so every buffer handed out is zero; ranks making the same calls get the
// same offsets). The judge's for the baseline, the runner's for the candidate, who
// continues where the baseline stopped.
#pragma once

#include <cstddef>

#include "layout.h"

namespace sandbox::rank {

struct Bump {
  char* base = nullptr;
  size_t cap = 0;
  size_t used = 0;
  bool exhausted = false;
  size_t asked = 0;       // the request that did not fit
  void* owner = nullptr;  // what comm.barrier needs (the judge's Backend, the runner's link)
};

// The next `bytes` of the workspace (kHeapAlign-aligned), or nullptr once it is
// exhausted (and from then on).
inline void* bump_take(Bump* b, size_t bytes) {
  size_t off = align_up(b->used, kHeapAlign);
  if (b->exhausted || off > b->cap || bytes > b->cap - off) {
    if (!b->exhausted) b->asked = bytes;
    b->exhausted = true;
    return nullptr;
  }
  b->used = off + bytes;
  return b->base + off;
}

}  // namespace sandbox::rank
