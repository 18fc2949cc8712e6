// A tiled matrix multiply whose tile is a template argument, launched from main at two tile sizes.
#include <cstdio>
#include <cuda_runtime.h>

#define N 256

template <int TILE>
__global__ void matmul_tiled(const float* a, const float* b, float* c, int n) {
    __shared__ float as[TILE][TILE];
    __shared__ float bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        as[threadIdx.y][threadIdx.x] = a[row * n + t * TILE + threadIdx.x];
        bs[threadIdx.y][threadIdx.x] = b[(t * TILE + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    c[row * n + col] = sum;
}

int main() {
    size_t bytes = N * N * sizeof(float);
    float *d_a, *d_b, *d_c;
    cudaMalloc(&d_a, bytes);
    cudaMalloc(&d_b, bytes);
    cudaMalloc(&d_c, bytes);
    dim3 block16(16, 16);
    dim3 grid16(N / 16, N / 16);
    matmul_tiled<16><<<grid16, block16>>>(d_a, d_b, d_c, N);
    dim3 block8(8, 8);
    dim3 grid8(N / 8, N / 8);
    matmul_tiled<8><<<grid8, block8>>>(d_a, d_b, d_c, N);
    cudaDeviceSynchronize();
    cudaFree(d_a);
    cudaFree(d_b);
    cudaFree(d_c);
    printf("done\n");
    return 0;
}
