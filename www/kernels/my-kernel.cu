// Your kernel: edit it, add kernels, and write its launch below the editor.
#define N (1 << 20)

__global__ void saxpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
