// pkb/evaluate_test.cpp: the evaluator's control flow against a stand-in python the
// tests write (a shell script that writes the ranks' JSON, or misbehaves).
#include "pkb/evaluate.h"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "kf_build_paths.h"
#include "pkb/job.h"
#include "pkb/test_util.h"
#include "pkb/text.h"
#include "sandbox/confine.h"

namespace {

// A checkout, a solution, a work folder and a stand-in python whose body is `body`
// (after $out, $world, $ext, $sol, $ref and $probe, 1 for the driver's --probe, are parsed
// from the job's command line).
struct Fixture {
  pkb::test::FakeCheckout f;
  pkb::EvalSpec spec;
  explicit Fixture(const std::string& body, int world = 1) {
    pkb::Checkout c;
    std::string err;
    REQUIRE(pkb::open_checkout(f.root, &c, &err));
    REQUIRE(pkb::find_problem(c, "16", &spec.problem, &err));
    spec.checkout = c.root;
    spec.world = world;
    spec.solution = f.root + "/solution.py";
    f.write("solution.py", "def solution(x):\n    return x\n");
    spec.work_dir = f.root + "/work";
    std::filesystem::create_directories(spec.work_dir);
    spec.ext_cache = f.root + "/ext";
    spec.driver = f.root + "/driver.py";
    spec.confine = false;
    spec.timeout_s = 20;
    spec.python = f.root + "/python";
    f.write("python",
            "#!/bin/sh\nout=''; world=''; probe=''\nwhile [ $# -gt 0 ]; do case \"$1\" in\n"
            "  --out) out=\"$2\"; shift;;\n  --nproc) world=\"$2\"; shift;;\n"
            "  --ext-cache) ext=\"$2\"; shift;;\n  --probe) probe=1;;\n"
            "  --solution) sol=\"$2\"; shift;;\n  --reference) ref=\"$2\"; shift;;\n"
            "esac; shift; done\n" +
                body + "\n");
    chmod(spec.python.c_str(), 0755);
  }
  sandbox::Verdict run() {
    sandbox::Verdict v;
    std::string err;
    REQUIRE_MESSAGE(pkb::evaluate(spec, &v, &err), err);
    return v;
  }
};

const char* kCorrectRank =
    "echo '{\"rank\":'$1',\"status\":\"correct\",\"phase\":\"time trial 1\",\"trials\":["
    "{\"trial\":0,\"ref_ms\":2.0,\"cand_ms\":'$2'},{\"trial\":1,\"ref_ms\":2.0,\"cand_ms\":'$2'}]}'"
    " > $out/rank$1.json";

}  // namespace

TEST_CASE("pkb eval: the job's command, KF_PYTHON overriding the default") {
  Fixture x("exit 0", 4);
  x.spec.python = "";
  setenv("KF_PYTHON", "/opt/stand-in/python3", 1);
  auto a = pkb::job_argv(x.spec);
  unsetenv("KF_PYTHON");
  REQUIRE(a.size() > 8);
  CHECK(a[0] == "/opt/stand-in/python3");
  CHECK(a[1] == x.spec.driver);
  CHECK(a[2] == "--nproc");
  CHECK(a[3] == "4");
  std::string line;
  for (auto& s : a) line += s + " ";
  CHECK(line.find("--problem-id 16 ") != std::string::npos);
  CHECK(line.find("--atol 0.01 --rtol 0.01 ") != std::string::npos);
  CHECK(line.find("--trials 5 --warmup 500 --warmup-s 10 --iters 100 ") != std::string::npos);
  CHECK(line.find("--timed-check clones ") != std::string::npos);
  CHECK(pkb::job_argv(x.spec)[0] == "python3");
}

TEST_CASE("pkb eval: correct, with the slowest rank's times and the speedup") {
  Fixture x(std::string("rank() {\n") + kCorrectRank + "\n}\nrank 0 1.0\nrank 1 1.6\n", 2);
  auto v = x.run();
  CHECK(v.status == sandbox::Status::correct);
  CHECK(v.timed);
  CHECK(v.candidate_time.median_ms == doctest::Approx(1.6));
  CHECK(v.baseline_time.median_ms == doctest::Approx(2.0));
  CHECK(v.speedup == doctest::Approx(2.0 / 1.6));
  CHECK(v.summary.find("vs the reference 2") != std::string::npos);  // not "vs NCCL"
}

TEST_CASE("pkb eval: the trials' own speedups (paired rounds) win over the ratio of medians") {
  // Three trials whose clocks shifted between them: the times double, the pairs agree.
  Fixture x(
      "echo '{\"rank\":0,\"status\":\"correct\",\"trials\":["
      "{\"trial\":0,\"ref_ms\":0.03,\"cand_ms\":0.02,\"speedup\":1.5},"
      "{\"trial\":1,\"ref_ms\":0.06,\"cand_ms\":0.04,\"speedup\":1.4},"
      "{\"trial\":2,\"ref_ms\":0.03,\"cand_ms\":0.04,\"speedup\":1.6}]}' > $out/rank0.json",
      1);
  auto v = x.run();
  CHECK(v.status == sandbox::Status::correct);
  CHECK(v.speedup == doctest::Approx(1.5));  // the median of 1.5, 1.4, 1.6; not 0.03/0.04
  CHECK(v.candidate_time.median_ms == doctest::Approx(0.04));
}

TEST_CASE(
    "pkb eval: timed outputs left unchecked, clones not had, a short warmup are said to the "
    "person only") {
  Fixture x(
      "echo '{\"rank\":0,\"status\":\"correct\",\"trials\":["
      "{\"trial\":0,\"ref_ms\":2,\"cand_ms\":1,\"speedup\":2,\"unchecked\":\"\","
      "\"short_warmup\":\"reference 50, candidate 90 of 500 calls\"},"
      "{\"trial\":1,\"ref_ms\":2,\"cand_ms\":1,\"speedup\":2,\"unchecked\":\"no room\"},"
      "{\"trial\":2,\"ref_ms\":2,\"cand_ms\":1,\"speedup\":2,\"no_clones\":\"no room for 9\"}]}'"
      " > $out/rank0.json",
      1);
  auto v = x.run();
  CHECK(v.status == sandbox::Status::correct);
  REQUIRE(v.harness_notes.size() == 3);
  CHECK(v.harness_notes[0].find("not checked on fresh inputs (trial 1: no room)") !=
        std::string::npos);
  CHECK(v.harness_notes[1].find("clones could not be had (trial 2: no room for 9)") !=
        std::string::npos);
  CHECK(v.harness_notes[2].find("(trial 0: reference 50, candidate 90 of 500 calls); --warmup-s 0 "
                                "makes all") != std::string::npos);
  CHECK(v.notes.empty());  // the model's feedback prints these
  CHECK(sandbox::render_text(v).find("trial 1: no room") != std::string::npos);
}

TEST_CASE("pkb eval: a hang is a timeout naming whose calls ran, and its processes are gone") {
  Fixture x(
      "echo \"time trial 2 (the reference's calls)\" > $out/rank0.phase\n"
      "sleep 300 & echo $! > $out/child.pid\nwait");
  x.spec.timeout_s = 1;
  auto v = x.run();
  CHECK(v.status == sandbox::Status::timeout);
  REQUIRE(v.stuck.size() == 1);
  CHECK(v.stuck[0].phase == "time trial 2");
  CHECK(v.stuck[0].detail == "the reference's calls");
  CHECK_FALSE(v.stuck[0].in_candidate);  // no "inside kf_run": that is a native problem's
  CHECK(v.limit_s == doctest::Approx(1));
  std::string told;  // the person is told how to give it more
  for (const std::string& n : v.harness_notes) told += n + "\n";
  CHECK_MESSAGE(told.find("may take 1 s; where the reference's own calls are that slow, "
                          "--job-limit gives the job more") != std::string::npos,
                told);
  CHECK_MESSAGE(
      sandbox::render_text(v).find("time trial 2 (the reference's calls)") != std::string::npos,
      sandbox::render_text(v));
  int child = 0;
  std::ifstream(x.spec.work_dir + "/child.pid") >> child;
  REQUIRE(child > 0);
  CHECK_FALSE(sandbox::process_alive(child));
}

TEST_CASE("pkb eval: a crash with no result is a crash, with its output") {
  Fixture x(
      "echo 'check trial 0' > $out/rank0.phase\necho 'Segmentation fault in rank 0' >&2\n"
      "kill -SEGV $$");
  auto v = x.run();
  CHECK(v.status == sandbox::Status::crash);
  REQUIRE(!v.crashes.empty());
  CHECK(v.crashes[0].what.find("SIGSEGV") != std::string::npos);
}

TEST_CASE("pkb eval: an import error is a compile_error carrying Python's message") {
  Fixture x(
      "echo '{\"rank\":0,\"status\":\"compile_error\",\"phase\":\"load candidate\","
      "\"message\":\"ModuleNotFoundError: No module named triton_x\"}' > $out/rank0.json\nexit 1");
  auto v = x.run();
  CHECK(v.status == sandbox::Status::compile_error);
  CHECK(v.log.find("No module named triton_x") != std::string::npos);
  CHECK(sandbox::render_text(v).find("No module named triton_x") != std::string::npos);
}

TEST_CASE("pkb eval: a python that does not start the driver is the setup's error, named") {
  // As a pyenv shim in the sandbox: the program it runs is not there (nothing written).
  Fixture x("echo 'pyenv: /root/.pyenv/libexec/pyenv: No such file or directory' >&2\nexit 127");
  sandbox::Verdict v;
  std::string err;
  agent::SetupFault setup = agent::SetupFault::none;
  CHECK_FALSE(pkb::evaluate(x.spec, &v, &err, &setup));
  CHECK(setup == agent::SetupFault::machine);
  CHECK(err.find("the job's python, " + x.spec.python + ", did not start") != std::string::npos);
  CHECK(err.find("exit 127") != std::string::npos);
  CHECK(err.find("libexec/pyenv: No such file") != std::string::npos);  // its output
  CHECK(err.find("is a script") != std::string::npos);                  // what to give instead
  CHECK(err.find("--python or KF_PYTHON") != std::string::npos);
}

const char* kFewerGpus =
    "{\"status\":\"environment\",\"python\":\"/venv/bin/python3\",\"message\":\"2 ranks "
    "need 2 GPUs here (NCCL takes one a rank) and torch sees 1: pass --world 1\"}";

TEST_CASE("pkb eval: a setup the job cannot run, as the probe confirms, is the setup's error") {
  Fixture x(std::string("if [ \"$probe\" = 1 ]; then echo '") + kFewerGpus +
                "' > $out/probe.json; else echo '" + kFewerGpus + "' > $out/rank1.json; fi",
            2);
  sandbox::Verdict v;
  std::string err;
  agent::SetupFault setup = agent::SetupFault::none;
  CHECK_FALSE(pkb::evaluate(x.spec, &v, &err, &setup));
  CHECK(setup == agent::SetupFault::machine);
  CHECK(err.find("this setup cannot run a PKB job: 2 ranks need 2 GPUs") != std::string::npos);
  CHECK(err.find("pass --world 1") != std::string::npos);
  CHECK(err.find("its python: /venv/bin/python3") != std::string::npos);
}

// The candidate shares the job's process: it can write a rank's report, or remove them all.
TEST_CASE("pkb eval: a setup failure the probe does not see is the solution's crash") {
  for (std::string job : {std::string("echo '") + kFewerGpus + "' > $out/rank0.json",
                          std::string("rm -f $out/rank0.phase $out/rank0.json")}) {
    Fixture x("if [ \"$probe\" = 1 ]; then echo '{\"status\":\"ok\"}' > $out/probe.json; else " +
              job + "; fi");
    sandbox::Verdict v = x.run();
    INFO(sandbox::render_text(v));
    CHECK(v.status == sandbox::Status::crash);
    CHECK(sandbox::render_text(v).find("that was the solution's doing") != std::string::npos);
  }
}

// What a rank reports when making its inputs ran out of device memory (problem 68's two
// 53 GiB tuples on an 80 GB card). printf, not echo: dash's echo would turn the JSON's \n
// into a newline.
const char* kInputsFailed =
    "echo \"$sol\" > $out/solution_used; printf '%s' "
    "'{\"rank\":0,\"status\":\"reference\",\"phase\":"
    "\"check trial 0\",\"side\":\"inputs\",\"message\":\"in check trial 0: Traceback (most "
    "recent call last):\\n  File x\\ntorch.OutOfMemoryError: CUDA out of memory. Tried to "
    "allocate 52.93 GiB\\n\"}' > $out/rank0.json; exit 1";

TEST_CASE("pkb eval: a reference that fails alone too is the setup's error, named") {
  Fixture x(kInputsFailed);
  sandbox::Verdict v;
  std::string err;
  agent::SetupFault setup = agent::SetupFault::none;
  CHECK_FALSE(pkb::evaluate(x.spec, &v, &err, &setup));
  CHECK(setup == agent::SetupFault::problem);
  INFO(err);
  CHECK(err.find(x.spec.problem.name +
                 ": PKB's reference fails on this setup at world 1, with "
                 "no solution loaded (rank 0, check trial 0 (making the inputs): "
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 52.93 GiB)") !=
        std::string::npos);
  CHECK(err.find("more ranks (--world)") != std::string::npos);
  // The second job had the reference as its candidate.
  CHECK(pkb::read_text(x.spec.work_dir + "/solution_used").find("solution.py") !=
        std::string::npos);
  CHECK(pkb::read_text(x.spec.work_dir + "/reference_alone/solution_used") ==
        x.spec.problem.reference + "\n");

  // The reference as its own candidate: that job was the reference alone, and is not run
  // twice.
  Fixture same(kInputsFailed);
  same.spec.solution = same.spec.problem.reference;
  CHECK_FALSE(pkb::evaluate(same.spec, &v, &err, &setup));
  CHECK(setup == agent::SetupFault::problem);
  CHECK(err.find("with no solution loaded") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(same.spec.work_dir + "/reference_alone"));
}

// The candidate shares the reference's process: its import can leave the reference no
// device memory, or break what the reference calls in ways the watch does not see.
TEST_CASE("pkb eval: a reference that fails only beside the solution is the solution's crash") {
  Fixture x(std::string("if [ \"$sol\" = \"$ref\" ]; then rank() {\n") + kCorrectRank +
            "\n}\nrank 0 1.0\nelse " + kInputsFailed + "; fi");
  sandbox::Verdict v = x.run();
  std::string text = sandbox::render_text(v);
  INFO(text);
  CHECK(v.status == sandbox::Status::crash);
  // One line for the summary, the traceback in the log.
  CHECK(v.summary.find("crash: rank 0 died with an exception in check, trial 0: "
                       "torch.OutOfMemoryError: CUDA out of memory.") == 0);
  CHECK(v.log.find("Traceback (most recent call last):") != std::string::npos);
  CHECK(text.find("the reference failed with this solution loaded, and not without it") !=
        std::string::npos);
}

TEST_CASE("pkb eval: a candidate that changed what the harness calls is rejected, named") {
  Fixture x(
      "echo '{\"rank\":0,\"status\":\"rejected\",\"phase\":\"check trial 0\","
      "\"changed\":[\"torch.allclose\",\"torch.cuda.Event.elapsed_time\"]}' > $out/rank0.json");
  auto v = x.run();
  CHECK(v.status == sandbox::Status::rejected);
  REQUIRE(v.findings.size() == 1);
  CHECK(v.findings[0].rule == "tamper");
  CHECK(v.findings[0].file == "solution.py");
  std::string text = sandbox::render_text(v);
  CHECK(text.find("changes torch.allclose, torch.cuda.Event.elapsed_time") != std::string::npos);
  CHECK_FALSE(v.timed);
}

TEST_CASE("pkb eval: a bad shape and a wrong dtype are mismatches naming rank and tensor") {
  for (std::string what :
       {"shape (4, 4), want (4, 8)", "dtype torch.float32, want torch.bfloat16"}) {
    Fixture x(
        std::string("rank() {\n") + kCorrectRank + "\n}\nrank 0 1.0\n" +
            "echo '{\"rank\":1,\"status\":\"mismatch\",\"phase\":\"check trial 0\",\"trial\":0,"
            "\"tensor\":\"output_1\",\"message\":\"output_1: " +
            what + "\"}' > $out/rank1.json\nexit 1",
        2);
    auto v = x.run();
    CHECK(v.status == sandbox::Status::mismatch);
    REQUIRE(v.failures.size() == 1);
    CHECK(v.failure_ranks[0] == 1);
    CHECK(v.failures[0].tensor == "output_1");
    CHECK(v.failures[0].message.find(what) != std::string::npos);
    CHECK(v.failures[0].message.find("rank 1") != std::string::npos);
    CHECK_FALSE(v.timed);
  }
}

// What `command` prints, without its last newline.
std::string output_of(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// The real driver, confined where this machine confines (its folder, with the modules it
// imports, in the jail): correct where torch has CUDA, else the setup's error saying what
// torch lacks.
TEST_CASE("pkb eval: kforge's own driver starting one rank") {
  // The interpreter itself, not a shim: the jail shows its installation, not pyenv's.
  std::string python = output_of("python3 -c 'import sys; print(sys.executable)' 2>/dev/null");
  if (python.empty()) return;  // no Python: nothing to run
  std::string q = "'" + python + "' -c '";
  bool torch = std::system((q + "import torch' 2>/dev/null").c_str()) == 0;
  bool cuda =
      torch &&
      std::system((q + "import torch; assert torch.cuda.is_available()' 2>/dev/null").c_str()) == 0;
  Fixture x("exit 9");
  x.spec.driver = std::string(KF_SOURCE_ROOT) + "/sandbox/pkb/pkb_eval.py";
  x.spec.python = python;
  x.spec.confine = sandbox::isolation_mode() == sandbox::Isolation::bwrap;
  x.spec.trials = 2, x.spec.iters = 3, x.spec.warmup = 1;
  x.f.write("solution.py",
            "import torch\nimport torch.distributed as dist\n\n"
            "def solution(tensor, scale_16=1.0):\n    out = tensor.clone()\n"
            "    dist.all_reduce(out)\n    return out\n");
  sandbox::Verdict v;
  std::string err;
  agent::SetupFault setup = agent::SetupFault::none;
  bool ok = pkb::evaluate(x.spec, &v, &err, &setup);
  INFO(err);
  INFO(sandbox::render_text(v));
  if (cuda) {
    CHECK(ok);
    CHECK(v.status == sandbox::Status::correct);
    return;
  }
  CHECK_FALSE(ok);
  CHECK(setup == agent::SetupFault::machine);
  // The driver ran, in the jail too, and its probe said what torch lacks.
  CHECK(err.find("this setup cannot run a PKB job: ") != std::string::npos);
  CHECK(err.find("its python: " + python) != std::string::npos);
  CHECK(err.find(torch ? "sees no CUDA device"
                       : "import torch: ModuleNotFoundError: No module "
                         "named 'torch'") != std::string::npos);
}

TEST_CASE("pkb eval: confined, a job writes only its own source's extension folder") {
  if (sandbox::isolation_mode() != sandbox::Isolation::bwrap) {
    MESSAGE("skipped: no bubblewrap sandbox here");
    return;
  }
  // Another source's key: a library planted there would be loaded by that candidate's eval.
  Fixture fx(
      std::string("mkdir -p \"$ext/0000000000000000\"; touch \"$ext/0000000000000000/planted\"\n"
                  "rank() {\n") +
      kCorrectRank + "\n}\nrank 0 1.0\n");
  fx.spec.confine = true;
  sandbox::Verdict v = fx.run();
  INFO(sandbox::render_text(v));
  CHECK(v.status == sandbox::Status::correct);
  CHECK(!std::filesystem::exists(fx.spec.ext_cache + "/0000000000000000/planted"));
}
