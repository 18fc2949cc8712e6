//! Casts, vector types and the names the headers give, run through the simulator: the values a
//! kernel computes with them, and the requests and sectors of the accesses nvcc makes of them
//! (a `float3` element is three 4-byte loads, a `float4` reached through `reinterpret_cast` one
//! of 16 bytes; `tests/reference/vector_loads/`). Every expected number is worked out in the
//! comment above it.

mod common;

use common::{f32s, f64s, i32s, one_block_counters, one_warp_buffers, GLOBAL_COUNTERS};
use memplay_sim::device::h100;
use memplay_sim::kernel::{compile, Dim3, Launch, Simulation, Value};
use memplay_sim::simulate::{BlockSampling, Reuse};
use memplay_sim::timing::predict;
use memplay_sim::trace::TraceRequest;
use memplay_sim::{simulate, SimulationInput};

#[test]
fn a_float4_copy_through_reinterpret_cast_is_one_16_byte_access_per_lane() {
    let source = "__global__ void copy4(float* dst, const float* src) {\n\
                  int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                  reinterpret_cast<float4*>(dst)[i] = reinterpret_cast<const float4*>(src)[i];\n\
                  }";
    // 1,024 floats by 256 threads: 8 warps, one request each; 32 lanes x 16 B = 512 B = 16
    // sectors a request, 128 in all, for the loads and the stores alike.
    let counts = one_block_counters(
        source,
        "copy4",
        256,
        &[("dst", 4096), ("src", 4096)],
        GLOBAL_COUNTERS,
    );
    assert_eq!(counts, [8.0, 128.0, 8.0, 128.0]);
}

#[test]
fn a_float3_copy_is_three_4_byte_accesses_of_12_sectors_each() {
    let source = "__global__ void copy3(float3* dst, const float3* src) {\n\
                  int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                  dst[i] = src[i];\n\
                  }";
    // A warp's 32 elements are 384 bytes, 12 sectors. Each of the three 4-byte accesses (at +0,
    // +4 and +8) spans 376 of them, from the warp's first sector to its last: 12 sectors. 8
    // warps x 3 = 24 requests and 24 x 12 = 288 sectors, loads and stores alike.
    let counts = one_block_counters(
        source,
        "copy3",
        256,
        &[("dst", 3072), ("src", 3072)],
        GLOBAL_COUNTERS,
    );
    assert_eq!(counts, [24.0, 288.0, 24.0, 288.0]);
}

#[test]
fn reading_x_of_a_float3_array_moves_the_whole_12_byte_stride() {
    let source = "__global__ void first(float* out, const float3* src) {\n\
                  int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                  out[i] = src[i].x;\n\
                  }";
    // One 4-byte load a warp at a 12-byte stride: 32 x 12 = 384 bytes, 12 sectors a request.
    // The store of floats is 4 sectors a request.
    let counts = one_block_counters(
        source,
        "first",
        256,
        &[("out", 1024), ("src", 3072)],
        GLOBAL_COUNTERS,
    );
    assert_eq!(counts, [8.0, 96.0, 8.0, 32.0]);
}

#[test]
fn a_uchar4_copy_is_one_4_byte_access_and_a_double4_two_of_16_bytes() {
    let uchar4 = "__global__ void c4(uchar4* dst, const uchar4* src) {\n\
                  dst[threadIdx.x] = src[threadIdx.x];\n\
                  }";
    // 32 lanes x 4 bytes = 128 bytes: 4 sectors a request, one request a warp.
    let counts = one_block_counters(
        uchar4,
        "c4",
        256,
        &[("dst", 1024), ("src", 1024)],
        GLOBAL_COUNTERS,
    );
    assert_eq!(counts, [8.0, 32.0, 8.0, 32.0]);
    let double4 = "__global__ void d4(double4* dst, const double4* src) {\n\
                   dst[threadIdx.x] = src[threadIdx.x];\n\
                   }";
    // Two 16-byte accesses a warp (at +0 and +16 of each 32-byte element); each lane's 16 bytes
    // lie in its own sector, so each request touches 32 sectors: 8 warps x 2 = 16 requests and
    // 512 sectors.
    let counts = one_block_counters(
        double4,
        "d4",
        256,
        &[("dst", 8192), ("src", 8192)],
        GLOBAL_COUNTERS,
    );
    assert_eq!(counts, [16.0, 512.0, 16.0, 512.0]);
}

#[test]
fn an_int4_read_from_a_char_array_is_one_16_byte_load() {
    let source = "__global__ void xor4(int* out, const char* bytes) {\n\
                  int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                  int4 v = reinterpret_cast<const int4*>(bytes)[i];\n\
                  out[i] = v.x ^ v.y ^ v.z ^ v.w;\n\
                  }";
    // 16 sectors a load request, 4 a store request, one of each a warp.
    let counts = one_block_counters(
        source,
        "xor4",
        256,
        &[("out", 1024), ("bytes", 4096)],
        GLOBAL_COUNTERS,
    );
    assert_eq!(counts, [8.0, 128.0, 8.0, 32.0]);
}

#[test]
fn a_misaligned_vector_access_is_an_error_naming_its_byte_and_alignment() {
    let source = "__global__ void shifted(float* dst, const float* src) {\n\
                  int i = threadIdx.x;\n\
                  reinterpret_cast<float4*>(dst)[i] = reinterpret_cast<const float4*>(src + 1)[i];\n\
                  }";
    let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
    let launch = Launch {
        grid: Dim3::new(1, 1, 1),
        block: Dim3::new(32, 1, 1),
        dyn_smem: 0,
        args: Vec::new(),
        buffers: vec![("dst".to_string(), 1024), ("src".to_string(), 1024)],
        fills: vec![],
        pointers: vec![],
    };
    let mut sim =
        Simulation::new(&program, "shifted", &launch, 7).unwrap_or_else(|d| panic!("{d}"));
    let error = sim
        .run_block([0, 0, 0], 1_000_000)
        .err()
        .map(|d| d.to_string());
    // Lane 0 reads the 16 bytes at src + 1, byte 4 of the buffer.
    assert_eq!(
        error.as_deref(),
        Some(
            "3:37: the 16-byte access at byte 4 of 'src' is misaligned: it must start at a \
             multiple of 16 bytes"
        )
    );
}

#[test]
fn cpp_casts_and_functional_casts_convert_as_c_casts_do() {
    let source = "__global__ void casts(float* f, int* n) {\n\
                  int i = threadIdx.x;\n\
                  f[i] = static_cast<float>(i) / 2 + (float(i) + 0.5f);\n\
                  n[i] = int(i * 2.5f) + static_cast<int>(2.75f) + unsigned(3);\n\
                  float* same = const_cast<float*>(reinterpret_cast<const float*>(f));\n\
                  same[i] += 1;\n\
                  }";
    let buffers = one_warp_buffers(source, "casts", &[("f", 128), ("n", 128)]);
    let (f, n) = (f32s(&buffers[0]), i32s(&buffers[1]));
    // Lane 3: 3 / 2 + 3.5 + 1 = 6; int(7.5) + int(2.75) + 3 = 7 + 2 + 3 = 12.
    assert_eq!((f[3], n[3]), (6.0, 12));
    // Lane 0: 0 + 0.5 + 1 = 1.5; 0 + 2 + 3 = 5.
    assert_eq!((f[0], n[0]), (1.5, 5));
}

#[test]
fn vector_types_hold_their_components_and_dim3_defaults_to_one() {
    let source = "__global__ void vectors(int* out) {\n\
                  if (threadIdx.x != 0) return;\n\
                  dim3 b(16, 16);\n\
                  dim3 d;\n\
                  dim3 e = dim3(2);\n\
                  uchar4 c = make_uchar4(1, 2, 3, 250);\n\
                  short2 s = make_short2(-3, 7);\n\
                  float3 p = make_float3(0.5f, 1.5f, 2.5f);\n\
                  longlong2 q = make_longlong2(1LL << 40, -1);\n\
                  double3 r = make_double3(1.0, 2.0, 3.0);\n\
                  float3 pts[2];\n\
                  pts[0] = p;\n\
                  pts[1] = make_float3(4.0f, 5.0f, 6.0f);\n\
                  out[0] = b.x * 10000 + b.y * 100 + b.z;\n\
                  out[1] = d.x + d.y + d.z;\n\
                  out[2] = e.x * 100 + e.y * 10 + e.z;\n\
                  out[3] = c.x + c.y + c.z + c.w;\n\
                  out[4] = s.x * s.y;\n\
                  out[5] = int(p.x + p.y + p.z);\n\
                  out[6] = int(q.x >> 38) + int(q.y);\n\
                  out[7] = int(r.z * r.y);\n\
                  out[8] = int((*(pts + 1)).y + pts[0].z);\n\
                  out[9] = sizeof(float3) * 100 + sizeof(double4);\n\
                  dim3 g = 16;\n\
                  dim3 braced{16, 16};\n\
                  int four{4};\n\
                  float2 two{0.25f, 0.75f};\n\
                  out[10] = g.x * 100 + g.y * 10 + g.z;\n\
                  out[11] = braced.x + braced.y + braced.z + four + int(two.x + two.y);\n\
                  }";
    let out = i32s(&one_warp_buffers(source, "vectors", &[("out", 48)])[0]);
    // 16 * 10000 + 16 * 100 + 1; 1 + 1 + 1; 2 * 100 + 1 * 10 + 1; 1 + 2 + 3 + 250 (unsigned
    // bytes); -3 * 7; int(4.5); 2^40 >> 38 = 4, plus -1; int(3 * 2); int(5 + 2.5); 12 and 32;
    // dim3 (16, 1, 1) from a number; 16 + 16 + 1 + 4 + int(1.0).
    assert_eq!(out, [161_601, 3, 211, 256, -21, 4, 3, 6, 7, 1232, 1611, 38]);
}

#[test]
fn the_headers_constants_have_their_exact_values_and_types() {
    let source = "#include <cfloat>\n\
                  #include <math_constants.h>\n\
                  #ifndef M_PI\n\
                  #define M_PI 3.0f\n\
                  #endif\n\
                  __global__ void limits(float* f, int* n, double* d) {\n\
                  if (threadIdx.x != 0) return;\n\
                  f[0] = FLT_MAX; f[1] = FLT_MIN; f[2] = FLT_EPSILON; f[3] = CUDART_PI_F;\n\
                  f[4] = INFINITY; f[5] = -CUDART_INF_F;\n\
                  n[0] = INT_MAX; n[1] = INT_MIN; n[2] = UINT_MAX > 0; n[3] = NAN != NAN;\n\
                  n[4] = sizeof(FLT_MAX) * 1000 + sizeof(INT_MAX) * 100 + sizeof(M_PI) * 10 + sizeof(LLONG_MAX);\n\
                  n[5] = sizeof(size_t) + sizeof(uint) + sizeof(uchar) + sizeof(ushort) + sizeof(ulong);\n\
                  n[6] = sizeof(int8_t) + sizeof(uint16_t) + sizeof(int32_t) + sizeof(uint64_t) + sizeof(uintptr_t);\n\
                  uint8_t wraps = 255; wraps++;\n\
                  n[7] = wraps;\n\
                  d[0] = M_PI; d[1] = DBL_MAX; d[2] = M_E; d[3] = M_SQRT2; d[4] = M_PI_2;\n\
                  d[5] = DBL_EPSILON; d[6] = LLONG_MAX;\n\
                  }";
    let buffers = one_warp_buffers(source, "limits", &[("f", 24), ("n", 32), ("d", 56)]);
    let (f, n, d) = (f32s(&buffers[0]), i32s(&buffers[1]), f64s(&buffers[2]));
    let pi_f = std::f32::consts::PI;
    assert_eq!(
        f,
        [
            f32::MAX,
            f32::MIN_POSITIVE,
            f32::EPSILON,
            pi_f,
            f32::INFINITY,
            f32::NEG_INFINITY
        ]
    );
    // UINT_MAX is unsigned, so above 0; NaN equals nothing, itself included. FLT_MAX is a
    // float, INT_MAX an int, M_PI a double (the header's, not the file's fallback) and
    // LLONG_MAX a long long: 4, 4, 8, 8. The typedefs: 8 + 4 + 1 + 2 + 8 and 1 + 2 + 4 + 8 + 8.
    assert_eq!(n, [i32::MAX, i32::MIN, 1, 1, 4488, 23, 23, 0]);
    use std::f64::consts::{E, FRAC_PI_2, PI, SQRT_2};
    assert_eq!(
        d,
        [
            PI,
            f64::MAX,
            E,
            SQRT_2,
            FRAC_PI_2,
            f64::EPSILON,
            i64::MAX as f64
        ]
    );
}

#[test]
fn float3_loads_in_a_loop_count_the_same_whether_runs_are_reused_or_not() {
    let source = "__global__ void sum3(float* out, const float3* pts, int n) {\n\
                  int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                  float acc = 0.0f;\n\
                  for (int k = 0; k < 16; ++k) {\n\
                  float3 p = pts[k * n + i];\n\
                  acc += p.x + p.y * p.z;\n\
                  }\n\
                  out[i] = acc;\n\
                  }";
    let mut input = SimulationInput::new(source, "sum3", h100());
    input.grid = Dim3::new(4, 1, 1);
    input.block = Dim3::new(128, 1, 1);
    input.args = vec![("n".to_string(), Value::Int(512))];
    input.buffers = vec![
        ("out".to_string(), 2048),
        ("pts".to_string(), 16 * 512 * 12),
    ];
    input.trace = Some(TraceRequest {
        block: [1, 0, 0],
        warp: 2,
    });
    let reused = simulate(&input).unwrap_or_else(|e| panic!("{e}"));
    input.reuse = Reuse::None;
    input.sampling = BlockSampling::EdgeClassesEachRun;
    let everything = simulate(&input).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        reused
            .sampled_blocks
            .iter()
            .any(|b| b.iterations_skipped > 0),
        "the loop's iterations are skipped where runs are reused"
    );
    assert_eq!(reused.counters, everything.counters);
    assert_eq!(reused.memory, everything.memory);
    assert_eq!(reused.lines, everything.lines);
    assert_eq!(reused.trace, everything.trace);
    assert_eq!(predict(&reused), predict(&everything));
    // 16 warps x 16 iterations x 3 parts = 768 load requests of 12 sectors each (a warp's 32
    // elements are 384 bytes from a multiple of 384); 16 stores of 4 sectors.
    let counts = [
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    ]
    .map(|name| reused.counters.get(name).unwrap_or(f64::NAN));
    assert_eq!(counts, [768.0, 9216.0, 16.0, 64.0]);
}
