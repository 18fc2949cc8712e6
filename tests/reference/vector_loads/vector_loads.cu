// How nvcc loads the elements of arrays of vector types and of small structs on the H100, and what
// the load instructions cost in requests, sectors and time.
//
// Why: memplay's counters come from the accesses its interpreter makes, one access per load or
// store instruction that nvcc emits. A `float3` element, a `reinterpret_cast` to `float4`, an `int4`
// read from a `char` array and a member of an array of 12-byte or 16-byte structs each become some
// number of load instructions of some width; the requests and sectors follow from that. These
// launches measure it: each kernel copies or reads n elements, one a thread, so that the load and
// store instructions per element (smsp__inst_executed_op_global_ld / st over the warps), the sectors
// per request and the time show the width of each access.
//
//   v_float    float copy, the one-word baseline
//   v_float2   float2 copy (8-byte elements)
//   v_float3   float3 copy (12-byte elements, aligned to 4)
//   v_float3_x only the .x member of each float3 read, summed per block
//   v_float4   float4 copy through reinterpret_cast of float pointers (16-byte elements)
//   v_int4_bytes  int4 loads from a char array (reinterpret_cast<const int4*>)
//   v_uchar4   uchar4 copy (4-byte elements of four bytes)
//   v_s12      copy of a 12-byte struct {float a, b, c;}
//   v_s12_b    only member b of each 12-byte struct read
//   v_s16      copy of a 16-byte aligned struct __align__(16) {float a, b, c;}
//   v_s16_b    only member b of each 16-byte aligned struct read
//
// Build and run: nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -o vector_loads vector_loads.cu
//               ./vector_loads time   (one JSON line per launch: a memplay spec and the median of 20
//                                      cudaEvent-timed runs after 3 warm-ups, as ../probes/ does)
//               ./vector_loads ncu    (each launch once, for Nsight Compute; see run.sh)

// memplay's test of the vector kernels defines VECTORS_ONLY, which leaves the structs out; nvcc
// builds everything.
#ifndef VECTORS_ONLY
struct Triple {
  float a, b, c;
};

struct __align__(16) AlignedTriple {
  float a, b, c;
};
#endif

__global__ void v_float(float* dst, const float* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

__global__ void v_float2(float2* dst, const float2* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

__global__ void v_float3(float3* dst, const float3* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

__global__ void v_float3_x(float* out, const float3* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = src[i].x;
}

__global__ void v_float4(float* dst, const float* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) reinterpret_cast<float4*>(dst)[i] = reinterpret_cast<const float4*>(src)[i];
}

__global__ void v_int4_bytes(int* out, const char* bytes, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int4 v = reinterpret_cast<const int4*>(bytes)[i];
    out[i] = v.x ^ v.y ^ v.z ^ v.w;
  }
}

__global__ void v_uchar4(uchar4* dst, const uchar4* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

#ifndef VECTORS_ONLY
__global__ void v_s12(Triple* dst, const Triple* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

__global__ void v_s12_b(float* out, const Triple* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = src[i].b;
}

__global__ void v_s16(AlignedTriple* dst, const AlignedTriple* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

__global__ void v_s16_b(float* out, const AlignedTriple* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = src[i].b;
}
#endif

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

// Times one launch (or, for Nsight Compute, runs it once) and prints its row.
template <class F>
static void run(const char* kernel, int regs, unsigned grid, int n, const char* dst_name,
                unsigned long long dst_bytes, unsigned long long src_bytes, F launch) {
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
  const char* src_name = strcmp(kernel, "v_int4_bytes") == 0 ? "bytes" : "src";
  printf("{\"id\":\"%s n=%d\",\"spec\":{\"file\":\"vector_loads.cu\",\"kernel\":\"%s\",\"defines\":{},"
         "\"grid\":[%u,1,1],\"block\":[256,1,1],\"dyn_smem\":0,\"args\":{\"n\":%d},"
         "\"buffers\":{\"%s\":%llu,\"%s\":%llu},\"regs\":%d},"
         "\"ms\":%.6f,\"min_ms\":%.6f,\"max_ms\":%.6f}\n",
         kernel, n, kernel, grid, n, dst_name, dst_bytes, src_name, src_bytes, regs, med, lo, hi);
  fflush(stdout);
}

int main(int argc, char** argv) {
  g_ncu = argc > 1 && strcmp(argv[1], "ncu") == 0;
  CK(cudaEventCreate(&g_e0));
  CK(cudaEventCreate(&g_e1));
  const int n = 1 << 21;
  const unsigned grid = n / 256;
  const size_t max_bytes = (size_t)16 * n;
  char *d_a, *d_b;
  CK(cudaMalloc(&d_a, max_bytes));
  CK(cudaMalloc(&d_b, max_bytes));
  CK(cudaMemset(d_a, 1, max_bytes));
  CK(cudaMemset(d_b, 0, max_bytes));
  const unsigned long long N = (unsigned long long)n;

#define COPY(K, T)                                                                                  \
  run(#K, regs_of(K), grid, n, "dst", sizeof(T) * N, sizeof(T) * N,                                \
      [&] { K<<<grid, 256>>>((T*)d_b, (const T*)d_a, n); })
#define READ(K, T, DST)                                                                             \
  run(#K, regs_of(K), grid, n, DST, 4 * N, sizeof(T) * N,                                          \
      [&] { K<<<grid, 256>>>((float*)d_b, (const T*)d_a, n); })

  COPY(v_float, float);
  COPY(v_float2, float2);
  COPY(v_float3, float3);
  READ(v_float3_x, float3, "out");
  run("v_float4", regs_of(v_float4), grid, n, "dst", 16 * N, 16 * N,
      [&] { v_float4<<<grid, 256>>>((float*)d_b, (const float*)d_a, n); });
  run("v_int4_bytes", regs_of(v_int4_bytes), grid, n, "out", 4 * N, 16 * N,
      [&] { v_int4_bytes<<<grid, 256>>>((int*)d_b, (const char*)d_a, n); });
  COPY(v_uchar4, uchar4);
  COPY(v_s12, Triple);
  READ(v_s12_b, Triple, "out");
  COPY(v_s16, AlignedTriple);
  READ(v_s16_b, AlignedTriple, "out");
  return 0;
}
#endif
