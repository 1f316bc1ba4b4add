// sandbox/rank/jobs.cpp: see jobs.h.
#include "jobs.h"

namespace sandbox::rank {

std::string dirname_of(const std::string& path) {
  size_t s = path.rfind('/');
  return s == std::string::npos ? "." : s == 0 ? "/" : path.substr(0, s);
}

namespace {

bool read_job(const std::string& path, Job* job, std::string* err) {
  nlohmann::json j;
  if (!read_json_file(path, &j, err)) return false;
  try {
    j.get_to(*job);
  } catch (const std::exception& e) {
    *err = path + ": " + e.what();
    return false;
  }
  if (job->dir.empty()) job->dir = dirname_of(path);
  return true;
}

// The jobs of one launch share the ranks, the heap, NCCL and the libraries.
bool jobs_agree(const std::vector<Job>& jobs, std::string* err) {
  for (const Job& j : jobs) {
    const Job& a = jobs[0];
    if (j.settings.world != a.settings.world || j.settings.backend != a.settings.backend ||
        j.candidate_lib != a.candidate_lib || j.baseline_lib != a.baseline_lib ||
        j.candidate_is_baseline != a.candidate_is_baseline || j.shm_prefix != a.shm_prefix ||
        j.settings.l2_flush_bytes != a.settings.l2_flush_bytes) {
      *err = j.dir +
             "/job.json: world, backend, libraries, shm_prefix and l2_flush_bytes must "
             "equal those of " +
             a.dir + "/job.json (one launch runs both)";
      return false;
    }
  }
  return true;
}

}  // namespace

bool read_jobs(int argc, char** argv, std::vector<Job>* jobs, std::string* err) {
  for (int i = 1; i < argc; ++i) {
    Job job;
    if (!read_job(argv[i], &job, err)) return false;
    jobs->push_back(job);
  }
  return jobs_agree(*jobs, err);
}

}  // namespace sandbox::rank
