// embedding_lookup: the table's V = world * rows rows are split in contiguous blocks of
// `rows` (rank r holds global rows r * rows to (r + 1) * rows - 1); rank r looks up its n
// indices and writes the rows into y grouped by owner rank: a stable sort of its lookups
// by the rank that holds them. problem.json's description is the full contract.
//
// How this twins PKB 10: PKB sends each rank's indices to their owners with
// all_to_all_single, looks them up there and sends the rows back with a second
// all_to_all_single, whose output lists the rows by source (owner) rank, each owner's in
// the order the indices had; it returns that without restoring the index order, so this
// oracle's y is in that grouped order too. PKB clamps the local row into [0, rows - 1]; an
// index in [0, V - 1], which the generator guarantees, never needs it, so here an index
// out of range is a broken contract rather than a clamped row.
#include "kf/oracle.h"

#include <string>
#include <vector>

namespace {

struct Dims {
  int64_t rows = 0, dim = 0, n = 0;
};

// Every rank's table is [rows, dim] and its indices [n]; y (this rank's) is [n, dim].
bool dims(const sandbox::OracleIO& io, Dims* d, std::string* err) {
  const std::vector<int64_t>& st = io.shape("table", 0);
  const std::vector<int64_t>& si = io.shape("indices", 0);
  if (st.size() != 2 || si.size() != 1 || st[0] < 1 || st[1] < 1) {
    *err = "embedding_lookup: table must be [rows, dim] and indices [n], rows and dim >= 1";
    return false;
  }
  d->rows = st[0], d->dim = st[1], d->n = si[0];
  for (int r = 0; r < io.world; ++r)
    if (io.shape("table", r) != st || io.shape("indices", r) != si ||
        io.input("table", r).size() != static_cast<size_t>(d->rows * d->dim) ||
        io.input("indices", r).size() != static_cast<size_t>(d->n)) {
      *err = "embedding_lookup: rank " + std::to_string(r) +
             "'s table or indices differ in size from rank 0's; every rank holds [rows, dim] "
             "and [n]";
      return false;
    }
  return true;
}

// The owner rank of every index; false when one is outside [0, world * rows - 1].
bool owners(const std::vector<double>& idx, const Dims& d, int world, std::vector<int64_t>* own,
            std::string* err) {
  own->resize(idx.size());
  for (size_t i = 0; i < idx.size(); ++i) {
    const int64_t v = static_cast<int64_t>(idx[i]);
    if (static_cast<double>(v) != idx[i] || v < 0 || v >= world * d.rows) {
      *err = "embedding_lookup: index " + std::to_string(i) + " is " + std::to_string(idx[i]) +
             ", outside [0, world * rows - 1] = [0, " + std::to_string(world * d.rows - 1) + "]";
      return false;
    }
    (*own)[i] = v / d.rows;
  }
  return true;
}

// p(i): the indices of lower owners, then this owner's earlier ones (a stable counting
// sort by owner).
std::vector<int64_t> positions(const std::vector<int64_t>& own, int world) {
  std::vector<int64_t> next(static_cast<size_t>(world) + 1, 0);
  for (int64_t o : own) ++next[static_cast<size_t>(o) + 1];
  for (size_t r = 1; r < next.size(); ++r) next[r] += next[r - 1];  // first slot per owner
  std::vector<int64_t> pos(own.size());
  for (size_t i = 0; i < own.size(); ++i) pos[i] = next[static_cast<size_t>(own[i])]++;
  return pos;
}

}  // namespace

KF_ORACLE(embedding_lookup) {
  Dims d;
  if (!dims(io, &d, err)) return false;
  std::vector<double>& y = io.out("y");
  if (y.size() != static_cast<size_t>(d.n * d.dim)) {
    *err = "embedding_lookup: y has " + std::to_string(y.size()) +
           " elements, want n * dim = " + std::to_string(d.n * d.dim);
    return false;
  }
  const std::vector<double>& idx = io.input("indices", io.rank);
  std::vector<int64_t> own;
  if (!owners(idx, d, io.world, &own, err)) return false;
  const std::vector<int64_t> pos = positions(own, io.world);
  for (size_t i = 0; i < idx.size(); ++i) {
    const int64_t row = static_cast<int64_t>(idx[i]) - own[i] * d.rows;
    const std::vector<double>& table = io.input("table", static_cast<int>(own[i]));
    for (int64_t c = 0; c < d.dim; ++c)
      y[static_cast<size_t>(pos[i] * d.dim + c)] = table[static_cast<size_t>(row * d.dim + c)];
  }
  return true;
}
