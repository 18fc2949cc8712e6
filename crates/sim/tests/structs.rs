//! Structs and classes run through the simulator: the values kernels compute with members,
//! constructors, member functions and operators, and the requests, sectors and shared-memory
//! wavefronts their accesses make at the addresses C's layout gives them (a 12-byte struct's
//! member is read at a stride of 12 bytes; a whole struct is copied in the widest accesses its
//! alignment allows, `tests/reference/vector_loads/`). Every expected number is worked out in
//! the comment above it.

mod common;

use common::{f32s, i32s, one_block_counters, one_warp_buffers, GLOBAL_COUNTERS};

const SHARED: [&str; 3] = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
];

const PARTICLES: &str = "struct Particle { float x, y, z; };\n\
    __global__ void aos(float* out, const Particle* p) {\n\
      int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
      out[i] = p[i].x;\n\
    }\n\
    __global__ void soa(float* out, const float* x, const float* y, const float* z) {\n\
      int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
      out[i] = x[i];\n\
    }\n\
    __global__ void copy(Particle* out, const Particle* p) {\n\
      int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
      out[i] = p[i];\n\
    }\n\
    struct __align__(16) Padded { float x, y, z; };\n\
    __global__ void copy16(Padded* out, const Padded* p) {\n\
      int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
      out[i] = p[i];\n\
    }";

#[test]
fn one_member_of_an_array_of_12_byte_structs_reads_three_times_the_sectors_of_an_array_of_floats() {
    // 256 threads are 8 warps, one load each. A warp's 32 lanes read 4 bytes at a stride of 12:
    // their loads span 32 x 12 = 384 bytes, 12 sectors of 32 bytes, where the float array's
    // span 128 bytes, 4 sectors. The stores of `out` are 4 sectors a warp either way.
    let aos = one_block_counters(
        PARTICLES,
        "aos",
        256,
        &[("out", 1024), ("p", 3072)],
        GLOBAL_COUNTERS,
    );
    assert_eq!(aos, [8.0, 96.0, 8.0, 32.0]);
    let buffers = [("out", 1024), ("x", 1024), ("y", 1024), ("z", 1024)];
    let soa = one_block_counters(PARTICLES, "soa", 256, &buffers, GLOBAL_COUNTERS);
    assert_eq!(soa, [8.0, 32.0, 8.0, 32.0]);
}

#[test]
fn a_whole_12_byte_struct_copies_in_three_word_accesses_and_one_aligned_to_16_in_one() {
    // Three 4-byte loads and three stores a warp, each spanning 384 bytes (12 sectors): 24
    // requests and 288 sectors each way, as nvcc's three LDG.E of a `struct {float a, b, c;}`.
    let buffers = [("out", 3072), ("p", 3072)];
    assert_eq!(
        one_block_counters(PARTICLES, "copy", 256, &buffers, GLOBAL_COUNTERS),
        [24.0, 288.0, 24.0, 288.0]
    );
    // Aligned to 16 the struct is 16 bytes and one 16-byte access a warp: 512 bytes, 16
    // sectors, 8 requests and 128 sectors each way (LDG.E.128).
    let buffers = [("out", 4096), ("p", 4096)];
    assert_eq!(
        one_block_counters(PARTICLES, "copy16", 256, &buffers, GLOBAL_COUNTERS),
        [8.0, 128.0, 8.0, 128.0]
    );
}

#[test]
fn a_struct_member_in_shared_memory_falls_in_the_banks_its_stride_gives() {
    let source = "struct Triple { float a, b, c; };\n\
        struct __align__(16) Quad { float a, b, c; };\n\
        __global__ void twelve(float* out) {\n\
          __shared__ Triple s[32];\n\
          s[threadIdx.x].b = threadIdx.x;\n\
          __syncthreads();\n\
          out[threadIdx.x] = s[threadIdx.x].b;\n\
        }\n\
        __global__ void sixteen(float* out) {\n\
          __shared__ Quad s[32];\n\
          s[threadIdx.x].b = threadIdx.x;\n\
          __syncthreads();\n\
          out[threadIdx.x] = s[threadIdx.x].b;\n\
        }";
    // Lane l's `.b` is word 3l + 1: 3 and 32 share no factor, so the 32 words fall in 32
    // different banks, one wavefront each way and no conflict.
    let buffers = [("out", 128)];
    assert_eq!(
        one_block_counters(source, "twelve", 32, &buffers, SHARED),
        [1.0, 1.0, 0.0]
    );
    // At a stride of 16 bytes lane l's word is 4l + 1, in bank (4l + 1) mod 32: 8 banks, 4
    // lanes each, 4 wavefronts and 3 conflicts.
    assert_eq!(
        one_block_counters(source, "sixteen", 32, &buffers, SHARED),
        [4.0, 4.0, 3.0]
    );
}

const COMPLEX: &str = "class Complex {\n\
    public:\n\
      float re, im;\n\
      __host__ __device__ Complex() : re(0), im(0) {}\n\
      __host__ __device__ Complex(float r, float i) : re(r), im(i) {}\n\
      __device__ Complex operator*(Complex o) const {\n\
        return Complex(re * o.re - im * o.im, re * o.im + im * o.re);\n\
      }\n\
      __device__ Complex operator+(Complex o) const { return Complex(re + o.re, im + o.im); }\n\
      __device__ Complex& operator+=(Complex o) { re += o.re; im += o.im; return *this; }\n\
      __device__ bool operator==(Complex o) const { return re == o.re && im == o.im; }\n\
      __device__ float norm2() const { return re * re + im * im; }\n\
      __device__ void scale(float s) { re *= s; this->im *= s; }\n\
      friend __device__ Complex operator*(float s, Complex c) { return Complex(s * c.re, s * c.im); }\n\
    };\n\
    __global__ void k(Complex* out, float* norms, int* same) {\n\
      int t = threadIdx.x;\n\
      Complex a(t, 1.0f), b{2.0f, (float)t};\n\
      Complex z = a * b;\n\
      z += Complex(1.0f, 0.0f);\n\
      z.scale(2.0f);\n\
      out[t] = z;\n\
      norms[t] = out[t].norm2();\n\
      out[t].scale(0.5f);\n\
      Complex w = 3.0f * a;\n\
      same[t] = (w == Complex(3.0f * t, 3.0f)) + 2 * (a + a == w) + 4 * (a + a + a == w);\n\
    }";

#[test]
fn a_complex_type_multiplies_with_its_operators_and_member_functions() {
    let [out, norms, same] =
        one_warp_buffers(COMPLEX, "k", &[("out", 256), ("norms", 128), ("same", 128)])
            .try_into()
            .unwrap_or_else(|_| panic!("three buffers"));
    let (out, norms, same) = (f32s(&out), f32s(&norms), i32s(&same));
    // a = t + i, b = 2 + ti: a * b = (2t - t) + (t^2 + 2)i = t + (t^2 + 2)i; plus 1 and doubled,
    // (2t + 2) + (2t^2 + 4)i, stored; its norm for t = 3 is 8^2 + 22^2 = 548. Halved in memory:
    // (t + 1) + (t^2 + 2)i, so out[3] = 4 + 11i.
    assert_eq!((out[6], out[7]), (4.0, 11.0));
    assert_eq!(norms[3], 548.0);
    assert_eq!((out[0], out[1]), (1.0, 2.0));
    // 3 * a = 3t + 3i equals Complex(3t, 3) and a + a + a, never a + a = 2t + 2i: 1 + 4.
    assert_eq!((same[0], same[5]), (5, 5));
}

#[test]
fn a_member_function_that_changes_its_object_in_memory_loads_and_stores_it_whole() {
    // `out[t].scale(0.5f)` reads the 8-byte struct as two 4-byte loads and writes it back as
    // two stores: with 32 lanes at a stride of 8 bytes each access spans 256 bytes, 8 sectors.
    // The kernel's other accesses: `out[t] = z` 2 stores, `out[t].norm2()` 2 loads, and the
    // stores of `norms` and `same` (4 sectors each): loads 4 requests, 32 sectors; stores 6
    // requests, 4 x 8 + 2 x 4 = 40 sectors.
    let buffers = [("out", 256), ("norms", 128), ("same", 128)];
    assert_eq!(
        one_block_counters(COMPLEX, "k", 32, &buffers, GLOBAL_COUNTERS),
        [4.0, 32.0, 6.0, 40.0]
    );
}

#[test]
fn structs_pass_and_return_by_value_nest_and_take_aggregate_initialisers() {
    let source = "typedef struct { int lo, hi; } Range;\n\
        struct Box { Range x; Range y; };\n\
        __constant__ Range ranges[2] = {{1, 4}, {10, 20}};\n\
        __device__ Range widen(Range r, int by) { Range w = {r.lo - by, r.hi + by}; return w; }\n\
        __global__ void k(int* out, Box* boxes) {\n\
          int t = threadIdx.x;\n\
          Range r = ranges[t % 2];\n\
          Box b;\n\
          b.x = widen(r, t);\n\
          b.y = Range{t, 2 * t};\n\
          boxes[t] = b;\n\
          out[t] = boxes[t].x.hi - boxes[t].x.lo + b.y.hi;\n\
        }";
    let [out, boxes] = one_warp_buffers(source, "k", &[("out", 128), ("boxes", 512)])
        .try_into()
        .unwrap_or_else(|_| panic!("two buffers"));
    let (out, boxes) = (i32s(&out), i32s(&boxes));
    // Even t: r = {1, 4} widened by t, {1 - t, 4 + t}, 3 + 2t wide; odd t: {10 - t, 20 + t},
    // 10 + 2t wide. Plus b.y.hi = 2t: t = 4 gives 11 + 8 = 19, t = 5 gives 20 + 10 = 30.
    assert_eq!((out[4], out[5]), (19, 30));
    // Box 5 is {{5, 25}, {5, 10}}, 16 bytes from byte 80: ints 20 to 23.
    assert_eq!(&boxes[20..24], &[5, 25, 5, 10]);
}

#[test]
fn sizeof_alignof_and_member_offsets_follow_cs_layout() {
    let source = "struct Mixed { char c; double d; short s; };\n\
        struct __align__(16) V3 { float x, y, z; };\n\
        __global__ void k(int* out) {\n\
          __shared__ Mixed m[2];\n\
          out[0] = sizeof(Mixed);\n\
          out[1] = alignof(Mixed);\n\
          out[2] = sizeof(V3);\n\
          out[3] = alignof(V3);\n\
          out[4] = (int)((char*)&m[1].s - (char*)&m[0]);\n\
          out[5] = sizeof(m);\n\
        }";
    let out = i32s(&one_warp_buffers(source, "k", &[("out", 128)])[0]);
    // char at 0, double at 8, short at 16, tail padding to 24; three floats aligned to 16 are
    // 16 bytes. m[1].s is 24 + 16 = 40 bytes into the array of 48.
    assert_eq!(&out[..6], &[24, 8, 16, 16, 40, 48]);
}

#[test]
fn a_local_struct_with_an_array_member_lives_in_local_memory_and_pointers_reach_members() {
    let source = "struct Acc { float v[4]; int n; };\n\
        struct Particle { float x, y, z; };\n\
        __global__ void k(float* out, Particle* p) {\n\
          int t = threadIdx.x;\n\
          Acc acc;\n\
          for (int j = 0; j < 4; j++) acc.v[(j + t) % 4] = j * t;\n\
          acc.n = 4;\n\
          Particle* q = p + t;\n\
          q->y = 2.0f * t;\n\
          out[t] = acc.v[(2 + t) % 4] + acc.n + q->y + (*q).y;\n\
        }";
    let out = f32s(&one_warp_buffers(source, "k", &[("out", 128), ("p", 384)])[0]);
    // acc.v[(2 + t) % 4] was written with j = 2: 2t; plus 4, plus 2t twice: 6t + 4.
    assert_eq!((out[0], out[3]), (4.0, 22.0));
}

#[test]
fn a_member_function_defined_after_its_struct_computes_on_its_object() {
    let source = "struct Vec2 {\n\
          float x, y;\n\
          __device__ Vec2(float a, float b);\n\
          __device__ float dot(Vec2 o) const;\n\
          __device__ Vec2 operator-(Vec2 o) const;\n\
        };\n\
        __device__ Vec2::Vec2(float a, float b) : x(a), y(b) {}\n\
        __device__ float Vec2::dot(Vec2 o) const { return x * o.x + y * o.y; }\n\
        __device__ Vec2 Vec2::operator-(Vec2 o) const { return Vec2(x - o.x, y - o.y); }\n\
        __global__ void k(float* out) {\n\
          Vec2 a(3.0f, 4.0f), b(1.0f, (float)threadIdx.x);\n\
          out[threadIdx.x] = (a - b).dot(a);\n\
        }";
    let out = f32s(&one_warp_buffers(source, "k", &[("out", 128)])[0]);
    // a - b = (2, 4 - t); its dot product with (3, 4) is 6 + 16 - 4t = 22 - 4t.
    assert_eq!((out[0], out[5]), (22.0, 2.0));
}

#[test]
fn braced_returns_struct_selects_and_local_structs_give_each_lane_its_value() {
    // Even lanes pick make(lane) = {lane, 2 lane}, odd ones {1, 2}; a struct defined in the
    // kernel scales the sum by 1.5 * 2 = 3: even lanes write 9 lane, odd ones 9.
    let source = "struct Pair { float a, b; };
__device__ Pair make(float x) { return {x, 2 * x}; }
__device__ float2 swap(float2 v) { return {v.y, v.x}; }
__device__ Pair pick(bool c, Pair p, Pair q) { return c ? p : q; }
__global__ void k(float* out) {
  struct Scale { float by; int times; };
  Scale s = {1.5f, 2};
  Pair r = pick(threadIdx.x % 2 == 0, make(threadIdx.x), Pair{1.0f, 2.0f});
  float2 w = swap(make_float2(r.b, r.a));
  out[threadIdx.x] = (w.x + w.y) * s.by * s.times;
}
";
    let out = common::one_warp_buffers(source, "k", &[("out", 128)]);
    let expected: Vec<f32> = (0..32)
        .map(|lane| {
            if lane % 2 == 0 {
                9.0 * lane as f32
            } else {
                9.0
            }
        })
        .collect();
    assert_eq!(common::f32s(&out[0]), expected);
}

#[test]
fn a_struct_and_a_float3_passed_by_value_take_their_members_from_the_launch() {
    use memplay_sim::kernel::{compile, Dim3, Launch, Simulation, Value};
    let source = "struct Range { float lo, hi; };\n\
        struct Params { int n; float alpha; Range range; };\n\
        __global__ void axpy(Params p, float3 shift, float* y) {\n\
          int i = threadIdx.x;\n\
          if (i < p.n) y[i] = p.alpha * i + shift.x + shift.y + shift.z + p.range.hi;\n\
        }";
    let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
    let value = |name: &str, v: Value| (name.to_string(), v);
    let mut launch = Launch {
        grid: Dim3::new(1, 1, 1),
        block: Dim3::new(32, 1, 1),
        dyn_smem: 0,
        args: vec![
            value("p.n", Value::Int(4)),
            value("p.alpha", Value::Float(2.0)),
            value("p.range.lo", Value::Float(0.0)),
            value("p.range.hi", Value::Float(100.0)),
            value("shift.x", Value::Float(0.5)),
            value("shift.y", Value::Float(0.25)),
            value("shift.z", Value::Int(1)),
        ],
        buffers: vec![("y".to_string(), 32)],
        fills: vec![],
        pointers: vec![],
    };
    let mut sim = Simulation::new(&program, "axpy", &launch, 7).unwrap_or_else(|d| panic!("{d}"));
    sim.run_block([0, 0, 0], 1_000_000)
        .unwrap_or_else(|d| panic!("{d}"));
    // Threads 0 to 3 write 2 i + 0.5 + 0.25 + 1 + 100; the other four floats keep their fill.
    let y = f32s(&sim.read_buffer("y").unwrap_or_default());
    assert_eq!(y[..4], [101.75, 103.75, 105.75, 107.75]);
    // A member left out, and one the struct does not have, are named.
    launch.args.retain(|(name, _)| name != "p.range.lo");
    let missing = Simulation::new(&program, "axpy", &launch, 7)
        .err()
        .map(|d| d.message);
    assert_eq!(
        missing.as_deref(),
        Some("the launch gives no value for 'p.range.lo', a member of the parameter 'p' (Params)")
    );
    launch.args.push(value("p.beta", Value::Float(1.0)));
    let unknown = Simulation::new(&program, "axpy", &launch, 7)
        .err()
        .map(|d| d.message);
    assert_eq!(
        unknown.as_deref(),
        Some("'p.beta' names no member of the parameter 'p' (Params)")
    );
}

#[test]
fn operators_the_file_defines_on_float3_add_scale_and_accumulate_vectors() {
    // As the CUDA samples' helper_math.h defines them: `+` and `*` of float3, and `+=` read
    // as `q = q + v` through the file's `operator+`.
    let source = "__device__ float3 operator+(float3 a, float3 b) {\n\
          return make_float3(a.x + b.x, a.y + b.y, a.z + b.z);\n\
        }\n\
        __device__ float3 operator*(float3 a, float s) { return make_float3(a.x * s, a.y * s, a.z * s); }\n\
        __device__ float3 operator-(float3 a) { return make_float3(-a.x, -a.y, -a.z); }\n\
        __global__ void step(float* out) {\n\
          float3 p = make_float3(threadIdx.x, 1.0f, 2.0f);\n\
          float3 v = make_float3(0.5f, 0.25f, 4.0f);\n\
          float3 q = p + v * 2.0f;\n\
          q += v;\n\
          q = -q;\n\
          out[threadIdx.x] = q.x + q.y + q.z;\n\
        }";
    let out = one_warp_buffers(source, "step", &[("out", 128)]);
    // q = p + 3 v = (t + 1.5, 1.75, 14), negated and summed: -(t + 17.25).
    let values = f32s(&out[0]);
    assert_eq!(values[..3], [-17.25, -18.25, -19.25]);
}

#[test]
fn a_managed_variable_is_global_memory_to_the_kernel() {
    let source = "__managed__ int hits;\n\
        __global__ void count(int* out) {\n\
          atomicAdd(&hits, 1);\n\
          out[threadIdx.x] = threadIdx.x;\n\
        }";
    let out = one_warp_buffers(source, "count", &[("out", 128)]);
    assert_eq!(i32s(&out[0])[..3], [0, 1, 2]);
    // One warp's atomic on one word: one request, one sector.
    let counters = one_block_counters(
        source,
        "count",
        32,
        &[("out", 128)],
        [
            "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
        ],
    );
    assert_eq!(counters, [1.0, 1.0]);
}

#[test]
fn an_overloaded_function_is_chosen_by_its_arguments_types() {
    let source = "__device__ float twice(float x) { return 2.0f * x; }\n\
        __device__ int twice(int x) { return x + 1000; }\n\
        __device__ float twice(float2 v) { return v.x + v.y; }\n\
        __global__ void k(float* out) {\n\
          out[0] = twice(1.5f);\n\
          out[1] = twice(7);\n\
          out[2] = twice(make_float2(0.25f, 0.5f));\n\
        }";
    let out = f32s(&one_warp_buffers(source, "k", &[("out", 12)])[0]);
    assert_eq!(out, [3.0, 1007.0, 0.75]);
    // No overload takes a pointer: the error names the call and the types.
    let program = memplay_sim::kernel::compile(&source.replace("twice(7)", "twice(out)"), &[])
        .unwrap_or_else(|d| panic!("{d}"));
    let message = program
        .functions
        .iter()
        .find(|f| f.name == "k")
        .and_then(|f| f.error.as_ref())
        .map(|d| d.message.clone());
    assert_eq!(message.as_deref(), Some("no 'twice' takes (float*)"));
}
