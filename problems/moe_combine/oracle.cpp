// moe_combine: rank s's y[t] is the sum, over the top-k experts e of its token t (by
// logit, ties to the lower expert), of softmax-over-the-selected-logits weight w(t, e)
// times the expert output for pair (t, e), which sits on the rank that position p(t, e)
// was dispatched to (fixed splits, the last rank taking the remainder), in that rank's
// (local expert, source rank) order. problem.json's description is the full contract.
//
// How this twins PKB 29 with fixed shapes: PKB's inputs carry the routing (selected
// experts, routing map, permutation) and softmaxed weights drawn apart from it; here
// both come from one fp32 logits input (top-k, then the softmax over the selected
// logits, as Mixtral-style routers do), so no input has a constraint between elements,
// and the kernel rebuilds the permutation itself. The splits and sub-chunks are those of
// moe_dispatch (see its oracle), equal to PKB's at the full size.
#include "kf/oracle.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

struct Dims {
  int64_t m = 0, n = 0, e = 0, topk = 0;
};

// Split sizes: rank d holds S(d) rows from every rank, cut into L sub-chunks of C(d)
// rows (the last takes the remainder).
struct Splits {
  int64_t world, rows, q, local;
  int64_t size(int64_t d) const { return d == world - 1 ? rows - (world - 1) * q : q; }
  int64_t chunk(int64_t d) const { return size(d) / local; }
  int64_t sub(int64_t d, int64_t l) const {
    return l == local - 1 ? size(d) - (local - 1) * chunk(d) : chunk(d);
  }
  // The rank that holds position p of rank s, and the row of its x.
  void locate(int64_t s, int64_t p, int64_t* d, int64_t* row) const {
    *d = std::min(p / q, world - 1);
    const int64_t i = p - *d * q, c = chunk(*d);
    const int64_t l = std::min(i / c, local - 1), j = i - l * c;
    *row = world * l * c + s * sub(*d, l) + j;
  }
};

// chosen[t * E + x]: whether token t goes to expert x (its topk by logit, ties to the
// lower index); weight[t * E + x]: w(t, x) there, else 0.
struct Routing {
  std::vector<char> chosen;
  std::vector<double> weight;
};
Routing routing(const std::vector<double>& logits, const Dims& d) {
  Routing r;
  r.chosen.assign(static_cast<size_t>(d.m * d.e), 0);
  r.weight.assign(static_cast<size_t>(d.m * d.e), 0);
  for (int64_t t = 0; t < d.m; ++t) {
    const double* row = &logits[static_cast<size_t>(t * d.e)];
    double* wt = &r.weight[static_cast<size_t>(t * d.e)];
    char* taken = &r.chosen[static_cast<size_t>(t * d.e)];
    int64_t top = -1;
    for (int64_t k = 0; k < d.topk; ++k) {
      int64_t best = -1;
      for (int64_t x = 0; x < d.e; ++x)
        if (!taken[x] && (best < 0 || row[x] > row[best])) best = x;
      taken[best] = 1;
      if (top < 0) top = best;
    }
    double sum = 0;
    for (int64_t x = 0; x < d.e; ++x)
      if (taken[x]) sum += wt[x] = std::exp(row[x] - row[top]);
    for (int64_t x = 0; x < d.e; ++x) wt[x] /= sum;
  }
  return r;
}

bool dims(const sandbox::OracleIO& io, size_t y_size, Dims* d, std::string* err) {
  d->e = io.iparam("E");
  d->topk = io.iparam("topk");
  const std::vector<int64_t>& sl = io.shape("logits", 0);
  const std::vector<int64_t>& sx = io.shape("x", 0);
  if (sl.size() != 2 || sx.size() != 2 || sl[1] != d->e || d->topk < 1 || d->topk > d->e ||
      d->e % io.world != 0) {
    *err =
        "moe_combine: logits must be [M, E], x [rows, N], 1 <= topk <= E and E a multiple "
        "of world";
    return false;
  }
  d->m = sl[0], d->n = sx[1];
  const int64_t rows = d->m * d->topk, q = rows / io.world;
  if (rows < d->e) {
    *err = "moe_combine: M * topk must be at least E (every sub-chunk has a row)";
    return false;
  }
  for (int r = 0; r < io.world; ++r) {
    const int64_t want = io.world * (r == io.world - 1 ? rows - (io.world - 1) * q : q);
    if (io.shape("logits", r) != sl || io.shape("x", r) != std::vector<int64_t>{want, d->n} ||
        io.input("x", r).size() != static_cast<size_t>(want * d->n) ||
        io.input("logits", r).size() != static_cast<size_t>(d->m * d->e)) {
      *err = "moe_combine: rank " + std::to_string(r) + "'s x or logits has the wrong shape; " +
             "rank r holds logits [M, E] and x [world * S(r), N] = [" + std::to_string(want) +
             ", N]";
      return false;
    }
  }
  if (y_size != static_cast<size_t>(d->m * d->n)) {
    *err = "moe_combine: y has " + std::to_string(y_size) +
           " elements, want M * N = " + std::to_string(d->m * d->n);
    return false;
  }
  return true;
}

}  // namespace

KF_ORACLE(moe_combine) {
  std::vector<double>& y = io.out("y");
  Dims d;
  if (!dims(io, y.size(), &d, err)) return false;
  const int64_t rows = d.m * d.topk;
  const Splits sp{io.world, rows, rows / io.world, d.e / io.world};
  const Routing route = routing(io.input("logits", io.rank), d);
  for (double& v : y) v = 0;
  int64_t first = 0;  // p(t, x) = first position of expert x + earlier tokens of x
  for (int64_t x = 0; x < d.e; ++x)
    for (int64_t t = 0; t < d.m; ++t) {
      const size_t at = static_cast<size_t>(t * d.e + x);
      if (!route.chosen[at]) continue;
      const double wt = route.weight[at];
      int64_t holder, row;
      sp.locate(io.rank, first++, &holder, &row);
      const std::vector<double>& src = io.input("x", static_cast<int>(holder));
      for (int64_t k = 0; k < d.n; ++k)
        y[static_cast<size_t>(t * d.n + k)] += wt * src[static_cast<size_t>(row * d.n + k)];
    }
  return true;
}
