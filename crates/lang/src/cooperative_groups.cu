// memplay's own cooperative_groups.h: the thread block, its tiles of 1 to 32 threads and cg::reduce,
// written in the language memplay simulates and read before a file that names cooperative_groups.
// block.sync(), cg::sync(g) and tile.sync() are barriers, lowered where they are called (sema).
namespace cooperative_groups {
struct thread_block {
  __device__ unsigned thread_rank() const {
    return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  }
  __device__ unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
  __device__ unsigned num_threads() const { return blockDim.x * blockDim.y * blockDim.z; }
  __device__ dim3 group_index() const { return blockIdx; }
  __device__ dim3 thread_index() const { return threadIdx; }
  __device__ dim3 group_dim() const { return blockDim; }
  __device__ dim3 dim_threads() const { return blockDim; }
};
__device__ thread_block this_thread_block() { return thread_block(); }
template <unsigned N> struct thread_block_tile {
  __device__ unsigned block_rank() const {
    return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  }
  __device__ unsigned thread_rank() const { return block_rank() % N; }
  __device__ unsigned size() const { return N; }
  __device__ unsigned num_threads() const { return N; }
  __device__ unsigned meta_group_rank() const { return block_rank() / N; }
  __device__ unsigned meta_group_size() const {
    return (blockDim.x * blockDim.y * blockDim.z + N - 1) / N;
  }
  __device__ unsigned lanes() const {
    return N == 32 ? 0xffffffffu : ((1u << N) - 1) << (block_rank() % 32 / N * N);
  }
  __device__ int shfl(int v, int src) const { return __shfl_sync(lanes(), v, src, N); }
  __device__ unsigned shfl(unsigned v, int src) const { return __shfl_sync(lanes(), v, src, N); }
  __device__ float shfl(float v, int src) const { return __shfl_sync(lanes(), v, src, N); }
  __device__ double shfl(double v, int src) const { return __shfl_sync(lanes(), v, src, N); }
  __device__ long long shfl(long long v, int src) const { return __shfl_sync(lanes(), v, src, N); }
  __device__ unsigned long long shfl(unsigned long long v, int src) const { return __shfl_sync(lanes(), v, src, N); }
  __device__ int shfl_down(int v, unsigned d) const { return __shfl_down_sync(lanes(), v, d, N); }
  __device__ unsigned shfl_down(unsigned v, unsigned d) const { return __shfl_down_sync(lanes(), v, d, N); }
  __device__ float shfl_down(float v, unsigned d) const { return __shfl_down_sync(lanes(), v, d, N); }
  __device__ double shfl_down(double v, unsigned d) const { return __shfl_down_sync(lanes(), v, d, N); }
  __device__ long long shfl_down(long long v, unsigned d) const { return __shfl_down_sync(lanes(), v, d, N); }
  __device__ unsigned long long shfl_down(unsigned long long v, unsigned d) const { return __shfl_down_sync(lanes(), v, d, N); }
  __device__ int shfl_up(int v, unsigned d) const { return __shfl_up_sync(lanes(), v, d, N); }
  __device__ unsigned shfl_up(unsigned v, unsigned d) const { return __shfl_up_sync(lanes(), v, d, N); }
  __device__ float shfl_up(float v, unsigned d) const { return __shfl_up_sync(lanes(), v, d, N); }
  __device__ double shfl_up(double v, unsigned d) const { return __shfl_up_sync(lanes(), v, d, N); }
  __device__ long long shfl_up(long long v, unsigned d) const { return __shfl_up_sync(lanes(), v, d, N); }
  __device__ unsigned long long shfl_up(unsigned long long v, unsigned d) const { return __shfl_up_sync(lanes(), v, d, N); }
  __device__ int shfl_xor(int v, unsigned m) const { return __shfl_xor_sync(lanes(), v, m, N); }
  __device__ unsigned shfl_xor(unsigned v, unsigned m) const { return __shfl_xor_sync(lanes(), v, m, N); }
  __device__ float shfl_xor(float v, unsigned m) const { return __shfl_xor_sync(lanes(), v, m, N); }
  __device__ double shfl_xor(double v, unsigned m) const { return __shfl_xor_sync(lanes(), v, m, N); }
  __device__ long long shfl_xor(long long v, unsigned m) const { return __shfl_xor_sync(lanes(), v, m, N); }
  __device__ unsigned long long shfl_xor(unsigned long long v, unsigned m) const { return __shfl_xor_sync(lanes(), v, m, N); }
  __device__ int any(int p) const { return __any_sync(lanes(), p); }
  __device__ int all(int p) const { return __all_sync(lanes(), p); }
  __device__ unsigned ballot(int p) const {
    return __ballot_sync(lanes(), p) >> (block_rank() % 32 / N * N);
  }
};
template <unsigned N> __device__ thread_block_tile<N> tiled_partition(const thread_block& g) {
  return thread_block_tile<N>();
}
// A tile whose size is a run-time value, `tiled_partition(block, n)`: its members are the tile's
// (n up to 32 is a warp's lanes; a larger one spans whole warps, whose sync is the block's barrier).
struct thread_group {
  unsigned n;
  __device__ unsigned block_rank() const {
    return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  }
  __device__ unsigned thread_rank() const { return block_rank() % n; }
  __device__ unsigned size() const { return n; }
  __device__ unsigned num_threads() const { return n; }
  __device__ unsigned meta_group_rank() const { return block_rank() / n; }
  __device__ unsigned lanes() const {
    return n >= 32 ? 0xffffffffu : ((1u << n) - 1) << (block_rank() % 32 / n * n);
  }
};
__device__ thread_group tiled_partition(const thread_block& g, unsigned n) {
  thread_group tile;
  tile.n = n;
  return tile;
}
// The threads of a warp that run the call, `coalesced_threads()`, ranked by their lanes.
struct coalesced_group {
  unsigned mask;
  __device__ unsigned lane() const {
    return ((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x) % 32;
  }
  __device__ unsigned thread_rank() const { return __popc(mask & ((1u << lane()) - 1)); }
  __device__ unsigned size() const { return __popc(mask); }
  __device__ unsigned num_threads() const { return __popc(mask); }
  __device__ unsigned meta_group_rank() const { return 0; }
  __device__ unsigned lanes() const { return mask; }
  // The lane of the member of rank `rank`: its lowest set bit once `rank` lower ones are cleared.
  __device__ int lane_of(unsigned rank) const {
    unsigned m = mask;
    for (unsigned k = 0; k < rank; k++) m &= m - 1;
    return __ffs(m) - 1;
  }
  __device__ int source(unsigned rank) const { return rank < size() ? lane_of(rank) : lane(); }
  __device__ int shfl(int v, unsigned src) const { return __shfl_sync(mask, v, lane_of(src)); }
  __device__ unsigned shfl(unsigned v, unsigned src) const { return __shfl_sync(mask, v, lane_of(src)); }
  __device__ float shfl(float v, unsigned src) const { return __shfl_sync(mask, v, lane_of(src)); }
  __device__ double shfl(double v, unsigned src) const { return __shfl_sync(mask, v, lane_of(src)); }
  __device__ int shfl_down(int v, unsigned d) const { return __shfl_sync(mask, v, source(thread_rank() + d)); }
  __device__ unsigned shfl_down(unsigned v, unsigned d) const { return __shfl_sync(mask, v, source(thread_rank() + d)); }
  __device__ float shfl_down(float v, unsigned d) const { return __shfl_sync(mask, v, source(thread_rank() + d)); }
  __device__ double shfl_down(double v, unsigned d) const { return __shfl_sync(mask, v, source(thread_rank() + d)); }
  __device__ int shfl_up(int v, unsigned d) const {
    return __shfl_sync(mask, v, d <= thread_rank() ? lane_of(thread_rank() - d) : lane());
  }
  __device__ float shfl_up(float v, unsigned d) const {
    return __shfl_sync(mask, v, d <= thread_rank() ? lane_of(thread_rank() - d) : lane());
  }
  __device__ int any(int p) const { return __any_sync(mask, p); }
  __device__ int all(int p) const { return __all_sync(mask, p); }
  // Bit k set where the member of rank k has `p`.
  __device__ unsigned ballot(int p) const {
    unsigned lanes_with = __ballot_sync(mask, p), bits = 0, m = mask;
    for (unsigned k = 0; m != 0; k++) {
      if (lanes_with & m & (0u - m)) bits |= 1u << k;
      m &= m - 1;
    }
    return bits;
  }
};
__device__ coalesced_group coalesced_threads() {
  coalesced_group g;
  g.mask = __activemask();
  return g;
}
template <class T> struct plus {
  __device__ T combine(T a, T b) const { return a + b; }
};
template <class T> struct less {
  __device__ T combine(T a, T b) const { return b < a ? b : a; }
};
template <class T> struct greater {
  __device__ T combine(T a, T b) const { return b > a ? b : a; }
};
template <class T> struct bit_and {
  __device__ T combine(T a, T b) const { return a & b; }
};
template <class T> struct bit_or {
  __device__ T combine(T a, T b) const { return a | b; }
};
template <class T> struct bit_xor {
  __device__ T combine(T a, T b) const { return a ^ b; }
};
template <class Group, class T, class Op> __device__ T reduce(const Group& g, T v, Op op) {
  // As nvcc unrolls it for a tile's constant size: five shuffles for 32, no loop test.
#pragma unroll
  for (unsigned o = g.size() / 2; o > 0; o /= 2) v = op.combine(v, g.shfl_xor(v, o));
  return v;
}
}
