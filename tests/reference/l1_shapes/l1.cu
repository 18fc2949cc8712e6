// L1 data-pipe wavefronts per global load request, by the shape of the request (all L1 hits).
// Lane l of every warp reads word (l / G) * LS + (l % G) * WS (bytes: line stride LS, word step WS),
// plus (it & 7) * 64 KB so the loads stay in the loop (8 copies, all resident in L1).
#include <cstdio>
#include <cstdlib>
#include <cstring>
__global__ void l1_shape(const float* a, float* out, int G, int LS, int WS, int iters) {
  int l = threadIdx.x & 31;
  int off = (l / G) * LS + (l % G) * WS;
  float s = 0.0f;
  for (int it = 0; it < iters; ++it) {
    const char* p = (const char*)a + off + (it & 7) * 65536;
    s += *(const float*)p;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
int main(int argc, char** argv) {
  float *a, *o;
  cudaMalloc(&a, 64 << 20);
  cudaMemset(a, 0, 64 << 20);
  cudaMalloc(&o, 132 * 1024 * 4);
  // name G LS WS
  struct C { const char* name; int G, LS, WS; } cs[] = {
    {"coalesced_1line", 32, 0, 4},
    {"broadcast_1word", 32, 0, 0},
    {"bcast16_2lines_4k", 16, 4096, 0},
    {"bcast16_2lines_128", 16, 128, 0},
    {"bcast16_2lines_160", 16, 160, 0},
    {"words16_2lines_4k", 16, 4096, 4},
    {"bcast8_4lines_4k", 8, 4096, 0},
    {"words8_4lines_4k", 8, 4096, 4},
    {"words4_8lines_4k", 4, 4096, 4},
    {"words2_16lines_4k", 2, 4096, 4},
    {"one_32lines_4k", 1, 4096, 4},
    {"one_32lines_2080", 1, 2080, 4},
    {"one_32lines_132", 1, 132, 4},
    {"one_32lines_128", 1, 128, 4},
    {"one_16lines_pairs_4k", 2, 4096, 0},
    {"stride8B_2lines", 32, 0, 8},
    {"stride32B_8lines", 32, 0, 32},
    {"stride128B_32lines", 32, 0, 128},
  };
  int iters = 4096;
  for (auto& c : cs) {
    if (argc > 1 && !strstr(c.name, argv[1])) continue;
    for (int b : {256}) {
      cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
      l1_shape<<<132, b>>>(a, o, c.G, c.LS, c.WS, iters);
      cudaEventRecord(e0);
      for (int r = 0; r < 5; ++r) l1_shape<<<132, b>>>(a, o, c.G, c.LS, c.WS, iters);
      cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1);
      printf("%-22s block=%d G=%d LS=%d WS=%d ms=%.4f clocks_per_request_per_sm=%.2f\n", c.name, b, c.G, c.LS, c.WS,
             ms / 5, ms / 5 * 1e-3 * 1.98e9 / (iters * b / 32.0));
    }
  }
  cudaError_t e = cudaGetLastError();
  if (e) printf("error %s\n", cudaGetErrorString(e));
}
