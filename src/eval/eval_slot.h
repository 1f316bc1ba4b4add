// eval/eval_slot.h: who may evaluate now, when several solves share a machine (a
// sweep's samples). With KFORGE_EVAL_LOCKS=DIR in the environment (kforge sweep sets it
// for its samples), every evaluate_file first takes a slot:
//  - cuda backend: one slot per GPU set (a Slurm job's SLURM_JOB_GPUS, else
//    CUDA_VISIBLE_DEVICES, else "all"), so an eval owns its GPUs: timings taken while
//    another eval shares them would not be worth quoting, and two evals' working sets
//    might not fit together;
//  - host backend: cores / world slots (each rank is a busy process), at least one.
// A slot is an flock(2) on DIR/<set>.<i>. The kernel drops it when its holder exits, so
// a kill -9'd sweep leaves no stale lock, and it holds across every process of the
// machine (two sweeps at once share their GPUs' slots) with no server to run.
// Without the variable (a lone `kforge solve` or `kforge eval`) nothing is locked.
#pragma once

#include <string>

#include "sandbox/job_enums.h"

namespace eval {

struct SlotSpec {
  std::string dir;  // the lock folder; "" means no slots
  std::string set;  // "gpu-0,1", "gpu-all" or "host"
  int count = 0;    // slots in the set
};

// The slots for an eval on `backend` with `world` ranks, from the environment.
SlotSpec slot_spec(sandbox::Backend backend, int world);

// One slot held; released when destroyed.
class EvalSlot {
 public:
  EvalSlot() = default;
  EvalSlot(const EvalSlot&) = delete;
  EvalSlot& operator=(const EvalSlot&) = delete;
  ~EvalSlot() { release(); }
  bool held() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  void release();

  // Takes one of spec's slots without waiting. False when all are taken (no *err) or
  // the lock folder cannot be written (*err names it).
  bool try_acquire(const SlotSpec& spec, std::string* err);
  // Waits for a slot, polling. Stops waiting (true, nothing held) when a signal or the
  // run's deadline came meanwhile: the eval then ends at once with that reason.
  bool acquire(const SlotSpec& spec, std::string* err);

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace eval
