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

fn u32s(bytes: &[u8]) -> Vec<u32> {
    i32s(bytes).into_iter().map(|v| v as u32).collect()
}

fn u64s(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

#[test]
fn byte_perm_takes_each_byte_of_y_x_that_its_selector_names() {
    // Lane L < 16 selects byte L & 7 four times (the selector's fourth bit is not used); lane 16
    // keeps x, 17 reverses it, 18 takes y and 19 interleaves them.
    let source = "__global__ void k(unsigned* out) {
  unsigned lane = threadIdx.x;
  unsigned x = 0x33221100u, y = 0x77665544u;
  const unsigned fixed[4] = {0x3210u, 0x0123u, 0x7654u, 0x5140u};
  unsigned s = lane < 16 ? lane * 0x1111u : fixed[lane & 3];
  if (lane < 20) out[lane] = __byte_perm(x, y, s);
}
";
    let out = u32s(&one_warp_buffers(source, "k", &[("out", 80)])[0]);
    for lane in 0..16u32 {
        assert_eq!(out[lane as usize], (lane & 7) * 0x1111_1111, "lane {lane}");
    }
    assert_eq!(
        out[16..],
        [0x3322_1100, 0x0011_2233, 0x7766_5544, 0x5511_4400]
    );
}

#[test]
fn sad_adds_the_absolute_difference_to_its_third_operand() {
    // __sad(L - 16, 5, L) = |L - 21| + L: 21 up to lane 21, then 2L - 21; __usad(L, 40, 1000) =
    // 1040 - L; the widest difference, INT_MIN against INT_MAX, is 2^32 - 1.
    let source = "__global__ void k(unsigned* out) {
  int lane = threadIdx.x;
  out[lane] = __sad(lane - 16, 5, lane);
  out[32 + lane] = __usad(lane, 40u, 1000u);
  if (lane == 0) out[64] = __sad(-2147483647 - 1, 2147483647, 0u);
}
";
    let out = u32s(&one_warp_buffers(source, "k", &[("out", 260)])[0]);
    for lane in 0..32u32 {
        let sad = if lane <= 21 { 21 } else { 2 * lane - 21 };
        assert_eq!(out[lane as usize], sad, "lane {lane}");
        assert_eq!(out[32 + lane as usize], 1040 - lane, "lane {lane}");
    }
    assert_eq!(out[64], u32::MAX);
}

#[test]
fn funnel_shifts_slide_a_window_over_hi_lo_wrapping_or_clamping_the_shift() {
    // hi:lo = 0x0123456789abcdef, shifted by 4L bits: a window of its hex digits. The plain
    // forms shift by 4L mod 32, the clamped ones by at most 32 (giving lo, or hi, from lane 8).
    let source = "__global__ void k(unsigned* out) {
  unsigned lane = threadIdx.x;
  unsigned lo = 0x89abcdefu, hi = 0x01234567u, s = 4 * lane;
  out[lane] = __funnelshift_l(lo, hi, s);
  out[32 + lane] = __funnelshift_lc(lo, hi, s);
  out[64 + lane] = __funnelshift_r(lo, hi, s);
  out[96 + lane] = __funnelshift_rc(lo, hi, s);
}
";
    let out = u32s(&one_warp_buffers(source, "k", &[("out", 512)])[0]);
    let left = [
        0x0123_4567,
        0x1234_5678,
        0x2345_6789,
        0x3456_789a,
        0x4567_89ab,
        0x5678_9abc,
        0x6789_abcd,
        0x789a_bcde,
    ];
    let right = [
        0x89ab_cdef,
        0x789a_bcde,
        0x6789_abcd,
        0x5678_9abc,
        0x4567_89ab,
        0x3456_789a,
        0x2345_6789,
        0x1234_5678,
    ];
    for lane in 0..32 {
        let clamped = lane >= 8;
        assert_eq!(out[lane], left[lane % 8], "lane {lane}");
        let lc = if clamped { 0x89ab_cdef } else { left[lane] };
        assert_eq!(out[32 + lane], lc, "lane {lane}");
        assert_eq!(out[64 + lane], right[lane % 8], "lane {lane}");
        let rc = if clamped { 0x0123_4567 } else { right[lane] };
        assert_eq!(out[96 + lane], rc, "lane {lane}");
    }
}

#[test]
fn mul64hi_gives_the_high_half_of_the_128_bit_product() {
    // (2^64 - 1) L = L 2^64 - L, whose high word is L - 1 (0 for lane 0); -L 2^62 is
    // -ceil(L / 4) 2^64 plus a remainder below 2^64.
    let source = "__global__ void k(unsigned long long* out) {
  long long lane = threadIdx.x;
  out[lane] = __umul64hi(0xFFFFFFFFFFFFFFFFull, lane);
  out[32 + lane] = __mul64hi(-lane, 1ll << 62);
}
";
    let out = u64s(&one_warp_buffers(source, "k", &[("out", 512)])[0]);
    for lane in 0..32u64 {
        assert_eq!(out[lane as usize], lane.saturating_sub(1), "lane {lane}");
        let signed = -(lane.div_ceil(4) as i64);
        assert_eq!(out[32 + lane as usize] as i64, signed, "lane {lane}");
    }
}

#[test]
fn integer_averages_round_down_or_up_without_overflowing() {
    // (L - 16 + 7) >> 1 = floor((L - 9) / 2) and, rounded, floor((L - 8) / 2); the unsigned
    // average of L and 2^32 - 1 is 2^31 - 1 + ceil(L / 2). The sums of the last three overflow
    // 32 bits; their averages do not.
    let source = "__global__ void k(unsigned* out) {
  int lane = threadIdx.x;
  out[lane] = __hadd(lane - 16, 7);
  out[32 + lane] = __rhadd(lane - 16, 7);
  out[64 + lane] = __uhadd(lane, 0xFFFFFFFFu);
  if (lane == 0) {
    out[96] = __hadd(2147483647, 2147483647);
    out[97] = __urhadd(0xFFFFFFFFu, 0xFFFFFFFEu);
    out[98] = __uhadd(0xFFFFFFFFu, 0xFFFFFFFDu);
  }
}
";
    let out = u32s(&one_warp_buffers(source, "k", &[("out", 400)])[0]);
    for lane in 0..32i32 {
        let l = lane as usize;
        assert_eq!(out[l] as i32, (lane - 9).div_euclid(2), "lane {lane}");
        assert_eq!(out[32 + l] as i32, (lane - 8).div_euclid(2), "lane {lane}");
        assert_eq!(
            out[64 + l],
            0x7fff_ffff + (lane as u32).div_ceil(2),
            "lane {lane}"
        );
    }
    assert_eq!(out[96..99], [0x7fff_ffff, 0xffff_ffff, 0xffff_fffe]);
}

#[test]
fn atomic_adds_on_16_bit_floats_round_after_each_lane_in_lane_order() {
    // Two lanes add (L + 1, (L + 1) / 4). 2048 is where a half's step becomes 2: 2048 + 1 is a
    // tie that goes to the even 2048, then + 2 makes 2050 (one add of 3 would round 2051 to
    // 2052). A bfloat16's step is 2 from 256: 256 + 1 goes to 256, + 2 to 258. The second
    // halves add exactly: 0 + 0.25 + 0.5 and 1 + 0.25 + 0.5. Each lane gets the value before
    // its own add.
    let source = "#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void k(half2* pair, half* one, __nv_bfloat162* bpair, __nv_bfloat16* bone,
                  float* old) {
  int lane = threadIdx.x;
  if (lane == 0) {
    pair[0] = __floats2half2_rn(2048.0f, 0.0f);
    one[0] = __float2half(2048.0f);
    bpair[0] = __floats2bfloat162_rn(256.0f, 1.0f);
    bone[0] = __float2bfloat16(256.0f);
  }
  __syncwarp();
  if (lane < 2) {
    float a = lane + 1.0f, b = 0.25f * (lane + 1);
    half2 p = atomicAdd(&pair[0], __floats2half2_rn(a, b));
    half o = atomicAdd(&one[0], __float2half(a));
    __nv_bfloat162 q = atomicAdd(&bpair[0], __floats2bfloat162_rn(a, b));
    __nv_bfloat16 r = atomicAdd(&bone[0], __float2bfloat16(a));
    float* mine = old + 6 * lane;
    mine[0] = __low2float(p);
    mine[1] = __high2float(p);
    mine[2] = __half2float(o);
    mine[3] = __low2float(q);
    mine[4] = __high2float(q);
    mine[5] = __bfloat162float(r);
  }
}
";
    let buffers = [
        ("pair", 4),
        ("one", 2),
        ("bpair", 4),
        ("bone", 2),
        ("old", 48),
    ];
    let out = one_warp_buffers(source, "k", &buffers);
    let halves = |bytes: &[u8]| -> Vec<f32> {
        bytes
            .chunks_exact(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect()
    };
    let bfloats = |bytes: &[u8]| -> Vec<f32> {
        bytes
            .chunks_exact(2)
            .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect()
    };
    assert_eq!(halves(&out[0]), [2050.0, 0.75]);
    assert_eq!(halves(&out[1]), [2050.0]);
    assert_eq!(bfloats(&out[2]), [258.0, 1.75]);
    assert_eq!(bfloats(&out[3]), [258.0]);
    assert_eq!(
        f32s(&out[4]),
        [2048.0, 0.0, 2048.0, 256.0, 1.0, 256.0, 2048.0, 0.25, 2048.0, 256.0, 1.25, 256.0]
    );
}

#[test]
fn a_warp_adding_to_consecutive_half2s_makes_one_atomic_request_of_four_sectors() {
    // 32 lanes, 4 bytes each, 128 contiguous bytes: one atomic instruction over four sectors.
    let source = "#include <cuda_fp16.h>
__global__ void k(half2* bins) {
  atomicAdd(&bins[threadIdx.x], __floats2half2_rn(1.0f, 2.0f));
}
";
    let names = [
        "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    ];
    assert_eq!(
        one_block_counters(source, "k", 32, &[("bins", 128)], names),
        [1.0, 4.0]
    );
}
