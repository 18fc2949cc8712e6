// Warp divergence (seed 001, "Considering Control-Flow Divergence"; probe group I measures the
// same loop on the H100). Every thread does the same work: a chain of `iters` multiply-adds,
// down one of two paths chosen by `threadIdx.x & split`. With split = 1 the odd and even lanes
// of every warp disagree, so each warp runs both loops with half its lanes; with split = 32
// whole warps agree and each runs one loop with all 32 lanes.
__global__ void branch(float* out, int iters, int split) {
  int t = threadIdx.x;
  float a = (float)t * 0.001f;
  float b = (float)(t & 7) * 0.25f;
  if ((t & split) == 0) {
    for (int j = 0; j < iters; ++j) a = fmaf(a, 1.0001f, 0.5f);
  } else {
    for (int j = 0; j < iters; ++j) a = fmaf(a, 0.9999f, b);
  }
  out[blockIdx.x * blockDim.x + t] = a;
}
