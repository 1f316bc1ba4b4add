# bench/gpu_env.sh: sourced by the GPU-machine scripts. NVLink multicast stays off on the
# lent machines (NCCL's, PyTorch's and NVSHMEM's switches), OpenMPI runs as root there,
# and nvcc is on the PATH.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH="$PATH:/usr/local/cuda/bin"
