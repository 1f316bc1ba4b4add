// sandbox/compare.cpp: see compare.h.
#include "compare.h"

#include <fmt/format.h>

#include <cmath>

#include "inputs.h"

namespace sandbox {

std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t n = shape[d] > 0 ? shape[d] : 1;
    idx[d] = flat % n;
    flat /= n;
  }
  return idx;
}

namespace {
void add_bad(Comparison* c, int64_t i, const std::vector<int64_t>& shape, double got, double want) {
  ++c->bad_count;
  if (c->first_bad.size() < kMaxBad) c->first_bad.push_back({unravel(i, shape), got, want});
}
}  // namespace

Comparison compare_values(const std::vector<double>& got, const std::vector<double>& want,
                          const std::vector<int64_t>& shape, double atol, double rtol) {
  Comparison c;
  c.total = static_cast<int64_t>(want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    double g = i < got.size() ? got[i] : NAN, w = want[i];
    bool ok;
    if (std::isnan(g)) {
      ok = false;
    } else if (std::isinf(g) || std::isinf(w)) {
      ok = g == w;
    } else {
      double err = std::fabs(g - w);
      if (err > c.max_abs) c.max_abs = err;
      if (w != 0 && err / std::fabs(w) > c.max_rel) c.max_rel = err / std::fabs(w);
      ok = err <= atol + rtol * std::fabs(w);
    }
    if (!ok) add_bad(&c, static_cast<int64_t>(i), shape, g, w);
  }
  return c;
}

Comparison compare_bits(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                        kf::DType dtype, const std::vector<int64_t>& shape) {
  Comparison c;
  size_t es = kf::dtype_size(dtype);
  int64_t n = static_cast<int64_t>(want.size() / es);
  c.total = n;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t g = inputs::load(got.data(), i, dtype), w = inputs::load(want.data(), i, dtype);
    if (g == w) continue;
    double gv = inputs::decode(g, dtype), wv = inputs::decode(w, dtype);
    if (std::isfinite(gv) && std::isfinite(wv)) {
      double err = std::fabs(gv - wv);
      if (err > c.max_abs) c.max_abs = err;
      if (wv != 0 && err / std::fabs(wv) > c.max_rel) c.max_rel = err / std::fabs(wv);
    }
    add_bad(&c, i, shape, gv, wv);
  }
  return c;
}

std::string index_string(const std::vector<int64_t>& index) {
  return fmt::format("[{}]", fmt::join(index, ", "));
}

void describe(const Comparison& c, const std::string& tensor, bool input, Failure* f) {
  f->tensor = tensor;
  f->bad_count = c.bad_count;
  f->total = c.total;
  f->max_abs = c.max_abs;
  f->max_rel = c.max_rel;
  f->first_bad = c.first_bad;
  f->input_modified = input;
  std::string first;
  if (!c.first_bad.empty()) {
    const auto& b = c.first_bad.front();
    first = fmt::format("; first at {}: got {}, want {}", index_string(b.index), b.got, b.want);
  }
  if (input)
    f->message = fmt::format("input '{}' was modified by kf_run: {} of {} elements changed{}",
                             tensor, c.bad_count, c.total, first);
  else
    f->message = fmt::format(
        "output '{}': {} of {} elements wrong (max abs err {:.3g}, max rel err {:.3g}){}", tensor,
        c.bad_count, c.total, c.max_abs, c.max_rel, first);
}

}  // namespace sandbox
