// rope_all_gather: every rank's q_out (and k_out) is every rank's RoPE-embedded q (and k)
// laid along the sequence in rank order: q_out[b][s*S + i][j] = rope(q(s)[b][i][j],
// cos(s)[b][i], sin(s)[b][i]), where rope(x, c, n)[d] = x[d] * c[d] + rot(x)[d] * n[d] and
// rot(x) = (-x[h..D), x[0..h)) with h = D / 2. problem.json's description is the contract.
#include "kf/oracle.h"

#include <string>
#include <vector>

namespace {

struct Dims {
  int64_t b = 0, s = 0, h = 0, d = 0;    // batches, positions per rank, heads, head dim
  int64_t vec() const { return h * d; }  // elements of one position of q
};

// q, k, cos, sin of every rank [B, S, H, D] / [B, S, D], and both outputs [B, world*S, H, D].
bool dims(const sandbox::OracleIO& io, Dims* m, std::string* err) {
  const std::vector<int64_t>& sq = io.shape("q", io.rank);
  if (sq.size() != 4 || sq[3] % 2 != 0) {
    *err = "rope_all_gather: q is not a [B, S, H, D] tensor with D even";
    return false;
  }
  m->b = sq[0], m->s = sq[1], m->h = sq[2], m->d = sq[3];
  const size_t want_qk = static_cast<size_t>(m->b * m->s * m->vec());
  const size_t want_cs = static_cast<size_t>(m->b * m->s * m->d);
  for (int r = 0; r < io.world; ++r)
    for (const char* name : {"q", "k", "cos", "sin"}) {
      const size_t want = name[0] == 'q' || name[0] == 'k' ? want_qk : want_cs;
      if (io.input(name, r).size() != want) {
        *err = "rope_all_gather: rank " + std::to_string(r) + "'s " + name + " has " +
               std::to_string(io.input(name, r).size()) + " elements, want " + std::to_string(want);
        return false;
      }
    }
  return true;
}

// The embedded x of rank s into out, at its piece of every batch.
void embed(std::vector<double>& out, const std::vector<double>& x, const std::vector<double>& c,
           const std::vector<double>& n, const Dims& m, int world, int s) {
  const int64_t half = m.d / 2;
  for (int64_t b = 0; b < m.b; ++b)
    for (int64_t i = 0; i < m.s; ++i) {
      const size_t row = static_cast<size_t>((b * m.s + i) * m.d);  // cos/sin row
      const size_t dst = static_cast<size_t>((b * world + s) * m.s + i) * m.vec();
      for (int64_t j = 0; j < m.h; ++j) {
        const size_t src = static_cast<size_t>((b * m.s + i) * m.vec() + j * m.d);
        for (int64_t d = 0; d < m.d; ++d) {
          const double rot = d < half ? -x[src + d + half] : x[src + d - half];
          out[dst + j * m.d + d] = x[src + d] * c[row + d] + rot * n[row + d];
        }
      }
    }
}

}  // namespace

KF_ORACLE(rope_all_gather) {
  Dims m;
  if (!dims(io, &m, err)) return false;
  std::vector<double>& q_out = io.out("q_out");
  std::vector<double>& k_out = io.out("k_out");
  const size_t want = static_cast<size_t>(io.world * m.b * m.s * m.vec());
  if (q_out.size() != want || k_out.size() != want) {
    *err = "rope_all_gather: q_out and k_out must have world * |q| = " + std::to_string(want) +
           " elements";
    return false;
  }
  for (int s = 0; s < io.world; ++s) {
    const std::vector<double>& c = io.input("cos", s);
    const std::vector<double>& n = io.input("sin", s);
    embed(q_out, io.input("q", s), c, n, m, io.world, s);
    embed(k_out, io.input("k", s), c, n, m, io.world, s);
  }
  return true;
}
