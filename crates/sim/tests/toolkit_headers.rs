//! The toolkit headers memplay supplies itself: `cuComplex.h` against complex arithmetic worked
//! out by hand, and `curand_kernel.h` against cuRAND's own sequences. The cuRAND values marked
//! "H200" were printed by a scratch program of `curand_init`, `curand` and the distributions,
//! built with nvcc 13.0 for sm_90 and run on an H200; the counts of requests and sectors are
//! Nsight Compute's for the same kernels there (65,536 threads, divided per warp). The CUDA
//! samples' `helper_math.h` (operators, `dot`, `length`, `normalize`, `cross`, `lerp`, `clamp` of
//! the float vectors) is checked against vector arithmetic worked out by hand.

mod common;

use common::{f32s, f64s, i32s, one_block_counters, one_warp_buffers, GLOBAL_COUNTERS};

fn u32s(bytes: &[u8]) -> Vec<u32> {
    i32s(bytes).into_iter().map(|v| v as u32).collect()
}

#[test]
fn a_mandelbrot_iteration_in_cucomplex_gives_the_values_worked_out_by_hand() {
    let source = "#include <cuComplex.h>
__global__ void k(float* out, double* wide) {
  cuFloatComplex c = make_cuFloatComplex(0.25f, 0.5f);
  cuFloatComplex z = make_cuFloatComplex(0.0f, 0.0f);
  for (int i = 0; i < 3; i++) z = cuCaddf(cuCmulf(z, z), c);
  cuFloatComplex q = cuCdivf(make_cuFloatComplex(4.0f, 8.0f), make_cuComplex(2.0f, 2.0f));
  cuFloatComplex f = cuCfmaf(c, c, cuConjf(c));
  cuFloatComplex s = cuCsubf(c, z);
  out[0] = cuCrealf(z);
  out[1] = cuCimagf(z);
  out[2] = cuCabsf(make_cuFloatComplex(-3.0f, 4.0f));
  out[3] = cuCabsf(make_cuFloatComplex(0.0f, 0.0f));
  out[4] = q.x;
  out[5] = q.y;
  out[6] = f.x;
  out[7] = f.y;
  out[8] = s.x;
  out[9] = s.y;
  cuDoubleComplex a = cuComplexFloatToDouble(c);
  cuDoubleComplex p = cuCmul(a, cuCadd(a, make_cuDoubleComplex(1.0, 0.0)));
  cuDoubleComplex d = cuCdiv(make_cuDoubleComplex(-5.0, 10.0), make_cuDoubleComplex(3.0, 4.0));
  wide[0] = cuCreal(p);
  wide[1] = cuCimag(p);
  wide[2] = cuCreal(d);
  wide[3] = cuCimag(d);
  wide[4] = cuCabs(make_cuDoubleComplex(5.0, -12.0));
  wide[5] = cuCrealf(cuComplexDoubleToFloat(cuConj(d))) + cuCimagf(cuComplexDoubleToFloat(cuConj(d)));
}
";
    let buffers = one_warp_buffers(source, "k", &[("out", 40), ("wide", 48)]);
    let out = f32s(&buffers[0]);
    // z1 = c = 0.25 + 0.5i; z2 = z1^2 + c = (0.0625 - 0.25 + 0.25) + (0.25 + 0.5)i
    // = 0.0625 + 0.75i; z3 = (0.00390625 - 0.5625 + 0.25) + (0.09375 + 0.5)i.
    assert_eq!(out[..2], [-0.30859375, 0.59375]);
    // |-3 + 4i| = 5; |0| = 0 (the sum of the parts, not 0 / 0).
    assert_eq!(out[2..4], [5.0, 0.0]);
    // (4 + 8i) / (2 + 2i) = (4 + 8i)(2 - 2i) / 8 = (24 + 8i) / 8.
    assert_eq!(out[4..6], [3.0, 1.0]);
    // c * c + conj(c) = (0.0625 - 0.25 + 0.25) + (0.25 - 0.5)i.
    assert_eq!(out[6..8], [0.0625, -0.25]);
    // c - z3 = (0.25 + 0.30859375) + (0.5 - 0.59375)i.
    assert_eq!(out[8..10], [0.55859375, -0.09375]);
    let wide = f64s(&buffers[1]);
    // (0.25 + 0.5i)(1.25 + 0.5i) = (0.3125 - 0.25) + (0.125 + 0.625)i.
    assert_eq!(wide[..2], [0.0625, 0.75]);
    // (-5 + 10i) / (3 + 4i) = (-5 + 10i)(3 - 4i) / 25 = (25 + 50i) / 25, within rounding.
    assert!(
        (wide[2] - 1.0).abs() < 1e-15 && (wide[3] - 2.0).abs() < 1e-15,
        "{wide:?}"
    );
    assert_eq!(wide[4], 13.0);
    assert!((wide[5] - -1.0).abs() < 1e-6, "{wide:?}");
}

#[test]
fn a_cufloatcomplex_array_load_is_one_eight_byte_request_of_eight_sectors_a_warp() {
    let source = "#include <cuComplex.h>
__global__ void k(float* out, const cuFloatComplex* in) {
  cuFloatComplex z = in[threadIdx.x];
  out[threadIdx.x] = cuCabsf(z);
}
";
    let counters = one_block_counters(
        source,
        "k",
        64,
        &[("out", 256), ("in", 512)],
        GLOBAL_COUNTERS,
    );
    // Two warps, each 32 lanes x 8 bytes = 256 bytes = 8 sectors in one request; the stores are
    // 32 x 4 bytes = 4 sectors. On the H200, the same load measured 8 sectors a warp.
    assert_eq!(counters, [2.0, 16.0, 2.0, 8.0]);
}

/// A kernel whose thread 0 writes the XORWOW state of `curand_init(SEED, SUB, OFF)` (d, then
/// v[0..5]) and the next four draws.
fn xorwow_after_init(seed: &str, subsequence: &str, offset: &str) -> Vec<u32> {
    let source = format!(
        "#include <curand_kernel.h>
__global__ void k(unsigned* out) {{
  curandState s;
  curand_init({seed}, {subsequence}, {offset}, &s);
  if (threadIdx.x == 0) {{
    out[0] = s.d; out[1] = s.v0; out[2] = s.v1; out[3] = s.v2; out[4] = s.v3; out[5] = s.v4;
    for (int i = 0; i < 4; i++) out[6 + i] = curand(&s);
  }}
}}
"
    );
    u32s(&one_warp_buffers(&source, "k", &[("out", 40)])[0])
}

/// Marsaglia's xorwow, written from the algorithm: the state `[d, v0..v4]` after one draw, and
/// the draw.
fn reference_draw(s: &mut [u32; 6]) -> u32 {
    let t = s[1] ^ (s[1] >> 2);
    let next = (s[5] ^ (s[5] << 4)) ^ (t ^ (t << 1));
    *s = [s[0].wrapping_add(362_437), s[2], s[3], s[4], s[5], next];
    next.wrapping_add(s[0])
}

#[test]
fn xorwow_seeds_and_offsets_follow_the_reference_generator_and_the_h200() {
    // Seed 1234: s0 = 1234 ^ 0xaad26b49, s1 = 0 ^ 0xf7dcefdd, t0 = 1099087573 s0, t1 = 2591861531
    // s1 (mod 2^32), d = 6615241 + t0 + t1 and the published v words salted with t0 and t1.
    let t0 = 1_099_087_573u32.wrapping_mul(1234 ^ 0xaad2_6b49);
    let t1 = 2_591_861_531u32.wrapping_mul(0xf7dc_efdd);
    let mut state = [
        6_615_241u32.wrapping_add(t1).wrapping_add(t0),
        123_456_789u32.wrapping_add(t0),
        362_436_069 ^ t0,
        521_288_629u32.wrapping_add(t1),
        88_675_123 ^ t1,
        5_783_321u32.wrapping_add(t0),
    ];
    let mut expected = state.to_vec();
    let mut stepped = state;
    expected.extend((0..4).map(|_| reference_draw(&mut stepped)));
    assert_eq!(xorwow_after_init("1234", "0", "0"), expected);
    // H200: the same state and draws.
    assert_eq!(expected[..2], [0x3198c20f, 0x5efdb30c]);
    assert_eq!(
        expected[6..],
        [0x253d5e15, 0x6f558604, 0xdee6daf2, 0x7485b394]
    );
    // An offset of 10 is 10 draws taken one at a time.
    for _ in 0..10 {
        reference_draw(&mut state);
    }
    let mut offset = state.to_vec();
    offset.extend((0..4).map(|_| reference_draw(&mut state)));
    assert_eq!(xorwow_after_init("1234", "0", "10"), offset);
    assert_eq!(offset[0], 0x31d00fc1, "H200");
}

#[test]
fn xorwow_subsequences_jump_two_to_the_sixty_seventh_draws_as_on_the_h200() {
    // d is not moved by a subsequence (2^67 * 362437 is a multiple of 2^32); v is.
    assert_eq!(
        xorwow_after_init("1234", "1", "0"),
        [
            0x3198c20f, 0x92b6dcf7, 0xc4fa183d, 0xf2cc7e34, 0x0d8d4738, 0xbc615f58, 0xd1f7605a,
            0xed29ae49, 0x83030ed9, 0x899fbaf4
        ]
    );
    assert_eq!(
        xorwow_after_init("1234", "1000", "0")[1..6],
        [0x6869f52b, 0x8efcccd8, 0xd239b3bb, 0xc8040252, 0xb7f58bcc]
    );
    assert_eq!(
        xorwow_after_init("1234", "3", "7"),
        [
            0x31bf7872, 0x6d3d3970, 0x576e9ab1, 0x4d94e797, 0xb42d77fe, 0xd8ea43cd, 0xfe9de6a0,
            0xf8544cda, 0x7ed7fb69, 0x67e8c6b1
        ]
    );
    // Every bit of a 64-bit subsequence and offset, and a seed of 64 bits.
    assert_eq!(
        xorwow_after_init("1234", "0xffffffffffffffffull", "0xffffffffffffffffull")[..6],
        [0x31933a4a, 0x42182e58, 0xa9c9bb26, 0x065a0c4e, 0xa5a0d7e2, 0x328a9ac8]
    );
    assert_eq!(
        xorwow_after_init("0xdeadbeefcafe1234ull", "123456789", "987654321")[6..],
        [0xc619b4b9, 0x788c2b69, 0x3279ae4d, 0xfef59312]
    );
}

#[test]
fn philox_gives_the_random123_known_answer_and_the_h200_sequences() {
    let source = "#include <curand_kernel.h>
__global__ void k(unsigned* out) {
  curandStatePhilox4_32_10_t a, b, c, d;
  curand_init(0, 0, 0, &a);
  curand_init(1234, 0, 1, &b);
  curand_init(1234, 5, 0, &c);
  curand_init(1234, 3, 7, &d);
  if (threadIdx.x == 0) {
    for (int i = 0; i < 6; i++) {
      out[i] = curand(&a);
      out[6 + i] = curand(&b);
      out[12 + i] = curand(&c);
      out[18 + i] = curand(&d);
    }
    out[24] = sizeof(curandStatePhilox4_32_10_t);
    out[25] = sizeof(curandState);
  }
}
";
    let out = u32s(&one_warp_buffers(source, "k", &[("out", 104)])[0]);
    // Random123's philox4x32-10 known answer for a zero counter and key.
    assert_eq!(out[..4], [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
    // H200: the next block's first two words; an offset of one; subsequence 5; both.
    assert_eq!(out[4..6], [0xf8e4cca4, 0x5cb200db]);
    assert_eq!(
        out[6..12],
        [0xda7cf0ab, 0x4401906f, 0xcbca470e, 0x9eeede35, 0x1cbe137c, 0xfa277093]
    );
    assert_eq!(
        out[12..18],
        [0xf942741c, 0xb7a11b7a, 0x8b27a0cc, 0xbd95acc8, 0x5c5cf6f4, 0x3fc0ce58]
    );
    assert_eq!(
        out[18..24],
        [0xb9e62021, 0x5e6a30be, 0x49eb6000, 0x8f85400e, 0x52c47e13, 0xc8b610bd]
    );
    // cuRAND's layouts: 48 bytes for XORWOW, 64 for Philox (H200: sizeof).
    assert_eq!(out[24..], [64, 48]);
}

#[test]
fn the_distributions_match_the_h200_uniforms_exactly_and_its_normals_to_their_math() {
    let source = "#include <curand_kernel.h>
__global__ void k(double* out) {
  curandState s;
  curand_init(1234, 0, 0, &s);
  if (threadIdx.x == 0) {
    out[0] = curand_uniform(&s);
    out[1] = curand_uniform(&s);
    out[2] = curand_normal(&s);
    out[3] = curand_normal(&s);
    out[4] = curand_normal(&s);
    float2 pair = curand_normal2(&s);
    out[5] = pair.x;
    out[6] = pair.y;
    out[7] = curand_uniform_double(&s);
    out[8] = curand_normal_double(&s);
    out[9] = curand_normal_double(&s);
    out[10] = curand_normal_double(&s);
    out[11] = curand_log_normal(&s, 0.5f, 2.0f);
    out[12] = curand_log_normal(&s, 0.5f, 2.0f);
    out[13] = curand_log_normal_double(&s, 0.5, 2.0);
    out[14] = curand_normal(&s);
    out[15] = curand_log_normal(&s, 0.5f, 2.0f);
    out[16] = curand_normal(&s);
    out[17] = curand(&s);
  }
}
";
    let out = f64s(&one_warp_buffers(source, "k", &[("out", 144)])[0]);
    // H200, the same calls in the same order.
    let h200: [f64; 18] = [
        0.1454676389694214,
        0.4348987340927124,
        0.1462823897600174,
        -0.5054640173912048,
        -0.27490729093551636,
        -1.7427178621292114,
        0.4096594452857971,
        0.36678716167372255,
        -0.8529865539933668,
        -0.1377014021878822,
        0.6232635620359982,
        0.04040628299117088,
        0.14944994449615479,
        0.418626940720132,
        -0.875194787979126,
        0.12602688372135162,
        -0.31004035472869873,
        200341984.0,
    ];
    // The uniforms and the raw draw are exact: one draw times 2^-32 plus 2^-33, and 53 bits of
    // two draws. The normals go through logf, sqrtf and the hardware's __sinf and __cosf, which
    // memplay computes as the library functions: equal to some 1e-6.
    for (k, (&got, &want)) in out.iter().zip(&h200).enumerate() {
        let exact = matches!(k, 0 | 1 | 7 | 17);
        let tolerance = if exact {
            0.0
        } else {
            2e-6 * want.abs().max(1.0)
        };
        assert!(
            (got - want).abs() <= tolerance,
            "value {k}: {got} against {want}"
        );
    }
}

#[test]
fn a_monte_carlo_pi_with_a_subsequence_per_thread_comes_within_its_tolerance() {
    let source = "#include <curand_kernel.h>
__global__ void k(unsigned* hits, int* draws) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  curandState s;
  curand_init(1234, tid, 0, &s);
  if (tid == 0) draws[0] = 0;
  unsigned inside = 0;
  for (int i = 0; i < 1024; i++) {
    float x = curand_uniform(&s);
    float y = curand_uniform(&s);
    if (x * x + y * y <= 1.0f) inside++;
    if (x <= 0.0f || x > 1.0f) draws[0] = 1;
  }
  hits[tid] = inside;
}
";
    let buffers = one_warp_buffers(source, "k", &[("hits", 128), ("draws", 4)]);
    let inside: u32 = u32s(&buffers[0]).iter().sum();
    let estimate = 4.0 * f64::from(inside) / f64::from(32 * 1024);
    // 32,768 points: the estimate's standard deviation is 4 sqrt(p (1 - p) / n) with p = pi / 4,
    // about 0.009; 0.04 is over four of them. Every uniform lies in (0, 1].
    assert!((estimate - std::f64::consts::PI).abs() < 0.04, "{estimate}");
    assert_eq!(i32s(&buffers[1]), [0]);
}

#[test]
fn a_state_kept_in_global_memory_moves_in_the_requests_of_a_48_byte_struct() {
    let source = "#include <curand_kernel.h>
__global__ void setup(curandState* states) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  curand_init(tid, 0, 0, &states[tid]);
}
__global__ void generate(curandState* states, float* out) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  curandState local = states[tid];
  float sum = 0.0f;
  for (int i = 0; i < 64; i++) sum += curand_uniform(&local);
  states[tid] = local;
  out[tid] = sum;
}
";
    let buffers = [("states", 64 * 48), ("out", 256)];
    let setup = one_block_counters(source, "setup", 64, &buffers[..1], GLOBAL_COUNTERS);
    let generate = one_block_counters(source, "generate", 64, &buffers, GLOBAL_COUNTERS);
    // 48 bytes aligned to 8: six 8-byte accesses a state, 32 lanes 48 bytes apart touching 32
    // sectors each; curand_init reads nothing. A warp on the H200: 6 stores of 192 sectors, and
    // 6 loads and 7 stores (the sum's 4 sectors too) of 192 and 196 sectors.
    assert_eq!(setup, [0.0, 0.0, 12.0, 384.0]);
    assert_eq!(generate, [12.0, 384.0, 14.0, 392.0]);
}

#[test]
fn skipahead_and_skipahead_sequence_after_init_land_where_init_would_have_started() {
    let source = "#include <curand_kernel.h>
__global__ void k(unsigned* out) {
  curandState a, b, c, d;
  curandStatePhilox4_32_10_t e, f;
  curand_init(1234, 0, 0, &a);
  skipahead(10, &a);
  curand_init(1234, 0, 10, &b);
  curand_init(1234, 0, 7, &c);
  skipahead_sequence(3, &c);
  curand_init(1234, 3, 7, &d);
  curand_init(99, 2, 0, &e);
  skipahead(6, &e);
  curand_init(99, 2, 6, &f);
  if (threadIdx.x == 0) {
    for (int i = 0; i < 3; i++) {
      out[i] = curand(&a);
      out[3 + i] = curand(&b);
      out[6 + i] = curand(&c);
      out[9 + i] = curand(&d);
      out[12 + i] = curand(&e);
      out[15 + i] = curand(&f);
    }
  }
}
";
    let out = u32s(&one_warp_buffers(source, "k", &[("out", 72)])[0]);
    // The jumps commute: 10 draws after the start is an offset of 10, and 3 subsequences after
    // an offset of 7 is subsequence 3 at offset 7 (whose draws the H200 printed).
    assert_eq!(out[..3], out[3..6]);
    assert_eq!(out[6..9], out[9..12]);
    assert_eq!(out[9..12], [0xfe9de6a0, 0xf8544cda, 0x7ed7fb69]);
    assert_eq!(out[12..15], out[15..18]);
}

#[test]
fn helper_math_s_operators_and_functions_give_the_vector_arithmetic_worked_out_by_hand() {
    let source = "#include \"helper_math.h\"
__global__ void k(float* out) {
  float3 a = make_float3(3.0f, 0.0f, 4.0f);
  float3 b = make_float3(0.0f, 2.0f, 0.0f);
  float3 c = cross(a, b);
  float3 n = normalize(a);
  float2 p = make_float2(1.0f, 2.0f) * 2.0f + make_float2(0.5f, 0.5f);
  float4 q = lerp(make_float4(0.0f, 0.0f, 0.0f, 0.0f), make_float4(4.0f, 8.0f, 12.0f, 16.0f), 0.25f);
  a += b;
  out[0] = length(make_float3(3.0f, 0.0f, 4.0f));
  out[1] = dot(a, b);
  out[2] = c.x;
  out[3] = c.z;
  out[4] = n.x;
  out[5] = p.x + p.y;
  out[6] = q.w;
  out[7] = clamp(7.0f, 0.0f, 5.0f);
  out[8] = dot(p, make_float2(1.0f, 1.0f));
  out[9] = (-b).y;
}
";
    let out = f32s(&one_warp_buffers(source, "k", &[("out", 40)])[0]);
    // |(3, 0, 4)| = 5; (3, 2, 4) . (0, 2, 0) = 4; (3, 0, 4) x (0, 2, 0) = (-8, 0, 6);
    // (3, 0, 4) / 5 = (0.6, 0, 0.8) through rsqrtf; (2.5, 4.5) sums to 7; a quarter of the way
    // to 16 is 4; 7 clamped to [0, 5] is 5; (2.5, 4.5) . (1, 1) = 7; -(0, 2, 0) has y -2.
    assert_eq!(out[0], 5.0);
    assert_eq!(out[1], 4.0);
    assert_eq!((out[2], out[3]), (-8.0, 6.0));
    assert!((out[4] - 0.6).abs() < 1e-6, "{}", out[4]);
    assert_eq!(out[5..], [7.0, 4.0, 5.0, 7.0, -2.0]);
}
