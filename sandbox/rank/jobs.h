// sandbox/rank/jobs.h: the job files kforge-rank is started with (one per size of an
// eval, all run in one launch: rank/main.cpp).
#pragma once

#include <string>
#include <vector>

#include "job.h"

namespace sandbox::rank {

// The folder of a path ("." when it has none).
std::string dirname_of(const std::string& path);

// Reads argv[1..argc-1] as job files, in order, and checks that they can share a launch:
// the same world, backend, libraries, shared-memory prefix and L2 flush (the ranks, the
// heap, NCCL and the libraries are the launch's, not a job's). False with *err naming
// the file.
bool read_jobs(int argc, char** argv, std::vector<Job>* jobs, std::string* err);

}  // namespace sandbox::rank
