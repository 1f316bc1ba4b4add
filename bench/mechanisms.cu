// bench/mechanisms.cu: build and run on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I primitives/include -o /tmp/mech bench/mechanisms.cu && /tmp/mech
// Same-GPU microbenchmarks of the kf mechanisms (HBM, not NVLink) and barrier latency.
#include <kf/kf.cuh>
#include <cstdio>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s line %d\n", cudaGetErrorString(e_), __LINE__); return 1; } } while (0)
__global__ void reg_copy(float* d, const float* s, int64_t n) { kf::copy(d, s, n, kf::grid_tid(), kf::grid_threads()); }
__global__ void tma_copy(float* d, const float* s, int64_t n) {
  constexpr int T = 4096; __shared__ alignas(128) float buf[2][T]; __shared__ uint64_t bar[2];
  if (threadIdx.x) return;
  kf::mbar_init(&bar[0], 1); kf::mbar_init(&bar[1], 1);
  int k = 0;
  for (int64_t t = blockIdx.x; t < n / T; t += gridDim.x, ++k) {
    int b = k & 1; kf::tma_wait_read<1>(); kf::mbar_arrive_expect_tx(&bar[b], T * 4);
    kf::tma_load(buf[b], s + t * T, T * 4, &bar[b]); kf::mbar_wait(&bar[b], (k >> 1) & 1);
    kf::tma_store(d + t * T, buf[b], T * 4); kf::tma_commit();
  }
  kf::tma_wait();
}
__global__ void barriers(kf::SignalSet s, uint32_t e0, int iters) { for (int i = 0; i < iters; ++i) kf::barrier(s, 0, e0 + i); }
// ping-pong between two blocks of one kernel using the kf primitives (world 2 in one heap)
__global__ void pingpong(kf::SignalSet a, kf::SignalSet b, int iters) {
  const kf::SignalSet& me = blockIdx.x == 0 ? a : b;
  for (int i = 1; i <= iters; ++i) kf::barrier(me, 0, i);
}
int main() {
  const int64_t n = 256ll << 20; float *s, *d; CK(cudaMalloc(&s, n * 4)); CK(cudaMalloc(&d, n * 4)); CK(cudaMemset(s, 1, n * 4));
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1); float ms;
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int blocks : {16, 32, 76, sms, 4 * sms}) {
    reg_copy<<<blocks, 512>>>(d, s, n); cudaEventRecord(e0); for (int i = 0; i < 5; ++i) reg_copy<<<blocks, 512>>>(d, s, n); cudaEventRecord(e1); CK(cudaEventSynchronize(e1));
    cudaEventElapsedTime(&ms, e0, e1); printf("register copy 1 GiB, %d blocks x 512: %.1f GB/s (read+write counted once)\n", blocks, 5.0 * n * 4 / (ms * 1e6));
  }
  for (int blocks : {8, 16, 32, sms}) {
    tma_copy<<<blocks, 32>>>(d, s, n); cudaEventRecord(e0); for (int i = 0; i < 5; ++i) tma_copy<<<blocks, 32>>>(d, s, n); cudaEventRecord(e1); CK(cudaEventSynchronize(e1));
    cudaEventElapsedTime(&ms, e0, e1); printf("TMA copy 1 GiB, 16 KB tiles, %d blocks: %.1f GB/s\n", blocks, 5.0 * n * 4 / (ms * 1e6));
  }
  CK(cudaMemcpyAsync(d, s, n * 4, cudaMemcpyDeviceToDevice)); cudaEventRecord(e0); for (int i = 0; i < 5; ++i) cudaMemcpyAsync(d, s, n * 4, cudaMemcpyDeviceToDevice); cudaEventRecord(e1); CK(cudaEventSynchronize(e1));
  cudaEventElapsedTime(&ms, e0, e1); printf("copy engine cudaMemcpyAsync D2D 1 GiB: %.1f GB/s\n", 5.0 * n * 4 / (ms * 1e6));
  uint32_t* w; CK(cudaMalloc(&w, 4096)); CK(cudaMemset(w, 0, 4096));
  kf::SignalSet one{}; one.local = w; one.peer.ptr[0] = w; one.rank = 0; one.world = 1; one.slots = 1;
  barriers<<<1, 64>>>(one, 1, 10); cudaEventRecord(e0); barriers<<<1, 64>>>(one, 11, 10000); cudaEventRecord(e1); CK(cudaEventSynchronize(e1));
  cudaEventElapsedTime(&ms, e0, e1); printf("kf::barrier world 1 (self): %.0f ns each\n", ms * 1e6 / 10000);
  CK(cudaMemset(w, 0, 4096));
  kf::SignalSet a{}, b{}; a.local = w; b.local = w + 512; a.peer.ptr[0] = b.peer.ptr[0] = w; a.peer.ptr[1] = b.peer.ptr[1] = w + 512;
  a.rank = 0; b.rank = 1; a.world = b.world = 2; a.slots = b.slots = 1;
  cudaEventRecord(e0); pingpong<<<2, 64>>>(a, b, 10000); cudaEventRecord(e1); CK(cudaEventSynchronize(e1));
  cudaEventElapsedTime(&ms, e0, e1); printf("kf::barrier world 2, two blocks of one kernel (same GPU): %.0f ns each\n", ms * 1e6 / 10000);
  int sz[] = {4099, 65536, 1 << 20};
  for (int m : sz) { cudaEventRecord(e0); for (int i = 0; i < 100; ++i) cudaMemcpyAsync(d, s, m * 4, cudaMemcpyDeviceToDevice); cudaEventRecord(e1); CK(cudaEventSynchronize(e1));
    cudaEventElapsedTime(&ms, e0, e1); printf("copy engine D2D %d floats: %.2f us per call\n", m, ms * 1e3 / 100); }
  for (int m : sz) { int bl = kf::grid_for(m / 4, 512, 32); cudaEventRecord(e0); for (int i = 0; i < 100; ++i) reg_copy<<<bl, 512>>>(d, s, m); cudaEventRecord(e1); CK(cudaEventSynchronize(e1));
    cudaEventElapsedTime(&ms, e0, e1); printf("register copy kernel %d floats (%d blocks): %.2f us per call\n", m, bl, ms * 1e3 / 100); }
  return 0;
}
