// conv2d_boundary_exchange on the host backend: the baseline's steps in plain C++ over the
// symmetric heap. Every rank stacks its first and last rows into a heap scratch; after a
// barrier it copies every rank's stack (the all_gather) and a second barrier keeps the
// stacks unwritten until every peer has copied them; it then concatenates the previous
// rank's last row, x and the next rank's first row (zeros past the ends), unfolds each
// image into a [9C, H*W] im2col matrix and multiplies weight [C, 9C] by it in float,
// starting from the bias, rounding y once to bf16 as cuBLAS does with beta = 1. At world
// 1 there is no exchange, as in the reference.
#include <kf/host.h>
#include <kf/kf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

kf::host::Barrier g_sync;     // see <kf/host.h>
uint16_t* g_local = nullptr;  // [2, B, C, W]: our first and last rows (torch.stack)

using kf::host::bf16_to_float;
using kf::host::float_to_bf16;

struct Dims {
  int64_t planes, c, h, w;  // planes = B * C
};

// gathered = every rank's [2, B, C, W] stack, in rank order (dist.all_gather).
std::vector<uint16_t> all_gather(const kf::Comm& comm, const uint16_t* x, const Dims& d) {
  const int64_t stack = 2 * d.planes * d.w;
  for (int64_t p = 0; p < d.planes; ++p) {
    std::memcpy(g_local + p * d.w, x + p * d.h * d.w, d.w * 2);
    std::memcpy(g_local + (d.planes + p) * d.w, x + (p * d.h + d.h - 1) * d.w, d.w * 2);
  }
  g_sync.wait(comm);  // every rank's stack is written
  std::vector<uint16_t> gathered(static_cast<size_t>(comm.world * stack));
  for (int r = 0; r < comm.world; ++r)
    std::memcpy(&gathered[r * stack], comm.peer(g_local, r), stack * 2);
  g_sync.wait(comm);  // nobody rewrites its stack while a peer still copies it
  return gathered;
}

// [planes, h + 2, w]: the previous rank's last row, x, the next rank's first row (torch.cat).
std::vector<uint16_t> cat(const kf::Comm& comm, const uint16_t* x,
                          const std::vector<uint16_t>& gathered, const Dims& d) {
  const int64_t ph = d.h + 2, stack = 2 * d.planes * d.w;
  std::vector<uint16_t> padded(static_cast<size_t>(d.planes * ph * d.w), 0);  // bf16 +0
  for (int64_t p = 0; p < d.planes; ++p) {
    uint16_t* dst = &padded[p * ph * d.w];
    if (comm.rank > 0)
      std::memcpy(dst, &gathered[(comm.rank - 1) * stack + (d.planes + p) * d.w], d.w * 2);
    std::memcpy(dst + d.w, x + p * d.h * d.w, d.h * d.w * 2);
    if (comm.rank + 1 < comm.world)
      std::memcpy(dst + (ph - 1) * d.w, &gathered[(comm.rank + 1) * stack + p * d.w], d.w * 2);
  }
  return padded;
}

// cols[(i * 9 + kh * 3 + kw)][r * w + col] = src[i][r + kh - top][col + kw - 1], zero
// outside src's sh rows and w columns; src is one image, [c, sh, w].
void im2col(const uint16_t* src, uint16_t* cols, int64_t sh, int64_t top, const Dims& d) {
  const int64_t hw = d.h * d.w;
  for (int64_t k = 0; k < 9 * d.c; ++k)
    for (int64_t r = 0; r < d.h; ++r)
      for (int64_t col = 0; col < d.w; ++col) {
        const int64_t sr = r + k % 9 / 3 - top, sc = col + k % 3 - 1;
        const bool in = sr >= 0 && sr < sh && sc >= 0 && sc < d.w;
        cols[k * hw + r * d.w + col] = in ? src[(k / 9 * sh + sr) * d.w + sc] : 0;
      }
}

// y_b[o][e] = bf16(bias[o] + sum over k < 9c of weight[o][k] * cols[k][e]), in float.
void gemm(const uint16_t* weight, const uint16_t* bias, const uint16_t* cols, uint16_t* y,
          const Dims& d) {
  const int64_t hw = d.h * d.w, k9 = 9 * d.c;
  std::vector<float> acc(static_cast<size_t>(hw));
  for (int64_t o = 0; o < d.c; ++o) {
    std::fill(acc.begin(), acc.end(), bf16_to_float(bias[o]));
    for (int64_t k = 0; k < k9; ++k) {
      const float wv = bf16_to_float(weight[o * k9 + k]);
      for (int64_t e = 0; e < hw; ++e) acc[e] += wv * bf16_to_float(cols[k * hw + e]);
    }
    for (int64_t e = 0; e < hw; ++e) y[o * hw + e] = float_to_bf16(acc[e]);
  }
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const bool synced = g_sync.setup(comm);
  g_local =
      comm.alloc_array<uint16_t>(static_cast<size_t>(2 * x.shape[0] * x.shape[1] * x.shape[3]));
  return synced && g_local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  const int64_t b = x.shape[0];
  const Dims d{b * x.shape[1], x.shape[1], x.shape[2], x.shape[3]};
  const uint16_t* px = x.ptr<const uint16_t>();
  std::vector<uint16_t> padded;
  const uint16_t* src = px;  // world 1: x itself, padded by im2col
  int64_t sh = d.h, top = 1;
  if (comm.world > 1) {
    padded = cat(comm, px, all_gather(comm, px, d), d);
    src = padded.data(), sh = d.h + 2, top = 0;
  }
  std::vector<uint16_t> cols(static_cast<size_t>(9 * d.c * d.h * d.w));
  uint16_t* y = t["y"].ptr<uint16_t>();
  for (int64_t i = 0; i < b; ++i) {
    im2col(src + i * d.c * sh * d.w, cols.data(), sh, top, d);
    gemm(t["weight"].ptr<const uint16_t>(), t["bias"].ptr<const uint16_t>(), cols.data(),
         y + i * d.c * d.h * d.w, d);
  }
  return 0;
}
