// pkb/warm_test.cpp: PKB evals through the warm interpreter (sandbox/pkb/pkb_serve.py run by
// this machine's python3), with the tests' stand-in for pkb_eval.py (pkb/test_util.h: it
// runs the candidate module's body, then writes every rank's report): the candidates share one
// server, each in a child confined to its own folder; one that kills the server, hangs or
// leaves a process behind costs only its own eval; a python that cannot serve falls back.
#include "pkb/warm.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "pkb/evaluate.h"
#include "pkb/test_util.h"
#include "pkb/text.h"
#include "sandbox/confine.h"
#include "sandbox/evaluate.h"
#include "sandbox/process.h"
#include "suite/spec_json.h"

namespace fs = std::filesystem;

namespace {

struct WarmFixture {
  pkb::test::FakeCheckout f;
  pkb::EvalSpec spec;
  std::string evals;
  WarmFixture() {
    std::string err;
    REQUIRE_MESSAGE(pkb::test::stand_in_spec(f, &spec, &err), err);
    evals = f.root + "/evals";
    fs::create_directories(evals);
    spec.warm = std::make_shared<pkb::WarmInterpreter>(sandbox::make_eval_dir(evals));
  }
  // One eval of a candidate whose module body is `body`; its work folder in *dir.
  sandbox::Verdict eval(const std::string& body, std::string* dir = nullptr) {
    pkb::EvalSpec s = spec;
    s.work_dir = sandbox::make_eval_dir(spec.warm->root());
    const std::string src = f.root + "/candidate.py";
    pkb::test::write_candidate(src, body);
    s.solution = src;
    sandbox::Verdict v;
    std::string err;
    REQUIRE_MESSAGE(pkb::evaluate(s, &v, &err), err);
    if (dir) *dir = s.work_dir;
    return v;
  }
};

std::string warm_notes(const sandbox::Verdict& v) {
  return suite::spec_join(v.harness_notes, "\n");
}

}  // namespace

TEST_CASE("pkb warm interpreter: one server, each candidate confined to its own folder") {
  WarmFixture x;
  std::string first, second;
  sandbox::Verdict v1 = x.eval("", &first);
  CHECK(v1.status == sandbox::Status::correct);
  CHECK(warm_notes(v1).find("warm interpreter: eval 1 of") != std::string::npos);
  CHECK(warm_notes(v1).find("started with it") != std::string::npos);
  // The job's own environment: HOME in its scratch.
  CHECK(pkb::read_text(first + "/env.txt") == first + "/scratch");

  // The second candidate reaches for the first's folder, the server's ctl/ (the first's
  // "done" there) and the extension cache beside its own, and writes where it may not (ctl/
  // among them, where a forged "done" would end its eval early).
  const std::string root = x.spec.warm->root();
  std::string probe = "import os\nres = []\nfor p in ['" + first + "/solution.py', '" + root +
                      "/ctl/done-" + fs::path(first).filename().string() + ".json', '" +
                      x.spec.ext_cache +
                      "']:\n"
                      "    try:\n        os.listdir(p) if p.endswith('ext') else open(p).read()\n"
                      "        res.append('read ' + p)\n"
                      "    except PermissionError:\n        res.append('denied')\n"
                      "for p in ['" +
                      first + "/planted', '" + root +
                      "/ctl/done-forged.json']:\n"
                      "    try:\n        open(p, 'w')\n        res.append('wrote ' + p)\n"
                      "    except PermissionError:\n        res.append('denied')\n"
                      "open('../saw.txt', 'w').write(' '.join(res))\n";
  sandbox::Verdict v2 = x.eval(probe, &second);
  CHECK(v2.status == sandbox::Status::correct);
  CHECK(warm_notes(v2).find("warm interpreter: eval 2 of") != std::string::npos);
  CHECK(warm_notes(v2).find("up before it") != std::string::npos);
  CHECK(pkb::read_text(second + "/saw.txt") == "denied denied denied denied denied");
  CHECK_FALSE(fs::exists(first + "/planted"));
  CHECK_FALSE(fs::exists(root + "/ctl/done-forged.json"));

  // A process left behind, in a session of its own, ends with its eval.
  const std::string mark = "kf-warm-leftover-" + std::to_string(getpid());
  sandbox::Verdict v3 = x.eval(
      "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; "
      "time.sleep(300)', '" +
      mark + "'], start_new_session=True)\n");
  CHECK(v3.status == sandbox::Status::correct);
  CHECK(sandbox::wait_none_naming(mark, 5.0));
  x.spec.warm->stop();
  CHECK(sandbox::wait_none_naming(root + "/ctl", 5.0));
}

TEST_CASE("pkb warm interpreter: a candidate that kills the server or hangs costs its own eval") {
  WarmFixture x;
  CHECK(x.eval("").status == sandbox::Status::correct);
  sandbox::Verdict killed = x.eval(
      "import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\n"
      "time.sleep(30)\n");
  CHECK(killed.status == sandbox::Status::crash);
  sandbox::Verdict next = x.eval("");
  CHECK(next.status == sandbox::Status::correct);
  CHECK(warm_notes(next).find("warm interpreter: eval 1 of") != std::string::npos);

  x.spec.timeout_s = 3;
  sandbox::Verdict hung = x.eval("import time\ntime.sleep(60)\n");
  CHECK(hung.status == sandbox::Status::timeout);
  x.spec.timeout_s = 30;
  sandbox::Verdict after = x.eval("");
  CHECK(after.status == sandbox::Status::correct);
  CHECK(warm_notes(after).find("started with it") != std::string::npos);
  const std::string root = x.spec.warm->root();
  x.spec.warm.reset();
  CHECK(sandbox::wait_none_naming(root + "/ctl", 5.0));
}

TEST_CASE("pkb warm interpreter: what a candidate and its processes may not write under /proc") {
  // CUDA's start, in any process, names its threads through /proc/<pid>/task/<tid>/comm
  // (bench/RESULTS.md, 2026-12-07 session 5). A rank confines itself once its CUDA is up;
  // a process the candidate starts cannot, as the README says: /proc stays read-only, with
  // /proc/sys (global sysctls, writable by root) and the server's /proc files.
  WarmFixture x;
  // Each write puts back what it read: were it not denied, nothing would change.
  const std::string probe = R"PY(import os, subprocess, sys
name = "import threading\nopen('/proc/self/task/%d/comm' % threading.get_native_id(), 'w').write('w')"
res = ['named' if subprocess.run([sys.executable, '-c', name]).returncode == 0 else 'unnamed']
for p in ('/proc/sys/kernel/core_pattern', '/proc/%d/environ' % os.getppid()):
    try:
        v = open(p, 'rb').read()
        open(p, 'wb').write(v) if p.startswith('/proc/sys') else None
        res.append('reached ' + p)
    except OSError:
        res.append('denied')
open('../proc.txt', 'w').write(' '.join(res))
)PY";
  std::string dir;
  sandbox::Verdict v = x.eval(probe, &dir);
  CHECK(v.status == sandbox::Status::correct);
  CHECK(pkb::read_text(dir + "/proc.txt") == "unnamed denied denied");

  // A cold job (bubblewrap alone, no Landlock): its /proc/sys is read-only too.
  if (!x.spec.confine || sandbox::isolation_mode() != sandbox::Isolation::bwrap) return;
  pkb::EvalSpec cold = x.spec;
  cold.warm.reset();
  cold.work_dir = sandbox::make_eval_dir(x.evals);
  cold.solution = x.f.root + "/cold.py";
  pkb::test::write_candidate(cold.solution, probe);
  sandbox::Verdict cv;
  std::string err;
  REQUIRE_MESSAGE(pkb::evaluate(cold, &cv, &err), err);
  CHECK(cv.status == sandbox::Status::correct);
  const std::string saw = pkb::read_text(cold.work_dir + "/proc.txt");
  CHECK(saw.find("denied") == saw.find(' ') + 1);  // core_pattern: the word after the first
}

TEST_CASE("pkb warm interpreter: started before the first eval, which finds it up") {
  WarmFixture x;
  std::string err;
  REQUIRE_MESSAGE(x.spec.warm->prestart(x.spec, &err), err);
  REQUIRE_MESSAGE(x.spec.warm->prestart(x.spec, &err), err);  // up: nothing more
  sandbox::Verdict v = x.eval("");
  CHECK(v.status == sandbox::Status::correct);
  CHECK(warm_notes(v).find("warm interpreter: eval 1 of") != std::string::npos);
  CHECK(warm_notes(v).find("up before it") != std::string::npos);
  const std::string root = x.spec.warm->root();
  x.spec.warm.reset();
  CHECK(sandbox::wait_none_naming(root + "/ctl", 5.0));
}

TEST_CASE("pkb warm interpreter: a python that cannot serve runs the eval cold, and says so") {
  WarmFixture x;
  // A stand-in python (a shell script) cannot run the server; as the job it writes the
  // ranks' reports as a driver would.
  x.spec.python = x.f.root + "/python";
  x.f.write(
      "python",
      "#!/bin/sh\nout=''\nwhile [ $# -gt 0 ]; do case \"$1\" in --out) out=\"$2\"; shift;; "
      "esac; shift; done\n[ -n \"$out\" ] || exit 2\necho '{\"rank\":0,\"status\":\"correct\","
      "\"phase\":\"t\",\"trials\":[{\"trial\":0,\"ref_ms\":2.0,\"cand_ms\":1.0}]}' > "
      "$out/rank0.json\n");
  chmod(x.spec.python.c_str(), 0755);
  bool early = false;
  SUBCASE("at the first eval") {}
  SUBCASE("started early, and not tried again at the first eval") {
    early = true;
    std::string err;
    REQUIRE_MESSAGE(x.spec.warm->prestart(x.spec, &err), err);
    for (int i = 0; i < 1000 && x.spec.warm->up(); ++i) usleep(10000);
    REQUIRE_FALSE(x.spec.warm->up());
  }
  if (early) fs::remove_all(x.spec.warm->root() + "/ctl");
  sandbox::Verdict v = x.eval("");
  CHECK(v.status == sandbox::Status::correct);
  CHECK(warm_notes(v).find("warm interpreter not used: the warm interpreter ended before the eval "
                           "began") != std::string::npos);
  if (early) CHECK_FALSE(fs::exists(x.spec.warm->root() + "/ctl"));
  // ... and is not tried again: the next eval runs cold at once, its ctl/ untouched.
  fs::remove_all(x.spec.warm->root() + "/ctl");
  CHECK(x.eval("").status == sandbox::Status::correct);
  CHECK_FALSE(fs::exists(x.spec.warm->root() + "/ctl"));
}
