// gnn_feature_exchange: every rank gathers its feature rows by its ids (g = features[ids]),
// cuts the gathered block into world chunks of `rows` rows, and the chunks are exchanged
// by an all-to-all whose lists are rotated by rank: out(r) chunk k is chunk
// (world - k) mod world of rank (r + k) mod world's gathered block. problem.json's
// description is the full contract.
//
// How this twins PKB 65: its reference rotates both chunk lists by the caller's rank
// (entry m is chunk (m - rank) mod world) before torch.distributed.all_to_all, so rank s
// sends chunk (d - s) mod world to rank d, which stores it as its chunk (s - d) mod world.
// An id out of [0, world * rows - 1] would be an out-of-range index_select in PKB; the
// generator never makes one, so here it is a broken contract.
#include "kf/oracle.h"

#include <string>
#include <vector>

namespace {

struct Dims {
  int64_t rows = 0, hidden = 0;  // rows per chunk; values per row
};

// Every rank's features are [world * rows, hidden] and its ids [world * rows].
bool dims(const sandbox::OracleIO& io, Dims* d, std::string* err) {
  const std::vector<int64_t>& sf = io.shape("features", 0);
  const std::vector<int64_t>& si = io.shape("ids", 0);
  if (sf.size() != 2 || si.size() != 1 || sf[0] != si[0] || sf[0] < io.world || sf[1] < 1 ||
      sf[0] % io.world != 0) {
    *err =
        "gnn_feature_exchange: features must be [world * rows, hidden] and ids "
        "[world * rows], rows and hidden >= 1";
    return false;
  }
  d->rows = sf[0] / io.world, d->hidden = sf[1];
  for (int r = 0; r < io.world; ++r)
    if (io.shape("features", r) != sf || io.shape("ids", r) != si ||
        io.input("features", r).size() != static_cast<size_t>(sf[0] * sf[1]) ||
        io.input("ids", r).size() != static_cast<size_t>(si[0])) {
      *err = "gnn_feature_exchange: rank " + std::to_string(r) +
             "'s features or ids differ in size from rank 0's";
      return false;
    }
  return true;
}

// The feature row that rank s's gathered row p holds; false when the id is out of range.
bool gathered_row(const sandbox::OracleIO& io, int s, int64_t p, int64_t total, int64_t* row,
                  std::string* err) {
  const double v = io.input("ids", s)[static_cast<size_t>(p)];
  *row = static_cast<int64_t>(v);
  if (static_cast<double>(*row) == v && *row >= 0 && *row < total) return true;
  *err = "gnn_feature_exchange: rank " + std::to_string(s) + "'s ids[" + std::to_string(p) +
         "] is " + std::to_string(v) + ", outside [0, " + std::to_string(total - 1) + "]";
  return false;
}

}  // namespace

KF_ORACLE(gnn_feature_exchange) {
  Dims d;
  if (!dims(io, &d, err)) return false;
  const int64_t w = io.world, total = w * d.rows;
  std::vector<double>& out = io.out("out");
  if (out.size() != static_cast<size_t>(total * d.hidden)) {
    *err = "gnn_feature_exchange: out has " + std::to_string(out.size()) +
           " elements, want world * rows * hidden = " + std::to_string(total * d.hidden);
    return false;
  }
  for (int64_t k = 0; k < w; ++k) {
    const int s = static_cast<int>((io.rank + k) % w);  // the sender of our chunk k
    const int64_t j = (w - k) % w;                      // the sender's chunk it is
    const std::vector<double>& f = io.input("features", s);
    for (int64_t i = 0; i < d.rows; ++i) {
      int64_t row = 0;
      if (!gathered_row(io, s, j * d.rows + i, total, &row, err)) return false;
      for (int64_t c = 0; c < d.hidden; ++c)
        out[static_cast<size_t>((k * d.rows + i) * d.hidden + c)] =
            f[static_cast<size_t>(row * d.hidden + c)];
    }
  }
  return true;
}
