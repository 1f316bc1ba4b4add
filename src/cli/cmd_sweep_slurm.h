// cli/cmd_sweep_slurm.h: `kforge sweep ... --slurm`: the sweep planned here, submitted as a
// Slurm job array whose every task runs this same sweep (src/sweep/slurm.h); and what a
// task does with the allocation it was given before it runs its share.
#pragma once

#include <string>
#include <vector>

#include "cli/cmd_sweep.h"
#include "sweep/sweep.h"

namespace cli {

// cfg: the sweep as planned (its folder, binary, samples, solve arguments; the folder's
// plan already checked and written). Writes DIR/slurm/sweep.sbatch, runs sbatch, says
// the job id and how to follow it. The exit code.
int submit_sweep_to_slurm(const SweepArgs& a, const sweep::SweepConfig& cfg,
                          const std::vector<std::string>& problems,
                          const std::vector<std::string>& models);

// In a Slurm job: the allocation's GPUs into this process's environment for its samples
// when Slurm did not name them for CUDA, and a warning on the cuda backend when it gave
// none. Call before any sample starts.
void use_slurm_allocation(const SweepArgs& a);

}  // namespace cli
