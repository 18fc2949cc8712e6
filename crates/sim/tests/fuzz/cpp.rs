//! Kernels in the C++ that CUDA courses write, for the fuzz target: type aliases, enums,
//! namespaces, file-scope constants and `constexpr`, default arguments, `auto`, `nullptr`,
//! `switch` with fall-through, C++ casts and functional casts, the vector types with `make_*`,
//! `dim3`, the headers' constants, attributes and `__launch_bounds__`, references (locals, and
//! parameters of `__device__` functions, bound to registers, shared and global elements and
//! values), `__device__` functions that wait at `__syncthreads()`, called as statements and
//! inside expressions (operands, conditions, `&&` and `?:`), one of them returning early, and a
//! struct with a constructor, member functions and an operator, read and written whole and by
//! member in global memory, function templates called with their arguments and deduced, a
//! struct template,
//! and now and then a kernel template instantiated at the launch; mixed with the C statements of `grammar` and, now and then, a
//! hostile shape of one of them (nesting, long chains, huge values).
//!
//! The C subset's cases (`grammar::c_subset_case`) stay as they were, so that the snapshot's
//! generated cases, drawn from them, do not change when this grammar grows.

use super::case::Case;
use super::grammar::{
    args_and_buffers, assemble, clean_launch, float_expr, hostile_size, int_expr, launch_parts,
    stmt,
};
use proptest::prelude::*;
use proptest::sample::select;

/// File-scope declarations every C++ case starts with, which its statements use.
const PRELUDE: &str = "#include <cfloat>\n\
#include <cooperative_groups.h>\n\
typedef float real;\n\
using index_t = int;\n\
enum Side { LEFT, RIGHT = 3 };\n\
enum class Mode : int { COPY, SCALE };\n\
const int TILE_C = 4;\n\
constexpr int WIDTH_C = TILE_C * 2;\n\
constexpr int twice_c(int p) { return 2 * p; }\n\
namespace geo {\n\
constexpr int K = 3;\n\
__device__ int twice(int p, int q = 1) { return 2 * p + q; }\n\
namespace inner { __device__ __forceinline__ float half_of(float v) { return v * 0.5f; } }\n\
}\n\
namespace g2 = geo::inner;\n\
__device__ void block_step(int* s, int t) { s[t & 63] += 1; __syncthreads(); }\n\
__device__ __attribute__((always_inline)) int ident(int p) { return p; }\n\
struct Pair {\n\
  float lo, hi;\n\
  __device__ Pair(float l, float h) : lo(l), hi(h) {}\n\
  __device__ float sum() const { return lo + hi; }\n\
  __device__ void bump(float d) { lo += d; this->hi -= d; }\n\
  __device__ Pair operator+(Pair o) const { return Pair(lo + o.lo, hi + o.hi); }\n\
};\n\
typedef struct { int key; short tag; double weight; } Entry;\n\
__device__ void add_to(int &t, const int &by) { t += by; }\n\
__device__ int synced(const int* s, int t) { __syncthreads(); int r = s[t & 63]; __syncthreads(); return r; }\n\
__device__ int stepped(int* s, int t) {\n\
  if (t < 0) return 0;\n\
  for (int k = 0; k < 3; k++) if (s[(t + k) & 63] > 100) return k;\n\
  s[t & 63] += 1;\n\
  __syncthreads();\n\
  return s[0];\n\
}\n\
template <typename T, int K = 2> __device__ T scaled_c(T v) { return v * K; }\n\
template <class T> __device__ T larger_c(const T* p, T v) { return p[0] > v ? p[0] : v; }\n\
template <class T> struct Box_c { T v; __device__ T get() const { return v + v; } };\n";

/// Hostile file-scope C++: deep namespaces, long enums and alias chains, nested `constexpr`
/// calls, bad launch bounds.
fn hostile_prelude() -> BoxedStrategy<String> {
    (hostile_size(), 0usize..6)
        .prop_map(|(n, which)| match which {
            0 => format!(
                "{}int deep_c = 1;{}\n",
                "namespace z { ".repeat(n),
                " }".repeat(n)
            ),
            1 => format!(
                "enum Big {{ {} }};\n",
                (0..n)
                    .map(|k| format!("E{k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            2 => format!(
                "typedef int t0;\n{}",
                (1..n)
                    .map(|k| format!("typedef t{} t{k};\n", k - 1))
                    .collect::<String>()
            ),
            3 => format!(
                "constexpr int f0(int p) {{ return p; }}\n{}",
                (1..n.min(400))
                    .map(|k| format!(
                        "constexpr int f{k}(int p) {{ return f{}(p) + 1; }}\n",
                        k - 1
                    ))
                    .collect::<String>()
            ),
            4 => format!("namespace {0} = {0};\n", "q".repeat(n)),
            _ => format!("const int BOUND = {};\n", n as i64 - 200),
        })
        .boxed()
}

/// A C++ statement over the kernel's variables (`i j h u w v`, `a f s`) and the prelude's names.
fn cpp_stmt() -> BoxedStrategy<String> {
    let body = || prop::collection::vec(stmt(), 0..3).prop_map(|v| v.join(" "));
    prop_oneof![
        3 => (int_expr(), body(), body(), body()).prop_map(|(e, a, b, c)| format!(
            "switch (({e}) & 3) {{ case 0: j += 1; {a} case LEFT + 1: h ^= 2; break; \
             case RIGHT: {{ int z = {e}; j += z; {b} }} break; default: u += 1u; {c} }}"
        )),
        1 => (int_expr(), body()).prop_map(|(e, a)| format!(
            "switch ({e}) {{ default: {a} break; case 7: j++; }}"
        )),
        1 => (0u32..6, int_expr()).prop_map(|(n, e)| format!(
            "for (auto k = 0; k < {n}; ++k) {{ switch ((k + {e}) & 1) {{ case 0: continue; \
             default: j += k; }} }}"
        )),
        2 => float_expr().prop_map(|e| format!("real r = static_cast<real>({e}); v += r;")),
        2 => int_expr().prop_map(|e| format!("auto z = ({e}) * 2; j += z;")),
        2 => int_expr().prop_map(|e| format!("j += geo::twice({e}) + geo::K + ::geo::twice(1, 2);")),
        1 => float_expr().prop_map(|e| format!("v += g2::half_of({e});")),
        2 => float_expr().prop_map(|e| format!(
            "float3 p3 = make_float3({e}, 1.0f, 2.0f); v += p3.z + p3.x;"
        )),
        2 => float_expr().prop_map(|e| format!("int q = int({e}); j += q + unsigned(q) % 7u;")),
        1 => int_expr().prop_map(|e| format!("a[(({e}) + RIGHT) & 63] = TILE_C + WIDTH_C;")),
        2 => int_expr().prop_map(|e| format!(
            "float4 f4 = reinterpret_cast<const float4*>(f)[({e}) & 15]; v += f4.y;"
        )),
        1 => int_expr().prop_map(|e| format!(
            "reinterpret_cast<int2*>(a)[({e}) & 31] = make_int2(i, j);"
        )),
        1 => Just("int* np = nullptr; if (np == NULL) j++;".to_string()),
        1 => Just("v += FLT_EPSILON; j += INT_MAX & 3; v += (float)M_PI;".to_string()),
        1 => Just("dim3 d(2, 3); j += d.x * d.y * d.z;".to_string()),
        1 => Just("uchar4 c4 = make_uchar4(1, 2, 3, 4); j += c4.w; short2 s2v = make_short2(5, 6); j += s2v.y;".to_string()),
        1 => Just("index_t t2 = WIDTH_C; j += t2 + twice_c(TILE_C);".to_string()),
        1 => Just("Mode m = Mode::SCALE; if (m == Mode::SCALE) j += 1;".to_string()),
        1 => int_expr().prop_map(|e| format!("block_step(s, {e});")),
        2 => int_expr().prop_map(|e| format!(
            "add_to(j, {e}); add_to(s[i & 63], j); {{ int &r = h; r += j; const float &c = v * 2.0f; v += c; }}"
        )),
        1 => int_expr().prop_map(|e| format!(
            "{{ auto &e = a[({e}) & 63]; int &t = s[(i + 1) & 63]; add_to(e, t); add_to(t, 1); }}"
        )),
        1 => int_expr().prop_map(|e| format!(
            "j += 2 * synced(s, {e}) + (i > 3 && synced(s, j) > 0);"
        )),
        1 => int_expr().prop_map(|e| format!(
            "if (synced(s, {e}) > 0) h += stepped(s, i); v += (j > 0 ? (float)stepped(s, j) : v);"
        )),
        1 => int_expr().prop_map(|e| format!("while (synced(s, j) < ({e}) && j < 4) j++;")),
        1 => float_expr().prop_map(|f| format!("Box_c<float> bx; bx.v = {f}; v += bx.get();")),
        1 => (int_expr(), float_expr()).prop_map(|(e, f)| format!(
            "j += scaled_c<int, TILE_C>({e}) + scaled_c<unsigned>(2u); v += scaled_c({f}) + larger_c(f, {f});"
        )),
        1 => int_expr().prop_map(|e| format!("j += ident({e}) + const_cast<const int*>(a)[0];")),
        1 => int_expr().prop_map(|e| format!("double2 d2 = make_double2({e}, 1.0); v += (float)d2.x;")),
        2 => int_expr().prop_map(|e| format!(
            "Pair pr = reinterpret_cast<const Pair*>(f)[({e}) & 15]; v += pr.sum() + pr.hi;"
        )),
        2 => (int_expr(), float_expr()).prop_map(|(e, x)| format!(
            "reinterpret_cast<Pair*>(f)[({e}) & 15].lo = {x};"
        )),
        1 => float_expr().prop_map(|x| format!(
            "Pair q2(1.0f, {x}); q2.bump(2.0f); reinterpret_cast<Pair*>(f)[i & 15] = q2 + Pair{{v, 0.5f}};"
        )),
        1 => int_expr().prop_map(|e| format!(
            "Pair* pp = reinterpret_cast<Pair*>(f) + (({e}) & 7); pp->hi += 1.0f; pp->bump(v); j += sizeof(Entry) + alignof(Entry);"
        )),
        1 => int_expr().prop_map(|e| format!(
            "Entry en = {{({e}), 2, 0.5}}; reinterpret_cast<Entry*>(f)[i & 3] = en; j += reinterpret_cast<Entry*>(f)[i & 3].tag;"
        )),
        3 => super::warp::fuzz_stmt(),
        1 => (hostile_size(), 0usize..6).prop_map(|(n, which)| match which {
            0 => format!("{}j += 1;{}", "switch (i) { default: ".repeat(n), " }".repeat(n)),
            1 => format!("j += {}i{};", "static_cast<int>(".repeat(n), ")".repeat(n)),
            2 => format!("j += {}i{};", "int(".repeat(n), ")".repeat(n)),
            3 => format!("j += {}geo::K;", "::".repeat(n % 3)),
            4 => format!("j += {}0{};", "synced(s, ".repeat(n), ")".repeat(n)),
            _ => format!("j += i{};", " && synced(s, i) > 0".repeat(n)),
        }),
    ]
    .boxed()
}

/// A kernel in C++, with C and C++ statements mixed, and a random launch.
pub fn cpp_case() -> BoxedStrategy<Case> {
    let prelude = prop_oneof![8 => Just(String::new()), 1 => hostile_prelude()];
    let bounds = select(vec![
        "",
        "",
        "__launch_bounds__(256) ",
        "__launch_bounds__(128, 4) ",
        "__launch_bounds__(WIDTH_C * 32, 2) ",
        "__launch_bounds__(1024, 1) ",
    ]);
    let body = prop::collection::vec(prop_oneof![2 => cpp_stmt(), 1 => stmt()], 1..7);
    (
        prelude,
        bounds,
        body,
        prop_oneof![3 => clean_launch(), 1 => launch_parts()],
        args_and_buffers(
            vec![("n".to_string(), false), ("x".to_string(), true)],
            vec!["a".to_string(), "f".to_string()],
        ),
        any::<bool>(),
    )
        .prop_map(|(extra, bounds, body, launch, (args, buffers), template)| {
            // A kernel template is launched in a spelling of its own, which the simulator makes
            // canonical (`kt<float, 4>`).
            let (head, name, params) = if template {
                (
                    "template <typename T, int STRIDE_T = 4>\n__global__ void ",
                    "kt<float,4>",
                    "int* a, T* f, int n, T x",
                )
            } else {
                ("__global__ void ", "k", "int* a, float* f, int n, float x")
            };
            let kernel = name.split('<').next().unwrap_or(name);
            let source = format!(
                "{PRELUDE}{extra}{head}{bounds}{kernel}({params}) {{\n\
                 \x20 __shared__ int s[64];\n\
                 \x20 int i = threadIdx.x + blockIdx.x * blockDim.x;\n\
                 \x20 int j = 0, h = 0;\n  unsigned u = 7u;\n  long long w = 1LL;\n  float v = 0.0f;\n\
                 \x20 {}\n\
                 \x20 a[i & 63] = i + j + h + (int)u + (int)w + (int)v;\n}}\n",
                body.join("\n  ")
            );
            assemble(source, name.to_string(), launch, args, buffers)
        })
        .boxed()
}
