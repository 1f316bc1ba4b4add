// src/agent/setup_fault.h: why a foreign suite's eval gave no verdict when neither the
// candidate nor kforge is to blame. A sweep acts on the difference.
#pragma once

namespace agent {

enum class SetupFault {
  none,
  // This setup runs none of the suite's jobs (a python without torch or CUDA, fewer GPUs
  // than ranks): every sample would fail alike, so a sweep stops.
  machine,
  // This problem's reference fails here on its own (it needs more ranks or memory): the
  // problem is not runnable on this setup, so a sweep records it and goes on with the rest.
  problem,
};

}  // namespace agent
