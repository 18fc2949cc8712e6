// Which shared-memory carveout the driver picks for a launch, alone in its process or after others.
#include <cstdio>
#include <cstdlib>
__global__ void carve(float* out, int n) {
  extern __shared__ float s[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = i;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = s[(threadIdx.x * 7) % (n > 0 ? n : 1)];
}
__global__ void carve_static(float* out) {
  __shared__ float s[3072];
  for (int i = threadIdx.x; i < 3072; i += blockDim.x) s[i] = i;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = s[(threadIdx.x * 7) % 3072];
}
int main(int argc, char** argv) {
  float* o;
  cudaMalloc(&o, 132 * 1024 * 4);
  cudaFuncSetAttribute(carve, cudaFuncAttributeMaxDynamicSharedMemorySize, 49152);
  // args: pairs of block dyn
  for (int i = 1; i + 1 < argc; i += 2) {
    int b = atoi(argv[i]), d = atoi(argv[i + 1]);
    if (d < 0) carve_static<<<132, b>>>(o);
    else carve<<<132, b, d>>>(o, d / 4);
  }
  cudaDeviceSynchronize();
  cudaError_t e = cudaGetLastError();
  if (e) printf("error %s\n", cudaGetErrorString(e));
}
