//! Where each variable of a kernel lives, who sees it, how long it lives and how fast it is.
//!
//! This applies the lectures' tables to the declarations of one kernel: seed 000 (CS 193G,
//! Lecture 4, "CUDA Memories"), tables "CUDA Variable Type Qualifiers" (memory, scope, lifetime),
//! "CUDA Variable Type Performance" (the penalty of each memory) and "Where to declare variables?"
//! (which variables the host can reach), with seed 002's "Local Memory" slide for per-thread
//! arrays. The CUDA C++ Programming Guide says the same in "Variable Memory Space Specifiers"
//! (`__device__`, `__constant__`, `__shared__`) and "Function Parameters" (a kernel's parameters
//! are passed to the device in constant memory).
//!
//! | declaration                      | space                        | scope          | lifetime    |
//! |----------------------------------|------------------------------|----------------|-------------|
//! | pointer parameter `float* a`     | global (what `a` points to)  | grid and host  | application |
//! | scalar parameter `int n`         | parameter (constant memory)  | grid           | launch      |
//! | automatic scalar `int i`         | registers                    | thread         | thread      |
//! | automatic array `float h[10]`    | local, or registers          | thread         | thread      |
//! | `__shared__ float s[16]`         | shared                       | block          | block       |
//! | `__device__ int g` (file scope)  | global                       | grid and host  | application |
//! | `__constant__ int c` (file scope)| constant                     | grid and host  | application |
//!
//! Two rows need a word. A pointer parameter is itself a parameter, but what a student asks of it
//! is where the data is: memory the host allocated with `cudaMalloc`, which is global memory, so
//! its row describes that memory. Seed 000 puts every automatic array in local memory, and seed
//! 002 names the exception: nvcc keeps an array in registers when every index is known at compile
//! time. The semantic check (`kernel::sema`) decides that as the interpreter runs the kernel (a
//! constant index, or the variable of a loop with a constant trip count, which nvcc unrolls); an
//! array it keeps in registers is shown as "registers or local memory", since nvcc may still put a
//! large one in local memory, and an array indexed at run time as local memory.
//!
//! The variables of the `__device__` functions a kernel calls are not listed: they are the
//! kernel's own threads' registers and local memory too, but they are declared elsewhere.
//!
//! The analysis is pure: the source is preprocessed, parsed and checked exactly as a launch would
//! be (`kernel::parse`, `kernel::sema::check`), so a source that would not launch gives the same
//! one-line `Diagnostic` here.

use crate::kernel::ast::{
    Declaration as SyntaxDeclaration, Declarator, FunctionKind, Item, Stmt, StmtKind, Storage, Type,
};
use crate::kernel::ir::ObjectSpace;
use crate::kernel::{self, Diagnostic, Span};
use serde::{Deserialize, Serialize};

/// The memory a variable's data lives in (seed 000, "Hardware Implementation of CUDA Memories").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MemorySpace {
    /// The SM's register file: one copy per thread, on chip.
    Registers,
    /// A per-thread array every index of which is known at compile time: nvcc can keep it in
    /// registers, and may still put it in local memory (a large array, register pressure).
    RegistersOrLocal,
    /// Per-thread memory in device DRAM (seed 002, "Local Memory").
    Local,
    /// The SM's shared memory: one copy per block, on chip.
    Shared,
    /// Device DRAM, reached by every thread of every block and by the host's copies.
    Global,
    /// Device DRAM behind a dedicated cache, read-only on the device.
    Constant,
    /// A kernel's parameters: constant memory that the launch fills (CUDA C++ Programming Guide,
    /// "Function Parameters").
    Parameter,
}

impl MemorySpace {
    /// The name the lectures use.
    pub fn label(self) -> &'static str {
        match self {
            MemorySpace::Registers => "registers",
            MemorySpace::RegistersOrLocal => "registers or local memory",
            MemorySpace::Local => "local memory",
            MemorySpace::Shared => "shared memory",
            MemorySpace::Global => "global memory",
            MemorySpace::Constant => "constant memory",
            MemorySpace::Parameter => "parameter space (constant memory)",
        }
    }

    /// How fast it is, in the lectures' terms: seed 000's penalties (registers and shared 1x,
    /// local and global 100x, constant 1x from its cache), seed 002's "400-800 clock cycles" for
    /// global memory, and the broadcast of a constant read by a whole warp.
    pub fn speed(self) -> &'static str {
        match self {
            MemorySpace::Registers => "fastest, on chip (1x)",
            MemorySpace::RegistersOrLocal => {
                "1x in registers; about 100x in local memory, which is off-chip DRAM"
            }
            MemorySpace::Local => {
                "slow, off-chip DRAM like global memory (about 100x); cached in L1 and L2 from \
                 Fermi on"
            }
            MemorySpace::Shared => {
                "fast, on chip (about 1x), unless bank conflicts serialize a warp's access"
            }
            MemorySpace::Global => "slow, off-chip DRAM, hundreds of clock cycles (about 100x)",
            MemorySpace::Constant => {
                "cached, about 1x when the threads of a warp read one address, which is \
                 broadcast to them"
            }
            MemorySpace::Parameter => {
                "as constant memory, cached and broadcast: the threads of a warp read one value"
            }
        }
    }
}

/// Who sees a variable (seed 000, "CUDA Variable Type Qualifiers", and "Where to declare
/// variables?" for the host).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Scope {
    /// One thread: every thread has its own copy.
    Thread,
    /// The threads of one block: every block has its own copy.
    Block,
    /// Every thread of the grid, one copy for all.
    Grid,
    /// Every thread of the grid, and the host (`cudaMemcpy`, `cudaMemcpyToSymbol`).
    GridAndHost,
}

impl Scope {
    pub fn label(self) -> &'static str {
        match self {
            Scope::Thread => "thread",
            Scope::Block => "block",
            Scope::Grid => "grid",
            Scope::GridAndHost => "grid and host",
        }
    }
}

/// How long a variable lives (seed 000, "CUDA Variable Type Qualifiers"; a kernel parameter lives
/// for its launch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Lifetime {
    Thread,
    Block,
    /// One launch of the kernel: the parameters the launch passed.
    Launch,
    /// From allocation (or the program's start) to `cudaFree` (or its end), across launches.
    Application,
}

impl Lifetime {
    pub fn label(self) -> &'static str {
        match self {
            Lifetime::Thread => "thread",
            Lifetime::Block => "block",
            Lifetime::Launch => "launch",
            Lifetime::Application => "application",
        }
    }
}

/// What kind of declaration a variable comes from, which decides the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DeclarationKind {
    /// A kernel parameter of pointer type: the host passes memory it allocated.
    PointerParameter,
    /// A kernel parameter passed by value (a number, a vector).
    ScalarParameter,
    /// A variable without qualifier in the kernel: a number or a vector.
    AutomaticScalar,
    /// A pointer variable in the kernel. Seed 000, "About Pointers": the pointer is in a register,
    /// and what it points to depends on the address it holds.
    AutomaticPointer,
    /// An array without qualifier in the kernel.
    AutomaticArray,
    /// `__shared__` in the kernel.
    Shared,
    /// `extern __shared__ T a[];`: the launch sizes it (seed 000, "when the size of the array isn't
    /// known at compile time").
    DynamicShared,
    /// `__device__` at file scope.
    Device,
    /// `__constant__` at file scope.
    Constant,
}

/// One variable of a kernel and where it lives. Plain data: the page's simulation worker sends it
/// to the page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declaration {
    pub name: String,
    /// The name in the source (`line:column` by its `Display`).
    pub span: Span,
    /// The type as C writes it, array sizes with the defines applied: `float[16][16]`,
    /// `const float*`.
    pub type_text: String,
    pub kind: DeclarationKind,
    pub space: MemorySpace,
    pub scope: Scope,
    pub lifetime: Lifetime,
}

/// The variables kernel `kernel_name` of `source` declares or receives, and the file-scope
/// `__device__` and `__constant__` variables it can see, in source order. `defines` are the
/// launch's `-D NAME=VALUE` overrides, so array sizes are those the launch would have.
///
/// An error if the source does not preprocess, parse or check, if it has no such kernel, or if the
/// kernel (or a function it calls) does not check: the error a launch would give.
pub fn declarations(
    source: &str,
    defines: &[(String, String)],
    kernel_name: &str,
) -> Result<Vec<Declaration>, Diagnostic> {
    let mut unit = kernel::parse(source, defines)?;
    let instance = kernel::templates::instantiate(&mut unit, kernel_name)?;
    let kernel_name = instance.as_str();
    let program = kernel::sema::check(&unit)?;
    let kernel_ir = program.kernel(kernel_name)?;
    let kernel_index = program.kernel_index(kernel_name);
    let Some(function) = unit.items.iter().find_map(|item| match item {
        Item::Function(f) if f.kind == FunctionKind::Kernel && f.name == kernel_name => Some(f),
        _ => None,
    }) else {
        // `program.kernel` found it, so the tree has it too; answered all the same.
        return Err(Diagnostic::new(
            Span::default(),
            format!("there is no kernel named '{kernel_name}'"),
        ));
    };
    // The checked memory objects carry the full types (array sizes evaluated) and the check's
    // decision about registers, found by the span of their name.
    let object = |span: Span, in_kernel: bool| {
        program.objects.iter().find(|o| {
            o.span == span
                && (if in_kernel {
                    o.function == kernel_index
                } else {
                    o.function.is_none()
                })
        })
    };

    let mut found = Vec::new();
    for item in &unit.items {
        let Item::Variable(declaration) = item else {
            continue;
        };
        // A file-scope constant without a memory space is folded into the code: no memory.
        if declaration.storage == Storage::Automatic {
            continue;
        }
        let kind = match declaration.storage {
            Storage::Constant => DeclarationKind::Constant,
            _ => DeclarationKind::Device,
        };
        for d in &declaration.declarators {
            let ty = object(d.span, false).map_or(&d.ty, |o| &o.ty);
            found.push(declaration_of(
                &d.name,
                d.span,
                ty,
                is_const(declaration, d),
                kind,
            ));
        }
    }
    for param in &kernel_ir.params {
        let kind = if matches!(param.ty, Type::Pointer { .. }) {
            DeclarationKind::PointerParameter
        } else {
            DeclarationKind::ScalarParameter
        };
        let is_const = function
            .params
            .iter()
            .find(|p| p.span == param.span)
            .is_some_and(|p| p.is_const);
        found.push(declaration_of(
            &param.name,
            param.span,
            &param.ty,
            is_const,
            kind,
        ));
    }
    // The kernel's statements, walked with a list rather than recursion, in any order: the result
    // is sorted by position below.
    let mut pending: Vec<&Stmt> = function.body.iter().collect();
    while let Some(statement) = pending.pop() {
        match &statement.kind {
            // Enumerators and `constexpr` constants are folded into the code: no storage.
            StmtKind::Declaration(declaration) if declaration.compile_time => {}
            StmtKind::Declaration(declaration) => {
                // A reference is another name for a place declared elsewhere: no storage.
                for d in declaration.declarators.iter().filter(|d| !d.reference) {
                    let checked = object(d.span, true);
                    let ty = checked.map_or(&d.ty, |o| &o.ty);
                    let kind = match (declaration.storage, checked) {
                        (Storage::Shared, _) => DeclarationKind::Shared,
                        (Storage::ExternShared, _) => DeclarationKind::DynamicShared,
                        (_, Some(o)) if o.space == ObjectSpace::Local => {
                            DeclarationKind::AutomaticArray
                        }
                        _ if matches!(ty, Type::Pointer { .. }) => {
                            DeclarationKind::AutomaticPointer
                        }
                        _ => DeclarationKind::AutomaticScalar,
                    };
                    let mut found_here =
                        declaration_of(&d.name, d.span, ty, is_const(declaration, d), kind);
                    if kind == DeclarationKind::AutomaticArray
                        && checked.is_some_and(|o| !o.in_registers)
                    {
                        found_here.space = MemorySpace::Local;
                    }
                    found.push(found_here);
                }
            }
            StmtKind::Block(statements) => pending.extend(statements),
            StmtKind::If(_, then, otherwise) => {
                pending.push(then);
                pending.extend(otherwise.as_deref());
            }
            StmtKind::While(_, body)
            | StmtKind::DoWhile(body, _)
            | StmtKind::Switch(_, body)
            | StmtKind::Case(_, body) => pending.push(body),
            StmtKind::For { init, body, .. } => {
                pending.extend(init.as_deref());
                pending.push(body);
            }
            StmtKind::Expr(_)
            | StmtKind::Return(_)
            | StmtKind::Break
            | StmtKind::Continue
            | StmtKind::Empty
            | StmtKind::Unsupported(_) => {}
        }
    }
    crate::sorting::sort_by_key(&mut found, |declaration| declaration.span.start);
    Ok(found)
}

/// Whether the variable itself is `const`: a pointer's own `const` (`float* const p`), or for
/// anything else the declaration's (`const int n`). In `const float* p` only what `p` points to is
/// constant, which its type says.
fn is_const(declaration: &SyntaxDeclaration, declarator: &Declarator) -> bool {
    if matches!(declarator.ty, Type::Pointer { .. }) {
        declarator.pointer_const
    } else {
        declaration.is_const
    }
}

/// The row of one variable: its kind decides its space, scope and lifetime (seed 000's table).
fn declaration_of(
    name: &str,
    span: Span,
    ty: &Type,
    is_const: bool,
    kind: DeclarationKind,
) -> Declaration {
    let (space, scope, lifetime) = match kind {
        DeclarationKind::PointerParameter => (
            MemorySpace::Global,
            Scope::GridAndHost,
            Lifetime::Application,
        ),
        DeclarationKind::ScalarParameter => (MemorySpace::Parameter, Scope::Grid, Lifetime::Launch),
        DeclarationKind::AutomaticScalar | DeclarationKind::AutomaticPointer => {
            (MemorySpace::Registers, Scope::Thread, Lifetime::Thread)
        }
        DeclarationKind::AutomaticArray => (
            MemorySpace::RegistersOrLocal,
            Scope::Thread,
            Lifetime::Thread,
        ),
        DeclarationKind::Shared | DeclarationKind::DynamicShared => {
            (MemorySpace::Shared, Scope::Block, Lifetime::Block)
        }
        DeclarationKind::Device => (
            MemorySpace::Global,
            Scope::GridAndHost,
            Lifetime::Application,
        ),
        DeclarationKind::Constant => (
            MemorySpace::Constant,
            Scope::GridAndHost,
            Lifetime::Application,
        ),
    };
    Declaration {
        name: name.to_string(),
        span,
        type_text: type_text(ty, is_const),
        kind,
        space,
        scope,
        lifetime,
    }
}

/// The type as a C declaration writes it: the element type, then the array sizes outermost first
/// (`float[16][17]` for `float s[16][17]`), `const` in front where the declaration has it.
fn type_text(ty: &Type, is_const: bool) -> String {
    let mut element = ty;
    let mut sizes = String::new();
    while let Type::Array(inner, size) = element {
        match size {
            Some(n) => sizes.push_str(&format!("[{n}]")),
            None => sizes.push_str("[]"),
        }
        element = inner;
    }
    // A pointer's own type says whether what it points to is const; `is_const` then means the
    // pointer itself is, which C writes after the star.
    match element {
        Type::Pointer { .. } if is_const => format!("{element} const{sizes}"),
        _ if is_const => format!("const {element}{sizes}"),
        _ => format!("{element}{sizes}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One line per variable: `LINE:COL name: type, space, scope, lifetime`.
    fn check(input: &str, expected: &[&str]) {
        check_with(input, &[], "k", expected);
    }

    fn check_with(input: &str, defines: &[(&str, &str)], kernel: &str, expected: &[&str]) {
        let defines: Vec<(String, String)> = defines
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        let shown: Vec<String> = match declarations(input, &defines, kernel) {
            Ok(found) => found
                .iter()
                .map(|d| {
                    format!(
                        "{} {}: {}, {}, {}, {}",
                        d.span,
                        d.name,
                        d.type_text,
                        d.space.label(),
                        d.scope.label(),
                        d.lifetime.label()
                    )
                })
                .collect(),
            Err(error) => vec![format!("error {error}")],
        };
        assert_eq!(shown, expected, "{input}");
    }

    #[test]
    fn a_pointer_parameter_points_to_global_memory() {
        check(
            "__global__ void k(const float* a, float* b) { b[0] = a[0]; }",
            &[
                "1:32 a: const float*, global memory, grid and host, application",
                "1:42 b: float*, global memory, grid and host, application",
            ],
        );
    }

    #[test]
    fn a_scalar_parameter_is_in_parameter_space_for_the_launch() {
        check(
            "__global__ void k(float* out, int n, const float scale) { out[0] = n * scale; }",
            &[
                "1:26 out: float*, global memory, grid and host, application",
                "1:35 n: int, parameter space (constant memory), grid, launch",
                "1:50 scale: const float, parameter space (constant memory), grid, launch",
            ],
        );
    }

    #[test]
    fn a_shared_tile_lives_per_block() {
        check_with(
            "#ifndef TILE_WIDTH\n\
             #define TILE_WIDTH 4\n\
             #endif\n\
             __global__ void mm(float* a) {\n\
               __shared__ float sa[TILE_WIDTH][TILE_WIDTH + PAD];\n\
               sa[threadIdx.y][threadIdx.x] = a[threadIdx.x];\n\
             }\n",
            &[("TILE_WIDTH", "16"), ("PAD", "1")],
            "mm",
            &[
                "4:27 a: float*, global memory, grid and host, application",
                "5:18 sa: float[16][17], shared memory, block, block",
            ],
        );
    }

    #[test]
    fn compile_time_constants_take_no_memory_space() {
        check(
            "const int TILE = 4;\nenum Side { LEFT, RIGHT };\n\
             __global__ void k(float* a) {\n\
               constexpr int twice = 2 * TILE;\n\
               __shared__ float t[twice];\n\
               a[RIGHT] = t[threadIdx.x];\n\
             }",
            &[
                "3:26 a: float*, global memory, grid and host, application",
                "5:18 t: float[8], shared memory, block, block",
            ],
        );
    }

    #[test]
    fn a_reference_takes_no_memory_space_of_its_own() {
        check(
            "__global__ void k(float* a) {\n\
               __shared__ float t[4];\n\
               float &x = t[threadIdx.x], y = 1.0f;\n\
               x = y;\n\
             }",
            &[
                "1:26 a: float*, global memory, grid and host, application",
                "2:18 t: float[4], shared memory, block, block",
                "3:28 y: float, registers, thread, thread",
            ],
        );
    }

    #[test]
    fn a_dynamic_shared_array_lives_per_block_too() {
        check(
            "__global__ void k(int* r) { extern __shared__ int s_data[]; s_data[0] = r[0]; }",
            &[
                "1:24 r: int*, global memory, grid and host, application",
                "1:51 s_data: int[], shared memory, block, block",
            ],
        );
    }

    #[test]
    fn a_shared_scalar_is_one_per_block() {
        check(
            "__global__ void k(int* r) { __shared__ int partial; partial = 0; r[0] = partial; }",
            &[
                "1:24 r: int*, global memory, grid and host, application",
                "1:44 partial: int, shared memory, block, block",
            ],
        );
    }

    #[test]
    fn automatic_scalars_and_loop_counters_live_in_registers() {
        check(
            "__global__ void k(float* c) {\n\
               int row = threadIdx.y;\n\
               float result = 0;\n\
               for (int k = 0; k < 4; ++k) { float2 p = make_float2(1, 2); result += p.x; }\n\
               if (row == 0) { float* out = c; out[0] = result; }\n\
             }\n",
            &[
                "1:26 c: float*, global memory, grid and host, application",
                "2:5 row: int, registers, thread, thread",
                "3:7 result: float, registers, thread, thread",
                "4:10 k: int, registers, thread, thread",
                "4:38 p: float2, registers, thread, thread",
                "5:24 out: float*, registers, thread, thread",
            ],
        );
    }

    #[test]
    fn an_array_indexed_at_run_time_lives_in_local_memory() {
        check(
            "__global__ void k(float* out, int n) {\n\
               float heap[10];\n\
               for (int i = 0; i < n; ++i) heap[i % 10] = i;\n\
               out[0] = heap[n % 10];\n\
             }\n",
            &[
                "1:26 out: float*, global memory, grid and host, application",
                "1:35 n: int, parameter space (constant memory), grid, launch",
                "2:7 heap: float[10], local memory, thread, thread",
                "3:10 i: int, registers, thread, thread",
            ],
        );
    }

    #[test]
    fn an_array_with_constant_indices_may_stay_in_registers() {
        check(
            "__global__ void k(float* out) {\n\
               float w[3] = {1, 2, 3};\n\
               float sum = 0;\n\
               for (int i = 0; i < 3; ++i) sum += w[i];\n\
               out[0] = sum + w[2];\n\
             }\n",
            &[
                "1:26 out: float*, global memory, grid and host, application",
                "2:7 w: float[3], registers or local memory, thread, thread",
                "3:7 sum: float, registers, thread, thread",
                "4:10 i: int, registers, thread, thread",
            ],
        );
    }

    #[test]
    fn device_and_constant_variables_are_seen_by_the_grid_and_the_host() {
        check(
            "__device__ int my_global_variable;\n\
             __constant__ int my_constant_variable = 13;\n\
             __constant__ float weights[4];\n\
             __global__ void k(int* out) { out[0] = my_global_variable + my_constant_variable; }\n",
            &[
                "1:16 my_global_variable: int, global memory, grid and host, application",
                "2:18 my_constant_variable: int, constant memory, grid and host, application",
                "3:20 weights: float[4], constant memory, grid and host, application",
                "4:24 out: int*, global memory, grid and host, application",
            ],
        );
    }

    #[test]
    fn only_the_named_kernel_is_listed() {
        check_with(
            "__global__ void first(int* a) { int x = 1; a[0] = x; }\n\
             __global__ void second(float* b) { float y = 2; b[0] = y; }\n",
            &[],
            "second",
            &[
                "2:31 b: float*, global memory, grid and host, application",
                "2:42 y: float, registers, thread, thread",
            ],
        );
    }

    #[test]
    fn a_const_pointer_and_a_pointer_to_const_are_told_apart() {
        check(
            "__global__ void k(const int* input, int* const result) { result[0] = input[0]; }",
            &[
                "1:30 input: const int*, global memory, grid and host, application",
                "1:48 result: int* const, global memory, grid and host, application",
            ],
        );
    }

    #[test]
    fn a_const_pointer_variable_and_a_pointer_to_const_are_told_apart() {
        check(
            "__global__ void k(float* a) {\n\
               const float* p = a;\n\
               float* const q = a;\n\
               const int n = 4;\n\
               q[0] = p[0] + n;\n\
             }\n",
            &[
                "1:26 a: float*, global memory, grid and host, application",
                "2:14 p: const float*, registers, thread, thread",
                "3:14 q: float* const, registers, thread, thread",
                "4:11 n: const int, registers, thread, thread",
            ],
        );
    }

    #[test]
    fn an_error_in_the_source_is_the_launch_error() {
        check(
            "__global__ void k(float* c) {\n  c[0] = m;\n}\n",
            &["error 2:10: 'm' is not declared"],
        );
        check(
            "__global__ void k(float* c) { c[0] = 1 }",
            &["error 1:39: expected ';' after the expression, found '}'"],
        );
        check_with(
            "__global__ void k(float* c) { c[0] = 1; }",
            &[],
            "mm_tiled",
            &["error 0:0: there is no kernel named 'mm_tiled' (kernels: k)"],
        );
    }

    #[test]
    fn the_lecture_matmul_has_shared_tiles_and_global_matrices() {
        let source = crate::lesson_kernels::MATMUL;
        let defines = [("TILE_WIDTH", "16"), ("PAD", "0")];
        let defines: Vec<(String, String)> = defines
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        let found = declarations(source, &defines, "mm_tiled").expect("the lecture kernel checks");
        let spaces: Vec<(&str, MemorySpace)> =
            found.iter().map(|d| (d.name.as_str(), d.space)).collect();
        assert!(spaces.contains(&("sa", MemorySpace::Shared)), "{spaces:?}");
        assert!(spaces.contains(&("sb", MemorySpace::Shared)), "{spaces:?}");
        assert!(spaces.contains(&("a", MemorySpace::Global)), "{spaces:?}");
        assert!(
            spaces.contains(&("n", MemorySpace::Parameter)),
            "{spaces:?}"
        );
    }
}
