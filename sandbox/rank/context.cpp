// sandbox/rank/context.cpp: see context.h.
#include "context.h"

#include <mpi.h>

namespace sandbox::rank {

Outcome agree(Outcome mine) {
  int v = mine, worst = 0;
  MPI_Allreduce(&v, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return static_cast<Outcome>(worst);
}

Failure& add_failure(Results& out, Status kind, Role who, const std::string& phase,
                     const std::string& message) {
  Failure f;
  f.kind = kind;
  f.who = who;
  f.phase = phase;
  f.message = message;
  out.report.failures.push_back(f);
  return out.report.failures.back();
}

}  // namespace sandbox::rank
