// kf/kf.cuh: what a GPU candidate includes. The ABI (kf::Comm, kf::Tensors, kf_setup,
// kf_run) plus the CUDA runtime. The primitives (signals, transfers, schedules) are
// added beside this header; see primitives/docs/.
#pragma once

#include <cuda_runtime.h>

#include "abi.h"
#include "copy_engine.cuh"  // cudaMemcpyAsync on peer pointers, host side
#include "gemm.cuh"         // bf16 tensor-core GEMM tiles for fused GEMM + collective kernels
#include "multimem.cuh"     // NVLS multimem wrappers (multicast is off here: docs/multimem.md)
#include "partition.h"      // splitting n elements among ranks, blocks, vectors (host + device)
#include "schedule.cuh"     // intra-SM warp roles, inter-SM communication blocks
#include "signal.cuh"       // signal / signal_all / wait / barrier across ranks, epochs, deadline
#include "tile.cuh"         // symmetric tensors (Sym) and tiles of them
#include "tma.cuh"          // cp.async.bulk between shared memory and (peer) global memory
#include "transfer.cuh"     // 16-byte register loads/stores to peers, copy and reduce loops
