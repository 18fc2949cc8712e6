// DRAM traffic mix on the H100: the same bytes read only, written only, copied (one read, one
// write), added (two reads, one write), and copied in 2D blocks of 32 x 8 over three row pitches.
// Each kernel handles four elements per thread, a grid's width apart, as the probes' p_copy4 does,
// so that no launch waits on the block dispatcher (probe group A); r_copy1 and r_copy2d take one
// element per thread, as the students' copy_2d_rows does.
//
// Why: the timing model charges every DRAM byte alike, at the device-to-device copy bandwidth.
// The students' kernels that read one buffer and write another come out 10-20% faster in the
// model than on the H100, and those that only read or read two for each write come out close. The
// launches here separate the read/write mix, the size (8 MB to 128 MB a buffer: from well inside
// the 50 MB L2 to well beyond it, for a launch repeated back to back) and the 2D shape of a block,
// and (r_copy4b, r_add4b: the loads first) the loads a thread has in flight.
//
// Build and run: nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -o dram_mix dram_mix.cu
//               ./dram_mix time   (one JSON line per launch: a memplay spec and the median of 20
//                                  cudaEvent-timed runs after 3 warm-ups, as ../probes/ does)
//               ./dram_mix ncu    (each launch once, for Nsight Compute; see run.sh)

__global__ void r_read4(int* flag, const int* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = gridDim.x * blockDim.x;
  int acc = 0;
  for (int k = 0; k < 4; ++k) {
    int j = i + k * stride;
    if (j < n) acc += src[j];
  }
  if (acc == 0x7fffffff) flag[0] = acc;
}

__global__ void r_write4(int* dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = gridDim.x * blockDim.x;
  for (int k = 0; k < 4; ++k) {
    int j = i + k * stride;
    if (j < n) dst[j] = j;
  }
}

__global__ void r_copy4(int* dst, const int* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = gridDim.x * blockDim.x;
  for (int k = 0; k < 4; ++k) {
    int j = i + k * stride;
    if (j < n) dst[j] = src[j];
  }
}

__global__ void r_add4(int* dst, const int* a, const int* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = gridDim.x * blockDim.x;
  for (int k = 0; k < 4; ++k) {
    int j = i + k * stride;
    if (j < n) dst[j] = a[j] + b[j];
  }
}

// The same copy and add with the four loads first: they are in flight together, where r_copy4's
// store to dst may alias the next load from src and keeps it waiting.
__global__ void r_copy4b(int* dst, const int* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = gridDim.x * blockDim.x;
  if (i + 3 * stride < n) {
    int v0 = src[i];
    int v1 = src[i + stride];
    int v2 = src[i + 2 * stride];
    int v3 = src[i + 3 * stride];
    dst[i] = v0;
    dst[i + stride] = v1;
    dst[i + 2 * stride] = v2;
    dst[i + 3 * stride] = v3;
  }
}

__global__ void r_add4b(int* dst, const int* a, const int* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = gridDim.x * blockDim.x;
  if (i + 3 * stride < n) {
    int v0 = a[i] + b[i];
    int v1 = a[i + stride] + b[i + stride];
    int v2 = a[i + 2 * stride] + b[i + 2 * stride];
    int v3 = a[i + 3 * stride] + b[i + 3 * stride];
    dst[i] = v0;
    dst[i + stride] = v1;
    dst[i + 2 * stride] = v2;
    dst[i + 3 * stride] = v3;
  }
}

__global__ void r_copy1(int* dst, const int* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

__global__ void r_copy2d(float* dst, const float* src, int width) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  dst[y * width + x] = src[y * width + x];
}

#ifdef __CUDACC__
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                       \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(1);                                                                                      \
    }                                                                                               \
  } while (0)

static bool g_ncu = false;
static cudaEvent_t g_e0, g_e1;

template <class Kern>
static int regs_of(Kern kernel) {
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, kernel));
  return fa.numRegs;
}

template <class F>
static void run(const char* id, const char* kernel, int regs, unsigned gx, unsigned gy, unsigned bx, unsigned by,
                const char* args, const char* bufs, F launch) {
  float med = -1.0f, lo = -1.0f, hi = -1.0f;
  if (g_ncu) {
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
  } else {
    for (int r = 0; r < 3; ++r) launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> ts;
    for (int r = 0; r < 20; ++r) {
      CK(cudaEventRecord(g_e0));
      launch();
      CK(cudaEventRecord(g_e1));
      CK(cudaEventSynchronize(g_e1));
      float ms = 0.0f;
      CK(cudaEventElapsedTime(&ms, g_e0, g_e1));
      ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    med = 0.5f * (ts[9] + ts[10]);
    lo = ts.front();
    hi = ts.back();
  }
  printf("{\"id\":\"%s\",\"spec\":{\"file\":\"dram_mix.cu\",\"kernel\":\"%s\",\"defines\":{},"
         "\"grid\":[%u,%u,1],\"block\":[%u,%u,1],\"dyn_smem\":0,\"args\":%s,\"buffers\":%s,\"regs\":%d},"
         "\"ms\":%.6f,\"min_ms\":%.6f,\"max_ms\":%.6f}\n",
         id, kernel, gx, gy, bx, by, args, bufs, regs, med, lo, hi);
  fflush(stdout);
}

int main(int argc, char** argv) {
  g_ncu = argc > 1 && strcmp(argv[1], "ncu") == 0;
  CK(cudaEventCreate(&g_e0));
  CK(cudaEventCreate(&g_e1));
  const size_t max_bytes = (size_t)128 << 20;
  int *d_a, *d_b, *d_c, *d_flag;
  CK(cudaMalloc(&d_a, max_bytes));
  CK(cudaMalloc(&d_b, max_bytes));
  CK(cudaMalloc(&d_c, max_bytes));
  CK(cudaMalloc(&d_flag, 4));
  CK(cudaMemset(d_a, 1, max_bytes));
  CK(cudaMemset(d_b, 2, max_bytes));
  CK(cudaMemset(d_c, 0, max_bytes));
  const int r_read = regs_of(r_read4), r_write = regs_of(r_write4), r_copy = regs_of(r_copy4),
            r_add = regs_of(r_add4), r_c1 = regs_of(r_copy1), r_2d = regs_of(r_copy2d),
            r_copyb = regs_of(r_copy4b), r_addb = regs_of(r_add4b);
  char id[160], args[96], bufs[160];
  for (int shift : {21, 22, 23, 24, 25}) {
    const int n = 1 << shift;
    const unsigned grid = (unsigned)(n / 1024);
    const unsigned long long bytes = 4ull * n;
    snprintf(args, sizeof args, "{\"n\":%d}", n);
    snprintf(id, sizeof id, "r_read4 grid=%u block=256 n=%d", grid, n);
    snprintf(bufs, sizeof bufs, "{\"flag\":4,\"src\":%llu}", bytes);
    run(id, "r_read4", r_read, grid, 1, 256, 1, args, bufs, [&] { r_read4<<<grid, 256>>>(d_flag, d_a, n); });
    snprintf(id, sizeof id, "r_write4 grid=%u block=256 n=%d", grid, n);
    snprintf(bufs, sizeof bufs, "{\"dst\":%llu}", bytes);
    run(id, "r_write4", r_write, grid, 1, 256, 1, args, bufs, [&] { r_write4<<<grid, 256>>>(d_c, n); });
    snprintf(id, sizeof id, "r_copy4 grid=%u block=256 n=%d", grid, n);
    snprintf(bufs, sizeof bufs, "{\"dst\":%llu,\"src\":%llu}", bytes, bytes);
    run(id, "r_copy4", r_copy, grid, 1, 256, 1, args, bufs, [&] { r_copy4<<<grid, 256>>>(d_c, d_a, n); });
    snprintf(id, sizeof id, "r_add4 grid=%u block=256 n=%d", grid, n);
    snprintf(bufs, sizeof bufs, "{\"dst\":%llu,\"a\":%llu,\"b\":%llu}", bytes, bytes, bytes);
    run(id, "r_add4", r_add, grid, 1, 256, 1, args, bufs, [&] { r_add4<<<grid, 256>>>(d_c, d_a, d_b, n); });
    snprintf(id, sizeof id, "r_copy4b grid=%u block=256 n=%d", grid, n);
    snprintf(bufs, sizeof bufs, "{\"dst\":%llu,\"src\":%llu}", bytes, bytes);
    run(id, "r_copy4b", r_copyb, grid, 1, 256, 1, args, bufs, [&] { r_copy4b<<<grid, 256>>>(d_c, d_a, n); });
    snprintf(id, sizeof id, "r_add4b grid=%u block=256 n=%d", grid, n);
    snprintf(bufs, sizeof bufs, "{\"dst\":%llu,\"a\":%llu,\"b\":%llu}", bytes, bytes, bytes);
    run(id, "r_add4b", r_addb, grid, 1, 256, 1, args, bufs, [&] { r_add4b<<<grid, 256>>>(d_c, d_a, d_b, n); });
  }
  {
    const int n = 1 << 24;
    const unsigned grid = (unsigned)(n / 256);
    snprintf(args, sizeof args, "{\"n\":%d}", n);
    snprintf(id, sizeof id, "r_copy1 grid=%u block=256 n=%d", grid, n);
    snprintf(bufs, sizeof bufs, "{\"dst\":%llu,\"src\":%llu}", 4ull * n, 4ull * n);
    run(id, "r_copy1", r_c1, grid, 1, 256, 1, args, bufs, [&] { r_copy1<<<grid, 256>>>(d_c, d_a, n); });
  }
  for (int width : {1024, 4096, 16384}) {
    const int height = (1 << 24) / width;
    const unsigned gx = (unsigned)(width / 32), gy = (unsigned)(height / 8);
    snprintf(args, sizeof args, "{\"width\":%d}", width);
    snprintf(id, sizeof id, "r_copy2d %dx%d block=32x8", width, height);
    snprintf(bufs, sizeof bufs, "{\"dst\":%llu,\"src\":%llu}", 4ull << 24, 4ull << 24);
    run(id, "r_copy2d", r_2d, gx, gy, 32, 8, args, bufs, [&] {
      r_copy2d<<<dim3(gx, gy), dim3(32, 8)>>>((float*)d_c, (const float*)d_a, width);
    });
  }
  return 0;
}
#endif
