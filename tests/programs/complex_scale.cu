// A complex-number class with operators, multiplied element by element on the GPU.
#include <cstdio>
#include <vector>

struct Complex {
    float re;
    float im;
    __host__ __device__ Complex() : re(0.0f), im(0.0f) {}
    __host__ __device__ Complex(float r, float i) : re(r), im(i) {}
    __host__ __device__ Complex operator+(const Complex& o) const { return Complex(re + o.re, im + o.im); }
    __host__ __device__ Complex operator*(const Complex& o) const {
        return Complex(re * o.re - im * o.im, re * o.im + im * o.re);
    }
    __host__ __device__ float norm2() const { return re * re + im * im; }
};

__global__ void multiply_add(const Complex* x, const Complex* y, Complex* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Complex product = x[i] * y[i];
        out[i] = product + Complex(1.0f, 0.0f);
    }
}

__global__ void norms(const Complex* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i].norm2();
}

int main() {
    const int n = 1 << 16;
    std::vector<Complex> host(n, Complex(1.0f, 2.0f));
    Complex *d_x, *d_y, *d_out;
    float* d_norm;
    cudaMalloc(&d_x, n * sizeof(Complex));
    cudaMalloc(&d_y, n * sizeof(Complex));
    cudaMalloc(&d_out, n * sizeof(Complex));
    cudaMalloc(&d_norm, n * sizeof(float));
    cudaMemcpy(d_x, host.data(), n * sizeof(Complex), cudaMemcpyHostToDevice);
    cudaMemcpy(d_y, host.data(), n * sizeof(Complex), cudaMemcpyHostToDevice);
    int threads = 256;
    int blocks = (n + threads - 1) / threads;
    multiply_add<<<blocks, threads>>>(d_x, d_y, d_out, n);
    norms<<<blocks, threads>>>(d_out, d_norm, n);
    cudaDeviceSynchronize();
    return 0;
}
