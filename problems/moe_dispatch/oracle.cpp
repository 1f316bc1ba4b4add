// moe_dispatch: every rank routes its M tokens to their top-k experts by logit (ties to
// the lower expert), permutes the M * topk routed rows by expert then token, and sends
// them over an all-to-all with fixed splits (q = R / world rows per rank, the last takes
// the remainder); rank r's y holds what it receives, regrouped by local expert, then by
// source rank. problem.json's description is the full contract.
//
// How this twins PKB 28 (and the uneven all-to-all of 27) with fixed shapes: PKB draws
// each token's topk distinct experts with randperm; here they are the top-k of normal
// logits, which picks a uniformly random set of distinct experts too and needs no
// constraint between input elements. PKB's output_split_sizes equal its input ones,
// which agree with what peers send only when world divides R; here rank r receives
// S(r) rows from every rank, the consistent reading, equal to PKB's wherever PKB's is
// consistent (the full size). PKB's per-(rank, local expert) counts are R / E with the
// first R % E one larger; here each received block is cut into L sub-chunks with the
// last taking the remainder, so the sub-chunks never straddle source blocks; both are
// R / E at the full size.
#include "kf/oracle.h"

#include <string>
#include <vector>

namespace {

struct Dims {
  int64_t m = 0, n = 0, e = 0, topk = 0;
};

// Split sizes: rank d receives S(d) rows from every rank, cut into L sub-chunks of C(d)
// rows (the last takes the remainder).
struct Splits {
  int64_t world, rows, q, local;
  int64_t size(int64_t d) const { return d == world - 1 ? rows - (world - 1) * q : q; }
  int64_t chunk(int64_t d) const { return size(d) / local; }
  int64_t sub(int64_t d, int64_t l) const {
    return l == local - 1 ? size(d) - (local - 1) * chunk(d) : chunk(d);
  }
};

// The top-k experts of one token: highest logit first, equal logits to the lower index.
std::vector<bool> chosen(const double* logits, int64_t e, int64_t topk) {
  std::vector<bool> taken(static_cast<size_t>(e), false);
  for (int64_t k = 0; k < topk; ++k) {
    int64_t best = -1;
    for (int64_t x = 0; x < e; ++x)
      if (!taken[static_cast<size_t>(x)] && (best < 0 || logits[x] > logits[best])) best = x;
    taken[static_cast<size_t>(best)] = true;
  }
  return taken;
}

// routing_map [E, M] as 0/1 and perm [M * topk]: the tokens sorted by expert, then token.
void route(const std::vector<double>& logits, const Dims& d, std::vector<double>* map,
           std::vector<int64_t>* perm) {
  map->assign(static_cast<size_t>(d.e * d.m), 0);
  for (int64_t t = 0; t < d.m; ++t) {
    std::vector<bool> c = chosen(&logits[static_cast<size_t>(t * d.e)], d.e, d.topk);
    for (int64_t x = 0; x < d.e; ++x)
      if (c[static_cast<size_t>(x)]) (*map)[static_cast<size_t>(x * d.m + t)] = 1;
  }
  perm->clear();
  for (int64_t f = 0; f < d.e * d.m; ++f)
    if ((*map)[static_cast<size_t>(f)] != 0) perm->push_back(f % d.m);
}

bool dims(const sandbox::OracleIO& io, Dims* d, std::string* err) {
  d->e = io.iparam("E");
  d->topk = io.iparam("topk");
  const std::vector<int64_t>& sx = io.shape("x", 0);
  if (sx.size() != 2 || d->e < 1 || d->topk < 1 || d->topk > d->e || d->e % io.world != 0) {
    *err = "moe_dispatch: x must be [M, N], 1 <= topk <= E and E a multiple of world";
    return false;
  }
  d->m = sx[0], d->n = sx[1];
  if (d->m * d->topk < d->e) {
    *err = "moe_dispatch: M * topk must be at least E (every sub-chunk has a row)";
    return false;
  }
  for (int r = 0; r < io.world; ++r)
    if (io.shape("x", r) != sx || io.input("x", r).size() != static_cast<size_t>(d->m * d->n) ||
        io.input("logits", r).size() != static_cast<size_t>(d->m * d->e)) {
      *err = "moe_dispatch: rank " + std::to_string(r) +
             "'s x or logits differs in size from rank 0's; every rank holds [M, N] and [M, E]";
      return false;
    }
  return true;
}

bool check_out(const char* name, size_t got, int64_t want, std::string* err) {
  if (got == static_cast<size_t>(want)) return true;
  *err = std::string("moe_dispatch: ") + name + " has " + std::to_string(got) + " elements, want " +
         std::to_string(want);
  return false;
}

}  // namespace

KF_ORACLE(moe_dispatch) {
  Dims d;
  if (!dims(io, &d, err)) return false;
  const int64_t rows = d.m * d.topk;
  const Splits sp{io.world, rows, rows / io.world, d.e / io.world};
  const int64_t me = io.rank, c = sp.chunk(me);
  std::vector<double>& y = io.out("y");
  std::vector<double>& perm_out = io.out("perm");
  std::vector<double>& map_out = io.out("routing_map");
  if (!check_out("y", y.size(), io.world * sp.size(me) * d.n, err) ||
      !check_out("perm", perm_out.size(), rows, err) ||
      !check_out("routing_map", map_out.size(), d.e * d.m, err))
    return false;
  std::vector<double> map;
  std::vector<int64_t> perm;
  for (int s = 0; s < io.world; ++s) {
    route(io.input("logits", s), d, &map, &perm);
    const std::vector<double>& x = io.input("x", s);
    for (int64_t l = 0; l < sp.local; ++l)
      for (int64_t j = 0; j < sp.sub(me, l); ++j) {
        const int64_t token = perm[static_cast<size_t>(me * sp.q + l * c + j)];
        const int64_t row = io.world * l * c + s * sp.sub(me, l) + j;
        for (int64_t k = 0; k < d.n; ++k)
          y[static_cast<size_t>(row * d.n + k)] = x[static_cast<size_t>(token * d.n + k)];
      }
    if (s != io.rank) continue;
    map_out = map;
    for (size_t p = 0; p < perm.size(); ++p) perm_out[p] = static_cast<double>(perm[p]);
  }
  return true;
}
