// eval/eval_slot_test.cpp: eval slots are real flocks: taken, full, freed by a holder's
// kill -9, and off without KFORGE_EVAL_LOCKS.
#include "eval/eval_slot.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "suite/test_util.h"

namespace eval {

namespace {
using suite::test::TempDir;
}  // namespace

TEST_CASE("eval slots: none without KFORGE_EVAL_LOCKS; one per GPU set; cores/world on host") {
  unsetenv("KFORGE_EVAL_LOCKS");
  unsetenv("SLURM_JOB_GPUS");  // the tests may run in a Slurm job
  CHECK(slot_spec(sandbox::Backend::cuda, 2).count == 0);
  setenv("KFORGE_EVAL_LOCKS", "/tmp/kf-locks", 1);
  setenv("CUDA_VISIBLE_DEVICES", "2,3", 1);
  SlotSpec g = slot_spec(sandbox::Backend::cuda, 2);
  CHECK(g.dir == "/tmp/kf-locks");
  CHECK(g.set == "gpu-2,3");
  CHECK(g.count == 1);
  // A Slurm job's GPUs by their global ids: CUDA_VISIBLE_DEVICES may be renumbered.
  setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  setenv("SLURM_JOB_GPUS", "5", 1);
  CHECK(slot_spec(sandbox::Backend::cuda, 2).set == "gpu-5");
  unsetenv("SLURM_JOB_GPUS");
  CHECK(slot_spec(sandbox::Backend::cuda, 2).set == "gpu-0");
  unsetenv("CUDA_VISIBLE_DEVICES");
  CHECK(slot_spec(sandbox::Backend::cuda, 1).set == "gpu-all");
  SlotSpec h = slot_spec(sandbox::Backend::host, 2);
  CHECK(h.set == "host");
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  CHECK(h.count == std::max(1, cores / 2));
  unsetenv("KFORGE_EVAL_LOCKS");
}

TEST_CASE("eval slots: two slots hold two evals, a third waits for one to be released") {
  TempDir d;
  SlotSpec spec{d.path, "host", 2};
  std::string err;
  EvalSlot a, b, c;
  REQUIRE(a.try_acquire(spec, &err));
  REQUIRE(b.try_acquire(spec, &err));
  CHECK(a.path() != b.path());
  CHECK_FALSE(c.try_acquire(spec, &err));
  CHECK(err.empty());  // full, not broken
  b.release();
  CHECK(c.try_acquire(spec, &err));
}

TEST_CASE("eval slots: a holder killed with SIGKILL leaves no stale lock") {
  TempDir d;
  SlotSpec spec{d.path, "gpu-all", 1};
  std::string lock = d.path + "/gpu-all.0";
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {  // another process (another sample) holding the GPU set's slot
    int fd = open(lock.c_str(), O_RDWR | O_CREAT, 0666);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) _exit(1);
    if (write(ready[1], "x", 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char x = 0;
  REQUIRE(read(ready[0], &x, 1) == 1);
  close(ready[0]);
  EvalSlot s;
  std::string err;
  CHECK_FALSE(s.try_acquire(spec, &err));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  CHECK(s.try_acquire(spec, &err));
  CHECK(s.path() == lock);
}

TEST_CASE("eval slots: a lock folder that cannot be written is an error naming it") {
  SlotSpec spec{"/proc/kf-no-such-folder", "host", 1};
  EvalSlot s;
  std::string err;
  CHECK_FALSE(s.acquire(spec, &err));
  CHECK(err.find("/proc/kf-no-such-folder") != std::string::npos);
}

}  // namespace eval
