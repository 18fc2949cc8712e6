// Planted bugs, and their fixed versions, for the sanitizer: what NVIDIA's compute-sanitizer
// reports for each on a real GPU (racecheck, synccheck, initcheck), so memplay's own checks can be
// compared with it kernel by kernel. Each kernel is launched alone, by name, by the host program
// at the end (under `#ifdef __CUDACC__`): `planted NAME`.
//
//   tiled_matmul           16x16 tiles with both barriers: no report
//   tiled_no_second_sync   the barrier after the inner product left out: a write after read
//   tiled_no_first_sync    the barrier after the tile loads left out: a read after write
//   block_sync_in_branch   __syncthreads() inside a branch half the block takes
//   warp_shfl_in_branch    __shfl_down_sync with a full mask inside a branch half the warp takes
//   warp_sync_in_branch    __syncwarp() with a full mask inside a branch half the warp takes
//   warp_reduce            a full warp's __shfl_down_sync reduction: no report
//   reduce_past_written    a shared tree reduction of 128 over a block of 96: reads what no
//                          thread wrote
//   reduce_padded          the same with the tail written as zeros: no report
//   read_unwritten_global  reads a cudaMalloc'd buffer nothing wrote

#define TILE 16
#define FULL 0xffffffffu

__global__ void tiled_matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int t = 0; t < n / TILE; ++t) {
    as[ty][tx] = a[row * n + t * TILE + tx];
    bs[ty][tx] = b[(t * TILE + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) sum += as[ty][k] * bs[k][tx];
    __syncthreads();
  }
  c[row * n + col] = sum;
}

__global__ void tiled_no_second_sync(const float* a, const float* b, float* c, int n) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int t = 0; t < n / TILE; ++t) {
    as[ty][tx] = a[row * n + t * TILE + tx];
    bs[ty][tx] = b[(t * TILE + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) sum += as[ty][k] * bs[k][tx];
  }
  c[row * n + col] = sum;
}

__global__ void tiled_no_first_sync(const float* a, const float* b, float* c, int n) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int t = 0; t < n / TILE; ++t) {
    as[ty][tx] = a[row * n + t * TILE + tx];
    bs[ty][tx] = b[(t * TILE + ty) * n + col];
    for (int k = 0; k < TILE; ++k) sum += as[ty][k] * bs[k][tx];
    __syncthreads();
  }
  c[row * n + col] = sum;
}

__global__ void block_sync_in_branch(float* out) {
  __shared__ float s[128];
  s[threadIdx.x] = threadIdx.x;
  if (threadIdx.x < 64) __syncthreads();
  out[threadIdx.x] = s[127 - threadIdx.x];
}

__global__ void warp_shfl_in_branch(float* out) {
  float v = threadIdx.x;
  if (threadIdx.x % 32 < 16) v += __shfl_down_sync(FULL, v, 8);
  out[threadIdx.x] = v;
}

__global__ void warp_sync_in_branch(float* out) {
  __shared__ float s[32];
  s[threadIdx.x] = threadIdx.x;
  if (threadIdx.x < 16) __syncwarp();
  out[threadIdx.x] = s[31 - threadIdx.x];
}

__global__ void warp_reduce(const float* in, float* out) {
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(FULL, v, offset);
  if (threadIdx.x % 32 == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}

__global__ void reduce_past_written(const float* in, float* out) {
  __shared__ float s[128];
  unsigned tid = threadIdx.x;
  s[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned stride = 64; stride > 0; stride /= 2) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

__global__ void reduce_padded(const float* in, float* out) {
  __shared__ float s[128];
  unsigned tid = threadIdx.x;
  s[tid] = in[blockIdx.x * blockDim.x + tid];
  if (tid + blockDim.x < 128) s[tid + blockDim.x] = 0.0f;
  __syncthreads();
  for (unsigned stride = 64; stride > 0; stride /= 2) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

__global__ void read_unwritten_global(const float* in, float* out) {
  out[threadIdx.x] = in[threadIdx.x] * 2.0f;
}

#ifdef __CUDACC__
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: planted KERNEL\n");
    return 2;
  }
  const char* k = argv[1];
  const int n = 64;
  float *a, *b, *c, *unwritten;
  cudaMalloc(&a, n * n * sizeof(float));
  cudaMalloc(&b, n * n * sizeof(float));
  cudaMalloc(&c, n * n * sizeof(float));
  cudaMalloc(&unwritten, 256 * sizeof(float));
  cudaMemset(a, 0, n * n * sizeof(float));
  cudaMemset(b, 0, n * n * sizeof(float));
  cudaMemset(c, 0, n * n * sizeof(float));
  dim3 tiles(n / TILE, n / TILE), tile(TILE, TILE);
  if (!strcmp(k, "tiled_matmul")) tiled_matmul<<<tiles, tile>>>(a, b, c, n);
  else if (!strcmp(k, "tiled_no_second_sync")) tiled_no_second_sync<<<tiles, tile>>>(a, b, c, n);
  else if (!strcmp(k, "tiled_no_first_sync")) tiled_no_first_sync<<<tiles, tile>>>(a, b, c, n);
  else if (!strcmp(k, "block_sync_in_branch")) block_sync_in_branch<<<1, 128>>>(c);
  else if (!strcmp(k, "warp_shfl_in_branch")) warp_shfl_in_branch<<<1, 32>>>(c);
  else if (!strcmp(k, "warp_sync_in_branch")) warp_sync_in_branch<<<1, 32>>>(c);
  else if (!strcmp(k, "warp_reduce")) warp_reduce<<<4, 128>>>(a, c);
  else if (!strcmp(k, "reduce_past_written")) reduce_past_written<<<4, 96>>>(a, c);
  else if (!strcmp(k, "reduce_padded")) reduce_padded<<<4, 96>>>(a, c);
  else if (!strcmp(k, "read_unwritten_global")) read_unwritten_global<<<1, 256>>>(unwritten, c);
  else {
    fprintf(stderr, "no kernel %s\n", k);
    return 2;
  }
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s: %s\n", k, cudaGetErrorString(e));
  return 0;
}
#endif
