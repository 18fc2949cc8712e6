//! C++'s casts, CUDA's vector types and the names the headers give, as the front end reads them:
//! each is accepted where nvcc accepts it, folds where it is a constant, and where memplay still
//! refuses something, the one line says what.

use memplay_lang::{compile, constant_expression, DiagnosticKind};

/// The value of the constant expression `expression` over an empty file.
fn value(expression: &str) -> i64 {
    constant_expression("", &[], expression).unwrap_or_else(|d| panic!("{expression}: {d}"))
}

/// The one-line error of compiling `source`, or of its first function that does not check (the
/// file compiles around it, so that only a launch of that kernel fails), as `LINE:COL: message`.
fn error(source: &str) -> String {
    match compile(source, &[]) {
        Ok(program) => program
            .functions
            .iter()
            .find_map(|f| f.error.as_ref().map(|d| d.to_string()))
            .unwrap_or_else(|| "compiles".to_string()),
        Err(d) => d.to_string(),
    }
}

#[test]
fn every_cast_compiles_in_a_kernel() {
    let source = "__global__ void k(float* f, const float* c, int* n, char* bytes) {\n\
                  int i = threadIdx.x;\n\
                  f[i] = static_cast<float>(i) + float(i) + (float)(i);\n\
                  n[i] = int(f[i]) + unsigned(2) + static_cast<unsigned int>(c[i]);\n\
                  float* w = const_cast<float*>(c);\n\
                  w[i] = reinterpret_cast<const float4*>(c)[i].y;\n\
                  uintptr_t address = reinterpret_cast<uintptr_t>(bytes);\n\
                  n[0] = address % 16 == 0 ? int(long(3)) : double(1.5);\n\
                  }";
    assert_eq!(error(source), "compiles");
}

#[test]
fn a_type_alias_casts_as_its_type_does() {
    let source = "typedef float real;\n\
                  using index_t = int;\n\
                  __global__ void k(float* f) {\n\
                  real zero = real(0);\n\
                  f[index_t(threadIdx.x)] = zero + real(index_t(2.5));\n\
                  }";
    assert_eq!(error(source), "compiles");
    assert_eq!(
        constant_expression("typedef int index_t;", &[], "index_t(7.5) * 2").ok(),
        Some(14)
    );
}

#[test]
fn casts_fold_where_their_value_is_a_constant() {
    assert_eq!(value("static_cast<int>(2.75)"), 2);
    assert_eq!(value("int(7.5) + unsigned(3)"), 10);
    assert_eq!(value("(int(4) + 1) * 2"), 10);
}

#[test]
fn every_vector_type_is_a_variable_an_array_and_a_pointer_with_its_make_function() {
    let types = [
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
        "longlong",
        "ulonglong",
        "float",
        "double",
    ];
    for base in types {
        for n in 1..=4 {
            let components = ["1", "2", "3", "4"][..n].join(", ");
            let members = ["v.x", "v.y", "v.z", "v.w"][..n].join(" + ");
            let source = format!(
                "__global__ void k({base}{n}* p) {{\n\
                 {base}{n} v = make_{base}{n}({components});\n\
                 {base}{n} a[2];\n\
                 a[1] = v;\n\
                 p[threadIdx.x] = a[1];\n\
                 p[0].x = {members};\n\
                 }}"
            );
            assert_eq!(error(&source), "compiles", "{base}{n}");
        }
    }
}

#[test]
fn sizeof_gives_nvccs_sizes_of_vector_types_and_typedefs() {
    // float3 12, uchar4 4, short2 4, longlong2 16, double4 32, dim3 12, char3 3.
    assert_eq!(value("sizeof(float3)"), 12);
    assert_eq!(value("sizeof(uchar4) + sizeof(short2)"), 8);
    assert_eq!(value("sizeof(longlong2) + sizeof(double4)"), 48);
    assert_eq!(value("sizeof(dim3) + sizeof(char3)"), 15);
    // 8 + 4 + 2 + 1 + 8.
    assert_eq!(
        value("sizeof(size_t) + sizeof(uint) + sizeof(ushort) + sizeof(int8_t) + sizeof(uint64_t)"),
        23
    );
}

#[test]
fn the_headers_integer_constants_fold() {
    assert_eq!(value("INT_MAX"), 2_147_483_647);
    assert_eq!(value("INT_MIN"), -2_147_483_648);
    assert_eq!(value("UINT_MAX"), 4_294_967_295);
    assert_eq!(value("LLONG_MAX"), i64::MAX);
    assert_eq!(value("CHAR_BIT * sizeof(int)"), 32);
}

#[test]
fn a_kernels_own_definition_of_a_header_name_wins() {
    let source = "#define INT_MAX 7\n__global__ void k(int* a) { a[0] = INT_MAX; }";
    assert_eq!(error(source), "compiles");
    assert_eq!(constant_expression(source, &[], "INT_MAX").ok(), Some(7));
}

#[test]
fn what_is_refused_is_named_in_one_line() {
    let cases = [
        (
            "__global__ void k(float4* p) { p[0] = float4(1, 2, 3, 4); }",
            "1:39: 'float4' has no constructor taking its components; build one with \
             make_float4(...)",
        ),
        (
            "__global__ void k(int* p) { p[0] = int(1, 2); }",
            "1:36: a conversion to 'int' takes one value, not 2",
        ),
        (
            "__global__ void k(int* p) { dim3 b(1, 2, 3, 4); p[0] = b.x; }",
            "1:34: 'dim3' takes at most 3 values, not 4",
        ),
        (
            "__global__ void k(float* p) { float3 v = make_float3(1, 2, 3); p[0] = v.w; }",
            "1:73: 'float3' has no member 'w'",
        ),
        (
            "__global__ void k(float* p) { float2 v = make_float2(1, 2, 3); p[0] = v.x; }",
            "1:42: 'make_float2' takes 2 arguments, not 3",
        ),
        (
            "__global__ void k(int* p) { int x(); p[0] = 1; }",
            "1:33: empty parentheses declare a function here; drop them to declare a variable",
        ),
        (
            "__global__ void k(int* p) { int x = int; }",
            "1:37: expected an expression, found 'int'",
        ),
    ];
    for (source, expected) in cases {
        assert_eq!(error(source), expected, "{source}");
    }
}

#[test]
fn dynamic_cast_is_named_as_not_simulated() {
    let failure = compile(
        "__global__ void k(float* p) { p = dynamic_cast<float*>(p); }",
        &[],
    )
    .err();
    let failure = failure.map(|d| (d.kind, d.to_string()));
    assert_eq!(
        failure,
        Some((
            DiagnosticKind::NotSimulated,
            "1:35: `dynamic_cast` works on classes with virtual functions, which are not \
             simulated"
                .to_string()
        ))
    );
}

/// `error` of `source` on a thread with a 1 MB stack, about what a browser gives WebAssembly.
fn error_on_a_small_stack(source: String) -> String {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || error(&source))
        .expect("a thread starts")
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

#[test]
fn twenty_thousand_nested_casts_stop_at_the_nesting_limit() {
    let n = 20_000;
    let functional = format!(
        "__global__ void k(int* a) {{ a[0] = {}1{}; }}",
        "int(".repeat(n),
        ")".repeat(n)
    );
    let named = format!(
        "__global__ void k(int* a) {{ a[0] = {}1{}; }}",
        "static_cast<int>(".repeat(n),
        ")".repeat(n)
    );
    // The body's block is one level and each cast's parentheses one more: the 95th cast's
    // operand is where the limit of 96 is reached, at column 36 + 95 x the cast's width (4 for
    // `int(`, 17 for `static_cast<int>(`), as for 95 plain parentheses.
    let limit = "the code nests deeper than the simulator's limit of 96 levels";
    assert_eq!(
        error_on_a_small_stack(functional),
        format!("1:{}: {limit}", 36 + 95 * 4)
    );
    assert_eq!(
        error_on_a_small_stack(named),
        format!("1:{}: {limit}", 36 + 95 * 17)
    );
}

#[test]
fn a_kernels_own_typedef_of_a_header_type_keeps_its_meaning() {
    let source = "typedef unsigned char uchar;\n\
                  typedef unsigned int uint;\n\
                  typedef float3 point;\n\
                  __global__ void k(uchar* p, uint n, point* q) {\n\
                  p[0] = (uchar)n + uchar(q[0].z);\n\
                  }";
    assert_eq!(error(source), "compiles");
}
