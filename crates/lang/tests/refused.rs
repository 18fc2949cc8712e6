//! Every construct of CUDA C++ that nvcc accepts and memplay refuses, with the kernel that shows
//! it and the one line memplay answers: the construct named in words, at the place it starts,
//! never "expected X, found Y".

use memplay_lang::{compile, DiagnosticKind};

/// A construct, a kernel `k` that uses it, and the refusal: line, column and message.
struct Refusal {
    construct: &'static str,
    source: &'static str,
    at: (u32, u32),
    message: &'static str,
}

const REFUSALS: &[Refusal] = &[
    Refusal {
        construct: "a variadic template",
        source: "template <typename... Ts>\n__device__ void f(Ts... a) {}\n__global__ void k(float* a) { a[0] = 1; }",
        at: (1, 19),
        message: "variadic templates (parameter packs, `typename... Ts`) are not simulated",
    },
    Refusal {
        construct: "an explicit specialisation of a function template",
        source: "template <>\n__device__ float f<float>(float a) { return a; }\n__global__ void k(float* a) { a[0] = 1; }",
        at: (1, 1),
        message: "explicit specialisation of a function template (`template <>`) is not simulated; give the special case a function of its own",
    },
    Refusal {
        construct: "a partial specialisation",
        source: "template <typename T>\n__device__ void f<T*>(T* a) {}\n__global__ void k(float* a) { a[0] = 1; }",
        at: (2, 22),
        message: "partial specialisation (`f<T*>(...)`) is not simulated",
    },
    Refusal {
        construct: "a template template parameter",
        source: "template <template <class> class C>\n__device__ void f() {}\n__global__ void k(float* a) { a[0] = 1; }",
        at: (1, 11),
        message: "template template parameters (`template <class> class C`) are not simulated",
    },
    Refusal {
        construct: "SFINAE",
        source: "template <typename T, typename = std::enable_if_t<sizeof(T) == 4>>\n__device__ void f(T a) {}\n__global__ void k(float* a) { a[0] = 1; }",
        at: (1, 39),
        message: "SFINAE (`std::enable_if` in a template's parameters) is not simulated",
    },
    Refusal {
        construct: "a floating-point template parameter",
        source: "template <float F>\n__global__ void k(float* a) { a[0] = F; }",
        at: (1, 11),
        message: "a template parameter of type 'float' is not simulated; use an integer type or a type parameter",
    },
    Refusal {
        construct: "a dependent type name",
        source: "template <typename T>\n__global__ void g(float* a) { typename T::type x; }\n__global__ void k(float* a) { g<int>(a); }",
        at: (2, 31),
        message: "this use of templates (a dependent name `typename T::type`, `x.template f<...>`, a template inside a function) is not simulated",
    },
    Refusal {
        construct: "inheritance",
        source: "struct A { float x; };\nstruct B : A { float y; };\n\
                 __global__ void k(float* a) { a[0] = 1; }",
        at: (2, 10),
        message: "inheritance (`struct B : A`) is not simulated; make the base a member",
    },
    Refusal {
        construct: "a virtual member function",
        source: "struct A {\n  virtual __device__ float f() { return 1; }\n};\n\
                 __global__ void k(float* a) { a[0] = 1; }",
        at: (2, 3),
        message: "virtual functions are not simulated",
    },
    Refusal {
        construct: "a struct's type declared inside it",
        source: "struct A {\n  struct B { int x; } b;\n};\n\
                 __global__ void k(float* a) { a[0] = 1; }",
        at: (2, 3),
        message: "a type declared inside a struct is not simulated; declare it at file scope",
    },
    Refusal {
        construct: "a default member initialiser",
        source: "struct A {\n  float x = 1;\n};\n__global__ void k(float* a) { a[0] = 1; }",
        at: (2, 11),
        message: "a default member initialiser is not simulated; set the member in a constructor",
    },
    Refusal {
        construct: "a variable declared with its struct",
        source: "struct A { float x; } a;\n__global__ void k(float* a) { a[0] = 1; }",
        at: (1, 23),
        message: "a variable declared with its struct's definition is not simulated: declare \
                  it in a declaration of its own",
    },
    Refusal {
        construct: "a union",
        source: "union U { float f; int i; };\n__global__ void k(float* a) { a[0] = 1; }",
        at: (1, 1),
        message: "unions are not simulated",
    },
    Refusal {
        construct: "an rvalue reference",
        source: "__device__ void f(float &&x) { x = 1; }\n__global__ void k(float* a) { f(1.0f); }",
        at: (1, 25),
        message: "rvalue references (`T&&`) are not simulated; take the value or a `const T&`",
    },
    Refusal {
        construct: "a function that returns a reference",
        source: "__device__ float& at(float* a, int i) { return a[i]; }\n\
                 __global__ void k(float* a) { at(a, 0) = 1; }",
        at: (1, 17),
        message: "a function that returns a reference (`float& f()`) is not simulated; return the \
                  value or a pointer",
    },
    Refusal {
        construct: "a reference to a whole array",
        source: "__device__ void f(float (&row)[4]) { row[0] = 1; }\n\
                 __global__ void k(float* a) { float w[4]; f(w); a[0] = w[0]; }",
        at: (1, 25),
        message: "a reference or pointer to a whole array or to a function (`float (&a)[N]`, \
                  `void (*f)(int)`) is not simulated; use a pointer to the array's first element",
    },
    Refusal {
        construct: "a cast to a reference type",
        source: "__global__ void k(float* a) {\n  int i = reinterpret_cast<int&>(a[0]);\n  a[1] = i;\n}",
        at: (2, 31),
        message: "a cast to a reference type (`(float&)x`) is not simulated; cast the value, or a \
                  pointer (`*(float*)&x`)",
    },
    Refusal {
        construct: "a reference parameter of a kernel",
        source: "__global__ void k(float &x) { x = 1; }",
        at: (1, 26),
        message: "a reference parameter of a __global__ kernel is not simulated; pass a pointer to \
                  device memory",
    },
    Refusal {
        construct: "goto and a label",
        source: "__global__ void k(float* a) {\n  goto end;\nend:\n  a[0] = 1;\n}",
        at: (2, 3),
        message: "'goto' is not simulated; use a loop with 'break' or 'continue', or if/else",
    },
    Refusal {
        construct: "a label",
        source: "__global__ void k(float* a) {\n  a[0] = 1;\nend:\n  a[1] = 2;\n}",
        at: (3, 1),
        message: "labels are not simulated (nor is 'goto')",
    },
    Refusal {
        construct: "a case label nested in a statement of its switch (Duff's device)",
        source: "__global__ void k(float* a, int n) {\n  switch (n) {\n  case 0: if (n) { case 1: a[0] = 1; }\n  }\n}",
        at: (3, 20),
        message: "a 'case' label inside a nested statement of a 'switch' (as in Duff's device) is not simulated",
    },
    Refusal {
        construct: "a warp shuffle without _sync",
        source: "__global__ void k(float* a) {\n  a[0] = __shfl_down(a[0], 1);\n}",
        at: (2, 10),
        message: "the warp functions without `_sync` were removed in CUDA 9: name the lanes, as in `__shfl_down_sync(0xffffffff, v, 1)`",
    },
    Refusal {
        construct: "a warp match of all lanes",
        source: "__global__ void k(int* a, int* p) {\n  a[0] = __match_all_sync(0xffffffff, a[1], p);\n}",
        at: (2, 10),
        message: "`__match_all_sync` is not simulated; `__match_any_sync` is",
    },
    Refusal {
        construct: "the global timer",
        source: "__global__ void k(long long* a) {\n  a[0] = __globaltimer();\n}",
        at: (2, 10),
        message: "the global timer is not simulated; `clock64()` reads the simulated clock",
    },
    Refusal {
        construct: "device-side malloc",
        source:
            "__global__ void k(float* a) {\n  float* p = (float*)malloc(16);\n  p[0] = a[0];\n}",
        at: (2, 22),
        message: "`malloc` and `free` in device code are not simulated",
    },
    Refusal {
        construct: "inline assembly",
        source: "__global__ void k(float* a) {\n  asm volatile(\"membar.gl;\");\n}",
        at: (2, 3),
        message: "inline PTX assembly (`asm`) is not simulated",
    },
    Refusal {
        construct: "new",
        source: "__global__ void k(float* a) {\n  float* p = new float[4];\n  p[0] = a[0];\n}",
        at: (2, 14),
        message: "`new` (allocation in device code) is not simulated",
    },
    Refusal {
        construct: "throw",
        source: "__global__ void k(float* a) {\n  throw 1;\n}",
        at: (2, 3),
        message: "exceptions (`throw`, `try`, `catch`) are not allowed in device code",
    },
    Refusal {
        construct: "an operator overload on an enumeration",
        source: "enum Color { Red, Green };\n\
                 __device__ Color operator+(Color a, Color b) { return Green; }\n\
                 __global__ void k(float* a) { a[0] = 1; }",
        at: (2, 18),
        message: "operator overloading is simulated for structs, classes and vector types only \
                  (`operator+` of a struct or a `float3`)",
    },
    Refusal {
        construct: "half precision without its header",
        source: "__global__ void k(half* a) { a[0] = a[1]; }",
        at: (1, 19),
        message: "`half` and `half2` are declared by cuda_fp16.h: `#include <cuda_fp16.h>` (or write `__half`)",
    },
    Refusal {
        construct: "a cuRAND generator other than XORWOW and Philox",
        source: "#include <curand_kernel.h>\n__global__ void k(curandStateMRG32k3a_t* s, float* a) { a[0] = 1; }",
        at: (2, 19),
        message: "cuRAND's device API is simulated for `curandState` (XORWOW) and `curandStatePhilox4_32_10_t`, with `#include <curand_kernel.h>`; the MRG32k3a, MTGP32 and Sobol generators are not",
    },
    Refusal {
        construct: "a cuRAND discrete distribution",
        source: "#include <curand_kernel.h>\n__global__ void k(curandState* s, unsigned* a) {\n  a[0] = curand_poisson(&s[0], 4.0);\n}",
        at: (3, 10),
        message: "cuRAND's discrete distributions (`curand_poisson`, `curand_discrete`) are not simulated; the uniform, normal and log-normal ones are",
    },
    Refusal {
        construct: "a complex number without its header",
        source: "__global__ void k(float* a) {\n  cuFloatComplex z = make_cuFloatComplex(a[0], a[1]);\n  a[0] = z.x;\n}",
        at: (2, 3),
        message: "the complex types are declared by cuComplex.h: `#include <cuComplex.h>`",
    },
    Refusal {
        construct: "a texture object",
        source: "__global__ void k(cudaTextureObject_t t, float* a) { a[0] = 1; }",
        at: (1, 19),
        message: "textures and surfaces are not simulated; read the array through a pointer",
    },
    Refusal {
        construct: "a texture fetch",
        source: "__global__ void k(float* a, int t) {\n  a[0] = tex1Dfetch(t, 0);\n}",
        at: (2, 10),
        message: "textures and surfaces are not simulated; read the array through a pointer",
    },
    Refusal {
        construct: "a lambda",
        source: "__global__ void k(float* a) {\n  a[0] = [](float x) { return x; }(1.0f);\n}",
        at: (2, 10),
        message: "lambdas (`[](...) { ... }`) are not simulated",
    },
    Refusal {
        construct: "a tensor core fragment",
        source: "__global__ void k(float* a) {\n  wmma::fragment<wmma::matrix_a, 16, 16, 16> f;\n}",
        at: (2, 3),
        message: "tensor core matrix fragments (`wmma::`) are not simulated",
    },
    Refusal {
        construct: "an asynchronous copy of cooperative groups through a namespace alias",
        source: "namespace cg = cooperative_groups;\n\
                 __global__ void k(float* a) {\n  cg::memcpy_async(a, a, 4);\n}",
        at: (3, 3),
        message: "cooperative groups' `cg::memcpy_async` is not simulated",
    },
    Refusal {
        construct: "a grid group through a using-directive",
        source: "using namespace cooperative_groups;\n\
                 __global__ void k(float* a) {\n  a[0] = this_grid().size();\n}",
        at: (3, 10),
        message: "a grid-wide group (`this_grid`) needs a cooperative launch, which memplay does not simulate",
    },
    Refusal {
        construct: "a member function call",
        source: "__global__ void k(float* a) {\n  a.sync();\n}",
        at: (2, 5),
        message: "calling a member function (`.sync()`) is not simulated",
    },
    Refusal {
        construct: "a variable declared with its enum",
        source: "enum Axis { X, Y } axis;\n__global__ void k(float* a) { a[0] = 1; }",
        at: (1, 20),
        message: "a variable declared with its enum's definition is not simulated: declare it in \
                  a declaration of its own",
    },
    Refusal {
        construct: "a pointer to an array type alias",
        source: "typedef float Row[4];\n__global__ void k(float* a) {\n  Row* r = 0;\n}",
        at: (3, 8),
        message: "a pointer to an array type is not simulated",
    },
    Refusal {
        construct: "a kernel launched from device code",
        source: "__global__ void child(float* a) { a[0] = 1; }\n\
                 __global__ void k(float* a) {\n  child<<<1, 32>>>(a);\n}",
        at: (3, 3),
        message: "launching a kernel from device code (dynamic parallelism) is not simulated",
    },
    Refusal {
        construct: "a dynamic_cast",
        source: "__global__ void k(float* a) {\n  a = dynamic_cast<float*>(a);\n}",
        at: (2, 7),
        message: "`dynamic_cast` works on classes with virtual functions, which are not simulated",
    },
];

/// The first error of `source`'s kernel `k`: the file's own, or the kernel's.
fn refusal(source: &str) -> Option<memplay_lang::Diagnostic> {
    match compile(source, &[]) {
        Err(error) => Some(error),
        Ok(program) => program.kernel("k").err(),
    }
}

#[test]
fn every_refused_construct_is_named_at_its_place() {
    let mut wrong = Vec::new();
    for case in REFUSALS {
        match refusal(case.source) {
            None => wrong.push(format!("{}: accepted", case.construct)),
            Some(error) => {
                let at = (error.span.line, error.span.col);
                if at != case.at || error.message != case.message {
                    wrong.push(format!(
                        "{}: {}:{} {}",
                        case.construct, at.0, at.1, error.message
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "refused otherwise:\n{}", wrong.join("\n"));
}

#[test]
fn no_refusal_reads_as_a_syntax_error() {
    for case in REFUSALS {
        let Some(error) = refusal(case.source) else {
            continue;
        };
        assert!(
            !error.message.starts_with("expected"),
            "{}: {}",
            case.construct,
            error.message
        );
    }
}

#[test]
fn refusals_of_constructs_nvcc_accepts_are_of_their_own_kind() {
    for case in REFUSALS {
        let Some(error) = refusal(case.source) else {
            continue;
        };
        assert_eq!(
            error.kind,
            DiagnosticKind::NotSimulated,
            "{}",
            case.construct
        );
    }
}

#[test]
fn a_variable_named_like_a_header_type_is_not_refused() {
    let source = "__global__ void k(int* a, int n) {\n  int half = n / 2;\n  a[0] = half;\n}";
    assert_eq!(refusal(source), None);
}

#[test]
fn a_plain_syntax_error_keeps_its_own_message() {
    let source = "__global__ void k(float* a) {\n  a[0] = 1\n}";
    let error = refusal(source).expect("a missing semicolon is an error");
    assert_eq!(
        error.message,
        "expected ';' after the expression, found '}'"
    );
    assert_eq!(error.kind, DiagnosticKind::Syntax);
}

#[test]
fn a_syntax_error_naming_a_long_name_stays_one_short_line() {
    let source = format!(
        "__global__ void k(float* a) {{\n  float b = 1.0f {} * 2.0f;\n  a[0] = b;\n}}",
        "x".repeat(400)
    );
    let error = refusal(&source).expect("two names in a row are an error");
    assert_eq!((error.span.line, error.span.col), (2, 17));
    assert!(error.message.chars().count() <= 240, "{}", error.message);
    assert!(error.message.ends_with('…'), "{}", error.message);
}

#[test]
fn a_kernel_that_launches_a_kernel_uses_asm_or_recursion_leaves_the_file_s_other_kernels_running() {
    let source = "__global__ void child(int* a) { a[threadIdx.x] = 1; }\n\
        __global__ void parent(int* a) { if (threadIdx.x == 0) child<<<1, 32>>>(a); }\n\
        __global__ void lane(int* a) { unsigned l = 0; asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(l)); a[0] = l; }\n\
        __device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n\
        __global__ void rec(int* a) { a[threadIdx.x] = fib(threadIdx.x % 10); }";
    let program = compile(source, &[]).expect("the file compiles");
    assert!(program.kernel("child").is_ok());
    let refusal = |kernel: &str| program.kernel(kernel).err().map(|d| d.message);
    assert_eq!(
        refusal("parent").as_deref(),
        Some("launching a kernel from device code (dynamic parallelism) is not simulated")
    );
    assert_eq!(
        refusal("lane").as_deref(),
        Some("inline PTX assembly (`asm`) is not simulated")
    );
    assert_eq!(
        refusal("rec").as_deref(),
        Some("'fib' calls itself (recursion is not supported by the simulator)")
    );
}
