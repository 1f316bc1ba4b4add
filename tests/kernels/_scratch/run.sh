#!/bin/bash
# throwaway: build every kernel and run the matrix on the device machine.
set -u
B=/tmp/kb; mkdir -p $B
NV="nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC -cudart shared -I primitives/include"
NCCLF="-L/usr/lib/x86_64-linux-gnu -lnccl"
nvidia-smi -L; nvcc --version | tail -1
nvcc -O2 -std=c++20 -arch=sm_90 -I primitives/include -o $B/drv tests/kernels/_scratch/gpudrv.cu -lnccl -ldl || exit 1
for p in all_reduce reduce_scatter all_gather all_to_all broadcast; do
  $NV -o $B/u_$p.so problems/$p/examples/uva.cu &
  $NV -o $B/b_$p.so problems/$p/baseline.cu $NCCLF &
  $NV -o $B/w_$p.so tests/kernels/cuda/${p}_wrong.cu &
done
$NV -o $B/deadlock.so tests/kernels/cuda/deadlock.cu &
wait
ls $B; date
D="timeout 20 $B/drv"
small() { case $1 in all_to_all) echo 1027;; *) echo 4099;; esac; }
for p in all_reduce reduce_scatter all_gather all_to_all broadcast; do
  n=$(small $p)
  for W in 1 2 4; do G=1; root=$(( W - 1 ))
    $D $B/u_$p.so $p $W $n fp32 5 $root $G
    [ $p = all_reduce -o $p = reduce_scatter ] && $D $B/u_$p.so $p $W $n bf16 5 $root $G
    $D $B/w_$p.so $p $W $n fp32 3 $root $G 2>/dev/null | sed 's/$/  (wrong: want FAIL)/'
  done
  for W in 1; do root=0
    NCCL_BASE=1 $D $B/b_$p.so $p $W $n fp32 3 $root $W
    [ $p = all_reduce -o $p = reduce_scatter ] && NCCL_BASE=1 $D $B/b_$p.so $p $W $n bf16 3 $root $W
  done
  full=1048576; [ $p = all_to_all -o $p = reduce_scatter ] && full=131072
  $D $B/u_$p.so $p 4 $full fp32 3 1 1
  NCCL_BASE=1 $D $B/b_$p.so $p 1 $full fp32 3 0 1
  [ $p = all_reduce ] && NCCL_BASE=1 $D $B/b_$p.so $p 1 $full bf16 3 0 1
  [ $p = all_reduce ] && $D $B/u_$p.so $p 4 $full bf16 3 1 1
done
timeout 15 $B/drv $B/deadlock.so all_reduce 2 99 fp32 1 0 1; echo "deadlock rc $? (want 124)"
