// sandbox/rank/serve.cpp: see serve.h.
#include "serve.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "build_gate.h"
#include "harden.h"
#include "jobs.h"
#include "status.h"
#include "steps.h"

namespace sandbox::rank {

namespace {

constexpr size_t kRequestBytes = 1 << 16;
int g_alive = -1;  // <ctl>/alive, read end

// Rank 0: the next line kforge wrote, "" when the FIFO has no writer left (kforge closed
// it, exited, or was killed: the ranks must not outlive it).
std::string read_line(int fd, std::string* pending) {
  for (;;) {
    size_t nl = pending->find('\n');
    if (nl != std::string::npos) {
      std::string line = pending->substr(0, nl);
      pending->erase(0, nl + 1);
      return line;
    }
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      pending->append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return "";
    if (errno != EAGAIN && errno != EINTR) return "";
    usleep(1000);
  }
}

// Waits for the MPI_Ibcast `req` without spinning a core, or for kforge to be gone (then
// the request is not answered and the process is left to end: the launcher goes too).
bool wait_request(MPI_Request* req) {
  for (int done = 0, n = 0;; ++n) {
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (n % 100 == 0 && kforge_gone()) return false;
    usleep(1000);
  }
}

// The next request's job files, from rank 0 to every rank; false for the end.
bool next_request(const Place& at, int fifo, std::string* pending,
                  std::vector<std::string>* paths) {
  std::vector<char> buf(kRequestBytes, 0);
  if (at.rank == 0) {
    std::string line = fifo >= 0 ? read_line(fifo, pending) : "";
    if (line.size() < buf.size()) std::memcpy(buf.data(), line.data(), line.size());
  }
  // Non-blocking and polled with sleeps: a blocking MPI_Bcast would spin a core per rank
  // for as long as the set waits for its next eval.
  MPI_Request req;
  MPI_Ibcast(buf.data(), static_cast<int>(buf.size()), MPI_CHAR, 0, MPI_COMM_WORLD, &req);
  if (!wait_request(&req)) return false;
  nlohmann::json j = nlohmann::json::parse(buf.data(), nullptr, false);
  paths->clear();
  if (j.is_discarded() || !j.is_object() || !j.contains("jobs") || !j["jobs"].is_array())
    return false;
  for (const auto& p : j["jobs"])
    if (p.is_string()) paths->push_back(p.get<std::string>());
  return !paths->empty();
}

// Why `jobs` cannot run on these ranks ("" when they can): what the bootstrap fixed (the
// world, the backend, whether a baseline runs, the candidate's role, the L2 flush) must
// be theirs too, and their heaps must fit the one there is. Sets the jobs' layouts.
std::string refusal(Ctx& c, std::vector<Job> jobs) {
  const Job& a = c.at.jobs.at(0);
  for (const Job& j : jobs)
    if (j.settings.world != c.at.world || j.settings.backend != a.settings.backend ||
        j.baseline_lib.empty() != a.baseline_lib.empty() ||
        j.candidate_is_baseline != a.candidate_is_baseline ||
        j.settings.l2_flush_bytes != a.settings.l2_flush_bytes ||
        j.settings.under_tool != a.settings.under_tool)
      return j.dir +
             "/job.json: its world, backend, baseline, role or L2 flush differ from "
             "the warm set's";
  const size_t heap = c.dev.heap_bytes;
  c.at.jobs = jobs;
  std::string err;
  if (!plan_heaps(c.at, c.dev, &err)) return err;
  const size_t need = c.dev.heap_bytes;
  c.dev.heap_bytes = heap;
  if (need > heap)
    return fmt::format("the eval needs a heap of {} bytes; the warm set's has {}", need, heap);
  return "";
}

// Makes request `n`'s jobs the current ones: read, checked, its status files, a fresh
// report, the CPU backstop renewed, its runners started. Collective.
Outcome begin_request(Ctx& c, const std::vector<std::string>& paths, size_t n,
                      const RankReport& boot, std::string* refused) {
  std::vector<std::string> names = paths;
  std::vector<char*> argv = {nullptr};
  for (auto& p : names) argv.push_back(p.data());
  std::vector<Job> jobs;
  std::string err;
  if (!read_jobs(static_cast<int>(argv.size()), argv.data(), &jobs, &err))
    *refused = err;
  else
    *refused = refusal(c, jobs);
  if (agree(refused->empty() ? kOk : kInternal) != kOk) {
    if (refused->empty()) *refused = "another rank refused the eval (see its stderr)";
    std::fprintf(stderr, "kforge-rank %d: %s\n", c.at.rank, refused->c_str());
    return kInternal;
  }
  c.at.request = n;
  c.at.job_index = 0;
  c.at.job = c.at.jobs[0];
  c.out = Results{};
  c.out.report = boot;
  Outcome o = status_init(c.at.job.dir, c.at.rank, &err) ? kOk : internal(c.at, c.out, err);
  if (o == kOk) {
    status_set(RankPhase::bootstrap, "warm: next eval", false,
               c.at.job.settings.limits.bootstrap_s);
    set_cpu_budget(cpu_budget_s(c.at.jobs));
    o = spawn_runners(c);
  }
  o = agree(o);
  mark(c.out, "warm: runners");
  return o;
}

// Every rank is done with the request (its reports written, its runners gone); then
// rank 0 says so in the request's first folder.
void end_request(Ctx& c, const std::string& first_dir, Outcome o, const std::string& refused) {
  for (RunnerLink& l : c.libs.runners) stop_runner(l);
  c.libs.runners.clear();
  status_set(RankPhase::done, "", false, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (c.at.rank != 0 || first_dir.empty()) return;
  nlohmann::json j = {{"request", c.at.request},
                      {"rc", o == kOk       ? 0
                             : o == kFailed ? 1
                                            : 2},
                      {"refused", refused}};
  std::string err;
  if (!write_json_file(first_dir + "/served.json", j, &err))
    std::fprintf(stderr, "kforge-rank 0: %s\n", err.c_str());
}

// Runners for the next request, as many as this one had jobs (rank/context.h: spares).
// One that cannot be started is left for the next request to start.
void spawn_spares(Ctx& c) {
  if (c.at.jobs.empty() || c.at.job.candidate_is_baseline) return;
  std::string err;
  while (c.libs.spares.size() < c.at.jobs.size()) {
    RunnerLink l;
    if (!spawn_runner(c.at, &l, &err)) {
      std::fprintf(stderr, "kforge-rank %d: a spare runner: %s\n", c.at.rank, err.c_str());
      return;
    }
    c.libs.spares.push_back(l);
  }
}

}  // namespace

void watch_kforge(const std::string& ctl) {
  g_alive = open((ctl + "/alive").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

bool kforge_gone() {
  if (g_alive < 0) return false;
  char c;
  return read(g_alive, &c, 1) == 0;  // EAGAIN while a writer holds it
}

std::string serve_root(const std::string& ctl) {
  return ctl.empty() ? "" : dirname_of(ctl);
}

Outcome serve(Ctx& c, const std::string& ctl, Outcome o, const RankReport& boot) {
  end_request(c, c.at.jobs.empty() ? "" : c.at.jobs[0].dir, o, "");
  if ((o != kOk && o != kFailed) || !c.dev.heap_ready) return o;
  spawn_spares(c);
  int fifo = -1;
  if (c.at.rank == 0) {
    fifo = open((ctl + "/requests").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fifo < 0)
      std::fprintf(stderr, "kforge-rank 0: %s/requests: %s\n", ctl.c_str(), std::strerror(errno));
  }
  std::string pending;
  std::vector<std::string> paths;
  for (size_t n = 1; next_request(c.at, fifo, &pending, &paths); ++n) {
    mark_restart();
    std::string refused;
    o = begin_request(c, paths, n, boot, &refused);
    if (o == kOk) {
      const bool go = agree(wait_for_build(c.at.jobs[0]) ? kOk : kFailed) == kOk;
      mark(c.out, "build wait");
      o = run_launch_jobs(c, o, go, boot);
    }
    end_request(c, dirname_of(paths[0]), o, refused);
    if (o != kOk && o != kFailed) break;
    spawn_spares(c);
  }
  if (fifo >= 0) close(fifo);
  return o;
}

}  // namespace sandbox::rank
