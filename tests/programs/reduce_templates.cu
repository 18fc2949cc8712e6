// A block reduction templated on its element type and block size, with the shared-memory helper
// struct CUDA's samples popularised, launched from main for float and for double.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

template <class T>
struct SharedMemory {
    __device__ T* get() {
        extern __shared__ int memory[];
        return (T*)memory;
    }
};

template <class T, unsigned int BLOCK>
__global__ void reduce(const T* in, T* out, unsigned int n) {
    SharedMemory<T> shared;
    T* partial = shared.get();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (BLOCK * 2) + threadIdx.x;
    T sum = (i < n) ? in[i] : T(0);
    if (i + BLOCK < n) sum += in[i + BLOCK];
    partial[tid] = sum;
    __syncthreads();
    for (unsigned int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] = sum = sum + partial[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sum;
}

template <class T>
void run(unsigned int n) {
    const unsigned int threads = 256;
    unsigned int blocks = (n + threads * 2 - 1) / (threads * 2);
    T *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(T));
    cudaMalloc(&d_out, blocks * sizeof(T));
    reduce<T, threads><<<blocks, threads, threads * sizeof(T)>>>(d_in, d_out, n);
    cudaFree(d_in);
    cudaFree(d_out);
}

int main(int argc, char** argv) {
    unsigned int n = 1 << 20;
    const unsigned int threads = 256;
    unsigned int blocks = (n + threads * 2 - 1) / (threads * 2);
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, blocks * sizeof(float));
    reduce<float, 256><<<blocks, threads, threads * sizeof(float)>>>(d_in, d_out, n);
    double *d_in2, *d_out2;
    cudaMalloc(&d_in2, n * sizeof(double));
    cudaMalloc(&d_out2, blocks * sizeof(double));
    reduce<double, 256><<<blocks, threads, threads * sizeof(double)>>>(d_in2, d_out2, n);
    cudaDeviceSynchronize();
    return 0;
}
