//! A grammar of kernels in memplay's CUDA C subset, as proptest strategies, with hostile shapes
//! mixed in: deep nesting, long flat chains, exploding macros, extreme literals and offsets,
//! endless loops, barriers in divergent code, control characters, huge identifiers. And random
//! launches: extents from 0 to `u32::MAX`, missing and wrongly typed arguments, huge buffers, bad
//! define names.
//!
//! Expressions and statements are built as text from shrinkable parts, so a failing case shrinks
//! towards fewer statements, shallower trees and smaller hostile shapes.

use super::case::Case;
use memplay_sim::device::DeviceId;
use memplay_sim::kernel::Value;
use memplay_sim::simulate::DEFAULT_STEP_BUDGET;
use proptest::prelude::*;
use proptest::sample::select;

/// The step budget of most cases: small, so that endless loops end quickly.
pub const FUZZ_STEP_BUDGET: u64 = 200_000;

/// Any case of the fuzz target: one of the C subset, a kernel in the C++ courses write
/// (`cpp`), or one of warp primitives (`warp`).
pub fn any_case() -> BoxedStrategy<Case> {
    prop_oneof![
        11 => c_subset_case(),
        4 => super::cpp::cpp_case(),
        2 => super::warp::warp_case(),
    ]
    .boxed()
}

/// A case in the C subset: a generated kernel, a mutated lecture kernel, or a hostile one. The
/// snapshot's generated cases are drawn from these, so that a grammar of more C++ leaves them as
/// they are.
pub fn c_subset_case() -> BoxedStrategy<Case> {
    prop_oneof![
        5 => generated_case(),
        4 => super::mutate::mutated_lecture_case(),
        2 => hostile_case(),
    ]
    .boxed()
}

/// How big a hostile shape is: mostly small, sometimes in the thousands, now and then far beyond
/// every limit.
pub fn hostile_size() -> BoxedStrategy<usize> {
    prop_oneof![
        6 => 1usize..24,
        3 => 24usize..400,
        2 => 400usize..6_000,
        1 => 6_000usize..60_000,
    ]
    .boxed()
}

/// Well-formed literals at and beyond the edges of the types, and constant expressions that
/// overflow or divide by zero.
pub fn extreme_int_literal() -> BoxedStrategy<String> {
    select(vec![
        "-9223372036854775807LL-1",
        "9223372036854775807LL",
        "(-9223372036854775807LL-1)",
        "18446744073709551615ULL",
        "4611686018427387904LL",
        "2147483647",
        "2147483648",
        "-2147483648",
        "4294967295u",
        "0xffffffffffffffff",
        "0x7fffffffffffffffLL",
        "1LLU",
        "1uLL",
        "(1 << 63)",
        "(1LL << 63)",
        "(1 << 31)",
        "(1 << -1)",
        "(1 >> 64)",
        "(-1 / 0)",
        "(-9223372036854775807LL - 1) / -1",
        "(-9223372036854775807LL - 1) % -1",
        "(7 % 0)",
        "(-2147483647 - 1) / -1",
    ])
    .prop_map(str::to_string)
    .boxed()
}

pub fn extreme_float_literal() -> BoxedStrategy<String> {
    select(vec![
        "1e38f",
        "3.5e38f",
        "1e309",
        "1e-400f",
        "1e-45f",
        "-0.0f",
        "0.0f / 0.0f",
        "1.0f / 0.0f",
        ".5f",
    ])
    .prop_map(str::to_string)
    .boxed()
}

/// Numbers the lexer must refuse.
pub fn malformed_literal() -> BoxedStrategy<String> {
    select(vec![
        "99999999999999999999999999",
        "077777777777777777777777",
        "0x",
        "08",
        "0b101",
        "1.e",
        "1e",
        "1.5ff",
        "1e+f",
        "0x1p3f",
        "1uu",
        "1LLL",
        "0x1.8p1",
        "1..2",
        "1e99999999999",
    ])
    .prop_map(str::to_string)
    .boxed()
}

/// Hostile expressions: nesting, chains and extreme values.
pub fn hostile_expr() -> BoxedStrategy<String> {
    let ident_len = prop_oneof![3 => 1usize..300, 1 => 300usize..120_000];
    prop_oneof![
        hostile_size().prop_map(|n| format!("{}1{}", "(".repeat(n), ")".repeat(n))),
        hostile_size().prop_map(|n| format!("{}i{}", "(i ? ".repeat(n), " : 2)".repeat(n))),
        hostile_size().prop_map(|n| format!("{}1{}", "1 ? ".repeat(n), " : 0".repeat(n))),
        hostile_size().prop_map(|n| format!("{}i", "i && ".repeat(n))),
        hostile_size().prop_map(|n| format!("{}i{}", "(i || ".repeat(n), ")".repeat(n))),
        hostile_size().prop_map(|n| format!("({}i)", "i, ".repeat(n))),
        hostile_size().prop_map(|n| format!("1{}", "+1".repeat(n))),
        hostile_size().prop_map(|n| format!("i{}", " * i - i / 3 % 7 << 1".repeat(n))),
        hostile_size().prop_map(|n| format!("{}1", "-".repeat(n))),
        hostile_size().prop_map(|n| format!("{}1", "- ".repeat(n))),
        hostile_size().prop_map(|n| format!("{}i", "!~".repeat(n))),
        hostile_size().prop_map(|n| format!("{}i", "(int)".repeat(n))),
        hostile_size().prop_map(|n| format!("{}a{}", "*&".repeat(n), "[0]")),
        hostile_size().prop_map(|n| format!("{}1{}", "min(".repeat(n), ", 2)".repeat(n))),
        hostile_size().prop_map(|n| format!("{}a[0]", "++".repeat(n))),
        ident_len.prop_map(|n| "x".repeat(n)),
        extreme_int_literal(),
        extreme_float_literal(),
        malformed_literal(),
        extreme_int_literal().prop_map(|v| format!("a[{v}]")),
        extreme_int_literal().prop_map(|v| format!("*(a + {v})")),
        extreme_int_literal().prop_map(|v| format!("*(a - {v})")),
        extreme_int_literal().prop_map(|v| format!("(a + {v})[{v}]")),
        extreme_int_literal().prop_map(|v| format!("s[{v}]")),
        extreme_int_literal().prop_map(|v| format!("dyn[{v}]")),
        extreme_int_literal().prop_map(|v| format!("s2[{v}][{v}]")),
        extreme_int_literal().prop_map(|v| format!("atomicAdd(a + {v}, 1)")),
        extreme_int_literal().prop_map(|v| format!("helper({v}, {v})")),
        Just("*(int*)0".to_string()),
        Just("*(a + (1LL << 47))".to_string()),
        Just("sizeof(a) * 9223372036854775807LL".to_string()),
        Just("(long long)a * 3".to_string()),
        Just("helper(helper(helper(i, v), v), v)".to_string()),
    ]
    .boxed()
}

/// Hostile statements: nesting, endless loops, barriers where not every thread arrives, fences.
pub fn hostile_stmt() -> BoxedStrategy<String> {
    prop_oneof![
        hostile_size().prop_map(|n| format!("{}a[0] = 1;{}", "{".repeat(n), "}".repeat(n))),
        hostile_size().prop_map(|n| format!("{}a[0] = 1;", "if (i >= 0) ".repeat(n))),
        hostile_size().prop_map(|n| format!("{}a[0] += 1;", "for (;;) ".repeat(n.min(400)))),
        (1usize..40).prop_map(|n| {
            let mut s = String::new();
            for d in 0..n {
                s.push_str(&format!("for (int q{d} = 0; q{d} < 3; q{d}++) "));
            }
            s + "a[0] += 1;"
        }),
        hostile_size().prop_map(|n| "a[0] = 1; ".repeat(n)),
        hostile_size().prop_map(|n| format!("a[0] = {};", "i++ + ".repeat(n) + "0")),
        hostile_expr().prop_map(|e| format!("a[0] = {e};")),
        hostile_expr().prop_map(|e| format!("if ({e}) a[1] = 2;")),
        hostile_expr().prop_map(|e| format!("f[0] = {e};")),
        hostile_expr().prop_map(|e| format!("{e};")),
        hostile_expr().prop_map(|e| format!("int t = {e}; a[2] = t;")),
        hostile_expr().prop_map(|e| format!("for (int q = 0; q < {e}; q++) a[3] += q;")),
        select(vec![
            "for (;;) { a[0] = 1; }",
            "for (;;) { a[0] = 1; break; }",
            "for (;;);",
            "while (1);",
            "while (1) { a[0] += 1; }",
            "while (1) { if (i > 3) return; i++; }",
            "while (1) { if (threadIdx.x == 5) break; }",
            "for (int q = 0;; q++) { return; }",
            "for (int q = 0;; q++) a[0] += 1;",
            "for (int q = 0;; q++) { if (q > 1000000) break; }",
            "do { a[0] += 1; } while (1);",
            "do { continue; } while (1);",
            "for (unsigned q = 10; q >= 0; q--) a[0] = q;",
            "for (int q = 0; q != 7; q += 2) a[0] = q;",
            "if (threadIdx.x < 16) __syncthreads();",
            "if (threadIdx.x & 1) { __syncthreads(); } else { __syncthreads(); }",
            "for (int q = 0; q < threadIdx.x; q++) __syncthreads();",
            "while (threadIdx.x < 40) { __syncthreads(); break; }",
            "if (threadIdx.x == 0) return; __syncthreads();",
            "if (threadIdx.x < 3) __syncwarp();",
            "__syncwarp(0x5555);",
            "__syncwarp(0);",
            "__threadfence();",
            "__threadfence_block();",
            "__threadfence(); __threadfence_block(); __threadfence_system();",
            "__syncthreads(1);",
            "break;",
            "continue;",
            "return 5;",
            "goto end;",
            "switch (i) { case 1: a[0] = 1; break; default: break; }",
            "asm(\"trap;\");",
            "a[threadIdx.x * 1000000] = 1;",
            "atomicAdd(a, 1); atomicCAS(a, 0, 1); atomicExch(a, 2); atomicMin(a, -1);",
            "atomicAdd(f, 1.0f); atomicAdd(&s[0], 1); atomicAdd(&dyn[0], 1.0f);",
            "atomicAdd((int*)0, 1);",
            "int* p = a; p += 9223372036854775807LL; *p = 1;",
            "int* p = a - 1; *p = 1;",
            "int* p = 0; *p = 1;",
            "float4 q = make_float4(1.0f, 2.0f, 3.0f, 4.0f); ((float4*)f)[i] = q;",
            "int2 q = make_int2(1, 2); a[0] = q.x + q.y + q.z;",
            "int big[1000000000]; big[0] = 1;",
            "int big[2000]; big[threadIdx.x] = 1; a[0] = big[1999];",
            "__shared__ int huge[1 << 30]; huge[0] = 1;",
            "__shared__ int neg[-1]; neg[0] = 1;",
            "extern __shared__ int e2[]; e2[1 << 20] = 1;",
            "a[0] = helper(100000, 1.0f);",
            "a[0] = deep(1000000);",
        ])
        .prop_map(str::to_string),
    ]
    .boxed()
}

/// Text at the top of a file: macros, conditionals, encoding oddities.
pub fn hostile_prelude() -> BoxedStrategy<String> {
    prop_oneof![
        (1usize..42).prop_map(|n| {
            let mut s = "#define X0 1\n".to_string();
            for k in 1..=n {
                s.push_str(&format!("#define X{k} X{} + X{}\n", k - 1, k - 1));
            }
            s + &format!("#define HOSTILE_VALUE X{n}\n")
        }),
        (1usize..32).prop_map(|n| format!(
            "#define F(x) x x\n#define HOSTILE_VALUE {}1{}\n",
            "F(".repeat(n),
            ")".repeat(n)
        )),
        (1usize..32).prop_map(|n| format!(
            "#define G(x) (x + x)\n#define HOSTILE_VALUE {}1{}\n",
            "G(".repeat(n),
            ")".repeat(n)
        )),
        hostile_size().prop_map(|n| format!(
            "#if {}1{}\n#define HOSTILE_VALUE 1\n#else\n#define HOSTILE_VALUE 2\n#endif\n",
            "(".repeat(n),
            ")".repeat(n)
        )),
        hostile_size().prop_map(|n| format!(
            "#if {}1\n#endif\n#define HOSTILE_VALUE 3\n",
            "!".repeat(n)
        )),
        hostile_size().prop_map(|n| format!(
            "#if 1{}\n#define HOSTILE_VALUE 4\n#endif\n",
            " ? 1 : 0".repeat(n)
        )),
        hostile_size().prop_map(|n| "#if 1\n".repeat(n) + "#define HOSTILE_VALUE 5\n"),
        hostile_size().prop_map(|n| "#define HOSTILE_VALUE 6\n".repeat(n)),
        select(vec![
            "#define HOSTILE_VALUE HOSTILE_VALUE\n",
            "#define A B\n#define B A\n#define HOSTILE_VALUE A\n",
            "#define H(x) H(x)\n#define HOSTILE_VALUE H(1)\n",
            "#define H(x, y) x ## y\n#define HOSTILE_VALUE H(1, 2)\n",
            "#define S(x) #x\n#define HOSTILE_VALUE S(1)\n",
            "#define H(\n#define HOSTILE_VALUE 1\n",
            "#define H() 1\n#define HOSTILE_VALUE H(\n",
            "#define\n#define HOSTILE_VALUE 1\n",
            "#define 1X 2\n#define HOSTILE_VALUE 1\n",
            "#if 1/0\n#endif\n#define HOSTILE_VALUE 1\n",
            "#if 9223372036854775807 + 1\n#endif\n#define HOSTILE_VALUE 1\n",
            "#if (-9223372036854775807 - 1) / -1\n#endif\n#define HOSTILE_VALUE 1\n",
            "#if (-9223372036854775807 - 1) % -1\n#endif\n#define HOSTILE_VALUE 1\n",
            "#if 1 << 64\n#endif\n#define HOSTILE_VALUE 1\n",
            "#if (((\n#endif\n#define HOSTILE_VALUE 1\n",
            "#if defined(\n#endif\n#define HOSTILE_VALUE 1\n",
            "#if\n#endif\n#define HOSTILE_VALUE 1\n",
            "#endif\n#define HOSTILE_VALUE 1\n",
            "#else\n#define HOSTILE_VALUE 1\n",
            "#ifdef\n#endif\n#define HOSTILE_VALUE 1\n",
            "#if 1\n#define HOSTILE_VALUE 1\n",
            "#undef HOSTILE_VALUE\n#define HOSTILE_VALUE 1\n",
            "#include <cuda.h>\n#define HOSTILE_VALUE 1\n",
            "#pragma unroll\n#define HOSTILE_VALUE 1\n",
            "#error stop\n#define HOSTILE_VALUE 1\n",
            "#\n#define HOSTILE_VALUE 1\n",
            "#define HOSTILE_VALUE 1 \\\n + 2\n",
            "\u{feff}#define HOSTILE_VALUE 1\n",
            "\u{feff}\u{feff}#define HOSTILE_VALUE 1\n",
            "#define HOSTILE_VALUE 1 /* unterminated\n",
            "#define HOSTILE_VALUE \"abc\n",
            "#define HOSTILE_VALUE '\n",
            "#define HOSTILE_VALUE 1\n\u{0}\u{7}\u{1b}[2J\u{b}\u{c}\r",
            "#define HOSTILE_VALUE 1\r\n\r\n",
            "#define HOSTILE_VALUE 1\n\u{85}\u{2028}\u{202e}\u{200b}",
            "#define HOSTILE_VALUE x\u{0}y\n",
            "#define HOSTILE_VALUE \u{1b}[31m\n",
            "#define HOSTILE_VALUE \u{e9}\u{202e}\n",
            "#define HOSTILE_VALUE 1\n__device__ int deep(int n) { return n <= 0 ? 0 : 1 + deep(n - 1); }\n",
            "#define HOSTILE_VALUE 1\n__device__ void g();\n",
            "#define HOSTILE_VALUE 1\n__constant__ float cst[4];\n",
            "#define HOSTILE_VALUE 1\n__device__ int gdev[1 << 30];\n",
            "#define HOSTILE_VALUE 1\nstruct S { int x; };\n",
            "#define HOSTILE_VALUE 1\ntemplate <int N> __global__ void t() {}\n",
        ])
        .prop_map(str::to_string),
    ]
    .boxed()
}

fn int_leaf() -> BoxedStrategy<String> {
    prop_oneof![
        6 => (0i64..100).prop_map(|v| v.to_string()),
        6 => select(vec![
            "i", "j", "n", "h", "(int)u", "(int)w", "threadIdx.x", "threadIdx.y", "threadIdx.z",
            "blockIdx.x", "blockIdx.y", "blockDim.x", "blockDim.y", "gridDim.x", "gridDim.z",
            "warpSize", "a[i & 63]", "a[0]", "s[j & 63]", "(int)s2[i & 7][j & 7]", "PAD", "N",
            "IDX(i, j)", "u", "w", "HOSTILE_VALUE",
        ])
        .prop_map(str::to_string),
        1 => select(vec!["0x1F", "017", "3u", "5LL", "7ull", "'a'", "true", "false", "1024",
            "65535", "-1"]).prop_map(str::to_string),
        1 => prop_oneof![60 => Just("1".to_string()), 8 => extreme_int_literal(),
            1 => malformed_literal()],
    ]
    .boxed()
}

fn float_leaf() -> BoxedStrategy<String> {
    prop_oneof![
        4 => select(vec![
            "v", "x", "f[i & 63]", "f[0]", "dyn[i & 15]", "1.5f", "0.0f", "2.0", "0.25f",
            "1e-3f", "(float)i", "(float)j", "3.0f",
        ])
        .prop_map(str::to_string),
        1 => prop_oneof![60 => Just("0.5f".to_string()), 8 => extreme_float_literal(),
            1 => malformed_literal()],
    ]
    .boxed()
}

/// Int-valued expressions over the kernel's variables, with every C operator.
pub fn int_expr() -> BoxedStrategy<String> {
    int_leaf()
        .prop_recursive(5, 48, 3, |inner| {
            let op = select(vec![
                "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "&&", "||", "<", "<=", ">",
                ">=", "==", "!=",
            ]);
            let float_op = select(vec!["+", "-", "*", "/"]);
            prop_oneof![
                6 => (inner.clone(), op, inner.clone())
                    .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
                2 => (select(vec!["-", "~", "!", "+"]), inner.clone())
                    .prop_map(|(op, a)| format!("({op}{a})")),
                2 => (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(c, a, b)| format!("({c} ? {a} : {b})")),
                1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}, {b})")),
                1 => (select(vec!["int", "unsigned", "long long", "unsigned int", "short",
                    "char", "bool", "size_t", "unsigned long long", "long"]), inner.clone())
                    .prop_map(|(t, a)| format!("(({t}){a})")),
                2 => inner.clone().prop_map(|a| format!("a[({a}) & 63]")),
                1 => inner.clone().prop_map(|a| format!("s[({a}) & 63]")),
                1 => (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| format!("(int)s2[({a}) & 7][({b}) & 7]")),
                1 => (select(vec!["min", "max", "umin", "umax"]), inner.clone(), inner.clone())
                    .prop_map(|(f, a, b)| format!("{f}({a}, {b})")),
                1 => (inner.clone(), float_leaf())
                    .prop_map(|(a, b)| format!("helper({a}, {b})")),
                1 => (select(vec!["atomicAdd", "atomicSub", "atomicMax", "atomicMin",
                    "atomicExch", "atomicAnd", "atomicOr", "atomicXor"]), inner.clone(),
                    inner.clone())
                    .prop_map(|(f, a, b)| format!("{f}(&a[({a}) & 63], {b})")),
                1 => (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| format!("atomicCAS(&s[({a}) & 63], {b}, 1)")),
                1 => (float_leaf(), float_op, float_leaf())
                    .prop_map(|(a, op, b)| format!("(int)({a} {op} {b})")),
                1 => select(vec!["j++", "++j", "j--", "--h", "(j += 3)", "(h = 2)",
                    "(j <<= 1)", "(h %= 5)", "(j ^= 9)", "(h |= 4)", "(j &= 6)", "(h >>= 1)",
                    "(j *= 2)", "(h /= 3)", "(j -= 1)"])
                    .prop_map(str::to_string),
                1 => inner.clone().prop_map(|a| format!("*(a + (({a}) & 63))")),
                1 => inner.prop_map(|a| format!("(&a[0])[({a}) & 63]")),
            ]
        })
        .boxed()
}

/// Float-valued expressions: arithmetic, math functions and conversions from int expressions.
pub fn float_expr() -> BoxedStrategy<String> {
    let math1 = select(vec![
        "sqrtf", "rsqrtf", "expf", "logf", "sinf", "cosf", "tanf", "fabsf", "floorf", "ceilf",
        "roundf", "truncf", "__expf", "__sinf", "sqrt", "exp", "fabs",
    ]);
    let math2 = select(vec![
        "fminf",
        "fmaxf",
        "powf",
        "__fdividef",
        "fmin",
        "fmax",
        "pow",
    ]);
    prop_oneof![
        3 => float_leaf(),
        2 => (float_leaf(), select(vec!["+", "-", "*", "/"]), float_leaf())
            .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
        2 => int_expr().prop_map(|a| format!("(float)({a})")),
        1 => (math1, float_leaf()).prop_map(|(f, a)| format!("{f}({a})")),
        1 => (math2, float_leaf(), float_leaf()).prop_map(|(f, a, b)| format!("{f}({a}, {b})")),
        1 => (float_leaf(), float_leaf(), float_leaf())
            .prop_map(|(a, b, c)| format!("fmaf({a}, {b}, {c})")),
        1 => (int_expr(), float_leaf(), float_leaf())
            .prop_map(|(c, a, b)| format!("({c} ? {a} : {b})")),
        1 => int_expr().prop_map(|a| format!("atomicAdd(&f[({a}) & 63], 1.0f)")),
    ]
    .boxed()
}

fn simple_stmt() -> BoxedStrategy<String> {
    prop_oneof![
        3 => (select(vec!["i", "j", "h", "u", "w"]), select(vec!["=", "+=", "-=", "^=", "|="]),
            int_expr())
            .prop_map(|(v, op, e)| format!("{v} {op} {e};")),
        2 => (select(vec!["=", "+=", "*="]), float_expr())
            .prop_map(|(op, e)| format!("v {op} {e};")),
        3 => (int_expr(), int_expr()).prop_map(|(i, e)| format!("a[({i}) & 63] = {e};")),
        1 => (int_expr(), int_expr()).prop_map(|(i, e)| format!("a[{i}] = {e};")),
        2 => (int_expr(), float_expr()).prop_map(|(i, e)| format!("f[({i}) & 63] = {e};")),
        2 => (int_expr(), int_expr()).prop_map(|(i, e)| format!("s[({i}) & 63] = {e};")),
        1 => (int_expr(), int_expr(), int_expr())
            .prop_map(|(r, c, e)| format!("s2[({r}) & 7][({c}) & 7] = {e};")),
        1 => (int_expr(), float_expr()).prop_map(|(i, e)| format!("dyn[({i}) & 15] = {e};")),
        1 => (int_expr(), int_expr())
            .prop_map(|(i, e)| format!("atomicAdd(&a[({i}) & 63], {e});")),
        1 => (int_expr(), float_expr())
            .prop_map(|(i, e)| format!("atomicAdd(&f[({i}) & 63], {e});")),
        1 => int_expr().prop_map(|e| format!("int t = {e}; a[t & 63] = t;")),
        1 => int_expr().prop_map(|e| format!("int* p = a + (({e}) & 63); *p += 1;")),
        1 => int_expr().prop_map(|e| format!("if ({e}) return;")),
        1 => int_expr().prop_map(|e| format!("{e};")),
        1 => select(vec![
            "__syncthreads();", "__syncwarp();", "__threadfence();", "__threadfence_block();",
            "break;", "continue;", "return;", ";",
            "float4 q = make_float4(v, x, 1.0f, 2.0f); v += q.x + q.w;",
            "int2 q = make_int2(i, j); j = q.x * q.y;",
            "uint2 q = make_uint2(u, 3u); u = q.y;",
            "double d = (double)v * 2.0; v = (float)d;",
            "long long ll = -9223372036854775807LL - 1; w = ll / 3;",
            "unsigned long long ull = 18446744073709551615ULL; u = (unsigned)(ull >> 33);",
            "const int ci = 4; j = ci * 2;",
            "char c = 'z'; short sh = (short)c; j = sh;",
            "bool b = i > j; h = b ? 1 : 0;",
            "size_t sz = sizeof(float) * 4; j = (int)sz;",
        ])
        .prop_map(str::to_string),
        1 => prop_oneof![3 => Just(";".to_string()), 1 => hostile_stmt()],
    ]
    .boxed()
}

/// Statements, nested through if/else, the three loops and blocks.
pub fn stmt() -> BoxedStrategy<String> {
    simple_stmt()
        .prop_recursive(4, 32, 4, |inner| {
            let body = prop::collection::vec(inner.clone(), 0..4).prop_map(|v| v.join(" "));
            prop_oneof![
                3 => (int_expr(), body.clone(), body.clone())
                    .prop_map(|(c, a, b)| format!("if ({c}) {{ {a} }} else {{ {b} }}")),
                2 => (int_expr(), body.clone()).prop_map(|(c, a)| format!("if ({c}) {{ {a} }}")),
                3 => (0u32..9, body.clone()).prop_map(|(n, a)| {
                    format!("for (int k = 0; k < {n}; ++k) {{ {a} }}")
                }),
                1 => (int_expr(), body.clone()).prop_map(|(n, a)| {
                    format!("for (int k = 0; k < ({n}); k += 1) {{ {a} }}")
                }),
                1 => (int_expr(), body.clone())
                    .prop_map(|(c, a)| format!("while ({c}) {{ {a} }}")),
                1 => (0u32..5, body.clone()).prop_map(|(n, a)| {
                    format!("{{ int m = 0; while (m < {n}) {{ m++; {a} }} }}")
                }),
                1 => (body.clone(), int_expr())
                    .prop_map(|(a, c)| format!("do {{ {a} }} while ({c});")),
                1 => body.clone().prop_map(|a| format!("for (;;) {{ {a} break; }}")),
                1 => body.clone().prop_map(|a| format!("while (1) {{ {a} return; }}")),
                1 => body.prop_map(|a| format!("{{ {a} }}")),
            ]
        })
        .boxed()
}

fn helper_def() -> BoxedStrategy<String> {
    prop_oneof![
        16 => Just("__device__ int helper(int p, float q) { if (p > 3) return p * 2; return p - (int)q; }\n".to_string()),
        4 => Just("__device__ __forceinline__ int helper(int p, float q) { int r = 0; for (int k = 0; k < (p & 7); ++k) r += k; return r; }\n".to_string()),
        1 => Just("__device__ int helper(int p, float q) { return p <= 0 ? (int)q : helper(p - 1, q) + 1; }\n".to_string()),
        1 => Just("__device__ int helper(int p, float q) { __threadfence_block(); return p; }\n".to_string()),
        1 => Just("__device__ int helper(int p, float q) { while (1) { } }\n".to_string()),
        1 => Just("__device__ int helper(int p, float q) { __syncthreads(); return p; }\n".to_string()),
        1 => Just("__device__ int helper(int p) { return p; }\n".to_string()),
        1 => Just("__device__ void helper(int p, float q) { }\n".to_string()),
        1 => Just(String::new()),
    ]
    .boxed()
}

/// The parts of a generated kernel file.
#[derive(Clone, Debug)]
struct Skeleton {
    prelude: String,
    helper: String,
    helper_after: bool,
    kernel_name: String,
    params: &'static str,
    shared: bool,
    body: Vec<String>,
}

fn render(s: &Skeleton) -> String {
    let mut out = String::new();
    out.push_str(&s.prelude);
    out.push_str(
        "#ifndef PAD\n#define PAD 1\n#endif\n#ifndef N\n#define N 64\n#endif\n\
         #ifndef HOSTILE_VALUE\n#define HOSTILE_VALUE 0\n#endif\n\
         #define IDX(r, c) ((r) * 8 + (c))\n",
    );
    if !s.helper_after {
        out.push_str(&s.helper);
    }
    out.push_str(&format!(
        "__global__ void {}({}) {{\n",
        s.kernel_name, s.params
    ));
    if s.shared {
        out.push_str(
            "  __shared__ int s[64];\n  __shared__ float s2[8][8 + PAD];\n  extern __shared__ float dyn[];\n",
        );
    }
    out.push_str(
        "  int i = threadIdx.x + blockIdx.x * blockDim.x;\n  int j = 0, h = 0;\n  unsigned u = 7u;\n  long long w = 1LL;\n  float v = 0.0f;\n",
    );
    for stmt in &s.body {
        out.push_str("  ");
        out.push_str(stmt);
        out.push('\n');
    }
    out.push_str("  a[i & 63] = i + j + h + (int)u + (int)w + (int)v;\n}\n");
    if s.helper_after {
        out.push_str(&s.helper);
    }
    out
}

fn skeleton() -> BoxedStrategy<Skeleton> {
    let name = prop_oneof![
        8 => Just("k".to_string()),
        1 => (1usize..100_000).prop_map(|n| format!("k{}", "x".repeat(n))),
        1 => select(vec!["main", "__syncthreads", "int", "a", "helper"]).prop_map(str::to_string),
    ];
    let params = prop_oneof![
        12 => Just("int* a, float* f, int n, float x"),
        1 => select(vec![
        "int* __restrict__ a, const float* f, const int n, float x",
        "int* a, float* f, unsigned n, double x",
        "int* a, float* f, long long n, float x",
        "int* a, float* f, int n",
        "int* a, float* f, int n, float x, int* a",
        "int a, float* f, int n, float x",
        "",
    ]),
    ];
    (
        prop_oneof![6 => Just(String::new()), 1 => hostile_prelude()],
        helper_def(),
        any::<bool>(),
        name,
        params,
        prop_oneof![15 => Just(true), 1 => Just(false)],
        prop::collection::vec(stmt(), 0..7),
    )
        .prop_map(
            |(prelude, helper, helper_after, kernel_name, params, shared, body)| Skeleton {
                prelude,
                helper,
                helper_after,
                kernel_name,
                params,
                shared,
                body,
            },
        )
        .boxed()
}

/// A launch for a kernel named `kernel` with scalar parameters `scalars` and pointer parameters
/// `pointers`: usually well-formed, sometimes with missing, extra, wrongly typed or extreme
/// arguments and buffers.
#[derive(Clone, Debug)]
pub struct LaunchParts {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dyn_smem: u32,
    pub regs: u32,
    pub device: DeviceId,
    pub all_blocks: bool,
    pub step_budget: u64,
    pub defines: Vec<(String, String)>,
}

pub fn extent() -> BoxedStrategy<u32> {
    prop_oneof![
        8 => Just(1u32),
        4 => 1u32..5,
        1 => Just(0u32),
        1 => select(vec![31u32, 33, 65_535, 65_536, 1 << 20, u32::MAX]),
    ]
    .boxed()
}

pub fn block_x() -> BoxedStrategy<u32> {
    prop_oneof![
        6 => select(vec![32u32, 64, 1, 8, 16, 128, 256]),
        2 => 1u32..100,
        1 => select(vec![1024u32, 1025, 2048, 0, 65_536, u32::MAX]),
    ]
    .boxed()
}

pub fn step_budget() -> BoxedStrategy<u64> {
    prop_oneof![
        30 => Just(FUZZ_STEP_BUDGET),
        2 => select(vec![0u64, 1, 100]),
        1 => Just(DEFAULT_STEP_BUDGET),
    ]
    .boxed()
}

pub fn device() -> BoxedStrategy<DeviceId> {
    select(DeviceId::ALL.to_vec()).boxed()
}

pub fn define() -> BoxedStrategy<(String, String)> {
    let name = prop_oneof![
        6 => select(vec!["PAD", "N", "TILE_WIDTH", "HOSTILE_VALUE", "X"]).prop_map(str::to_string),
        1 => select(vec!["1X", "", "A B", "a-b", "PAD(x)", "defined", "__LINE__", "int",
            "\u{feff}P", "P\n#define Q", "threadIdx"]).prop_map(str::to_string),
        1 => (1usize..50_000).prop_map(|n| "D".repeat(n)),
    ];
    let value = prop_oneof![
        4 => (0i64..40).prop_map(|v| v.to_string()),
        1 => select(vec!["", "(", ")", "1 +", "PAD", "N + 1", "-1", "0", "1e9", "\"s\"",
            "9223372036854775807", "-9223372036854775808", "1\n2", "a[0]", "\u{0}", "/*"])
            .prop_map(str::to_string),
        1 => extreme_int_literal(),
        1 => hostile_size().prop_map(|n| format!("{}1{}", "(".repeat(n), ")".repeat(n))),
        1 => hostile_size().prop_map(|n| format!("1{}", "+1".repeat(n))),
    ];
    (name, value).boxed()
}

pub fn launch_parts() -> BoxedStrategy<LaunchParts> {
    let dims = |x: BoxedStrategy<u32>| {
        prop_oneof![
            6 => x.clone().prop_map(|x| [x, 1, 1]),
            1 => (x, extent(), extent()).prop_map(|(x, y, z)| [x, y, z]),
        ]
    };
    (
        dims(extent()),
        dims(block_x()),
        prop_oneof![
            6 => Just(0u32),
            2 => select(vec![4u32, 64, 256, 4096]),
            1 => select(vec![48 * 1024u32, 228 * 1024, 1 << 30, u32::MAX]),
        ],
        prop_oneof![6 => Just(0u32), 1 => select(vec![16u32, 32, 64, 255, 256, u32::MAX])],
        device(),
        prop_oneof![12 => Just(false), 1 => Just(true)],
        step_budget(),
        prop_oneof![
            4 => Just(Vec::new()),
            1 => prop::collection::vec(define(), 1..4),
        ],
    )
        .prop_map(
            |(grid, block, dyn_smem, regs, device, all_blocks, step_budget, defines)| LaunchParts {
                grid,
                block,
                dyn_smem,
                regs,
                device,
                all_blocks,
                step_budget,
                defines,
            },
        )
        .boxed()
}

/// A launch without hostile parts, so that most generated kernels get to run.
pub fn clean_launch() -> BoxedStrategy<LaunchParts> {
    (
        prop_oneof![4 => (1u32..4).prop_map(|x| [x, 1, 1]), 1 => (1u32..3, 1u32..3).prop_map(|(x, y)| [x, y, 1])],
        prop_oneof![
            4 => select(vec![32u32, 64, 128, 256]).prop_map(|x| [x, 1, 1]),
            1 => (1u32..100).prop_map(|x| [x, 1, 1]),
            1 => select(vec![[8u32, 8, 1], [16, 16, 1], [32, 4, 2]]),
        ],
        select(vec![0u32, 64, 256]),
        device(),
        step_budget(),
        prop_oneof![
            6 => Just(Vec::new()),
            1 => (select(vec!["PAD", "N"]), 0u32..70)
                .prop_map(|(n, v)| vec![(n.to_string(), v.to_string())]),
        ],
    )
        .prop_map(|(grid, block, dyn_smem, device, step_budget, defines)| LaunchParts {
            grid,
            block,
            dyn_smem,
            regs: 0,
            device,
            all_blocks: false,
            step_budget,
            defines,
        })
        .boxed()
}

pub fn int_value() -> BoxedStrategy<Value> {
    prop_oneof![
        24 => (0i64..200).prop_map(Value::Int),
        1 => select(vec![-1i64, i64::MIN, i64::MAX, 1 << 31, 1 << 40, u32::MAX as i64])
            .prop_map(Value::Int),
        1 => select(vec![1.5f64, f64::NAN, f64::INFINITY, -1e300]).prop_map(Value::Float),
        1 => any::<bool>().prop_map(Value::Bool),
    ]
    .boxed()
}

pub fn float_value() -> BoxedStrategy<Value> {
    prop_oneof![
        24 => (-100.0f64..100.0).prop_map(Value::Float),
        1 => select(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, f64::MIN_POSITIVE])
            .prop_map(Value::Float),
        1 => select(vec![3i64, i64::MIN]).prop_map(Value::Int),
    ]
    .boxed()
}

pub fn buffer_bytes() -> BoxedStrategy<u64> {
    prop_oneof![
        24 => select(vec![256u64, 1024, 4096, 65_536]),
        2 => 0u64..300,
        1 => select(vec![1u64 << 30, 1 << 40, 1 << 47, 1 << 48, u64::MAX]),
    ]
    .boxed()
}

/// A launch's scalar arguments and buffer sizes, by name.
pub type ArgsAndBuffers = (Vec<(String, Value)>, Vec<(String, u64)>);

/// Arguments and buffers for the named parameters: each present with its kind most of the time,
/// sometimes missing, sometimes of the other kind, plus now and then a name the kernel lacks.
pub fn args_and_buffers(
    scalars: Vec<(String, bool)>,
    pointers: Vec<String>,
) -> BoxedStrategy<ArgsAndBuffers> {
    #[derive(Clone, Copy, Debug)]
    enum Give {
        Right,
        Missing,
        WrongKind,
    }
    let give = || {
        prop_oneof![
            30 => Just(Give::Right),
            1 => Just(Give::Missing),
            1 => Just(Give::WrongKind),
        ]
    };
    let scalar_parts = prop::collection::vec(
        (give(), int_value(), float_value(), buffer_bytes()),
        scalars.len(),
    );
    let pointer_parts =
        prop::collection::vec((give(), buffer_bytes(), int_value()), pointers.len());
    let extra = prop_oneof![
        16 => Just(None),
        1 => (select(vec!["zz", "", "1X", "n"]), int_value(), buffer_bytes())
            .prop_map(|(name, v, b)| Some((name.to_string(), v, b))),
    ];
    (scalar_parts, pointer_parts, extra)
        .prop_map(move |(sp, pp, extra)| {
            let mut args = Vec::new();
            let mut buffers = Vec::new();
            for ((name, is_float), (give, int, float, bytes)) in scalars.iter().zip(sp) {
                match give {
                    Give::Right => args.push((name.clone(), if *is_float { float } else { int })),
                    Give::Missing => {}
                    Give::WrongKind => buffers.push((name.clone(), bytes)),
                }
            }
            for (name, (give, bytes, value)) in pointers.iter().zip(pp) {
                match give {
                    Give::Right => buffers.push((name.clone(), bytes)),
                    Give::Missing => {}
                    Give::WrongKind => args.push((name.clone(), value)),
                }
            }
            if let Some((name, value, bytes)) = extra {
                args.push((name.clone(), value));
                buffers.push((name, bytes));
            }
            (args, buffers)
        })
        .boxed()
}

pub fn assemble(
    source: String,
    kernel: String,
    launch: LaunchParts,
    args: Vec<(String, Value)>,
    buffers: Vec<(String, u64)>,
) -> Case {
    Case {
        source,
        kernel,
        defines: launch.defines,
        grid: launch.grid,
        block: launch.block,
        dyn_smem: launch.dyn_smem,
        regs: launch.regs,
        args,
        buffers,
        device: launch.device,
        all_blocks: launch.all_blocks,
        step_budget: launch.step_budget,
    }
}

/// A generated kernel with a random launch.
pub fn generated_case() -> BoxedStrategy<Case> {
    let launched_name = prop_oneof![
        12 => Just(None),
        1 => select(vec!["", "K", "helper", "missing"]).prop_map(|n| Some(n.to_string())),
    ];
    (
        skeleton(),
        prop_oneof![3 => clean_launch(), 1 => launch_parts()],
        args_and_buffers(
            vec![("n".to_string(), false), ("x".to_string(), true)],
            vec!["a".to_string(), "f".to_string()],
        ),
        launched_name,
    )
        .prop_map(|(skeleton, launch, (args, buffers), launched_name)| {
            let kernel = launched_name.unwrap_or_else(|| skeleton.kernel_name.clone());
            assemble(render(&skeleton), kernel, launch, args, buffers)
        })
        .boxed()
}

/// A kernel made mostly of hostile shapes.
pub fn hostile_case() -> BoxedStrategy<Case> {
    (
        hostile_prelude(),
        prop::collection::vec(hostile_stmt(), 1..4),
        helper_def(),
        launch_parts(),
        args_and_buffers(
            vec![("n".to_string(), false), ("x".to_string(), true)],
            vec!["a".to_string(), "f".to_string()],
        ),
    )
        .prop_map(|(prelude, body, helper, launch, (args, buffers))| {
            let skeleton = Skeleton {
                prelude,
                helper,
                helper_after: true,
                kernel_name: "k".to_string(),
                params: "int* a, float* f, int n, float x",
                shared: true,
                body,
            };
            assemble(render(&skeleton), "k".to_string(), launch, args, buffers)
        })
        .boxed()
}
