// fault: all_reduce world=2 expect=correct
// Writes 256 KB to stdout and stderr on every call, then the right sum: the output is
// capped, the verdict unaffected.
#include <cstdio>
#include <string>

#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const std::string line(1023, 'x');
  for (int i = 0; i < 256; ++i) std::fprintf(i % 2 ? stdout : stderr, "%s\n", line.c_str());
  return fault::correct_run(comm, t);
}
