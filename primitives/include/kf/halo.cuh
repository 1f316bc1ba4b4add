// kf/halo.cuh: halo (boundary-row) exchange for a 1-D row decomposition.
//
// Model. An image of world * h rows (per plane: a channel of an image in NCHW) is split
// by rows: rank r holds rows [r*h, (r+1)*h) of every plane, as [planes][h][w]. A stencil
// of radius `depth` (a 3x3 convolution: depth 1) needs, besides its own rows, the `depth`
// rows just above them (the previous rank's last ones) and just below (the next rank's
// first ones), zeros beyond the image's top and bottom. halo_source names where any such
// row lives; halo_row gives a pointer to it through UVA; halo_pull is the grid loop that
// reads every plane's halo rows from the neighbours and hands each element to the
// caller's store, so it can land in any layout (a padded or channels-last copy, say)
// without a staging pass.
//
// Protocol (the caller's): bracket halo_pull with kf::barrier on per-block slots: the
// entry barrier proves the neighbours entered this call (their x is this call's), the
// exit barrier that they finished reading ours (before the harness regenerates it). Rows
// outside the image are the caller's zeros; halo_pull skips them. A push variant (write
// our boundary rows into the neighbours' halo slots, two slot sets by call parity, one
// barrier per call) is what solution_host.cpp of conv2d_boundary_exchange does.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "abi.h"

namespace kf {

// Where row g (-h <= g < 2h) of rank `rank`'s padded rows lives: rank and row there, or
// rank -1 for a row outside the image (zero padding).
struct HaloSource {
  int rank;
  int64_t row;
};
KF_HD HaloSource halo_source(int rank, int world, int64_t h, int64_t g) {
  if (g < 0) return rank > 0 ? HaloSource{rank - 1, g + h} : HaloSource{-1, 0};
  if (g >= h) return rank + 1 < world ? HaloSource{rank + 1, g - h} : HaloSource{-1, 0};
  return HaloSource{rank, g};
}

// Row g of plane p of rank `rank`'s padded input, x[s] being rank s's [planes][h][w]:
// its own row, a neighbour's (read it only after the entry barrier), or nullptr (zeros).
template <class T>
__device__ __forceinline__ const T* halo_row(const Peers<const T>& x, int rank, int world,
                                             int64_t plane, int64_t g, int64_t h, int64_t w) {
  const HaloSource s = halo_source(rank, world, h, g);
  return s.rank < 0 ? nullptr : x[s.rank] + (plane * h + s.row) * w;
}

// Grid loop over the neighbours' rows: for the rows g in [-depth, 0) and [h, h + depth)
// that exist, store(g, plane, col, x[owner][plane][row][col]) for every plane < planes
// and col < w. Consecutive threads take consecutive columns, so the loads from a
// neighbour are coalesced (each one waits a link round trip; keep the grid wide).
template <class T, class Store>
__device__ __forceinline__ void halo_pull(const Peers<const T>& x, int rank, int world,
                                          int64_t planes, int64_t h, int64_t w, int depth,
                                          Store store, int64_t tid, int64_t nthreads) {
  const int64_t per_side = depth * planes * w;
  for (int64_t e = tid; e < 2 * per_side; e += nthreads) {
    const int64_t side = e / per_side, rem = e % per_side;
    const int64_t d = rem / (planes * w), plane = rem / w % planes, col = rem % w;
    const int64_t g = side == 0 ? d - depth : h + d;
    const HaloSource s = halo_source(rank, world, h, g);
    if (s.rank < 0) continue;  // beyond the image: the caller's zeros
    store(g, plane, col, x[s.rank][(plane * h + s.row) * w + col]);
  }
}

}  // namespace kf
