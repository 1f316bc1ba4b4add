// conv2d_boundary_exchange: rank r's y is a 3x3 convolution (stride 1, padding 1) of its
// rows of a tall image, with its own weight and bias, where the row above its first row is
// the previous rank's last row and the row below its last row the next rank's first row
// (zeros past rank 0 and the last rank, and left and right of every row).
// x and y [B, C, H, W], weight [C, C, 3, 3], bias [C], all row-major.
#include "kf/oracle.h"

#include <string>
#include <vector>

namespace {

struct Dims {
  int64_t b = 0, c = 0, h = 0, w = 0;
};

// The shapes every rank must share; false with *err where the inputs break them.
bool dims(const sandbox::OracleIO& io, size_t y_size, Dims* d, std::string* err) {
  const std::vector<int64_t>& sx = io.shape("x", 0);
  if (sx.size() != 4) {
    *err = "conv2d_boundary_exchange: rank 0's x is not a [B, C, H, W] tensor";
    return false;
  }
  d->b = sx[0], d->c = sx[1], d->h = sx[2], d->w = sx[3];
  const std::vector<int64_t> sw = {d->c, d->c, 3, 3};
  const std::vector<int64_t> sb = {d->c};
  const size_t nx = static_cast<size_t>(d->b * d->c * d->h * d->w);
  for (int r = 0; r < io.world; ++r) {
    if (io.shape("x", r) != sx || io.input("x", r).size() != nx) {
      *err = "conv2d_boundary_exchange: rank " + std::to_string(r) +
             "'s x differs in shape from rank 0's; every rank holds [B, C, H, W]";
      return false;
    }
    if (io.shape("weight", r) != sw || io.shape("bias", r) != sb ||
        io.input("weight", r).size() != static_cast<size_t>(d->c * d->c * 9) ||
        io.input("bias", r).size() != static_cast<size_t>(d->c)) {
      *err = "conv2d_boundary_exchange: rank " + std::to_string(r) +
             "'s weight or bias is not [C, C, 3, 3] and [C] for x's C";
      return false;
    }
  }
  if (y_size != nx) {
    *err = "conv2d_boundary_exchange: y has " + std::to_string(y_size) +
           " elements, want B * C * H * W = " + std::to_string(nx);
    return false;
  }
  return true;
}

// This rank's padded input, [B, C, H + 2, W + 2]: its x in the middle, the neighbours'
// boundary rows above and below it, zeros everywhere else.
std::vector<double> padded(const sandbox::OracleIO& io, const Dims& d) {
  const int64_t ph = d.h + 2, pw = d.w + 2;
  std::vector<double> p(static_cast<size_t>(d.b * d.c * ph * pw), 0.0);
  const std::vector<double>& x = io.input("x", io.rank);
  const std::vector<double>* prev = io.rank > 0 ? &io.input("x", io.rank - 1) : nullptr;
  const std::vector<double>* next = io.rank + 1 < io.world ? &io.input("x", io.rank + 1) : nullptr;
  for (int64_t plane = 0; plane < d.b * d.c; ++plane) {
    double* dst = &p[static_cast<size_t>(plane * ph * pw)];
    const int64_t at = plane * d.h * d.w;  // row 0 of this (b, c) plane in every x
    for (int64_t w = 0; w < d.w; ++w) {
      if (prev) dst[w + 1] = (*prev)[static_cast<size_t>(at + (d.h - 1) * d.w + w)];
      if (next) dst[(ph - 1) * pw + w + 1] = (*next)[static_cast<size_t>(at + w)];
      for (int64_t h = 0; h < d.h; ++h)
        dst[(h + 1) * pw + w + 1] = x[static_cast<size_t>(at + h * d.w + w)];
    }
  }
  return p;
}

}  // namespace

KF_ORACLE(conv2d_boundary_exchange) {
  std::vector<double>& y = io.out("y");
  Dims d;
  if (!dims(io, y.size(), &d, err)) return false;
  const std::vector<double> p = padded(io, d);
  const std::vector<double>& weight = io.input("weight", io.rank);
  const std::vector<double>& bias = io.input("bias", io.rank);
  const int64_t ph = d.h + 2, pw = d.w + 2;
  for (int64_t b = 0; b < d.b; ++b)
    for (int64_t o = 0; o < d.c; ++o) {
      double* out = &y[static_cast<size_t>((b * d.c + o) * d.h * d.w)];
      for (int64_t e = 0; e < d.h * d.w; ++e) out[e] = bias[static_cast<size_t>(o)];
      // Padded row h + kh, column w + kw is X[h + kh - 1][w + kw - 1].
      for (int64_t i = 0; i < d.c; ++i) {
        const double* in = &p[static_cast<size_t>((b * d.c + i) * ph * pw)];
        for (int64_t kh = 0; kh < 3; ++kh)
          for (int64_t kw = 0; kw < 3; ++kw) {
            const double wv = weight[static_cast<size_t>(((o * d.c + i) * 3 + kh) * 3 + kw)];
            for (int64_t h = 0; h < d.h; ++h)
              for (int64_t w = 0; w < d.w; ++w) out[h * d.w + w] += wv * in[(h + kh) * pw + w + kw];
          }
      }
    }
  return true;
}
