// A kernel that takes its settings in a struct passed by value, and a float3, as many programs
// do: the launch gives each member.
#include <cstdio>
#include <cuda_runtime.h>

struct Settings {
  int n;
  float alpha;
};

__global__ void scale_shift(Settings s, float3 shift, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < s.n) y[i] = s.alpha * x[i] + shift.x + shift.y + shift.z;
}

int main() {
  const int n = 1 << 20;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  Settings s{n, 2.0f};
  scale_shift<<<n / 256, 256>>>(s, make_float3(1.0f, 2.0f, 3.0f), x, y);
  cudaDeviceSynchronize();
  printf("done\n");
  cudaFree(x);
  cudaFree(y);
  return 0;
}
