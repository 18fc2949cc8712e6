//! The syntax tree of the kernel language, and its types.
//!
//! The language is the subset of CUDA C++ that the lecture kernels are written in (seeds 000-004
//! and `tests/reference/kernels/*.cu`): `__global__` kernels and `__device__` helpers, scalar,
//! pointer, vector (`float2`, `float3`, `int4`, `uchar4`, `dim3`, ...) and array types, the
//! variable type qualifiers `__shared__`, `__constant__`, `__device__` of the CUDA C++ Programming
//! Guide section "Variable Memory Space Specifiers", and C's statements and operators. The tree keeps a span on
//! every node so that later errors point into the source.

use super::lexer::Token;
use super::span::{Diagnostic, Span};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The arithmetic types. `I64`/`U64` are the 64-bit `long long`/`unsigned long long` (`long` and
/// `size_t` on nvcc's hosts); `char` is signed as on nvcc's hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    /// `half` (`__half`, cuda_fp16.h): IEEE binary16, 2 bytes.
    F16,
    /// `__nv_bfloat16` (cuda_bf16.h): bfloat16, float's exponent with 8 bits of significand.
    BF16,
}

impl Scalar {
    /// The start of the name a vector of this scalar is shown with (`float` of `float3`); `dim3`
    /// shows as `uint3`, its layout.
    pub fn vector_base(self) -> &'static str {
        match self {
            Scalar::I8 => "char",
            Scalar::U8 => "uchar",
            Scalar::I16 => "short",
            Scalar::U16 => "ushort",
            Scalar::U32 => "uint",
            Scalar::I64 => "longlong",
            Scalar::U64 => "ulonglong",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
            Scalar::F16 => "half",
            Scalar::BF16 => "__nv_bfloat16",
            Scalar::Bool | Scalar::I32 => "int",
        }
    }

    /// The alignment in bytes of a vector of `n` components of this scalar, as nvcc's
    /// `vector_types.h` declares them: three components align as one, one, two or four as the
    /// whole vector, at most 16 bytes (`header_names` checks every type against nvcc).
    pub fn vector_align(self, n: u8) -> u32 {
        let size = self.size() * u32::from(n);
        if n == 3 {
            self.size()
        } else {
            size.min(16)
        }
    }

    pub fn size(self) -> u32 {
        match self {
            Scalar::Bool | Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::BF16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::BF16)
    }

    /// The value of a float of this type held as `bits` (a `float` in its low 32 bits, a
    /// `half` or `__nv_bfloat16` in its low 16).
    pub fn float_value(self, bits: u64) -> f64 {
        match self {
            Scalar::F16 => half::f16::from_bits(bits as u16).to_f64(),
            Scalar::BF16 => half::bf16::from_bits(bits as u16).to_f64(),
            Scalar::F32 => f64::from(f32::from_bits(bits as u32)),
            _ => f64::from_bits(bits),
        }
    }

    /// `value` rounded once, to nearest even, to a float of this type, as its bits.
    pub fn float_bits(self, value: f64) -> u64 {
        match self {
            Scalar::F16 => u64::from(half::f16::from_f64(value).to_bits()),
            Scalar::BF16 => u64::from(half::bf16::from_f64(value).to_bits()),
            Scalar::F32 => u64::from((value as f32).to_bits()),
            _ => value.to_bits(),
        }
    }

    /// `half` or `__nv_bfloat16`: a storage type whose arithmetic memplay does in `float`,
    /// rounding where a value is stored as 16 bits (`sema`'s `common`).
    pub fn is_half(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16)
    }

    pub fn is_integer(self) -> bool {
        !self.is_float()
    }

    pub fn is_signed(self) -> bool {
        matches!(
            self,
            Scalar::I8
                | Scalar::I16
                | Scalar::I32
                | Scalar::I64
                | Scalar::F32
                | Scalar::F64
                | Scalar::F16
                | Scalar::BF16
        )
    }

    /// The integer conversion rank of C (C11 6.3.1.1), with floats above every integer.
    pub fn rank(self) -> u8 {
        match self {
            Scalar::Bool => 0,
            Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 => 3,
            Scalar::I64 | Scalar::U64 => 4,
            Scalar::F16 | Scalar::BF16 => 5,
            Scalar::F32 => 6,
            Scalar::F64 => 7,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I8 => "char",
            Scalar::U8 => "unsigned char",
            Scalar::I16 => "short",
            Scalar::U16 => "unsigned short",
            Scalar::I32 => "int",
            Scalar::U32 => "unsigned int",
            Scalar::I64 => "long long",
            Scalar::U64 => "unsigned long long",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
            Scalar::F16 => "half",
            Scalar::BF16 => "__nv_bfloat16",
        }
    }
}

/// A type of the kernel language.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Void,
    Scalar(Scalar),
    /// `float2`, `int4`, `uchar3`, ...: a scalar repeated 1 to 4 times (`.x .y .z .w`). `dim3` is
    /// `uint3`, which has its layout.
    Vector(Scalar, u8),
    /// A pointer; `pointee_const` for `const T*`.
    Pointer {
        pointee: Box<Type>,
        pointee_const: bool,
    },
    /// An array of a known number of elements (`None`: `extern __shared__ T a[]`).
    Array(Box<Type>, Option<u32>),
    /// A `struct` or `class`, laid out (`record`).
    Struct(Arc<Record>),
}

impl Type {
    pub fn pointer_to(pointee: Type, pointee_const: bool) -> Type {
        Type::Pointer {
            pointee: Box::new(pointee),
            pointee_const,
        }
    }

    /// Bytes the type occupies (`sizeof`); 0 for `void` and unsized arrays.
    pub fn size(&self) -> u64 {
        match self {
            Type::Void => 0,
            Type::Scalar(s) => u64::from(s.size()),
            Type::Vector(s, n) => u64::from(s.size()) * u64::from(*n),
            Type::Pointer { .. } => 8,
            Type::Array(elem, n) => elem.size().saturating_mul(u64::from(n.unwrap_or(0))),
            Type::Struct(record) => record.size,
        }
    }

    /// The alignment of the type in bytes: vectors as `vector_types.h` aligns them
    /// (`Scalar::vector_align`).
    pub fn align(&self) -> u64 {
        match self {
            Type::Void => 1,
            Type::Scalar(s) => u64::from(s.size()),
            Type::Vector(s, n) => u64::from(s.vector_align(*n)),
            Type::Pointer { .. } => 8,
            Type::Array(elem, _) => elem.align(),
            Type::Struct(record) => record.align,
        }
    }

    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    /// The innermost element type of a (possibly multi-dimensional) array.
    pub fn innermost(&self) -> &Type {
        match self {
            Type::Array(elem, _) => elem.innermost(),
            other => other,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Void => f.write_str("void"),
            Type::Scalar(s) => f.write_str(s.name()),
            Type::Vector(s, n) => write!(f, "{}{n}", s.vector_base()),
            Type::Pointer {
                pointee,
                pointee_const,
            } => {
                if *pointee_const {
                    write!(f, "const {pointee}*")
                } else {
                    write!(f, "{pointee}*")
                }
            }
            Type::Array(elem, Some(n)) => write!(f, "{elem}[{n}]"),
            Type::Array(elem, None) => write!(f, "{elem}[]"),
            Type::Struct(record) => write!(f, "{record}"),
        }
    }
}

/// One data member.
#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub ty: Type,
    /// Bytes from the start of the struct.
    pub offset: u64,
    /// The index of its first leaf among the struct's leaves.
    pub first_leaf: u32,
}

/// One scalar of a struct's value: where it is and what it holds (pointers are `U64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leaf {
    pub offset: u64,
    pub scalar: Scalar,
}

/// A struct or class type, laid out (`record` lays it out and plans its copies). Two records are the same type when they are the same
/// definition (`id`), as C++ types are named, not structural.
#[derive(Clone, Debug)]
pub struct Record {
    pub id: u32,
    /// The full name (`geometry::Point`).
    pub name: String,
    pub fields: Vec<Field>,
    pub size: u64,
    pub align: u64,
    /// Every scalar of a value, in member order; `None` when there are more than
    /// `record::MAX_LEAVES`.
    pub leaves: Option<Vec<Leaf>>,
    /// A member is an array: a local variable of the type lives in local memory, where its
    /// array can be indexed.
    pub has_array: bool,
}

impl PartialEq for Record {
    fn eq(&self, other: &Record) -> bool {
        self.id == other.id
    }
}

impl Eq for Record {}

impl Hash for Record {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// Where a variable lives, from its declaration (CUDA C++ Programming Guide, "Variable Memory Space
/// Specifiers"; seed 000, "CUDA Variable Type Qualifiers").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// No qualifier: registers for scalars, local memory (or registers) for arrays.
    Automatic,
    Shared,
    /// `extern __shared__ T a[];`: the dynamic shared memory of the launch.
    ExternShared,
    Constant,
    /// `__device__ T g;` at file scope: global memory.
    Device,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
    BitNot,
    Deref,
    AddrOf,
    PreInc,
    PreDec,
    PostInc,
    PostDec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    And,
    Or,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Lt => "<",
            BinaryOp::Gt => ">",
            BinaryOp::Le => "<=",
            BinaryOp::Ge => ">=",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitXor => "^",
            BinaryOp::BitOr => "|",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Ident(String),
    Int {
        value: u64,
        unsigned: bool,
        long: bool,
        hex: bool,
    },
    Float {
        value: f64,
        single: bool,
    },
    Bool(bool),
    /// A string literal, adjacent literals joined, with its escape sequences read: memplay
    /// reads one only as a device `printf`'s format or `%s` argument, and as `assert`'s text.
    Str(String),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `a = b` (`None`) or a compound assignment such as `a += b`.
    Assign(Option<BinaryOp>, Box<Expr>, Box<Expr>),
    Conditional(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A call of the function `name`. A member function's call `v.f(x)` is the call `.f` whose
    /// first argument is the object: `Call { name: ".f", args: [v, x] }`.
    Call {
        name: String,
        name_span: Span,
        args: Vec<Expr>,
    },
    Index(Box<Expr>, Box<Expr>),
    Member {
        base: Box<Expr>,
        field: String,
        field_span: Span,
    },
    Cast(Type, Box<Expr>),
    SizeofType(Type),
    SizeofExpr(Box<Expr>),
    Comma(Box<Expr>, Box<Expr>),
}

/// An initialiser: an expression or a braced list (`float w[3] = {1, 2, 3};`).
impl Expr {
    /// Calls `visit` on this expression and then on each expression inside it, outer before
    /// inner and left to right: the one walk over an expression's tree that the passes after the
    /// parser share (the barrier helpers' calls in `sema::inline`, the reads that
    /// `memplay_sim::compile_effects` looks at). The parser bounds the tree's depth.
    pub fn walk(&self, visit: &mut dyn FnMut(&Expr)) {
        visit(self);
        match &self.kind {
            ExprKind::Unary(_, inner)
            | ExprKind::Cast(_, inner)
            | ExprKind::SizeofExpr(inner)
            | ExprKind::Member { base: inner, .. } => inner.walk(visit),
            ExprKind::Binary(_, lhs, rhs)
            | ExprKind::Assign(_, lhs, rhs)
            | ExprKind::Index(lhs, rhs)
            | ExprKind::Comma(lhs, rhs) => {
                lhs.walk(visit);
                rhs.walk(visit);
            }
            ExprKind::Conditional(cond, then, otherwise) => {
                cond.walk(visit);
                then.walk(visit);
                otherwise.walk(visit);
            }
            ExprKind::Call { args, .. } => args.iter().for_each(|arg| arg.walk(visit)),
            ExprKind::Ident(_)
            | ExprKind::Int { .. }
            | ExprKind::Float { .. }
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::SizeofType(_) => {}
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Initializer {
    Expr(Expr),
    List(Vec<Initializer>, Span),
}

/// One name of a declaration: `*p`, `a[N][M] = ...`.
#[derive(Clone, Debug, PartialEq)]
pub struct Declarator {
    pub name: String,
    pub span: Span,
    /// The declarator's own pointer is `const` (`float* const p`): `p` cannot move. (In `const
    /// float* p` it is what `p` points to that is constant, which the pointer type says.)
    pub pointer_const: bool,
    /// The type with the declarator's pointers applied, before its array dimensions.
    pub ty: Type,
    /// Array dimensions, outermost first; `None` for `[]`.
    pub dims: Vec<Option<Expr>>,
    pub init: Option<Initializer>,
    /// The alignment in bytes that `__attribute__((aligned(n)))` asks for, if any.
    pub align: Option<u64>,
    /// Declared as a reference (`float &r = a[i];`): the name is another name for the place its
    /// initialiser designates (C++ [dcl.ref]), of type `ty`.
    pub reference: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Declaration {
    pub storage: Storage,
    /// The base type is `const` (`const int n = 4;`).
    pub is_const: bool,
    /// `constexpr`, or the enumerators of an `enum`: each name is a compile-time constant, with
    /// no register or memory behind it, when its initialiser folds.
    pub compile_time: bool,
    /// The type is `auto`: each declarator takes the type of its initialiser (C++ [dcl.spec.auto]:
    /// top-level `const` dropped, arrays decayed to pointers).
    pub is_auto: bool,
    pub declarators: Vec<Declarator>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Declaration(Declaration),
    Expr(Expr),
    Block(Vec<Stmt>),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    While(Expr, Box<Stmt>),
    DoWhile(Box<Stmt>, Expr),
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Expr>,
        body: Box<Stmt>,
        /// The `#pragma unroll` written before the loop: `Some(None)` without a count.
        pragma_unroll: Option<Option<u64>>,
    },
    Return(Option<Expr>),
    Break,
    Continue,
    Empty,
    /// `switch (value) body`: the body's `case` and `default` labels pick where lanes start, and
    /// they run on until a `break` (C11 6.8.4.2).
    Switch(Expr, Box<Stmt>),
    /// A statement labelled `case value:` (`Some`) or `default:` (`None`); only a statement of
    /// a `switch`'s body may carry one.
    Case(Option<Expr>, Box<Stmt>),
    /// A construct the simulator does not model (`goto`, cooperative groups): the parser skips it and
    /// keeps its error here, so only a kernel that uses it fails to compile, as nvcc would compile
    /// the others. A real syntax error still fails the whole file.
    Unsupported(Diagnostic),
}

/// `__global__` (a kernel) or `__device__` (a helper called from kernels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    Kernel,
    Device,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub span: Span,
    pub ty: Type,
    /// The parameter itself is `const` (`const int width`).
    pub is_const: bool,
    /// A reference parameter (`float &out`, `const float &v`): it names the argument's place,
    /// of type `ty`, for the call (C++ [dcl.init.ref]).
    pub reference: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub kind: FunctionKind,
    pub ret: Type,
    pub name: String,
    pub span: Span,
    pub params: Vec<Param>,
    /// Declared `constexpr`: a call with constant arguments folds where a constant is needed.
    pub is_constexpr: bool,
    pub body: Vec<Stmt>,
    /// The closing brace, where a function without `return` ends.
    pub end_span: Span,
    /// `__launch_bounds__(...)` written on the function.
    pub launch_bounds: Option<Box<LaunchBounds>>,
}

/// `__launch_bounds__(maxThreadsPerBlock, minBlocksPerMultiprocessor)` as written (CUDA C++
/// Programming Guide, "Launch Bounds"); a third argument (blocks per cluster) is read and ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchBounds {
    pub max_threads: Expr,
    pub min_blocks: Option<Expr>,
    pub span: Span,
}

/// A parsed source file: file-scope variables and functions, in source order.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Variable(Declaration),
    Function(Function),
    /// Host code, read past (`parser/host.rs`).
    Host(HostItem),
}

/// A file-scope item of host code: a host function (`main` included), a host variable or a class
/// only the host uses. Sema skips it; `launches` reads its tokens.
#[derive(Clone, Debug, PartialEq)]
pub struct HostItem {
    /// The function's or variable's name (the last one a declaration names), or the class's.
    pub name: String,
    pub span: Span,
    /// A function, with its body when it has one.
    pub function: bool,
    /// The item's tokens in the preprocessed token stream the parser read.
    pub tokens: std::ops::Range<usize>,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct TranslationUnit {
    pub items: Vec<Item>,
    /// The function templates the file defines, which `items` holds only as instantiations.
    pub templates: Templates,
    /// The `static_assert`s outside functions (at file scope and in structs), each a call of
    /// `static_assert` with its condition and message, which sema folds.
    pub static_asserts: Vec<Expr>,
}

/// The function templates of a file (C++ [temp]) and what instantiating more of them needs:
/// an instantiation is the file read again with one more instantiation asked for
/// (`crate::templates`), so the file's tokens are kept (only when it defines a template).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Templates {
    pub list: Vec<Template>,
    pub tokens: Vec<Token>,
    /// The canonical names of the instantiations asked for from outside the file's text: the
    /// launched kernel, and the calls whose arguments sema deduced.
    pub requests: Vec<String>,
}

/// A function template: its full name, parameters and how a call deduces them.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    pub name: String,
    pub kind: FunctionKind,
    pub params: Vec<TemplateParam>,
    /// For each parameter of the function, the template parameter a call's argument deduces
    /// (a parameter written `T`, `T*` or `const T*`), if any ([temp.deduct.call]).
    pub deduce: Vec<Option<Deduce>>,
    pub span: Span,
}

/// A template parameter: a type (`typename T`, `class T`) or a value of an integer type
/// (`int TILE`), with or without a default argument.
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateParam {
    pub name: String,
    /// The type of a non-type parameter; `None` for a type parameter.
    pub value_type: Option<Type>,
    /// The default argument, if the template gives one.
    pub default: Option<TemplateArg>,
}

impl Template {
    /// The error for a use of the template that leaves its parameters from `first` on without
    /// an argument: "'mm' needs its template arguments T and TILE (template <typename T, int
    /// TILE>)".
    pub fn missing(&self, first: usize) -> String {
        let names: Vec<&str> = self
            .params
            .iter()
            .skip(first)
            .filter(|p| p.default.is_none())
            .map(|p| p.name.as_str())
            .collect();
        let all: Vec<String> = self.params.iter().map(TemplateParam::to_string).collect();
        let plural = if names.len() == 1 { "" } else { "s" };
        format!(
            "'{}' needs its template argument{plural} {} (template <{}>)",
            self.name,
            names.join(" and "),
            all.join(", ")
        )
    }

    /// The template as the page lists a kernel: `mm<typename T, int TILE>`.
    pub fn signature(&self) -> String {
        let all: Vec<String> = self.params.iter().map(TemplateParam::to_string).collect();
        format!("{}<{}>", self.name, all.join(", "))
    }
}

/// A function parameter written `T` (`pointer` false) or `T*` / `const T*` (`pointer` true),
/// where `T` is template parameter `param`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Deduce {
    pub param: usize,
    pub pointer: bool,
}

/// A template argument: a type, or an integer value.
#[derive(Clone, Debug, PartialEq)]
pub enum TemplateArg {
    Type(Type),
    Value(i64),
}

impl fmt::Display for TemplateArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateArg::Type(ty) => write!(f, "{ty}"),
            TemplateArg::Value(value) => write!(f, "{value}"),
        }
    }
}

impl fmt::Display for TemplateParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value_type {
            Some(ty) => write!(f, "{ty} {}", self.name)?,
            None => write!(f, "typename {}", self.name)?,
        }
        match &self.default {
            Some(default) => write!(f, " = {default}"),
            None => Ok(()),
        }
    }
}
