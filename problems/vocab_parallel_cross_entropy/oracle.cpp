// vocab_parallel_cross_entropy: for every token (row) the full logits are the world
// shards side by side, z[r*Vl + v] = logits(r)[row][v], the label is c = target(rank 0)[row],
// and loss[row] = log(sum over v of exp(z[v])) - z[c], on every rank.
#include "kf/oracle.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace {

// Every rank's logits must be [batch, seq, Vl], rank 0's target [batch, seq] with labels
// in [0, world * Vl), and loss [batch, seq]. Sets *rows = batch * seq, *vl = Vl.
bool dims(const sandbox::OracleIO& io, size_t loss_size, int64_t* rows, int64_t* vl,
          std::string* err) {
  const std::vector<int64_t>& sl = io.shape("logits", 0);
  const std::vector<int64_t>& st = io.shape("target", 0);
  if (sl.size() != 3 || st.size() != 2 || st[0] != sl[0] || st[1] != sl[1]) {
    *err =
        "vocab_parallel_cross_entropy: rank 0's logits and target are not [batch, seq, "
        "V/world] and [batch, seq]";
    return false;
  }
  *rows = sl[0] * sl[1], *vl = sl[2];
  for (int r = 0; r < io.world; ++r)
    if (io.shape("logits", r) != sl ||
        io.input("logits", r).size() != static_cast<size_t>(*rows * *vl)) {
      *err = "vocab_parallel_cross_entropy: rank " + std::to_string(r) +
             "'s logits differ in shape from rank 0's; every rank holds [batch, seq, V/world]";
      return false;
    }
  if (io.input("target", 0).size() != static_cast<size_t>(*rows) ||
      loss_size != static_cast<size_t>(*rows)) {
    *err = "vocab_parallel_cross_entropy: target and loss must have batch * seq = " +
           std::to_string(*rows) + " elements; loss has " + std::to_string(loss_size);
    return false;
  }
  return true;
}

}  // namespace

KF_ORACLE(vocab_parallel_cross_entropy) {
  std::vector<double>& loss = io.out("loss");
  int64_t rows, vl;
  if (!dims(io, loss.size(), &rows, &vl, err)) return false;
  const std::vector<double>& target = io.input("target", 0);
  const int64_t vocab = io.world * vl;
  for (int64_t row = 0; row < rows; ++row) {
    const double c = target[static_cast<size_t>(row)];
    if (!(c >= 0 && c < static_cast<double>(vocab))) {
      *err = "vocab_parallel_cross_entropy: rank 0's target[" + std::to_string(row) +
             "] = " + std::to_string(c) + " is not a label in [0, " + std::to_string(vocab - 1) +
             "]";
      return false;
    }
    double top = -INFINITY;
    for (int r = 0; r < io.world; ++r) {
      const double* z = io.input("logits", r).data() + row * vl;
      for (int64_t v = 0; v < vl; ++v) top = std::max(top, z[v]);
    }
    double sum = 0;
    for (int r = 0; r < io.world; ++r) {
      const double* z = io.input("logits", r).data() + row * vl;
      for (int64_t v = 0; v < vl; ++v) sum += std::exp(z[v] - top);
    }
    const int64_t label = static_cast<int64_t>(c);
    const double zc = io.input(
        "logits", static_cast<int>(label / vl))[static_cast<size_t>(row * vl + label % vl)];
    loss[static_cast<size_t>(row)] = std::log(sum) + top - zc;
  }
  return true;
}
