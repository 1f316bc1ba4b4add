// eval/eval_slot.cpp: see eval_slot.h.
#include "eval/eval_slot.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "sandbox/deadline.h"
#include "sandbox/interrupt.h"

namespace eval {

SlotSpec slot_spec(sandbox::Backend backend, int world) {
  SlotSpec s;
  const char* dir = std::getenv("KFORGE_EVAL_LOCKS");
  if (!dir || !*dir) return s;
  s.dir = dir;
  if (backend == sandbox::Backend::cuda) {
    // Named as the machine numbers them, so that every process on it means the same GPUs
    // by one name: in a Slurm job SLURM_JOB_GPUS (its global ids; CUDA_VISIBLE_DEVICES
    // starts from 0 in every job where Slurm confines devices, and two jobs on other GPUs
    // would wait for each other), else CUDA_VISIBLE_DEVICES, else all of them.
    const char* job = std::getenv("SLURM_JOB_GPUS");
    const char* vis = std::getenv("CUDA_VISIBLE_DEVICES");
    const char* set = job && *job ? job : vis;
    s.set = std::string("gpu-") + (set && *set ? set : "all");
    for (char& c : s.set)
      if (c == '/' || c == ' ') c = '_';
    s.count = 1;
  } else {
    s.set = "host";
    unsigned cores = std::thread::hardware_concurrency();
    s.count = std::max(1, static_cast<int>(cores) / std::max(1, world));
  }
  return s;
}

void EvalSlot::release() {
  if (fd_ >= 0) close(fd_);  // closing the last descriptor drops the flock
  fd_ = -1;
  path_.clear();
}

bool EvalSlot::try_acquire(const SlotSpec& spec, std::string* err) {
  release();
  std::error_code ec;
  std::filesystem::create_directories(spec.dir, ec);
  for (int i = 0; i < spec.count; ++i) {
    std::string p = spec.dir + "/" + spec.set + "." + std::to_string(i);
    int fd = open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
      *err = p + ": cannot open the eval lock: " + std::strerror(errno) +
             " (KFORGE_EVAL_LOCKS must name a folder this user can write)";
      return false;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      fd_ = fd;
      path_ = p;
      return true;
    }
    close(fd);
  }
  return false;
}

bool EvalSlot::acquire(const SlotSpec& spec, std::string* err) {
  // Polling rather than a blocking flock: a signal or the deadline must end the wait
  // at once, and a blocked flock would restart under SA_RESTART handlers.
  for (;;) {
    err->clear();
    if (try_acquire(spec, err)) return true;
    if (!err->empty()) return false;
    if (sandbox::interrupted() || sandbox::stop_requested()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace eval
