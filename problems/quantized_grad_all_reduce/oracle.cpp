// quantized_grad_all_reduce: y = the mean over ranks of each rank's x after a block-wise
// int8 quantize-dequantize (scale = max(amax, 1e-8) / 127 per block, code = round-to-even
// of x / scale clamped to +-127, value = code * scale).
//
// The codes are formed with the fp32 operations problem.json spells out, not in double:
// which integer a quotient rounds to is part of the result (a code off by one moves y by a
// whole scale / world), and PyTorch decides it in fp32. Everything after the codes (the
// products, the sum, the mean) is exact or in double, so the tolerance is all the candidate's.
#include "kf/oracle.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace {

// Rank r's dequantized gradient d, from its x (fp32 values held in doubles).
void dequantized(const std::vector<double>& x, size_t block, std::vector<double>* d) {
  const size_t n = x.size();
  d->assign(n, 0.0);
  for (size_t b = 0; b < n; b += block) {
    const size_t end = std::min(n, b + block);
    float amax = 0.0f;
    for (size_t i = b; i < end; ++i) amax = std::max(amax, std::fabs(static_cast<float>(x[i])));
    const float scale = std::max(amax, 1e-8f) / 127.0f;  // one fp32 division
    for (size_t i = b; i < end; ++i) {
      const float quotient = static_cast<float>(x[i]) / scale;  // one fp32 division
      // nearbyint rounds ties to even in the default rounding mode, as torch.round does.
      const double code = std::clamp(static_cast<double>(std::nearbyint(quotient)), -127.0, 127.0);
      (*d)[i] = code * static_cast<double>(scale);  // exact in double
    }
  }
}

}  // namespace

KF_ORACLE(quantized_grad_all_reduce) {
  const int64_t block = io.iparam("block");
  if (block < 1) {
    *err = "quantized_grad_all_reduce: block is " + std::to_string(block) + "; it must be >= 1";
    return false;
  }
  std::vector<double>& y = io.out("y");
  const size_t n = y.size();
  for (int r = 0; r < io.world; ++r) {
    if (io.input("x", r).size() != n) {
      *err = "quantized_grad_all_reduce: rank " + std::to_string(r) + "'s x has " +
             std::to_string(io.input("x", r).size()) + " elements, y has " + std::to_string(n) +
             ": every rank's x must be as long as y";
      return false;
    }
  }
  std::fill(y.begin(), y.end(), 0.0);
  std::vector<double> d;
  for (int r = 0; r < io.world; ++r) {
    dequantized(io.input("x", r), static_cast<size_t>(block), &d);
    for (size_t i = 0; i < n; ++i) y[i] += d[i];
  }
  for (size_t i = 0; i < n; ++i) y[i] /= io.world;
  return true;
}
