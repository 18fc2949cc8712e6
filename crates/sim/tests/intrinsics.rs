//! The integer and float intrinsics and the math library's functions against values worked out
//! by hand, and the cache-hinted loads and stores counted as the accesses they are.

mod common;

use common::{f32s, i32s, one_block_counters, one_warp_buffers, GLOBAL_COUNTERS};

#[test]
fn bit_intrinsics_count_find_and_reverse_the_bits_of_their_operand_width() {
    let source = "__global__ void k(int* out) {
  unsigned x = 0xF0u;
  out[0] = __popc(x);
  out[1] = __popcll(0xFFFFFFFFFFull);
  out[2] = __clz(x);
  out[3] = __clzll(1ll);
  out[4] = __ffs(x);
  out[5] = __ffs(0);
  out[6] = (int)__brev(1u);
  out[7] = __mul24(-3, 5);
  out[8] = __mulhi(0x40000000, 8);
  out[9] = (int)__umulhi(0x80000000u, 6u);
}
";
    let out = i32s(&one_warp_buffers(source, "k", &[("out", 40)])[0]);
    // 0xF0: four bits, 24 leading zeros in 32, first set bit 5 (counted from 1); 40 bits set in
    // 0xFFFFFFFFFF; 63 leading zeros of 1 in 64; 1 reversed is bit 31; 2^30 * 8 = 2^33, whose
    // high word is 2; 2^31 * 6 = 3 * 2^32.
    assert_eq!(out, [4, 40, 24, 63, 5, 0, i32::MIN, -15, 2, 3]);
}

#[test]
fn the_math_library_and_the_float_tests_give_their_values() {
    let source = "__global__ void k(float* out) {
  float zero = threadIdx.x * 0.0f;
  out[0] = exp2f(10.0f);
  out[1] = log2f(8.0f);
  out[2] = tanhf(0.0f) + 10.0f * log10f(1000.0f);
  out[3] = atan2f(1.0f, 1.0f) * 4.0f;
  out[4] = hypotf(3.0f, 4.0f) + copysignf(2.0f, -1.0f);
  out[5] = fmodf(7.5f, 2.0f) + cbrtf(27.0f);
  out[6] = isnan(zero / zero) + 10 * isinf(1.0f / zero) + 100 * isfinite(zero);
  out[7] = __saturatef(1.5f) + __saturatef(-2.0f) + __frcp_rn(4.0f);
}
";
    let out = f32s(&one_warp_buffers(source, "k", &[("out", 32)])[0]);
    assert_eq!(out[..2], [1024.0, 3.0]);
    assert_eq!(out[2], 30.0);
    assert!((out[3] - std::f32::consts::PI).abs() < 1e-6, "{}", out[3]);
    assert_eq!(out[4], 3.0);
    assert_eq!(out[5], 1.5 + 3.0);
    assert_eq!(out[6], 111.0);
    assert_eq!(out[7], 1.25);
}

#[test]
fn a_hinted_copy_makes_the_requests_and_sectors_of_a_plain_one() {
    let source = "__global__ void plain(float* dst, const float* src) {
  dst[threadIdx.x] = src[threadIdx.x];
}
__global__ void hinted(float* dst, const float* src) {
  __stcs(&dst[threadIdx.x], __ldg(&src[threadIdx.x]));
}
__global__ void streamed(float* dst, const float* src) {
  __stwt(dst + threadIdx.x, __ldcs(src + threadIdx.x));
}
";
    let buffers = [("dst", 512), ("src", 512)];
    let plain = one_block_counters(source, "plain", 128, &buffers, GLOBAL_COUNTERS);
    let hinted = one_block_counters(source, "hinted", 128, &buffers, GLOBAL_COUNTERS);
    let streamed = one_block_counters(source, "streamed", 128, &buffers, GLOBAL_COUNTERS);
    // Four warps of 32 floats: 4 requests of 4 sectors each way, whatever the hint.
    assert_eq!(plain, [4.0, 16.0, 4.0, 16.0]);
    assert_eq!(hinted, plain);
    assert_eq!(streamed, plain);
}

#[test]
fn atomic_inc_and_dec_wrap_at_their_limit_and_scoped_atomics_add_as_atomic_add() {
    // 32 lanes, each once: atomicInc with limit 9 counts 0..9 and wraps, ending at 32 mod 10 = 2;
    // atomicDec from 0 wraps to 9 and counts down, 31 more steps ending at (9 - 31) mod 10 = 8.
    let source = "__global__ void k(unsigned* counters) {
  if (threadIdx.x < 4) counters[threadIdx.x] = 0;
  __syncwarp();
  atomicInc(&counters[0], 9u);
  atomicDec(&counters[1], 9u);
  atomicAdd_block(&counters[2], 1u);
  atomicAdd_system(&counters[3], 2u);
}
";
    let out = one_warp_buffers(source, "k", &[("counters", 16)]);
    let words: Vec<u32> = out[0]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap_or([0; 4])))
        .collect();
    assert_eq!(words, [2, 8, 32, 64]);
}
