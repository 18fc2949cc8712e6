// A block sum over dynamic shared memory through the classic SharedMemory<T> helper: a struct
// template with no data whose conversion operators hand out the block's dynamic shared memory as
// a T*, and an explicit specialisation for double with an array of its own. main sums 512 floats
// and 512 doubles in 4 blocks of 128.
#include <cstdio>
#include <cuda_runtime.h>

template <class T>
struct SharedMemory {
  __device__ inline operator T*() {
    extern __shared__ int words[];
    return (T*)words;
  }
  __device__ inline operator const T*() const {
    extern __shared__ int words[];
    return (T*)words;
  }
};

template <>
struct SharedMemory<double> {
  __device__ inline operator double*() {
    extern __shared__ double doubles[];
    return (double*)doubles;
  }
  __device__ inline operator const double*() const {
    extern __shared__ double doubles[];
    return (double*)doubles;
  }
};

template <class T>
__global__ void block_sum(const T* in, T* out, unsigned n) {
  T* partial = SharedMemory<T>();
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + tid;
  partial[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = partial[0];
}

int main() {
  float *f_in, *f_out;
  double *d_in, *d_out;
  cudaMalloc(&f_in, 512 * sizeof(float));
  cudaMalloc(&f_out, 4 * sizeof(float));
  cudaMalloc(&d_in, 512 * sizeof(double));
  cudaMalloc(&d_out, 4 * sizeof(double));
  block_sum<float><<<4, 128, 128 * sizeof(float)>>>(f_in, f_out, 512);
  block_sum<double><<<4, 128, 128 * sizeof(double)>>>(d_in, d_out, 512);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
