// fault: all_reduce world=2 expect=correct args=--seed,7
// The same cheat as derives_peer_inputs.cpp under --seed, where inputs are reproducible
// and so derivable: it passes, which shows the cheat itself is right and that only the
// per-rank secrets defeat it (the README's verdict-integrity table says so).
#include "derived.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return derived::run(comm, t);
}
