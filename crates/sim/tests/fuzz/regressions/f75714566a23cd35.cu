// memplay-fuzz: kernel=k grid=1,2,1 block=32,1,1 dyn_smem=0 regs=0 args=n=54,x=18.07611953057988 buffers=a=1024,f=4096 defines=PAD=33 device=gt200 sampling=edges budget=default
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
  { int m = 0; while (m < 3) { m++; for (int k = 0; k < ((+a[(67) & 63])); k += 1) { s2[((((int)blockDim.x) ? (87 <= (int)s2[i & 7][j & 7]) : ((unsigned long long)17))) & 7][((-*(a + ((threadIdx.y) & 63)))) & 7] = 7; s2[(((&a[0])[((int)s2[i & 7][j & 7]) & 63] > max((threadIdx.y ? 10 : 43), 80))) & 7][(*(a + (((blockDim.x ? 81 : 92)) & 63))) & 7] = helper(s[(s[j & 63]) & 63], 1e-3f); s2[(*(a + (((int)s2[(blockIdx.x) & 7][(helper(n, v)) & 7]) & 63))) & 7][((atomicCAS(&s[(IDX(i, j)) & 63], true, 1) > ((int)s2[(IDX(i, j)) & 7][(75) & 7] - -1))) & 7] = atomicCAS(&s[((11 / blockDim.y)) & 63], helper(threadIdx.x, 0.5f), 1); } for (int k = 0; k < 6; ++k) {  } do { u += ((short)blockIdx.y); ; if ((((017, a[i & 63]) > 1) % (a[i & 63] ? a[(w) & 63] : (*(a + ((65) & 63)), 1)))) return; } while ((helper(91, 3.0f) >= (a[(s[j & 63]) & 63], N))); } }
  for (int k = 0; k < (((61 >> n) ^ ((unsigned)0))); k += 1) {  }
  a[(umin(*(a + (((51 ? blockDim.x : (j += 3))) & 63)), a[(29) & 63])) & 63] = helper((!a[(50) & 63]), 0.5f);
  for (int k = 0; k < ((-atomicCAS(&s[(64) & 63], 33, 1))); k += 1) { f[(umin((~gridDim.x), ((49 && 80), w))) & 63] = fabsf(dyn[i & 15]); a[(((68 + 1) ^ 2147483647)) & 63] = a[((threadIdx.x ? 27 : (14 % 90))) & 63]; }
  for (int k = 0; k < 5; ++k) { dyn[((&a[0])[(a[(10) & 63]) & 63]) & 15] = (dyn[i & 15] * x); dyn[(*(a + (((IDX(i, j) ? 51 : 34)) & 63))) & 15] = (1e-3f * 0.0f); while (1) {  return; } }
  for (int k = 0; k < 5; ++k) { v = (a[((s[j & 63] ? 65535 : 'a')) & 63] ? dyn[i & 15] : 3.0f); f[(((65535 >= 4611686018427387904LL) >= (threadIdx.x - (int)u))) & 63] = fabsf((float)i); }
  a[i & 63] = i + j + h + (int)u + (int)w + (int)v;
}
__device__ int helper(int p, float q) { if (p > 3) return p * 2; return p - (int)q; }
