//! The parser: tokens to a syntax tree, by recursive descent with precedence climbing.
//!
//! It reads the C subset of `ast`: file-scope `__constant__`/`__device__` variables, `__global__`
//! kernels and `__device__` helpers, declarations, statements and C's expression grammar with its
//! precedence levels (C11 standard, section 6.5). Errors name what was expected and point at the
//! token where it was not found; a missing `;` points just after the token it should follow, as
//! clang does.
//!
//! No input can overflow the stack, here or in the stages after: nesting (brackets, blocks,
//! statement bodies, prefix operators, `?:`, assignment chains) is limited to `limits::MAX_NESTING`
//! levels as the parser descends, every expression node knows its depth as it is made and none
//! deeper than `limits::MAX_TREE_DEPTH` is built (so long flat chains such as `1+1+...+1` stop
//! there too), and a type's pointer levels and array dimensions are limited to
//! `limits::MAX_TYPE_DEPTH`.
//!
//! Constructs that are C but not simulated (`goto` and labels)
//! are parsed and kept as `StmtKind::Unsupported` in place of the statement they make or appear
//! in, so only the function that uses them fails (in sema); a syntax error fails the whole file.

use super::ast::{Expr, FunctionKind, Item, LaunchBounds, Storage, TranslationUnit, Type};
use super::header_names::named_type;
use super::lexer::{Punct, Token};
use super::limits::MAX_NESTING;
use super::span::{Diagnostic, DiagnosticKind, Span};

mod cast;
mod cpp_statements;
pub(crate) use cpp_statements::ARRAY_EXTENT;
mod decl;
mod expr;
mod host;
mod names;
mod numeric_limits;
mod record;
pub(crate) use record::{constructor_name, conversion_name, this_object};
mod stmt;
mod template;

pub use template::canonical_name;

pub(crate) use host::{after_match, file_items};

/// Words that may start a declaration.
const DECL_WORDS: [&str; 42] = [
    "void",
    "bool",
    "char",
    "short",
    "int",
    "long",
    "unsigned",
    "signed",
    "float",
    "double",
    "size_t",
    "const",
    "volatile",
    "register",
    "static",
    "inline",
    "extern",
    "__shared__",
    "__constant__",
    "__device__",
    "__managed__",
    "__global__",
    "__host__",
    "__forceinline__",
    "__noinline__",
    "__restrict__",
    "float2",
    "float4",
    "int2",
    "int4",
    "uint2",
    "uint4",
    "double2",
    "uint",
    "ptrdiff_t",
    "__inline__",
    "__attribute__",
    "__launch_bounds__",
    "alignas",
    "__align__",
    "struct",
    "class",
];

/// C++ words that start a declaration (`names` reads the ones that declare names).
const CPP_DECL_WORDS: [&str; 6] = ["constexpr", "auto", "typedef", "using", "enum", "namespace"];

/// Words that may start a declaration: C's, C++'s and CUDA's own, and the type names of the
/// headers (`float3`, `uint8_t`).
fn is_decl_word(word: &str) -> bool {
    DECL_WORDS.contains(&word) || CPP_DECL_WORDS.contains(&word) || named_type(word).is_some()
}

/// Parses a preprocessed token stream.
pub fn parse(tokens: &[Token]) -> Result<TranslationUnit, Diagnostic> {
    parse_with(tokens, &[])
}

/// Parses a preprocessed token stream and instantiates the function templates named in
/// `requests` (`mm<float, 16>`, any spelling) besides those the file's own calls name.
pub fn parse_with(tokens: &[Token], requests: &[String]) -> Result<TranslationUnit, Diagnostic> {
    let mut parser = Parser {
        tokens,
        pos: 0,
        nesting: 0,
        unsupported: None,
        names: names::Names::default(),
        pending: Vec::new(),
        linkage_blocks: 0,
        templates: template::State::default(),
        return_type: None,
        static_asserts: Vec::new(),
    };
    while parser.pos < tokens.len() {
        if parser.eat(Punct::Semi) {
            continue;
        }
        let item = parser.item()?;
        parser.within_name_limit()?;
        parser.pending.extend(item);
    }
    let templates = parser.instantiate_all(requests)?;
    name_overloads(&mut parser.pending);
    Ok(TranslationUnit {
        items: parser.pending,
        templates,
        static_asserts: parser.static_asserts,
    })
}

/// Functions of one name with different parameter types (C++ overloading, [over.load]): each is
/// named with its parameter types, `dot(float3,float3)`, as free operators are, and a call picks
/// the best match of its arguments' types (`sema`'s `call`). A function of a name no other
/// function shares keeps its name.
fn name_overloads(items: &mut [Item]) {
    let signature = |f: &crate::ast::Function| -> Vec<String> {
        f.params.iter().map(|p| p.ty.to_string()).collect()
    };
    let mut overloaded: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Item::Function(f) = item else { continue };
        if f.kind == crate::ast::FunctionKind::Kernel || f.name.contains('(') {
            continue;
        }
        // A kernel's name is not overloaded: a function of its name is defined twice.
        let differs = items[..i].iter().any(|other| {
            matches!(other, Item::Function(g) if g.name == f.name
                && g.kind != crate::ast::FunctionKind::Kernel
                && signature(g) != signature(f))
        });
        if differs && !overloaded.contains(&f.name) {
            overloaded.push(f.name.clone());
        }
    }
    for item in items {
        if let Item::Function(f) = item {
            if f.kind != crate::ast::FunctionKind::Kernel && overloaded.contains(&f.name) {
                f.name = format!("{}({})", f.name, signature(f).join(","));
            }
        }
    }
}

struct Parser<'a> {
    tokens: &'a [Token],
    pos: usize,
    /// Levels of nesting entered and not yet left (`nested`).
    nesting: u32,
    /// An unsupported construct (a name of cooperative groups) met in an expression of the statement being parsed;
    /// `statement` turns that statement into `StmtKind::Unsupported`.
    unsupported: Option<Diagnostic>,
    /// Namespaces, type aliases and the names in scope (`names`).
    names: names::Names,
    /// The file's items read so far, those of namespaces included.
    pending: Vec<Item>,
    /// `extern "C" {` blocks open at file scope, whose `}` the item loop reads past.
    linkage_blocks: u32,
    /// The function templates read so far and the instantiations they need (`template`).
    templates: template::State,
    /// The return type of the function whose body is being read, for `return {a, b};`.
    return_type: Option<Type>,
    /// The `static_assert`s read at file scope and in structs, for sema to fold.
    static_asserts: Vec<Expr>,
}

/// An expression and the depth of its tree, known as it is built (a leaf is 1 deep).
struct Tree {
    expr: Expr,
    depth: usize,
}

/// What a declaration's specifiers said.
struct Specifiers {
    base: Type,
    is_const: bool,
    storage: Storage,
    function: Option<FunctionKind>,
    span: Span,
    /// `__launch_bounds__(...)` among the specifiers.
    launch_bounds: Option<LaunchBounds>,
    /// The alignment an `__attribute__((aligned(n)))` among the specifiers asks for.
    align: Option<u64>,
    /// Array dimensions of a type alias (`typedef float Row[16];`), after the declarator's own.
    dims: Vec<Option<Expr>>,
    /// `constexpr`.
    compile_time: bool,
    /// `auto`.
    is_auto: bool,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a Token> {
        self.tokens.get(self.pos)
    }

    fn peek_at(&self, ahead: usize) -> Option<&'a Token> {
        self.tokens.get(self.pos + ahead)
    }

    fn at(&self, p: Punct) -> bool {
        self.peek().is_some_and(|t| t.is_punct(p))
    }

    fn at_word(&self, word: &str) -> bool {
        self.peek().and_then(|t| t.ident()) == Some(word)
    }

    fn eat(&mut self, p: Punct) -> bool {
        if self.at(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// The span where an error about the current position belongs: the current token, or just
    /// after the last one at the end of the input.
    fn here(&self) -> Span {
        match self.peek() {
            Some(t) => t.span,
            None => self.previous_end(),
        }
    }

    fn previous_end(&self) -> Span {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.tokens.get(i))
            .map(|t| t.span.just_after())
            .unwrap_or(Span {
                line: 1,
                col: 1,
                start: 0,
                end: 0,
            })
    }

    fn previous_span(&self) -> Span {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.tokens.get(i))
            .map(|t| t.span)
            .unwrap_or_default()
    }

    fn found(&self) -> String {
        match self.peek() {
            Some(t) => t.kind.describe(),
            None => "the end of the file".to_string(),
        }
    }

    fn error_here(&self, expected: &str) -> Diagnostic {
        Diagnostic::of_kind(
            DiagnosticKind::Syntax,
            self.here(),
            format!("expected {expected}, found {}", self.found()),
        )
    }

    fn expect(&mut self, p: Punct) -> Result<Span, Diagnostic> {
        if let Some(t) = self.peek() {
            if t.is_punct(p) {
                self.pos += 1;
                return Ok(t.span);
            }
        }
        Err(self.error_here(&format!("'{}'", p.as_str())))
    }

    /// A `;` that ends a statement or declaration; when missing, the error points just after the
    /// previous token, where the `;` belongs.
    fn expect_semi(&mut self, after: &str) -> Result<(), Diagnostic> {
        if self.eat(Punct::Semi) {
            return Ok(());
        }
        Err(Diagnostic::of_kind(
            DiagnosticKind::Syntax,
            self.previous_end(),
            format!("expected ';' after {after}, found {}", self.found()),
        ))
    }

    fn ident(&mut self, what: &str) -> Result<(String, Span), Diagnostic> {
        match self.peek() {
            Some(t) => match t.ident() {
                Some(name) if !is_decl_word(name) && !is_statement_word(name) => {
                    self.pos += 1;
                    Ok((name.to_string(), t.span))
                }
                _ => Err(self.error_here(what)),
            },
            None => Err(self.error_here(what)),
        }
    }

    /// Runs `f` one nesting level deeper, or fails at the current token when that is more than
    /// `MAX_NESTING` levels.
    fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, Diagnostic>,
    ) -> Result<T, Diagnostic> {
        if self.nesting >= MAX_NESTING {
            return Err(Diagnostic::new(
                self.here(),
                format!("the code nests deeper than the simulator's limit of {MAX_NESTING} levels"),
            ));
        }
        self.nesting += 1;
        let result = f(self);
        self.nesting -= 1;
        result
    }

    fn starts_declaration(&self) -> bool {
        self.peek()
            .and_then(|t| t.ident())
            .is_some_and(is_decl_word)
            || self.at_alias_type()
    }

    // ----- declarations -----
}

fn is_statement_word(word: &str) -> bool {
    matches!(
        word,
        "if" | "else"
            | "while"
            | "do"
            | "for"
            | "return"
            | "break"
            | "continue"
            | "switch"
            | "case"
            | "default"
            | "goto"
            | "sizeof"
    )
}

#[cfg(test)]
mod tests {
    use super::parse;
    use crate::ast::{Item, Stmt, StmtKind};
    use crate::lexer::lex;

    /// The unsupported statements among `stmts` and the statements inside them, as
    /// `  LINE:COL: message`.
    fn unsupported(stmts: &[Stmt]) -> Vec<String> {
        let mut found = Vec::new();
        for s in stmts {
            match &s.kind {
                StmtKind::Unsupported(d) => found.push(format!("  {d}")),
                StmtKind::Block(inner) => found.extend(unsupported(inner)),
                StmtKind::If(_, then, otherwise) => {
                    found.extend(unsupported(std::slice::from_ref(then)));
                    if let Some(otherwise) = otherwise {
                        found.extend(unsupported(std::slice::from_ref(otherwise)));
                    }
                }
                StmtKind::While(_, body)
                | StmtKind::DoWhile(body, _)
                | StmtKind::For { body, .. } => {
                    found.extend(unsupported(std::slice::from_ref(body)))
                }
                _ => {}
            }
        }
        found
    }

    /// Parses `source` and shows either the outline of the file (one line per function with its
    /// parameter types and statement count, then its unsupported statements; one line per
    /// file-scope variable) or the error.
    fn check(source: &str, expected: &[&str]) {
        let shown = match lex(source).and_then(|t| parse(&t)) {
            Ok(unit) => unit
                .items
                .iter()
                .flat_map(|item| match item {
                    Item::Function(f) => {
                        let params: Vec<String> = f
                            .params
                            .iter()
                            .map(|p| format!("{} {}", p.ty, p.name))
                            .collect();
                        let outline = format!(
                            "{:?} {}({}) {} statements",
                            f.kind,
                            f.name,
                            params.join(", "),
                            f.body.len()
                        );
                        let mut lines = vec![outline];
                        lines.extend(unsupported(&f.body));
                        lines
                    }
                    Item::Variable(d) => {
                        let names: Vec<String> = d
                            .declarators
                            .iter()
                            .map(|x| format!("{} {}", x.ty, x.name))
                            .collect();
                        vec![format!("{:?} {}", d.storage, names.join(", "))]
                    }
                    Item::Host(h) => {
                        let what = if h.function { "function" } else { "item" };
                        vec![format!(
                            "host {what} {} at {}:{}",
                            h.name, h.span.line, h.span.col
                        )]
                    }
                })
                .collect::<Vec<_>>(),
            Err(d) => vec![d.to_string()],
        };
        assert_eq!(shown, expected);
    }

    #[test]
    fn the_naive_matmul_kernel_parses() {
        check(
            "__global__ void mm(const float* a, const float* b, float* c, int n) {\n\
             int row = blockIdx.y * blockDim.y + threadIdx.y;\n\
             int col = blockIdx.x * blockDim.x + threadIdx.x;\n\
             if (row < n && col < n) { float r = 0; for (int k = 0; k < n; ++k) r += a[row*n+k] * b[k*n+col]; c[row*n+col] = r; }\n\
             }",
            &["Kernel mm(const float* a, const float* b, float* c, int n) 3 statements"],
        );
    }

    #[test]
    fn file_scope_constant_and_device_variables_parse() {
        check(
            "__constant__ float weights[16];\n__device__ int counter = 0, other;\n__constant__ int thirteen = 13;",
            &["Constant float weights", "Device int counter, int other", "Constant int thirteen"],
        );
    }

    #[test]
    fn casts_pointers_vectors_and_sizeof_parse() {
        check(
            "__device__ float twice(float x) { return 2.0f * x; }\n\
             __global__ void k(float2* r, char* p, size_t pitch, unsigned int n) {\n\
               float* row = (float*)((char*)p + n * pitch);\n\
               float2 v = r[threadIdx.x]; v.y = (float)sizeof(float4) + twice(v.x);\n\
               register int k = n > 3 ? 1 : 2, j = -k;\n\
               do { k--; } while (k > 0);\n\
               extern __shared__ int dyn[];\n\
             }",
            &[
                "Device twice(float x) 1 statements",
                "Kernel k(float2* r, char* p, unsigned long long pitch, unsigned int n) 6 statements",
            ],
        );
    }

    #[test]
    fn a_missing_semicolon_points_just_after_the_previous_token() {
        check(
            "__global__ void k(int* a) {\n  int i = 0\n  a[i] = 1;\n}",
            &["2:12: expected ';' after the declaration, found 'a'"],
        );
        check(
            "__global__ void k(int* a) {\n  a[0] = 1\n}",
            &["2:11: expected ';' after the expression, found '}'"],
        );
    }

    #[test]
    fn an_unclosed_brace_points_at_it() {
        check(
            "__global__ void k(int* a) {\n  if (a) {\n",
            &["2:10: this '{' is never closed"],
        );
    }

    #[test]
    fn main_is_host_code_read_past() {
        check("int main() { return 0; }", &["host function main at 1:5"]);
    }

    #[test]
    fn host_functions_variables_and_classes_are_read_past_and_device_code_is_kept() {
        check(
            "struct Timer { cudaEvent_t a; Timer() { cudaEventCreate(&a); } ~Timer() {} };\n\
             static int verbose = 0;\n\
             std::vector<float> host_data;\n\
             const int N = 64;\n\
             template <typename T> static T biggest(const std::vector<T>& v) { return v[0]; }\n\
             __host__ __device__ float twice(float x) { return 2.0f * x; }\n\
             __host__ float thrice(float x) { return 3.0f * x; }\n\
             extern \"C\" { void entry(int n); }\n\
             __global__ void k(float* a) { a[threadIdx.x] = twice(N); }\n\
             int main(int argc, char** argv) {\n\
               auto square = [&](int i) { return i * i; };\n\
               std::vector<float> v(N);\n\
               k<<<1, N>>>(nullptr);\n\
               return square(argc);\n\
             }\n",
            &[
                "host item Timer at 1:8",
                "host item verbose at 2:12",
                "host item host_data at 3:20",
                "Automatic int N",
                "host function biggest at 5:32",
                "Device twice(float x) 1 statements",
                "host function thrice at 7:16",
                "host function entry at 8:19",
                "Kernel k(float* a) 1 statements",
                "host function main at 10:5",
            ],
        );
    }

    #[test]
    fn a_constructor_s_member_initialisers_stay_in_its_host_item() {
        check(
            "Grid::Grid(int n) : size{n}, cells(n) { fill(); }\n__global__ void k(int* a) { a[0] = 1; }",
            &[
                "host function Grid at 1:7",
                "Kernel k(int* a) 1 statements",
            ],
        );
    }

    #[test]
    fn an_unclosed_host_function_points_at_its_brace() {
        check(
            "int main() {\n  if (1) {\n  return 0;\n}",
            &["1:12: this '{' is never closed"],
        );
    }

    #[test]
    fn switch_parses_and_goto_and_labels_become_unsupported_statements() {
        check(
            "__global__ void uses_switch(int* a, int x) {\n\
             \x20 switch (x) { case 1: a[0] = 1; break; default: a[0] = 2; }\n\
             \x20 a[1] = 3;\n\
             }\n\
             __global__ void uses_goto(int* a) { goto done; done: a[0] = 1; }\n\
             __global__ void fine(int* a) { a[0] = 1; }",
            &[
                "Kernel uses_switch(int* a, int x) 2 statements",
                "Kernel uses_goto(int* a) 3 statements",
                "  5:37: 'goto' is not simulated; use a loop with 'break' or 'continue', or if/else",
                "  5:48: labels are not simulated (nor is 'goto')",
                "Kernel fine(int* a) 1 statements",
            ],
        );
    }

    #[test]
    fn a_struct_its_member_functions_and_an_arrow_parse() {
        check(
            "struct P { float x, y; __device__ float sum() const { return x + y; } };\n\
             __global__ void k(P* a) {\n  if (a->x) { a[0].y = a->sum(); }\n  a[0] = 2;\n}",
            &[
                "Device P::sum()(P this) 1 statements",
                "Kernel k(P* a) 2 statements",
            ],
        );
    }

    #[test]
    fn a_syntax_error_next_to_an_unsupported_construct_still_fails_the_file() {
        check(
            "__global__ void k(int* a) { a->x = ; }",
            &["1:36: expected an expression, found ';'"],
        );
        check(
            "__global__ void k(int x) { switch (x) { case 1: x = ; } }",
            &["1:53: expected an expression, found ';'"],
        );
        check(
            "__global__ void k(int x) { goto 3; }",
            &["1:33: expected a label after 'goto', found '3'"],
        );
    }

    /// Runs `work` on a thread with a 1 MB stack, about what a browser gives WebAssembly, and
    /// returns its result (a failed assertion inside fails the test).
    fn on_a_small_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
        let thread = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(work)
            .expect("a thread starts");
        match thread.join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// `check` on a 1 MB stack.
    fn check_on_a_small_stack(source: String, expected: &[&str]) {
        let expected: Vec<String> = expected.iter().map(|e| e.to_string()).collect();
        on_a_small_stack(move || {
            let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
            check(&source, &expected)
        });
    }

    /// `__global__ void k(int* a, int x) { BODY }`: the column of `BODY` is 36.
    fn kernel(body: &str) -> String {
        format!("__global__ void k(int* a, int x) {{ {body} }}")
    }

    #[test]
    fn a_chain_of_180000_additions_stops_at_the_depth_limit() {
        check_on_a_small_stack(
            kernel(&format!("a[0] = 1{};", "+1".repeat(180_000))),
            &["1:442: this expression is deeper than the simulator's limit of 200 levels"],
        );
    }

    #[test]
    fn chains_of_and_and_comma_stop_at_the_depth_limit() {
        check_on_a_small_stack(
            kernel(&format!("a[0] = x{};", " && x".repeat(100_000))),
            &["1:1040: this expression is deeper than the simulator's limit of 200 levels"],
        );
        check_on_a_small_stack(
            kernel(&format!("x{};", ", x".repeat(100_000))),
            &["1:634: this expression is deeper than the simulator's limit of 200 levels"],
        );
    }

    #[test]
    fn postfix_chains_stop_at_the_depth_limit() {
        check_on_a_small_stack(
            kernel(&format!("a{};", "[0]".repeat(100_000))),
            &["1:634: this expression is deeper than the simulator's limit of 200 levels"],
        );
        check_on_a_small_stack(
            kernel(&format!("x{};", "++".repeat(100_000))),
            &["1:435: this expression is deeper than the simulator's limit of 200 levels"],
        );
    }

    #[test]
    fn a_hundred_thousand_nested_conditionals_stop_at_the_nesting_limit() {
        check_on_a_small_stack(
            kernel(&format!("a[0] = {}1;", "x ? 1 : ".repeat(100_000))),
            &["1:799: the code nests deeper than the simulator's limit of 96 levels"],
        );
        check_on_a_small_stack(
            kernel(&format!(
                "a[0] = {}1{};",
                "x ? ".repeat(100_000),
                " : 1".repeat(100_000)
            )),
            &["1:423: the code nests deeper than the simulator's limit of 96 levels"],
        );
    }

    #[test]
    fn deep_brackets_blocks_operators_and_assignments_stop_at_the_nesting_limit() {
        let limit = |column: usize| {
            format!("1:{column}: the code nests deeper than the simulator's limit of 96 levels")
        };
        let n = 100_000;
        let cases = [
            (format!("x = {}1{};", "(".repeat(n), ")".repeat(n)), 135),
            (format!("x = {}1;", "- ".repeat(n)), 230),
            (format!("x = {}1;", "(int)".repeat(n)), 515),
            (format!("{}x = 1;{}", "{".repeat(n), "}".repeat(n)), 132),
            (format!("{}x = 1;", "if (x) ".repeat(n)), 708),
            (format!("x{} = 1;", " = x".repeat(n)), 420),
            (format!("a[{}0{}] = 1;", "a[".repeat(n), "]".repeat(n)), 228),
        ];
        for (body, column) in cases {
            check_on_a_small_stack(kernel(&body), &[&limit(column)]);
        }
    }

    #[test]
    fn deep_initializer_lists_and_types_stop_at_their_limits() {
        check_on_a_small_stack(
            kernel(&format!(
                "int v[1] = {}1{};",
                "{".repeat(100_000),
                "}".repeat(100_000)
            )),
            &["1:143: the code nests deeper than the simulator's limit of 96 levels"],
        );
        check_on_a_small_stack(
            kernel(&format!("int {}p;", "*".repeat(100_000))),
            &["1:56: this type has more pointer levels than the simulator's limit of 16"],
        );
        check_on_a_small_stack(
            kernel(&format!("int v{};", "[1]".repeat(100_000))),
            &["1:89: this array has more dimensions than the simulator's limit of 16"],
        );
    }

    #[test]
    fn a_chain_of_typedefs_past_the_name_limit_stops_there() {
        // 2,047 aliases and a kernel are 2,048 names; a 2,049th alias is one too many, named at
        // its name. Each alias names the one before it, the shape that made every look-up scan
        // all the names before it.
        let chain = |count: usize| {
            let mut text = String::from("typedef int t0;\n");
            for k in 1..count {
                text.push_str(&format!("typedef t{} t{k};\n", k - 1));
            }
            text + "__global__ void k(int* a) { a[0] = 1; }\n"
        };
        let within = chain(2_047);
        assert!(parse(&lex(&within).expect("lexes")).is_ok());
        let beyond = chain(2_049);
        let error = parse(&lex(&beyond).expect("lexes")).expect_err("one alias too many");
        assert_eq!(
            (error.span.line, error.span.col),
            (2_049, 15),
            "{}",
            error.message
        );
        assert_eq!(
            error.message,
            "the file declares more than 2048 names, the simulator's limit"
        );
    }
}
