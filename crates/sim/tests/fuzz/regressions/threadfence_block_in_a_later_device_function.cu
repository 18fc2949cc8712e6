// memplay-fuzz: kernel=k grid=1,1,1 block=32,1,1 dyn_smem=0 regs=0 args= buffers=a=1024 defines= device=h100 sampling=edges budget=default
__global__ void k(int* a) { a[threadIdx.x] = f(threadIdx.x); }
__device__ int f(int x) { __threadfence_block(); return x; }
