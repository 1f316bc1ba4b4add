// sandbox/rank/reaper.h: how a rank ended, as data. mpirun starts kforge-rank; before MPI
// is initialised it forks, the child goes on as the rank, and the parent waits for it,
// writes <dir>/status/rank<R>.exit (rank_status.h: RankExit) and ends the same way (the
// same exit code, or the same signal), so mpirun sees what it would have seen. The host
// side reads the file instead of parsing mpirun's words.
#pragma once

namespace sandbox::rank {

// In the child (or when there is no rank to reap for: no OMPI_COMM_WORLD_RANK, no job
// path), returns and the caller goes on as the rank. The parent never returns.
void fork_reaper(int argc, char** argv);

}  // namespace sandbox::rank
