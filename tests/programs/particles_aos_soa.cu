// The same particle update over an array of structs and over a structure of arrays.
#include <cuda_runtime.h>

struct Particle {
    float x, y, z;
    float vx, vy, vz;
};

struct Particles {
    float* x;
    float* y;
    float* z;
    float* vx;
    float* vy;
    float* vz;
};

__global__ void move_aos(Particle* p, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i].x += p[i].vx * dt;
        p[i].y += p[i].vy * dt;
        p[i].z += p[i].vz * dt;
    }
}

__global__ void move_soa(float* x, float* y, float* z, const float* vx, const float* vy,
                         const float* vz, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] += vx[i] * dt;
        y[i] += vy[i] * dt;
        z[i] += vz[i] * dt;
    }
}

int main() {
    const int n = 1 << 20;
    Particle* d_p;
    cudaMalloc(&d_p, n * sizeof(Particle));
    Particles s;
    cudaMalloc(&s.x, n * sizeof(float));
    cudaMalloc(&s.y, n * sizeof(float));
    cudaMalloc(&s.z, n * sizeof(float));
    cudaMalloc(&s.vx, n * sizeof(float));
    cudaMalloc(&s.vy, n * sizeof(float));
    cudaMalloc(&s.vz, n * sizeof(float));
    move_aos<<<n / 256, 256>>>(d_p, 0.01f, n);
    move_soa<<<n / 256, 256>>>(s.x, s.y, s.z, s.vx, s.vy, s.vz, 0.01f, n);
    cudaDeviceSynchronize();
    return 0;
}
