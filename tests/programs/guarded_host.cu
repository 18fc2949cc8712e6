// A program whose host side uses C++ memplay does not simulate, with device code that depends on
// the architecture it is compiled for, and a launch whose size comes from the command line.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#ifdef __CUDACC__
#define DEVICE_INLINE __device__ __forceinline__
#else
#define DEVICE_INLINE inline
#endif

DEVICE_INLINE float scale_of(int i) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return 2.0f;
#else
    return 1.0f;
#endif
}

__global__ void scale(float* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= scale_of(i);
}

class Timer {
public:
    Timer() : start_(0) {}
    void stop(const char* what) { printf("%s\n", what); }
private:
    long start_;
};

static int parse_size(int argc, char** argv) {
    return argc > 1 ? atoi(argv[1]) : 1 << 20;
}

int main(int argc, char** argv) {
    int n = parse_size(argc, argv);
    std::vector<float> host(n);
    std::generate(host.begin(), host.end(), [] { return 1.0f; });
    float* d_data;
    cudaMalloc(&d_data, n * sizeof(float));
    cudaMemcpy(d_data, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    Timer timer;
    scale<<<(n + 255) / 256, 256>>>(d_data, n);
    scale<<<4096, 256>>>(d_data, 4096 * 256);
    timer.stop("scaled");
    cudaFree(d_data);
    return 0;
}
