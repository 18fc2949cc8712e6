//! C++11's range-based `for` and `static_assert`, file-scope `__shared__` variables and the
//! counting barriers `__syncthreads_count`, `__syncthreads_and` and `__syncthreads_or`, run
//! against values worked out by hand.

mod common;

use common::{f32s, one_warp_buffers};

#[test]
fn a_range_for_sums_an_array_and_doubles_it_through_a_reference() {
    let source = "struct Particle { float x, m; };
__global__ void k(float* out) {
  static_assert(sizeof(Particle) == 8, \"two floats\");
  float v[4] = {1, 2, 3, 4};
  float sum = 0;
  for (float a : v) sum += a;
  for (auto& a : v) a *= 2;
  float doubled = 0;
  for (const float& a : v) doubled += a;
  __shared__ Particle ps[3];
  if (threadIdx.x < 3) { ps[threadIdx.x].x = threadIdx.x; ps[threadIdx.x].m = 2; }
  __syncthreads();
  float moment = 0;
  for (const auto& p : ps) moment += p.x * p.m;
  out[threadIdx.x] = sum + 100 * doubled + 10000 * moment;
}
";
    let out = f32s(&one_warp_buffers(source, "k", &[("out", 128)])[0]);
    // 1 + 2 + 3 + 4 = 10; doubled, 20; the moment 0*2 + 1*2 + 2*2 = 6.
    assert_eq!(out, vec![10.0 + 2000.0 + 60000.0; 32]);
}
