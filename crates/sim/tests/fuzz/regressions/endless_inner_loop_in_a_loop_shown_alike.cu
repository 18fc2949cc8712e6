// memplay-fuzz: kernel=k grid=1,1,1 block=16,1,1 dyn_smem=0 regs=0 args=n=142,x=-93.25894195292487 buffers=a=256,f=65536 defines= device=g80 sampling=edges budget=default
#if !1
#endif
#define HOSTILE_VALUE 3
#ifndef PAD
#define PAD 1
#endif
#ifndef N
#define N 64
#endif
#ifndef HOSTILE_VALUE
#define HOSTILE_VALUE 0
#endif
#define IDX(r, c) ((r) * 8 + (c))
__global__ void k(int* a, float* f, int n, float x) {
  __shared__ int s[64];
  __shared__ float s2[8][8 + PAD];
  extern __shared__ float dyn[];
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  int j = 0, h = 0;
  unsigned u = 7u;
  long long w = 1LL;
  float v = 0.0f;
  for (;;) for (;;) a[0] += 1;
  a[i & 63] = i + j + h + (int)u + (int)w + (int)v;
}
__device__ int helper(int p) { return p; }
