// Tiled matrix multiplication with boundary checks, seed 004: any n, not only multiples of the
// tile. Written for memplay's boundary-checks lesson (not one of the kernels measured on the H100).
// Launch mm_tiled_guarded with blockDim = (TILE_WIDTH, TILE_WIDTH) and ceil(n / TILE_WIDTH) blocks
// per side.
#ifndef TILE_WIDTH
#define TILE_WIDTH 16
#endif

__global__ void mm_tiled_guarded(const float* a, const float* b, float* c, int n) {
  __shared__ float sa[TILE_WIDTH][TILE_WIDTH];
  __shared__ float sb[TILE_WIDTH][TILE_WIDTH];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE_WIDTH + ty, col = blockIdx.x * TILE_WIDTH + tx;
  float r = 0;
  // Every phase that holds part of a row or column, the last one partly outside the matrix.
  for (int p = 0; p < (n + TILE_WIDTH - 1) / TILE_WIDTH; ++p) {
    // A thread outside the matrix still fills its place in the tile (with 0), since the other
    // threads of the block read it; it must not leave the tile with stale values.
    if (row < n && p * TILE_WIDTH + tx < n) {
      sa[ty][tx] = a[row * n + p * TILE_WIDTH + tx];
    } else {
      sa[ty][tx] = 0.0f;
    }
    if (p * TILE_WIDTH + ty < n && col < n) {
      sb[ty][tx] = b[(p * TILE_WIDTH + ty) * n + col];
    } else {
      sb[ty][tx] = 0.0f;
    }
    __syncthreads();
    for (int k = 0; k < TILE_WIDTH; ++k) r += sa[ty][k] * sb[k][tx];
    __syncthreads();
  }
  if (row < n && col < n) {
    c[row * n + col] = r;
  }
}
