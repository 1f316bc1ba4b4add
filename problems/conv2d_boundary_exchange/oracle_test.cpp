#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// Every rank's x ([B, C, H, W]), weight ([C, C, 3, 3]) and bias ([C]), and this rank's y.
struct Fake : OracleFake {
  Fake(int world, int rank) : OracleFake(world, rank) {}
  void tensors(std::vector<std::vector<double>> x, std::vector<int64_t> sx,
               std::vector<std::vector<double>> weight, std::vector<std::vector<double>> bias,
               size_t y_size) {
    const int64_t c = sx[1];
    shapes["x"].assign(x.size(), sx);
    shapes["weight"].assign(weight.size(), {c, c, 3, 3});
    shapes["bias"].assign(bias.size(), {c});
    in["x"] = std::move(x);
    in["weight"] = std::move(weight);
    in["bias"] = std::move(bias);
    outs["y"] = std::vector<double>(y_size, -7);  // poison: the oracle must write it all
  }
  bool run(std::string* err) { return run_oracle("conv2d_boundary_exchange", err); }
};

// A one-channel 3x3 kernel, [kh][kw], with `v` at (kh, kw) and zeros elsewhere.
std::vector<double> tap(int kh, int kw, double v) {
  std::vector<double> k(9, 0.0);
  k[static_cast<size_t>(kh * 3 + kw)] = v;
  return k;
}

}  // namespace

TEST_CASE("conv2d_boundary_exchange oracle: world 1 is a padded 3x3 convolution") {
  REQUIRE(problem_oracle("conv2d_boundary_exchange").loaded());
  std::string err;
  // x = [[1,2],[3,4]], an all-ones kernel: every 3x3 window around a pixel of a 2x2 image
  // covers the whole image, so every y is 1+2+3+4 plus the bias 0.5.
  Fake a(1, 0);
  a.tensors({{1, 2, 3, 4}}, {1, 1, 2, 2}, {std::vector<double>(9, 1.0)}, {{0.5}}, 4);
  REQUIRE_MESSAGE(a.run(&err), err);
  CHECK(a.outs["y"] == std::vector<double>{10.5, 10.5, 10.5, 10.5});
  // One row x = [1,2,3], the kernel's middle row [1,10,100]: y[w] = x[w-1] + 10 x[w] +
  // 100 x[w+1], with zeros left and right: [0+10+200, 1+20+300, 2+30+0].
  Fake b(1, 0);
  std::vector<double> k(9, 0.0);
  k[3] = 1, k[4] = 10, k[5] = 100;
  b.tensors({{1, 2, 3}}, {1, 1, 1, 3}, {k}, {{0}}, 3);
  REQUIRE_MESSAGE(b.run(&err), err);
  CHECK(b.outs["y"] == std::vector<double>{210, 321, 32});
  // The above/below taps of a one-row image at world 1 only see the zero padding.
  Fake c(1, 0);
  std::vector<double> ud = tap(0, 1, 5.0);
  ud[7] = 3.0;  // (kh 2, kw 1)
  c.tensors({{4, 6}}, {1, 1, 1, 2}, {ud}, {{-1}}, 2);
  REQUIRE_MESSAGE(c.run(&err), err);
  CHECK(c.outs["y"] == std::vector<double>{-1, -1});
}

TEST_CASE("conv2d_boundary_exchange oracle: channels and batches") {
  // B = 2, C = 2, one pixel: only the centre tap (1, 1) sees data, so y[b] = Wc @ x[b] +
  // bias with Wc = [[1,2],[3,4]]. x[0] = [1,1], x[1] = [1,-1], bias = [0,10]:
  // y[0] = [3, 17], y[1] = [-1, 9], laid out [b][o].
  std::vector<double> w(36, 0.0);
  const double wc[2][2] = {{1, 2}, {3, 4}};
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 2; ++i) w[static_cast<size_t>((o * 2 + i) * 9 + 4)] = wc[o][i];
  Fake f(1, 0);
  f.tensors({{1, 1, 1, -1}}, {2, 2, 1, 1}, {w}, {{0, 10}}, 4);
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  CHECK(f.outs["y"] == std::vector<double>{3, 17, -1, 9});
}

TEST_CASE("conv2d_boundary_exchange oracle: the neighbours' boundary rows, own weights") {
  // World 3, one column, H = 2: x(0) = [1,2], x(1) = [3,4], x(2) = [5,6] (a tall image
  // 1..6). Kernel column kw = 1 is [1, 10, 100] (above, centre, below): y[h] = X[h-1] +
  // 10 X[h] + 100 X[h+1], X running past the rank's rows into its neighbours'.
  std::vector<double> k(9, 0.0);
  k[1] = 1, k[4] = 10, k[7] = 100;
  const std::vector<std::vector<double>> x = {{1, 2}, {3, 4}, {5, 6}};
  const std::vector<std::vector<double>> want = {
      {0 + 10 + 200, 1 + 20 + 300},  // rank 0: zeros above
      {2 + 30 + 400, 3 + 40 + 500},  // rank 1: x(0)'s last row above, x(2)'s first below
      {4 + 50 + 600, 5 + 60 + 0}};   // rank 2: zeros below
  for (int rank = 0; rank < 3; ++rank) {
    Fake f(3, rank);
    f.tensors(x, {1, 1, 2, 1}, {k, k, k}, {{0}, {0}, {0}}, 2);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    CHECK(f.outs["y"] == want[static_cast<size_t>(rank)]);
  }
  // World 2, one pixel each: x(0) = [2], x(1) = [3]. Rank 0's kernel is the tap below
  // (2, 1) with bias 1, rank 1's the tap above (0, 1) times 10 with bias -1: each rank uses
  // its own weight and bias, so y(0) = 3 + 1 and y(1) = 10 * 2 - 1.
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank);
    f.tensors({{2}, {3}}, {1, 1, 1, 1}, {tap(2, 1, 1.0), tap(0, 1, 10.0)}, {{1}, {-1}}, 1);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    CHECK(f.outs["y"] == std::vector<double>{rank == 0 ? 4.0 : 19.0});
  }
}

TEST_CASE("conv2d_boundary_exchange oracle refuses mismatched shapes and a y of the wrong size") {
  std::string err;
  Fake f(2, 0);
  f.tensors({{1, 2}, {3, 4}}, {1, 1, 2, 1}, {tap(1, 1, 1), tap(1, 1, 1)}, {{0}, {0}}, 2);
  f.shapes["x"][1] = {1, 1, 1, 2};  // rank 1 holds a different shape
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
  Fake g(2, 1);
  g.tensors({{1, 2}, {3, 4}}, {1, 1, 2, 1}, {tap(1, 1, 1), tap(1, 1, 1)}, {{0}, {0}}, 3);
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("B * C * H * W") != std::string::npos);
  Fake h(1, 0);
  h.tensors({{1, 2}}, {1, 1, 2, 1}, {tap(1, 1, 1)}, {{0}}, 2);
  h.shapes["weight"][0] = {1, 1, 1, 1};  // a 1x1 kernel
  CHECK_FALSE(h.run(&err));
  CHECK(err.find("[C, C, 3, 3]") != std::string::npos);
  Fake v(1, 0);
  v.tensors({{1, 2}}, {2, 1}, {tap(1, 1, 1)}, {{0}}, 2);  // x is not 4-D
  CHECK_FALSE(v.run(&err));
  CHECK(err.find("[B, C, H, W]") != std::string::npos);
}

TEST_CASE("conv2d_boundary_exchange oracle: many channels agree with the plain sum") {
  // C = 6 output channels (the oracle sums four at a time: one group and a rest of two),
  // B = 2, H = 3, W = 5, rank 1 of 3, every value distinct; held against the definition
  // written out term by term.
  const int64_t b = 2, c = 6, h = 3, w = 5, n = b * c * h * w;
  std::vector<std::vector<double>> x(3, std::vector<double>(static_cast<size_t>(n)));
  for (size_t r = 0; r < 3; ++r)
    for (size_t e = 0; e < x[r].size(); ++e)
      x[r][e] = static_cast<double>((e * 7 + r * 13) % 23) - 11;
  std::vector<double> weight(static_cast<size_t>(c * c * 9)), bias(static_cast<size_t>(c));
  for (size_t e = 0; e < weight.size(); ++e) weight[e] = static_cast<double>(e % 17) / 8 - 1;
  for (size_t e = 0; e < bias.size(); ++e) bias[e] = static_cast<double>(e) - 2.5;
  auto at = [&](int64_t r, int64_t bi, int64_t ci, int64_t g, int64_t col) {  // X(1)
    if (col < 0 || col >= w) return 0.0;
    if (g < 0) r -= 1, g = h - 1;
    if (g >= h) r += 1, g = 0;
    return x[static_cast<size_t>(r)][static_cast<size_t>(((bi * c + ci) * h + g) * w + col)];
  };
  std::vector<double> want(static_cast<size_t>(n));
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t o = 0; o < c; ++o)
      for (int64_t g = 0; g < h; ++g)
        for (int64_t col = 0; col < w; ++col) {
          double s = bias[static_cast<size_t>(o)];
          for (int64_t i = 0; i < c; ++i)
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw)
                s += weight[static_cast<size_t>(((o * c + i) * 3 + kh) * 3 + kw)] *
                     at(1, bi, i, g + kh - 1, col + kw - 1);
          want[static_cast<size_t>(((bi * c + o) * h + g) * w + col)] = s;
        }
  Fake f(3, 1);
  f.tensors(x, {b, c, h, w}, {weight, weight, weight}, {bias, bias, bias}, static_cast<size_t>(n));
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  REQUIRE(f.outs["y"].size() == want.size());
  for (size_t e = 0; e < want.size(); ++e)
    CHECK(f.outs["y"][e] == doctest::Approx(want[e]).epsilon(1e-12));
}
