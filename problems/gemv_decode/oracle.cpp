// gemv_decode: every rank's logits [T, world * V] holds every rank's piece side by side,
// logits[t][s*V + v] = x(s)[t] . w(s)[v] + bias(s)[v], with x(s) [T, H], w(s) [V, H] and
// bias(s) [V] rank s's own (row-major).
#include "kf/oracle.h"

#include <string>

namespace {

// The shapes every rank must share: x [T, H], w [V, H], bias [V], and logits
// [T, world * V] here.
bool dims(const sandbox::OracleIO& io, size_t out_size, int64_t* t, int64_t* h, int64_t* v,
          std::string* err) {
  const std::vector<int64_t>& sx = io.shape("x", 0);
  const std::vector<int64_t>& sw = io.shape("w", 0);
  const std::vector<int64_t>& sb = io.shape("bias", 0);
  if (sx.size() != 2 || sw.size() != 2 || sb.size() != 1 || sx[1] != sw[1] || sb[0] != sw[0]) {
    *err = "gemv_decode: rank 0's x, w and bias are not [T, H], [V, H] and [V]";
    return false;
  }
  *t = sx[0], *h = sx[1], *v = sw[0];
  for (int r = 0; r < io.world; ++r)
    if (io.shape("x", r) != sx || io.shape("w", r) != sw || io.shape("bias", r) != sb ||
        io.input("x", r).size() != static_cast<size_t>(*t * *h) ||
        io.input("w", r).size() != static_cast<size_t>(*v * *h) ||
        io.input("bias", r).size() != static_cast<size_t>(*v)) {
      *err = "gemv_decode: rank " + std::to_string(r) +
             "'s x, w or bias differs in shape from rank 0's; every rank holds [T, H], [V, H] "
             "and [V]";
      return false;
    }
  if (out_size != static_cast<size_t>(*t * io.world * *v)) {
    *err = "gemv_decode: logits has " + std::to_string(out_size) +
           " elements, want T * world * V = " + std::to_string(*t) + " * " +
           std::to_string(io.world) + " * " + std::to_string(*v);
    return false;
  }
  return true;
}

}  // namespace

KF_ORACLE(gemv_decode) {
  std::vector<double>& logits = io.out("logits");
  int64_t t, h, v;
  if (!dims(io, logits.size(), &t, &h, &v, err)) return false;
  const int64_t cols = io.world * v;  // a row of logits: every rank's V entries
  for (int s = 0; s < io.world; ++s) {
    const std::vector<double>& x = io.input("x", s);
    const std::vector<double>& w = io.input("w", s);
    const std::vector<double>& bias = io.input("bias", s);
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < v; ++j) {
        const double* xr = &x[static_cast<size_t>(i * h)];
        const double* wr = &w[static_cast<size_t>(j * h)];
        double dot = 0;
        for (int64_t k = 0; k < h; ++k) dot += xr[k] * wr[k];
        logits[static_cast<size_t>(i * cols + s * v + j)] = dot + bias[static_cast<size_t>(j)];
      }
  }
  return true;
}
