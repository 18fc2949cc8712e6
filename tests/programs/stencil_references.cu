// A 1D stencil whose helpers take references, launched with pointers that start past the halo.
#include <cuda_runtime.h>

#define RADIUS 3
#define BLOCK_SIZE 256

__device__ void accumulate(float& total, const float& value, float weight) {
    total += weight * value;
}

__global__ void stencil_1d(const float* in, float* out) {
    __shared__ float temp[BLOCK_SIZE + 2 * RADIUS];
    int g = threadIdx.x + blockIdx.x * blockDim.x;
    int l = threadIdx.x + RADIUS;
    temp[l] = in[g];
    if (threadIdx.x < RADIUS) {
        temp[l - RADIUS] = in[g - RADIUS];
        temp[l + BLOCK_SIZE] = in[g + BLOCK_SIZE];
    }
    __syncthreads();
    float result = 0.0f;
    for (int offset = -RADIUS; offset <= RADIUS; offset++) {
        accumulate(result, temp[l + offset], 1.0f / (2 * RADIUS + 1));
    }
    float& slot = out[g];
    slot = result;
}

int main() {
    const int n = 1 << 20;
    float *d_in, *d_out;
    cudaMalloc((void**)&d_in, (n + 2 * RADIUS) * sizeof(float));
    cudaMalloc((void**)&d_out, (n + 2 * RADIUS) * sizeof(float));
    stencil_1d<<<n / BLOCK_SIZE, BLOCK_SIZE>>>(d_in + RADIUS, d_out + RADIUS);
    cudaDeviceSynchronize();
    return 0;
}
