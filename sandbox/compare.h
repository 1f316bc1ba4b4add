// sandbox/compare.h: holding one output against its expected values, and an input
// against the values it was generated with. Pure C++: kforge-rank fills the Failure
// fields from these results, and the tests exercise them without MPI or a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "job.h"

namespace sandbox {

struct Comparison {
  int64_t bad_count = 0;
  int64_t total = 0;
  double max_abs = 0;                   // over the finite elements
  double max_rel = 0;                   // over the finite elements with want != 0
  std::vector<Failure::Bad> first_bad;  // at most kMaxBad, in index order
};

constexpr size_t kMaxBad = 8;

// Row-major multi-dimensional index of flat element `flat` of `shape`.
std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& shape);

// An element passes when |got - want| <= atol + rtol * |want|. A NaN in `got` always
// fails (the poison the sandbox writes into outputs decodes to NaN in every float
// type), and so does an infinity unless `want` is the same infinity.
Comparison compare_values(const std::vector<double>& got, const std::vector<double>& want,
                          const std::vector<int64_t>& shape, double atol, double rtol);

// Bit-for-bit: element i differs when its bytes do. `got` and `want` hold the raw
// elements of `dtype`; the values reported are decoded.
Comparison compare_bits(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                        kf::DType dtype, const std::vector<int64_t>& shape);

// Fills a Failure's comparison fields and a readable message, e.g.
// "output 'y': 12 of 4099 elements wrong (max abs err 0.5, max rel err 1); first at [3]:
// got 0.1, want 0.2".
void describe(const Comparison& c, const std::string& tensor, bool input, Failure* f);

// "[3, 0]"
std::string index_string(const std::vector<int64_t>& index);

}  // namespace sandbox
