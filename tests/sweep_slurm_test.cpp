// tests/sweep_slurm_test.cpp: `kforge sweep --slurm` on a real one-node Slurm cluster that
// the test starts (tests/slurm_cluster.h): the five collectives x 4 samples of
// tests/sweep_test.cpp as a job array of three tasks against the same scripted model
// server, the same hand-computed numbers from the merged task ledgers, every sample run
// once; then the sweep submitted again, split two ways this time: nothing runs again.
#include <chrono>
#include <map>
#include <set>

#include "kf_build_paths.h"
#include "sweep/ledger.h"
#include "tests/slurm_cluster.h"
#include "tests/solve_harness.h"
#include "tests/sweep_script.h"

namespace {

using namespace sweep_script;
using solve_test::Harness;
using solve_test::json;

// The job id in `kforge sweep --slurm`'s output ("submitted Slurm job 123: ...").
std::string job_id(const std::string& text) {
  const std::string mark = "submitted Slurm job ";
  size_t at = text.find(mark);
  if (at == std::string::npos) return "";
  at += mark.size();
  return text.substr(at, text.find_first_not_of("0123456789", at) - at);
}

// Submits the sweep, waits for its array to leave the queue and checks that every task
// completed with exit code 0 (slurmctld keeps an ended job's record for MinJobAge, 300 s).
void run_array(Harness& h, const slurm_test::Cluster& cluster, std::vector<std::string> args,
               int tasks) {
  std::string text, out;
  INFO(text);
  REQUIRE(h.kforge(args, &text) == 0);
  std::string id = job_id(text);
  REQUIRE_MESSAGE(!id.empty(), text);
  CHECK(text.find(std::to_string(tasks) + " array tasks over 20 samples") != std::string::npos);
  CHECK(text.find("kforge sweep status ") != std::string::npos);  // how to follow it
  INFO(cluster.logs());
  REQUIRE(cluster.wait_job_gone(id, 1200));
  REQUIRE(cluster.client({"scontrol", "-o", "show", "job", id}, &out) == 0);
  INFO(out);
  auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = 0; (at = out.find(what, at)) != std::string::npos; ++at) ++n;
    return n;
  };
  CHECK(count("JobState=COMPLETED") == tasks);
  CHECK(count(" ExitCode=0:0") == tasks);
}

}  // namespace

TEST_CASE(
    "sweep --slurm: a job array on a real one-node cluster gives the numbers of the "
    "local sweep, each sample once, and resubmitted runs nothing again" *
    doctest::timeout(2400)) {
  auto t0 = std::chrono::steady_clock::now();
  Harness h;
  fake_llm::Server server;
  std::string err;
  REQUIRE_MESSAGE(server.start(script(kMix), &err), err);
  // Last made, first stopped: the array's tasks end before the server and the folder go.
  slurm_test::Cluster cluster;
  REQUIRE_MESSAGE(cluster.start(&err), (err + "\n" + cluster.logs()));
  h.extra_env.push_back(cluster.conf_env());
  std::string out = h.dir() + "/sweep";
  std::vector<std::string> args = sweep_args(h, server, out, kCollectives, 4, 2);
  args.insert(args.end(), {"--slurm", "--array-size", "3", "--sbatch=--time=60", "--sbatch",
                           "--cpus-per-task=1"});
  run_array(h, cluster, args, 3);

  // The batch script runs this build's kforge by its absolute path, the same sweep.
  std::string batch = solve_test::read_file(out + "/slurm/sweep.sbatch");
  CHECK(batch.find("exec '" + std::string(KF_BINARY_DIR) + "/kforge' 'sweep'") !=
        std::string::npos);
  CHECK(batch.find("'--out' '" + out + "'") != std::string::npos);
  auto task_log = [&](int t) {
    return solve_test::read_file(out + "/slurm/task-" + std::to_string(t) + ".log");
  };
  CHECK(task_log(0).find("7/7 done, 0 running, 0 left") != std::string::npos);
  CHECK(task_log(1).find("7/7 done, 0 running, 0 left") != std::string::npos);
  CHECK(task_log(2).find("6/6 done, 0 running, 0 left") != std::string::npos);

  // Each task wrote its share (every third sample: 7, 7, 6) to a ledger of its own, and
  // every sample was asked for, and finished, exactly once across them.
  std::vector<sweep::Record> recs;
  int torn = 0;
  std::map<std::string, int> per_file;
  for (int t = 0; t < 3; ++t) {
    std::string f = out + "/ledger-" + std::to_string(t) + ".jsonl";
    std::string text = solve_test::read_file(f);
    for (size_t at = 0; (at = text.find("\"state\":\"done\"", at)) != std::string::npos; ++at)
      ++per_file[f];
  }
  CHECK(per_file[out + "/ledger-0.jsonl"] == 7);
  CHECK(per_file[out + "/ledger-1.jsonl"] == 7);
  CHECK(per_file[out + "/ledger-2.jsonl"] == 6);
  CHECK_FALSE(std::filesystem::exists(out + "/ledger.jsonl"));
  REQUIRE(sweep::read_ledgers(out, &recs, &torn, &err));
  std::map<std::string, int> done;
  for (const auto& r : recs) done[sweep::sample_key(r)] += r.state == sweep::SampleState::done;
  CHECK(done.size() == 20);
  for (const auto& [key, n] : done) CHECK_MESSAGE(n == 1, key);
  std::multiset<std::string> seen = asked(server);
  CHECK(seen.size() == 20);
  for (const auto& [problem, whats] : kMix)
    for (int i = 0; i < 4; ++i) CHECK(seen.count(problem + "/" + std::to_string(i)) == 1);
  // `kforge sweep status` merges the tasks' ledgers: the local sweep's hand-computed numbers.
  json st = status(h, out);
  CHECK(st["running"] == 0);
  check_mix_numbers(st);

  // Submitted again, split two ways: each task finds its share finished in the others'
  // ledgers, and nothing is asked for or started again.
  size_t records_before = recs.size();
  std::vector<std::string> again = sweep_args(h, server, out, kCollectives, 4, 2);
  again.insert(again.end(), {"--slurm", "--array-size", "2"});
  run_array(h, cluster, again, 2);
  CHECK(asked(server).size() == 20);
  REQUIRE(sweep::read_ledgers(out, &recs, &torn, &err));
  CHECK(recs.size() == records_before);
  for (int t = 0; t < 2; ++t)  // appended to the first run's log
    CHECK(task_log(t).find("10/10 done, 0 running, 0 left") != std::string::npos);
  check_mix_numbers(status(h, out));
  MESSAGE("the Slurm sweep test took "
          << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s");
}
