// Transpose through a 32x32 shared tile with an XOR swizzle instead of padding, as CUTLASS and
// Triton lay out their tiles: element (r, c) of the tile is kept in column c ^ r of row r. For a
// fixed row r, c ^ r runs over 0..31 as c does (XOR with r permutes the columns), so a row write
// still hits 32 banks; for a fixed column c, lane t reads row t at column c ^ t, bank (c ^ t) % 32,
// a different bank for every lane: the column read is conflict-free without a wasted column.
__global__ void tr_swizzle(float* out, const float* in, int n) {
  __shared__ float tile[32][32];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) {
    int r = threadIdx.y + j;
    tile[r][threadIdx.x ^ r] = in[(y + j) * n + x];
  }
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) {
    int c = threadIdx.y + j;
    out[(y + j) * n + x] = tile[threadIdx.x][c ^ threadIdx.x];
  }
}
