// kf/tile.cuh: symmetric tensors and tiles of them.
//
// Every problem tensor lives in the symmetric heap: rank r's copy of buffer p is
// comm.peer(p, r), a plain UVA pointer a kernel can load from and store to (NVLink on a
// real machine; the same GPU's memory through CUDA IPC in emulation). Sym<T> carries
// the local pointer, every rank's pointer and the element count into a kernel by value;
// chunk() and Tile2 name the pieces collectives move (chunk c of n elements, a
// rows x cols block of a row-major matrix).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "abi.h"
#include "partition.h"

namespace kf {

template <class T>
struct Sym {
  T* local;       // this rank's copy
  Peers<T> peer;  // peer[r]: rank r's copy
  int64_t numel;  // elements (this rank's shape; the heap slot fits the largest rank's)
  int32_t rank;
  int32_t world;

  __host__ __device__ __forceinline__ T* at(int r) const { return peer.ptr[r]; }
  // Rank r's chunk c of `chunk_elems` elements (chunks laid end to end).
  __host__ __device__ __forceinline__ T* chunk(int r, int64_t c, int64_t chunk_elems) const {
    return peer.ptr[r] + c * chunk_elems;
  }
};

// Host: the symmetric view of a problem tensor, typed T (T must match t.dtype's size).
template <class T>
inline Sym<T> sym(const Comm& comm, const Tensor& t) {
  Sym<T> s{};
  s.local = static_cast<T*>(t.data);
  s.peer = peers(comm, s.local);
  s.numel = t.numel;
  s.rank = comm.rank;
  s.world = comm.world;
  return s;
}

// A rows x cols tile of a row-major matrix with leading dimension ld (elements), at
// (row0, col0) of any rank's copy: the unit a fused kernel computes, then ships.
template <class T>
struct Tile2 {
  T* base;
  int64_t ld;
  int32_t rows;
  int32_t cols;
  __host__ __device__ __forceinline__ T& operator()(int r, int c) const { return base[r * ld + c]; }
  __host__ __device__ __forceinline__ T* row(int r) const { return base + r * ld; }
  // Rows are 16-byte vectorizable when the base and the row pitch are.
  __host__ __device__ __forceinline__ bool vec16() const {
    return aligned16(base) && (ld * static_cast<int64_t>(sizeof(T))) % 16 == 0 &&
           (cols * static_cast<int64_t>(sizeof(T))) % 16 == 0;
  }
};

template <class T>
__host__ __device__ __forceinline__ Tile2<T> tile(T* matrix, int64_t ld, int64_t row0, int64_t col0,
                                                  int rows, int cols) {
  return Tile2<T>{matrix + row0 * ld + col0, ld, rows, cols};
}

}  // namespace kf
