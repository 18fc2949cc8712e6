//! Structs and classes through the front end: the spellings courses use are read and checked,
//! and what is wrong with a struct is said in words at its place.

use memplay_lang::ast::{Item, Type};
use memplay_lang::{compile, parse};

/// The error of `source`'s kernel `k` (the file's own first), as `LINE:COL: message`.
fn error(source: &str) -> Option<String> {
    let error = match compile(source, &[]) {
        Err(error) => error,
        Ok(program) => program.kernel("k").err()?,
    };
    Some(format!(
        "{}:{}: {}",
        error.span.line, error.span.col, error.message
    ))
}

#[test]
fn the_spellings_of_a_struct_courses_write_compile() {
    let source = "struct Fwd;\n\
        struct Fwd { int a; };\n\
        typedef struct Node { float w; int id; } Node;\n\
        const int BINS = 4;\n\
        namespace geo {\n\
          struct Point {\n\
            static const int DIM = 2;\n\
            float c[DIM * BINS / 4];\n\
          };\n\
        }\n\
        class Counter {\n\
          int n;\n\
        public:\n\
          __device__ void add() { n += 1; }\n\
          void host_only() {}\n\
          __device__ int get() const { return n; }\n\
          ~Counter() {}\n\
        };\n\
        __global__ void k(int* out, Node* nodes) {\n\
          struct Fwd f = {3};\n\
          Node n = nodes[threadIdx.x];\n\
          Counter c;\n\
          c.add();\n\
          out[threadIdx.x] = f.a + n.id + c.get() + geo::Point::DIM + (int)sizeof(geo::Point);\n\
        }";
    assert_eq!(error(source), None);
}

#[test]
fn a_struct_is_laid_out_where_the_parser_reads_it() {
    let unit = parse(
        "struct S { char c; double d; };\n__global__ void k(S* s) { s[0].c = 1; }",
        &[],
    )
    .expect("parses");
    let Some(Item::Function(kernel)) = unit.items.last() else {
        panic!("the kernel is the last item");
    };
    let Type::Pointer { pointee, .. } = &kernel.params[0].ty else {
        panic!("a pointer parameter");
    };
    // A char, seven bytes of padding and a double: 16 bytes aligned to 8.
    assert_eq!((pointee.size(), pointee.align()), (16, 8));
}

#[test]
fn a_missing_member_or_member_function_is_named_at_its_place() {
    let source = "struct P { float x; __device__ float get() const { return x; } };\n\
        __global__ void k(P* p) {\n  p[0].y = 1;\n}";
    assert_eq!(error(source).as_deref(), Some("3:8: 'P' has no member 'y'"));
    let source = "struct P { float x; };\n__global__ void k(P* p) {\n  p->norm(2);\n}";
    assert_eq!(
        error(source).as_deref(),
        Some("3:6: 'P' has no member function 'norm' taking (int)")
    );
}

#[test]
fn a_struct_too_large_for_registers_is_read_by_member_but_not_copied_whole() {
    let source = "struct Big { float v[100]; };\n\
        __global__ void k(Big* b, float* out) {\n  out[0] = b[1].v[7];\n}";
    assert_eq!(error(source), None);
    let source = "struct Big { float v[100]; };\n\
        __global__ void k(Big* b) {\n  b[0] = b[1];\n}";
    assert_eq!(
        error(source).as_deref(),
        Some(
            "3:3: a whole 'Big' of more than 64 scalars is not copied in the simulator; use its \
             members"
        )
    );
}

#[test]
fn a_constructor_call_without_a_matching_constructor_says_what_it_was_given() {
    let source = "struct C { float re, im; __device__ C(float r, float i) : re(r), im(i) {} };\n\
        __global__ void k(C* c) {\n  c[0] = C(1.0f);\n}";
    assert_eq!(
        error(source).as_deref(),
        Some("3:10: 'C' has no constructor taking (float)")
    );
}

#[test]
fn a_member_function_reads_members_declared_after_it_and_its_static_constants() {
    let source = "struct Acc {\n\
          __device__ float scaled() const { return total * SCALE + twice(); }\n\
          __device__ float twice() const { return 2.0f * total; }\n\
          static constexpr float SCALE = 0.5f;\n\
          float total;\n\
        };\n\
        __global__ void k(Acc* a, float* out) {\n  out[0] = a[0].scaled();\n}";
    assert_eq!(error(source), None);
}

#[test]
fn member_functions_and_constructors_defined_after_their_struct_compile() {
    let source = "namespace geo {\n\
          struct Vec2 {\n\
            float x, y;\n\
            __device__ Vec2(float a, float b);\n\
            __device__ float dot(Vec2 o) const;\n\
            __device__ Vec2 operator-(Vec2 o) const;\n\
            void print() const;\n\
          };\n\
        }\n\
        __device__ geo::Vec2::Vec2(float a, float b) : x(a), y(b) {}\n\
        __device__ float geo::Vec2::dot(Vec2 o) const { return x * o.x + y * o.y; }\n\
        __device__ geo::Vec2 geo::Vec2::operator-(Vec2 o) const { return Vec2(x - o.x, y - o.y); }\n\
        void geo::Vec2::print() const {}\n\
        __global__ void k(float* out) {\n\
          geo::Vec2 a(3.0f, 4.0f), b(1.0f, 1.0f);\n\
          out[threadIdx.x] = (a - b).dot(a);\n\
        }";
    assert_eq!(error(source), None);
}
