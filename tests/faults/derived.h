// tests/faults/derived.h: the derived-inputs cheat, shared by two cases. kf_run never
// reads a peer: it rebuilds every peer's x with a copy of the public input generator
// (sandbox/inputs.h, pasted in by the test) from the seed in the job file, deriving each
// rank's input secret as kforge does for --seed, and counting its calls to know which
// call's seed applies (the trials' calls, then the race pass's). Without --seed each
// rank's secret is drawn at random and never leaves it: the rebuilt inputs are wrong.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common.h"
#include "inputs.h"

namespace derived {

// The number after "key": in ../job.json (the working directory is <run>/scratch).
inline long long job_number(const char* key) {
  std::FILE* f = std::fopen("../job.json", "r");
  if (!f) return -1;
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  size_t at = text.find(std::string("\"") + key + "\":");
  return at == std::string::npos ? -1 : std::atoll(text.c_str() + at + std::strlen(key) + 3);
}

inline int run(kf::Comm& comm, kf::Tensors& t) {
  namespace in = sandbox::inputs;
  static int n = 0;  // calls so far: trials * calls barriered ones, then the race pass
  const long long seed = job_number("seed"), trials = job_number("trials"),
                  calls = job_number("calls");
  if (seed < 0 || trials < 1 || calls < 1) return 9;
  const int k = n++;
  const bool race = k >= trials * calls;
  const kf::Tensor& x = t["x"];
  float* y = t["y"].ptr<float>();
  in::Init init;  // uniform [-1, 1), as all_reduce's problem.json says
  for (int64_t i = 0; i < x.numel; ++i) {
    float s = 0;
    for (int r = 0; r < comm.world; ++r) {
      if (r == comm.rank) {
        s += x.ptr<const float>()[i];
        continue;
      }
      const uint64_t secret = in::call_seed(static_cast<uint64_t>(seed), 4, r, 0);
      const uint64_t call =
          race ? in::call_seed(secret, 2, 0, static_cast<int>(k - trials * calls))
               : in::call_seed(secret, 0, static_cast<int>(k / calls), static_cast<int>(k % calls));
      s += static_cast<float>(
          in::decode(in::element_bits(call, r, 0, i, init, kf::DType::f32), kf::DType::f32));
    }
    y[i] = s;
  }
  return 0;
}

}  // namespace derived
