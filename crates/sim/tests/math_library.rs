//! The rest of the CUDA math library, the type casting intrinsics and the rounded arithmetic
//! intrinsics, run in kernels, against values worked out by hand; the functions with pointer
//! out-parameters write through `&local` and through pointers into memory.

mod common;

use common::{f32s, f64s, i32s, one_warp_buffers};
use memplay_sim::kernel::{compile, Dim3, Launch, Simulation, Value};

#[test]
fn conversions_round_as_their_suffix_says_and_saturate_out_of_range() {
    let source = "__global__ void k(int* out) {
  float nan = threadIdx.x * 0.0f / 0.0f;
  out[0] = __float2int_rd(-1.5f);
  out[1] = __float2int_ru(-1.5f);
  out[2] = __float2int_rn(2.5f);
  out[3] = __float2int_rz(3.9e9f);
  out[4] = __float2int_rz(nan);
  out[5] = (int)__float2uint_rn(-3.0f);
  out[6] = (int)__float2ll_rd(-0.5f);
  out[7] = __double2int_rn(-2.5);
  out[8] = (int)rintf(2.5f) * 10 + (int)lroundf(2.5f);
  out[9] = (int)__int2float_rz(16777217) - 16777216;
  out[10] = (int)__int2float_ru(16777217) - 16777216;
}
";
    let out = i32s(&one_warp_buffers(source, "k", &[("out", 44)])[0]);
    // 2^24 + 1 is no float: toward zero it is 2^24, upward 2^24 + 2.
    assert_eq!(out, [-2, -1, 2, i32::MAX, 0, 0, -1, -2, 23, 0, 2]);
}

#[test]
fn directed_adds_keep_the_float_below_or_take_the_next_one_up() {
    let source = "__global__ void k(float* out, double* wide) {
  float tiny = 1e-8f + threadIdx.x * 0.0f;
  out[0] = __fadd_rd(1.0f, tiny);
  out[1] = __fadd_ru(1.0f, tiny);
  out[2] = __fadd_rz(-1.0f, -tiny);
  out[3] = __fmul_ru(3.0f, 1.0f / 3.0f);
  out[4] = __fdiv_rd(1.0f, 3.0f);
  out[5] = __fsqrt_ru(2.0f);
  wide[0] = __dadd_ru(1.0, 1e-30);
  wide[1] = __ddiv_rz(1.0, 3.0) * 3.0;
  wide[2] = __fma_rd(3.0, 1.0 / 3.0, 0.0);
  wide[3] = __double2float_rd(0.1) ;
}
";
    let buffers = one_warp_buffers(source, "k", &[("out", 24), ("wide", 32)]);
    let out = f32s(&buffers[0]);
    // 1.0f / 3.0f is 0x3eaaaaab, just above a third: three of it round up to the float after 1.
    assert_eq!(out[0], 1.0);
    assert_eq!(out[1], 1.0f32.next_up());
    assert_eq!(out[2], -1.0);
    assert_eq!(out[3], 1.0f32.next_up());
    assert_eq!(out[4].to_bits(), 0x3eaa_aaaa);
    assert_eq!(out[5].to_bits(), 0x3fb5_04f4);
    let wide = f64s(&buffers[1]);
    assert_eq!(wide[0], 1.0f64.next_up());
    // A third rounded down, times 3, rounds back to 1; the nearest double to a third is below
    // it, so three of it, rounded down, lie below 1.
    assert_eq!(wide[1], 1.0);
    assert_eq!(wide[2], 1.0f64.next_down());
    assert_eq!(wide[3], f64::from(f32::from_bits(0x3dcc_cccc)));
}

#[test]
fn punning_reads_the_same_bits_as_another_type() {
    let source = "__global__ void k(int* out, double* wide) {
  out[0] = __float_as_int(1.0f);
  out[1] = (int)__float_as_uint(-0.0f);
  out[2] = (int)__int_as_float(0x40400000);
  out[3] = __double2hiint(1.0);
  out[4] = __double2loint(1.0);
  out[5] = (int)__uint_as_float(__float_as_uint(7.0f));
  out[6] = (int)(__double_as_longlong(2.0) >> 52);
  wide[0] = __hiloint2double(0x40000000, 0);
  wide[1] = __longlong_as_double(0x3ff8000000000000ll);
}
";
    let buffers = one_warp_buffers(source, "k", &[("out", 28), ("wide", 16)]);
    let out = i32s(&buffers[0]);
    assert_eq!(out, [0x3f80_0000, i32::MIN, 3, 0x3ff0_0000, 0, 7, 0x400]);
    assert_eq!(f64s(&buffers[1]), [2.0, 1.5]);
}

/// What `out` holds after one block of `threads` threads of `kernel` ran.
fn one_block_output(source: &str, kernel: &str, threads: u32, bytes: u64) -> Vec<u8> {
    let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
    let launch = Launch {
        grid: Dim3::new(1, 1, 1),
        block: Dim3::new(threads, 1, 1),
        dyn_smem: 0,
        args: Vec::<(String, Value)>::new(),
        buffers: vec![("out".to_string(), bytes)],
        fills: vec![],
        pointers: vec![],
    };
    let mut sim = Simulation::new(&program, kernel, &launch, 7).unwrap_or_else(|d| panic!("{d}"));
    sim.run_block([0, 0, 0], 1_000_000)
        .unwrap_or_else(|d| panic!("{d}"));
    sim.read_buffer("out").unwrap_or_default()
}

#[test]
fn a_float_atomic_max_through_atomic_cas_finds_the_largest_value_of_the_block() {
    let source = "__device__ float atomicMaxFloat(float* address, float value) {
  int* word = (int*)address;
  int old = *word;
  int assumed;
  do {
    assumed = old;
    old = atomicCAS(word, assumed, __float_as_int(fmaxf(value, __int_as_float(assumed))));
  } while (assumed != old);
  return __int_as_float(old);
}
__global__ void k(float* out) {
  if (threadIdx.x == 0) out[0] = -INFINITY;
  __syncthreads();
  float mine = (float)((threadIdx.x * 7) % 32) - 40.0f;
  atomicMaxFloat(out, mine);
}
";
    let out = f32s(&one_warp_buffers(source, "k", &[("out", 4)])[0]);
    // 7 is odd, so 7t mod 32 takes each of 0..31 once: the lanes offer -40 to -9, the largest
    // from lane 9 (7 * 9 = 63 = 32 + 31). All negative, so their bits do not order as ints.
    assert_eq!(out[0], -9.0);
    // Over 256 threads, 8 warps: 7t mod 256 takes each of 0..255 once, -40 to 215.
    let block = source.replace("% 32", "% 256");
    assert_eq!(f32s(&one_block_output(&block, "k", 256, 4))[0], 215.0);
}

#[test]
fn out_parameter_functions_write_through_local_addresses_and_pointers() {
    let source = "__global__ void k(float* out, int* exps) {
  float s, c;
  sincosf(0.0f, &s, &c);
  out[0] = s;
  out[1] = c;
  int e;
  out[2] = frexpf(8.0f, &e);
  exps[0] = e;
  float whole;
  out[3] = modff(-2.5f, &whole);
  out[4] = whole;
  int q;
  out[5] = remquof(7.0f, 2.0f, &q);
  exps[1] = q;
  frexpf(-3.0f, &exps[2]);
  sincospif(0.5f, &out[6], &out[7]);
}
";
    let buffers = one_warp_buffers(source, "k", &[("out", 32), ("exps", 12)]);
    // frexp: 8 = 0.5 * 2^4 and -3 = -0.75 * 2^2; modf: -2.5 is -2 and -0.5; 7 / 2 = 3.5 rounds
    // to the even 4, leaving -1.
    assert_eq!(
        f32s(&buffers[0]),
        [0.0, 1.0, 0.5, -0.5, -2.0, -1.0, 1.0, 0.0]
    );
    assert_eq!(i32s(&buffers[1]), [4, 4, 2]);
}

#[test]
fn the_special_functions_and_the_sign_bit_give_their_values() {
    let source = "__global__ void k(float* out) {
  float zero = threadIdx.x * 0.0f;
  out[0] = signbit(-zero) + 10 * signbit(zero) + 100 * signbit(-1.0);
  out[1] = erfcf(zero) + erff(zero);
  out[2] = tgammaf(5.0f) + lgammaf(1.0f);
  out[3] = normcdff(zero);
  out[4] = norm3df(2.0f, 3.0f, 6.0f) + fdimf(3.0f, 5.0f);
  out[5] = ldexpf(1.5f, 4) + ilogbf(8.0f);
  out[6] = exp10f(2.0f) + rcbrtf(8.0f);
  out[7] = nextafterf(1.0f, 2.0f);
  out[8] = norm4df(1.0f, 2.0f, 2.0f, 4.0f) + rnorm4df(1.0f, 2.0f, 2.0f, 4.0f);
}
__global__ void d(double* out) {
  double zero = threadIdx.x * 0.0;
  out[0] = erfc(zero) + rint(-2.5) + lround(-2.5);
  double s, c;
  sincos(zero, &s, &c);
  out[1] = s + c + sinpi(1.0) + cospi(1.0);
  out[2] = remainder(7.0, 2.0) + fdim(1.0, 3.0) + tgamma(4.0);
}
";
    let out = f32s(&one_warp_buffers(source, "k", &[("out", 36)])[0]);
    // 1 + 4 + 4 + 16 = 25, whose root is 5.
    assert_eq!(
        out,
        [
            101.0,
            1.0,
            24.0,
            0.5,
            7.0,
            27.0,
            100.5,
            1.0f32.next_up(),
            5.2
        ]
    );
    let out = f64s(&one_warp_buffers(source, "d", &[("out", 24)])[0]);
    // 1 - 2 - 3; 0 + 1 + 0 - 1; -1 + 0 + 3! = 6.
    assert_eq!(out, [-4.0, 0.0, 5.0]);
}
