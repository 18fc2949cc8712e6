// Warp-level primitives, cache-hinted loads, 16-bit types, the special function unit and atomics:
// what each costs on sm_90. Each kernel isolates one kind of instruction; the host program at the
// end times every launch and, under Nsight Compute, runs each once. The groups:
//
//   S  shuffles      w_shfl_xor, w_shfl_idx, w_shfl_down_reduce: SHFL throughput in a dependent
//                    loop, and a warp reduction over an array (memory-bound, 5 shuffles a warp)
//   V  votes         w_ballot, w_any, w_match_any, w_reduce_add: VOTE, MATCH and REDUX in a loop
//   C  groups        w_cg_reduce_float, w_cg_reduce_int: cg::reduce over a tile of 32 (a shuffle
//                    tree for float, one REDUX for int)
//   L  hinted loads  w_copy, w_ldg_copy, w_ldcs_copy, w_ldcg_stcs_copy: the same copy with each hint
//   H  16-bit types  w_half_copy, w_bf16_copy, w_half2_axpy: 2-byte elements' sectors and banks
//   F  math          w_fma (baseline), w_expf, w_fast_expf, w_exp2f, w_sinf, w_fast_sinf, w_rsqrtf,
//                    w_tanhf, w_sqrtf, w_div: four independent chains a thread, arithmetic-bound
//   N  n-body        w_nbody (all pairs from global memory), w_nbody_tiled (through shared tiles)
//   A  atomics       w_atomic_inc, w_atomic_dec, w_atomic_add_block, w_atomic_add_half2
//
// The kernels are memplay's to read once warp primitives are simulated; `#include`s and host code
// sit under `#ifdef __CUDACC__` as in ../probes/probe.cu.

#ifdef __CUDACC__
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
namespace cg = cooperative_groups;
#endif

#define FULL 0xffffffffu

// ---- S: shuffles ---------------------------------------------------------------------------

__global__ void w_shfl_xor(float* out, int iters) {
  float v = threadIdx.x * 0.5f;
  for (int k = 0; k < iters; ++k) {
    v += __shfl_xor_sync(FULL, v, 1);
    v *= 0.5f;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void w_shfl_idx(float* out, int iters) {
  float v = threadIdx.x * 0.5f;
  int src = (threadIdx.x + 1) & 31;
  for (int k = 0; k < iters; ++k) {
    v += __shfl_sync(FULL, v, src);
    v *= 0.5f;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void w_shfl_down_reduce(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(FULL, v, offset);
  if ((threadIdx.x & 31) == 0) out[i / 32] = v;
}

// ---- V: votes ------------------------------------------------------------------------------

__global__ void w_ballot(unsigned* out, int iters) {
  unsigned v = threadIdx.x * 2654435761u;
  for (int k = 0; k < iters; ++k) {
    unsigned b = __ballot_sync(FULL, v & 1u);
    v = (v >> 1) + __popc(b);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void w_any(unsigned* out, int iters) {
  unsigned v = threadIdx.x * 2654435761u;
  for (int k = 0; k < iters; ++k) {
    v = (v >> 1) + __any_sync(FULL, (v & 7u) == 3u);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void w_match_any(unsigned* out, int iters) {
  unsigned v = threadIdx.x * 2654435761u;
  for (int k = 0; k < iters; ++k) {
    v = (v >> 1) + __match_any_sync(FULL, v & 3u);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

__global__ void w_reduce_add(unsigned* out, int iters) {
  unsigned v = threadIdx.x * 2654435761u;
  for (int k = 0; k < iters; ++k) {
    v = (v >> 1) + __reduce_add_sync(FULL, v & 255u);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// ---- C: cooperative groups -------------------------------------------------------------------

#ifdef __CUDACC__
__global__ void w_cg_reduce_float(const float* in, float* out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  float sum = cg::reduce(tile, v, cg::plus<float>());
  if (tile.thread_rank() == 0) out[i / 32] = sum;
}

__global__ void w_cg_reduce_int(const int* in, int* out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int sum = cg::reduce(tile, v, cg::plus<int>());
  if (tile.thread_rank() == 0) out[i / 32] = sum;
}
#endif

// ---- L: cache-hinted loads -------------------------------------------------------------------

__global__ void w_copy(float* dst, const float* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

__global__ void w_ldg_copy(float* dst, const float* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = __ldg(&src[i]);
}

__global__ void w_ldcs_copy(float* dst, const float* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = __ldcs(&src[i]);
}

__global__ void w_ldcg_stcs_copy(float* dst, const float* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) __stcs(&dst[i], __ldcg(&src[i]));
}

// ---- H: 16-bit types -------------------------------------------------------------------------

#ifdef __CUDACC__
__global__ void w_half_copy(half* dst, const half* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

__global__ void w_bf16_copy(__nv_bfloat16* dst, const __nv_bfloat16* src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

__global__ void w_half2_axpy(half2* y, const half2* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  half2 a2 = __float2half2_rn(a);
  if (i < n) y[i] = __hfma2(a2, x[i], y[i]);
}
#endif

// ---- F: math, four independent chains a thread -------------------------------------------------

#define CHAINS(OP)                                                                                  \
  float x0 = threadIdx.x * 1e-3f + seed, x1 = x0 + 0.25f, x2 = x0 + 0.5f, x3 = x0 + 0.75f;           \
  for (int k = 0; k < iters; ++k) {                                                                 \
    x0 = OP(x0);                                                                                    \
    x1 = OP(x1);                                                                                    \
    x2 = OP(x2);                                                                                    \
    x3 = OP(x3);                                                                                    \
  }                                                                                                 \
  out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3;

#define OP_FMA(x) ((x) * 0.999f + 0.001f)
#define OP_EXPF(x) (expf(-(x)) * 0.5f)
#define OP_FAST_EXPF(x) (__expf(-(x)) * 0.5f)
#define OP_EXP2F(x) (exp2f(-(x)) * 0.5f)
#define OP_SINF(x) (sinf(x) + 0.5f)
#define OP_FAST_SINF(x) (__sinf(x) + 0.5f)
#define OP_RSQRTF(x) (rsqrtf((x) + 1.0f))
#define OP_TANHF(x) (tanhf(x) + 0.25f)
#define OP_SQRTF(x) (sqrtf((x) + 1.0f))
#define OP_DIV(x) (1.0f / ((x) + 1.0f))

__global__ void w_fma(float* out, int iters, float seed) { CHAINS(OP_FMA) }
__global__ void w_expf(float* out, int iters, float seed) { CHAINS(OP_EXPF) }
__global__ void w_fast_expf(float* out, int iters, float seed) { CHAINS(OP_FAST_EXPF) }
__global__ void w_exp2f(float* out, int iters, float seed) { CHAINS(OP_EXP2F) }
__global__ void w_sinf(float* out, int iters, float seed) { CHAINS(OP_SINF) }
__global__ void w_fast_sinf(float* out, int iters, float seed) { CHAINS(OP_FAST_SINF) }
__global__ void w_rsqrtf(float* out, int iters, float seed) { CHAINS(OP_RSQRTF) }
__global__ void w_tanhf(float* out, int iters, float seed) { CHAINS(OP_TANHF) }
__global__ void w_sqrtf(float* out, int iters, float seed) { CHAINS(OP_SQRTF) }
__global__ void w_div(float* out, int iters, float seed) { CHAINS(OP_DIV) }

// ---- N: n-body, all pairs ----------------------------------------------------------------------

#define SOFTENING 1e-9f
#define NBODY_TILE 256

__global__ void w_nbody(const float4* pos, float4* acc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 p = pos[i];
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int j = 0; j < n; ++j) {
    float4 q = pos[j];
    float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
    float d2 = dx * dx + dy * dy + dz * dz + SOFTENING;
    float inv = rsqrtf(d2);
    float inv3 = inv * inv * inv * q.w;
    ax += dx * inv3;
    ay += dy * inv3;
    az += dz * inv3;
  }
  acc[i] = make_float4(ax, ay, az, 0.0f);
}

__global__ void w_nbody_tiled(const float4* pos, float4* acc, int n) {
  __shared__ float4 tile[NBODY_TILE];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 p = pos[i];
  float ax = 0.0f, ay = 0.0f, az = 0.0f;
  for (int base = 0; base < n; base += NBODY_TILE) {
    tile[threadIdx.x] = pos[base + threadIdx.x];
    __syncthreads();
    for (int j = 0; j < NBODY_TILE; ++j) {
      float4 q = tile[j];
      float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
      float d2 = dx * dx + dy * dy + dz * dz + SOFTENING;
      float inv = rsqrtf(d2);
      float inv3 = inv * inv * inv * q.w;
      ax += dx * inv3;
      ay += dy * inv3;
      az += dz * inv3;
    }
    __syncthreads();
  }
  acc[i] = make_float4(ax, ay, az, 0.0f);
}

// ---- A: atomics ----------------------------------------------------------------------------

__global__ void w_atomic_inc(unsigned* bins, int n, int mask) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicInc(&bins[i & mask], 1000000u);
}

__global__ void w_atomic_dec(unsigned* bins, int n, int mask) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicDec(&bins[i & mask], 1000000u);
}

__global__ void w_atomic_add_block(int* bins, int n, int mask) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd_block(&bins[i & mask], 1);
}

#ifdef __CUDACC__
__global__ void w_atomic_add_half2(half2* bins, int n, int mask) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[i & mask], __floats2half2_rn(1.0f, 2.0f));
}
#endif

#ifdef __CUDACC__
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

// Times one launch (or, for Nsight Compute, runs it once) and prints its row: `args` and `buffers`
// are the inside of the spec's JSON objects.
template <class F>
static void run(const char* kernel, int regs, unsigned grid, unsigned block, const std::string& args,
                const std::string& buffers, F launch) {
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
  std::string id = args;
  id.erase(std::remove(id.begin(), id.end(), '"'), id.end());
  std::replace(id.begin(), id.end(), ':', '=');
  std::replace(id.begin(), id.end(), ',', ' ');
  printf("{\"id\":\"%s %s grid=%u\",\"spec\":{\"file\":\"warp_probes.cu\",\"kernel\":\"%s\",\"defines\":{},"
         "\"grid\":[%u,1,1],\"block\":[%u,1,1],\"dyn_smem\":0,\"args\":{%s},\"buffers\":{%s},\"regs\":%d},"
         "\"ms\":%.6f,\"min_ms\":%.6f,\"max_ms\":%.6f}\n",
         kernel, id.c_str(), grid, kernel, grid, block, args.c_str(), buffers.c_str(), regs, med, lo, hi);
  fflush(stdout);
}

static std::string kv(const char* name, long long value) {
  return "\"" + std::string(name) + "\":" + std::to_string(value);
}

static std::string kvf(const char* name, float value) {
  char text[64];
  snprintf(text, sizeof text, "\"%s\":%g", name, value);
  return text;
}

int main(int argc, char** argv) {
  g_ncu = argc > 1 && strcmp(argv[1], "ncu") == 0;
  CK(cudaEventCreate(&g_e0));
  CK(cudaEventCreate(&g_e1));
  const int n = 1 << 24;
  const size_t bytes = (size_t)4 * n;
  char *d_a, *d_b;
  CK(cudaMalloc(&d_a, bytes));
  CK(cudaMalloc(&d_b, bytes));
  CK(cudaMemset(d_a, 0, bytes));
  CK(cudaMemset(d_b, 0, bytes));
  float* fa = (float*)d_a;
  float* fb = (float*)d_b;

  // Loops: 16 blocks of 256 an SM, every SM busy.
  const unsigned loop_grid = 132 * 16;
  const long long loop_threads = (long long)loop_grid * 256;
  const std::string out4 = kv("out", 4 * loop_threads);
  const int shfl_iters = 4096, vote_iters = 2048, math_iters = 1024;
#define LOOP(K, ITERS, T)                                                                           \
  run(#K, regs_of(K), loop_grid, 256, kv("iters", ITERS), out4,                                    \
      [&] { K<<<loop_grid, 256>>>((T*)d_b, ITERS); })
  LOOP(w_shfl_xor, shfl_iters, float);
  LOOP(w_shfl_idx, shfl_iters, float);
  LOOP(w_ballot, vote_iters, unsigned);
  LOOP(w_any, vote_iters, unsigned);
  LOOP(w_match_any, vote_iters, unsigned);
  LOOP(w_reduce_add, vote_iters, unsigned);

  // Reductions and copies over 2^24 elements, one a thread.
  const unsigned grid = n / 256;
  const std::string nn = kv("n", n);
  const std::string in_out = kv("in", 4LL * n) + "," + kv("out", 4LL * n / 32);
  run("w_shfl_down_reduce", regs_of(w_shfl_down_reduce), grid, 256, nn, in_out,
      [&] { w_shfl_down_reduce<<<grid, 256>>>(fa, fb, n); });
  run("w_cg_reduce_float", regs_of(w_cg_reduce_float), grid, 256, nn, in_out,
      [&] { w_cg_reduce_float<<<grid, 256>>>(fa, fb, n); });
  run("w_cg_reduce_int", regs_of(w_cg_reduce_int), grid, 256, nn, in_out,
      [&] { w_cg_reduce_int<<<grid, 256>>>((int*)d_a, (int*)d_b, n); });
  const std::string copy4 = kv("dst", 4LL * n) + "," + kv("src", 4LL * n);
#define COPY(K)                                                                                     \
  run(#K, regs_of(K), grid, 256, nn, copy4, [&] { K<<<grid, 256>>>(fb, fa, n); })
  COPY(w_copy);
  COPY(w_ldg_copy);
  COPY(w_ldcs_copy);
  COPY(w_ldcg_stcs_copy);
  const std::string copy2 = kv("dst", 2LL * n) + "," + kv("src", 2LL * n);
  run("w_half_copy", regs_of(w_half_copy), grid, 256, nn, copy2,
      [&] { w_half_copy<<<grid, 256>>>((half*)d_b, (const half*)d_a, n); });
  run("w_bf16_copy", regs_of(w_bf16_copy), grid, 256, nn, copy2,
      [&] { w_bf16_copy<<<grid, 256>>>((__nv_bfloat16*)d_b, (const __nv_bfloat16*)d_a, n); });
  run("w_half2_axpy", regs_of(w_half2_axpy), grid, 256, kvf("a", 0.5f) + "," + nn,
      kv("y", 4LL * n) + "," + kv("x", 4LL * n),
      [&] { w_half2_axpy<<<grid, 256>>>((half2*)d_b, (const half2*)d_a, 0.5f, n); });

  // Math: four chains of `math_iters` operations a thread.
#define MATH(K)                                                                                     \
  run(#K, regs_of(K), loop_grid, 256, kv("iters", math_iters) + "," + kvf("seed", 0.1f), out4,     \
      [&] { K<<<loop_grid, 256>>>(fb, math_iters, 0.1f); })
  MATH(w_fma);
  MATH(w_expf);
  MATH(w_fast_expf);
  MATH(w_exp2f);
  MATH(w_sinf);
  MATH(w_fast_sinf);
  MATH(w_rsqrtf);
  MATH(w_tanhf);
  MATH(w_sqrtf);
  MATH(w_div);

  // N-body: 32768 bodies, one a thread; positions of small values (the buffers hold zeros plus
  // the softening, so no division by zero).
  const int bodies = 32768;
  const std::string nbody = kv("pos", 16LL * bodies) + "," + kv("acc", 16LL * bodies);
  run("w_nbody", regs_of(w_nbody), bodies / 256, 256, kv("n", bodies), nbody,
      [&] { w_nbody<<<bodies / 256, 256>>>((const float4*)d_a, (float4*)d_b, bodies); });
  run("w_nbody_tiled", regs_of(w_nbody_tiled), bodies / 256, 256, kv("n", bodies), nbody,
      [&] { w_nbody_tiled<<<bodies / 256, 256>>>((const float4*)d_a, (float4*)d_b, bodies); });

  // Atomics: 2^24 updates into 1024 bins (contended) or into 2^24 bins (one each).
  const int masks[2] = {1023, n - 1};
  for (int m = 0; m < 2; ++m) {
    const int mask = masks[m];
    const std::string am = nn + "," + kv("mask", mask);
    const std::string bins = kv("bins", 4LL * (mask + 1));
    run("w_atomic_inc", regs_of(w_atomic_inc), grid, 256, am, bins,
        [&] { w_atomic_inc<<<grid, 256>>>((unsigned*)d_b, n, mask); });
    run("w_atomic_dec", regs_of(w_atomic_dec), grid, 256, am, bins,
        [&] { w_atomic_dec<<<grid, 256>>>((unsigned*)d_b, n, mask); });
    run("w_atomic_add_block", regs_of(w_atomic_add_block), grid, 256, am, bins,
        [&] { w_atomic_add_block<<<grid, 256>>>((int*)d_b, n, mask); });
    run("w_atomic_add_half2", regs_of(w_atomic_add_half2), grid, 256, am, bins,
        [&] { w_atomic_add_half2<<<grid, 256>>>((half2*)d_b, n, mask); });
  }
  return 0;
}
#endif
