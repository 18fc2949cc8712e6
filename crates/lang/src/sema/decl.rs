//! C++ declarations beyond C: compile-time constants, `auto` and `constexpr` calls.
//!
//! A file-scope `const` or `constexpr` variable of arithmetic type with a constant initialiser
//! is no memory object in device code: nvcc folds it into the instructions that use it, like a
//! `#define` (C++ [basic.def.odr]: such a variable is usable in constant expressions and a use
//! reads no storage), so `const int TILE = 16; __shared__ float t[TILE];` is the `#define TILE 16`
//! kernel. A `constexpr` local and an enumerator are the same. One whose initialiser does not
//! fold, and a file-scope `const` array or pointer, is a host variable: a kernel that reads it
//! fails with the reason, the others compile, as with nvcc. `auto` takes the type of its
//! initialiser as C++ deduces it ([dcl.type.auto.deduct]): top-level `const` dropped, arrays
//! decayed to pointers. A call of a `constexpr` function whose body is one `return` folds where
//! a constant is needed, its parameters replaced by the argument values, at most
//! `MAX_CONSTEXPR_CALLS` calls deep.

use super::consts::ConstValue;
use super::{elem_of, err, float_bits, int_bits, width_of, Sema, Symbol};
use crate::ast::{
    Declaration, Declarator, Expr, ExprKind, Initializer, Item, Scalar, StmtKind, Type,
};
use crate::ir::{Ex, Op};
use crate::span::{Diagnostic, DiagnosticKind};

/// How many `constexpr` calls deep a constant may fold (a recursive `constexpr` function such as
/// a factorial folds this many levels).
const MAX_CONSTEXPR_CALLS: u32 = 8;

/// `value` as a value of type `scalar`, as an initialisation converts it.
fn converted(value: ConstValue, scalar: Scalar) -> ConstValue {
    match value {
        ConstValue::Int(i) if scalar.is_float() => ConstValue::Float(i as f64),
        ConstValue::Float(f) if scalar.is_integer() => {
            ConstValue::Int(int_bits(f as i64, scalar) as i64)
        }
        ConstValue::Int(i) => ConstValue::Int(int_bits(i, scalar) as i64),
        ConstValue::Float(f) if scalar == Scalar::F32 => ConstValue::Float(f64::from(f as f32)),
        other => other,
    }
}

/// The refusal of a use of the file-scope `name` that is host memory.
fn host_memory(name: &str, instead: &str) -> String {
    format!("'{name}' is host memory, which device code cannot read: declare it {instead}")
}

/// The register bits of a constant of type `scalar`.
pub(super) fn constant_bits(value: ConstValue, scalar: Scalar) -> u64 {
    match value {
        ConstValue::Int(i) => int_bits(i, scalar),
        ConstValue::Float(f) => float_bits(f, scalar),
    }
}

/// `e` with each parameter named in `params` replaced by its constant.
fn substituted(e: &mut Expr, params: &[(&str, ConstValue)]) {
    match &mut e.kind {
        ExprKind::Ident(name) => {
            if let Some((_, value)) = params.iter().find(|(p, _)| p == name) {
                e.kind = match *value {
                    ConstValue::Int(i) => ExprKind::Int {
                        value: i as u64,
                        unsigned: false,
                        long: false,
                        hex: false,
                    },
                    ConstValue::Float(f) => ExprKind::Float {
                        value: f,
                        single: false,
                    },
                };
            }
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(_, a) | ExprKind::SizeofExpr(a) => {
            substituted(a, params)
        }
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) | ExprKind::Comma(a, b) => {
            substituted(a, params);
            substituted(b, params);
        }
        ExprKind::Conditional(a, b, c) => {
            substituted(a, params);
            substituted(b, params);
            substituted(c, params);
        }
        ExprKind::Call { args, .. } => args.iter_mut().for_each(|a| substituted(a, params)),
        _ => {}
    }
}

impl Sema<'_> {
    /// A file-scope `const`/`constexpr` variable or enumerator: a compile-time constant, or a
    /// host variable that device code cannot read.
    pub(super) fn file_scope_constants(&mut self, decl: &Declaration) -> Result<(), Diagnostic> {
        for d in &decl.declarators {
            if self.globals.contains_key(&d.name) || self.function_index.contains_key(&d.name) {
                return err(d.span, format!("'{}' is declared twice", d.name));
            }
            let symbol = match self.constant_symbol(decl, d) {
                Ok(Some(symbol)) => symbol,
                Ok(None) => Symbol::HostOnly(Diagnostic::of_kind(
                    DiagnosticKind::NotConstant,
                    d.span,
                    format!(
                        "'{}' is a host variable, which device code cannot read: its \
                         initialiser is not a constant",
                        d.name
                    ),
                )),
                Err(why) => Symbol::HostOnly(why),
            };
            self.globals.insert(d.name.clone(), symbol);
        }
        Ok(())
    }

    /// The constant a declarator declares, or `None` when its initialiser does not fold. Only
    /// arithmetic scalars are constants; a file-scope array or pointer without `__constant__`
    /// is host memory, which device code cannot read.
    fn constant_symbol(
        &mut self,
        decl: &Declaration,
        d: &Declarator,
    ) -> Result<Option<Symbol>, Diagnostic> {
        let init = match &d.init {
            Some(Initializer::Expr(e)) => e,
            Some(Initializer::List(items, _)) if d.dims.is_empty() && items.len() == 1 => {
                match &items[0] {
                    Initializer::Expr(e) => e,
                    Initializer::List(_, span) => return err(*span, "nested braces"),
                }
            }
            _ if d.dims.is_empty() => return Ok(None),
            _ => return err(d.span, host_memory(&d.name, "__constant__")),
        };
        let ty = if decl.is_auto {
            self.rvalue(init)?.1
        } else {
            self.full_type(d, decl.storage)?
        };
        let Type::Scalar(scalar) = ty else {
            return err(d.span, host_memory(&d.name, "__constant__ or __device__"));
        };
        Ok(self.const_value(init).map(|value| Symbol::Constant {
            scalar,
            value: converted(value, scalar),
        }))
    }

    /// A local declaration of C++ kinds: `constexpr` constants and `auto` variables. `false`
    /// when it is an ordinary one, for `local_declaration`.
    pub(super) fn cpp_local_declaration(&mut self, decl: &Declaration) -> Result<bool, Diagnostic> {
        if decl.compile_time && decl.declarators.iter().all(|d| d.dims.is_empty()) {
            let mut constants = Vec::new();
            for d in &decl.declarators {
                match self.constant_symbol(decl, d) {
                    Ok(Some(symbol)) => constants.push(symbol),
                    _ if !constants.is_empty() => {
                        return err(d.span, format!("'{}' needs a constant initialiser", d.name))
                    }
                    _ => break,
                }
                // Each constant is in scope for the next one's initialiser.
                let symbol = constants.last().cloned();
                if let Some(symbol) = symbol {
                    self.declare(&d.name, d.span, symbol)?;
                }
            }
            if !constants.is_empty() {
                return Ok(true);
            }
        }
        if !decl.is_auto {
            return Ok(false);
        }
        for d in &decl.declarators {
            let Some(Initializer::Expr(e)) = &d.init else {
                return err(
                    d.span,
                    format!(
                        "'auto {}' needs an initialiser to take its type from",
                        d.name
                    ),
                );
            };
            let (value, ty) = self.rvalue(e)?;
            let Some(elem) = elem_of(&ty).filter(|_| d.dims.is_empty()) else {
                return err(
                    d.span,
                    format!("'auto' cannot declare '{}' as '{ty}'", d.name),
                );
            };
            let width = width_of(&ty);
            let reg = self.alloc(width);
            let assign = Ex::assign_reg(reg, elem, value, width, d.span);
            self.emit(Op::Eval(assign), d.span);
            let is_const = decl.is_const && !matches!(ty, Type::Pointer { .. });
            let symbol = Symbol::Var {
                reg,
                ty,
                is_const: is_const || d.pointer_const,
                const_value: None,
            };
            self.declare(&d.name, d.span, symbol)?;
        }
        Ok(true)
    }

    /// The value of a call of a `constexpr` function with constant arguments.
    pub(super) fn constexpr_call(&self, name: &str, args: &[Expr]) -> Option<ConstValue> {
        let function = self.unit.items.iter().find_map(|item| match item {
            Item::Function(f) if f.is_constexpr && f.name == name => Some(f),
            _ => None,
        })?;
        let [body] = function.body.as_slice() else {
            return None;
        };
        let StmtKind::Return(Some(result)) = &body.kind else {
            return None;
        };
        if args.len() != function.params.len() || self.constexpr_calls.get() >= MAX_CONSTEXPR_CALLS
        {
            return None;
        }
        let mut params = Vec::new();
        for (param, arg) in function.params.iter().zip(args) {
            let value = self.const_value(arg)?;
            let value = match param.ty {
                Type::Scalar(s) => converted(value, s),
                _ => return None,
            };
            params.push((param.name.as_str(), value));
        }
        let mut result = result.clone();
        substituted(&mut result, &params);
        self.constexpr_calls.set(self.constexpr_calls.get() + 1);
        let value = self.const_value(&result);
        self.constexpr_calls.set(self.constexpr_calls.get() - 1);
        match function.ret {
            Type::Scalar(s) => value.map(|v| converted(v, s)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::compile;
    use crate::ir::ObjectSpace;

    /// The memory objects of `source` as `name space bytes`, or its first error (of the file,
    /// or of the kernel `k`) as `line:col: message`.
    fn objects(source: &str) -> Vec<String> {
        let program = match compile(source, &[]) {
            Ok(program) => program,
            Err(error) => return vec![error.to_string()],
        };
        if let Err(error) = program.kernel("k") {
            return vec![error.to_string()];
        }
        program
            .objects
            .iter()
            .map(|o| format!("{} {:?} {}", o.name, o.space, o.size))
            .collect()
    }

    #[test]
    fn a_file_scope_shared_variable_is_one_shared_object_that_takes_no_initialiser() {
        let source = "__shared__ bool last;\nextern __shared__ float dynamic[];\n\
                      __device__ void mark() { last = true; }\n\
                      __global__ void k(float* out) { mark(); out[0] = dynamic[0]; }";
        // A bool of one byte; the dynamic array is sized by the launch.
        assert_eq!(
            objects(source),
            ["last Shared 1", "dynamic DynamicShared 0"]
        );
        let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
        let names = |function: &str| {
            let index = program.functions.iter().position(|f| f.name == function);
            index.map(|f| [0, 1].map(|object| program.functions[f].names_object(object)))
        };
        assert_eq!(names("mark"), Some([true, false]));
        assert_eq!(names("k"), Some([false, true]));
        assert_eq!(
            objects("__shared__ int n = 0;\n__global__ void k() { n = 1; }"),
            ["1:20: __shared__ variables cannot have an initialiser; assign them in the kernel"]
        );
    }

    #[test]
    fn a_file_scope_const_sizes_a_shared_array_and_is_no_memory_object() {
        let source = "const int block_size = 32;\nstatic const float half = 0.5f;\n\
                      __global__ void k(float* out) {\n\
                      \x20 __shared__ float t[block_size];\n\
                      \x20 t[threadIdx.x] = half * threadIdx.x;\n\
                      \x20 out[threadIdx.x] = t[block_size - 1 - threadIdx.x];\n}";
        // 32 floats of 4 bytes.
        assert_eq!(objects(source), ["t Shared 128"]);
        assert_eq!(
            ObjectSpace::Shared,
            compile(source, &[]).unwrap().objects[0].space
        );
    }

    #[test]
    fn enumerators_constexpr_variables_and_constexpr_calls_size_arrays() {
        let source = "enum Color { RED, GREEN = 5, BLUE };\n\
                      enum class Mode : int { Fast = 2, Slow };\n\
                      constexpr int square(int x) { return x * x; }\n\
                      __host__ __device__ constexpr int cube(int x) { return x * square(x); }\n\
                      constexpr int width = square(2) + Color::GREEN;\n\
                      __global__ void k(float* out) {\n\
                      \x20 constexpr int local = BLUE + RED;\n\
                      \x20 __shared__ float a[BLUE];\n\
                      \x20 __shared__ float b[Mode::Slow];\n\
                      \x20 __shared__ float c[cube(2)];\n\
                      \x20 __shared__ float d[width * local];\n\
                      \x20 out[0] = a[0] + b[0] + c[0] + d[0] + square(threadIdx.x);\n}";
        // BLUE = 6, Mode::Slow = 3, cube(2) = 8, width = 4 + 5 = 9, local = 6: 6, 3, 8 and 54
        // floats.
        assert_eq!(
            objects(source),
            ["a Shared 24", "b Shared 12", "c Shared 32", "d Shared 216"]
        );
    }

    #[test]
    fn typedef_and_using_aliases_name_scalars_pointers_vectors_and_arrays() {
        let source = "typedef float real;\nusing index_t = unsigned int;\n\
                      typedef unsigned int uint;\ntypedef unsigned long long size_t;\n\
                      typedef float Row[4];\nusing input = const float*;\ntypedef float4 vec;\n\
                      __global__ void k(input in, real* out) {\n\
                      \x20 typedef int local_t;\n\
                      \x20 index_t i = threadIdx.x;\n\
                      \x20 uint j = i;\n\
                      \x20 __shared__ Row tile[2];\n\
                      \x20 __shared__ vec v[2];\n\
                      \x20 tile[1][j % 4] = in[i] + (real)sizeof(local_t);\n\
                      \x20 out[i] = tile[1][3] + v[0].x;\n}";
        // 2 rows of 4 floats; 2 float4s.
        assert_eq!(objects(source), ["tile Shared 32", "v Shared 32"]);
        // `sizeof(Row)` is 4 floats.
        let sized = "typedef float Row[4];\n__global__ void k(float* o) { __shared__ char c[sizeof(Row)]; }";
        assert_eq!(objects(sized), ["c Shared 16"]);
    }

    #[test]
    fn namespaces_aliases_and_using_directives_resolve_names() {
        let source = "namespace geo {\n\
                      \x20 const int N = 8;\n\
                      \x20 typedef float coord;\n\
                      \x20 namespace inner { __device__ int twice(int x) { return 2 * x; } }\n\
                      \x20 __device__ int quad(int x) { return inner::twice(inner::twice(x)); }\n\
                      }\n\
                      namespace g = geo;\nusing namespace geo::inner;\nusing geo::quad;\n\
                      __global__ void k(int* out) {\n\
                      \x20 __shared__ g::coord s[g::N];\n\
                      \x20 int N = 3;\n\
                      \x20 out[0] = ::geo::quad(twice(N)) + quad(1) + (int)s[geo::N - 1];\n}";
        // The local `N` hides `geo::N` only where it is in scope.
        assert_eq!(objects(source), ["s Shared 32"]);
        let program = compile(source, &[]).unwrap();
        let names: Vec<&str> = program.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["geo::inner::twice", "geo::quad", "k"]);
    }

    #[test]
    fn auto_default_arguments_and_null_pointers_compile() {
        let source = "__device__ float scale(float x, float by = 2.0f, int times = 1) {\n\
                      \x20 return x * by * times;\n}\n\
                      __global__ void k(const float* a, float* out) {\n\
                      \x20 auto i = threadIdx.x;\n\
                      \x20 auto p = a + i;\n\
                      \x20 const auto v = *p;\n\
                      \x20 __shared__ float t[32];\n\
                      \x20 auto row = t;\n\
                      \x20 row[i] = v;\n\
                      \x20 if (a != nullptr && out != NULL) out[i] = scale(row[i]) + scale(v, 3.0f);\n}";
        assert_eq!(objects(source), ["t Shared 128"]);
    }

    #[test]
    fn a_constant_without_a_constant_initialiser_names_what_is_missing() {
        // A kernel that does not use the host variable still compiles, as with nvcc.
        let source = "__device__ int g;\nconst int n = g + 1;\n\
                      __global__ void k(int* o) { o[0] = n; }\n\
                      __global__ void other(int* o) { o[0] = 1; }";
        assert_eq!(
            objects(source),
            [
                "3:36: 'n' is a host variable, which device code cannot read: its initialiser is \
              not a constant"
            ]
        );
        assert!(compile(source, &[]).unwrap().kernel("other").is_ok());
        assert_eq!(
            objects("const float w[2] = {1, 2};\n__global__ void k(float* o) { o[0] = w[0]; }"),
            ["2:38: 'w' is host memory, which device code cannot read: declare it __constant__"]
        );
        assert_eq!(
            objects(
                "__device__ int f(int x) { return x; }\n\
                     __global__ void k(float* o) { __shared__ float t[f(2)]; }"
            ),
            ["2:50: the size of 't' must be a constant expression"]
        );
        assert_eq!(
            objects("__global__ void k(float* o) { auto x; o[0] = 1; }"),
            ["1:36: 'auto x' needs an initialiser to take its type from"]
        );
    }

    #[test]
    fn cooperative_groups_compile_and_what_they_lack_is_refused_by_name() {
        let source = "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n\
                      __global__ void k(float* o) {\n\
                      \x20 cg::thread_block block = cg::this_thread_block();\n\
                      \x20 block.sync();\n\
                      \x20 o[block.thread_rank()] = 1.0f;\n}\n\
                      __global__ void fine(float* o) { o[0] = 2.0f; }";
        assert_eq!(objects(source), Vec::<String>::new());
        let using = "using namespace cooperative_groups;\n\
                     __global__ void k(float* o) { thread_block_tile<32> t = tiled_partition<32>(this_thread_block()); o[t.thread_rank()] = 1; }";
        assert_eq!(objects(using), Vec::<String>::new());
        let local = "__global__ void k(float* o) { namespace cg = cooperative_groups; \
                     cg::grid_group g = cg::this_grid(); }";
        assert_eq!(
            objects(local),
            [
                "1:66: a grid-wide group (`cg::grid_group`) needs a cooperative launch, which \
              memplay does not simulate"
            ]
        );
    }

    #[test]
    fn a_local_enum_and_a_local_constexpr_are_constants_of_the_kernel() {
        let source = "__global__ void k(float* out) {\n\
                      \x20 enum { LEFT = 1, RIGHT = LEFT * 2, BOTH };\n\
                      \x20 static constexpr int width = BOTH + 1;\n\
                      \x20 __shared__ float t[width][RIGHT];\n\
                      \x20 out[threadIdx.x] = t[BOTH][LEFT];\n}";
        // BOTH = 3, width = 4: 4 rows of 2 floats.
        assert_eq!(objects(source), ["t Shared 32"]);
    }

    #[test]
    fn prototypes_unnamed_parameters_and_std_names_are_read() {
        let source = "__device__ float blend(float, float weight = 0.25f);\n\
                      __global__ void k(const float* a, float* out) {\n\
                      \x20 out[threadIdx.x] = blend(a[threadIdx.x]) + std::min(a[0], 1.0f);\n}\n\
                      __device__ float blend(float x, float weight) { return x * weight; }";
        assert_eq!(objects(source), Vec::<String>::new());
    }

    #[test]
    fn what_stays_refused_is_named_in_words() {
        assert_eq!(
            objects("enum Axis { X, Y } axis;\n__global__ void k(int* o) {}"),
            ["1:20: a variable declared with its enum's definition is not simulated: declare it \
              in a declaration of its own"]
        );
        assert_eq!(
            objects("__global__ void k(float* o, float* p) { p.sync(); o[0] = 1; }"),
            ["1:43: calling a member function (`.sync()`) is not simulated"]
        );
        assert_eq!(
            objects(
                "namespace cg = cooperative_groups;\n\
                     __device__ void f(cg::cluster_group g) {}\n__global__ void k(int* o) {}"
            ),
            ["2:19: cooperative groups' `cg::cluster_group` is not simulated"]
        );
        assert_eq!(
            objects("typedef float Row[4];\n__global__ void k(float* o) { Row* r = 0; }"),
            ["2:36: a pointer to an array type is not simulated"]
        );
    }
}
