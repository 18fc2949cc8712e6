//! The bounds that keep any kernel text, typed by a student into the page or given to the command
//! line, from crashing or freezing the simulator.
//!
//! The same code runs natively and in a browser tab, where a stack overflow kills the page and an
//! endless loop freezes it. A browser gives WebAssembly about 1 MB of stack, far less than a native
//! main thread, so every recursive walk of the front end (preprocessor `#if` expressions, the
//! parser, sema, the interpreter's expression evaluation) is bounded by the nesting limits below,
//! and every stage's output is bounded in size. Each limit is far above what the lecture kernels
//! need (their deepest expression nests about a dozen levels) and each is reported as a plain
//! `Diagnostic` naming the limit. The step budget that bounds a run is `simulate::DEFAULT_STEP_BUDGET`.

/// Kernel source longer than this many bytes is refused before lexing. The longest lecture file is
/// under 2 KB; a megabyte is a generous ceiling for anything typed or pasted.
pub const MAX_SOURCE_BYTES: usize = 1 << 20;

/// Parentheses, brackets, blocks, statement bodies, prefix operators, `?:` and assignment chains
/// nested deeper than this are an error (parser), and so are `#if` conditions whose evaluation
/// recurses deeper than this (preprocessor). Each level of the parser costs at most a bounded
/// number of stack frames, so this bounds the parser's stack use.
pub const MAX_NESTING: u32 = 96;

/// Expression trees deeper than this (long chains such as `1+1+...+1`) are an error. Sema and the
/// interpreter walk expression trees recursively, so this bounds their stack use too. The parser
/// knows each node's depth as it makes it and stops there, so a deeper tree is never built (or
/// dropped, which is recursive too).
pub const MAX_TREE_DEPTH: usize = 200;

/// A declarator's pointer levels (`int**`), and separately its array dimensions (`a[2][3]`),
/// number at most this many. Types are nested boxes that sema walks and drops recursively; the
/// lecture kernels use one level of each, two at most.
pub const MAX_TYPE_DEPTH: usize = 16;

/// `__device__` calls nested deeper than this are an error at run time (recursion included).
pub const MAX_CALL_DEPTH: u32 = 24;

/// How many `__device__` functions that wait at `__syncthreads()` or take a reference may be
/// lowered one into another (`sema`'s `inline`); a function that calls itself reaches it and is
/// reported as recursion.
pub const MAX_INLINED_CALL_DEPTH: u32 = 8;

/// A function's lowered code may hold at most this many ops: the bodies lowered into it grow it
/// past its own text (eight functions each calling the next ten times would make ten million
/// copies), and the source's tokens bound everything else.
pub const MAX_LOWERED_OPS: usize = 200_000;

/// The preprocessor stops with an error once its output exceeds this many tokens (a macro that
/// doubles itself eighteen times would otherwise produce millions). The tokens a macro's expanded
/// arguments make on the way count too, so no intermediate list can grow past it either.
pub const MAX_PREPROCESSED_TOKENS: usize = 200_000;

/// The preprocessor stops with an error after this many macro expansions, so nested function-like
/// macros cannot take seconds before their first output.
pub const MAX_MACRO_EXPANSIONS: usize = 100_000;

/// Macros expanding inside macros (or inside their arguments) deeper than this are an error; it
/// bounds the preprocessor's recursion, which happens once per level. Macros that expand to
/// themselves are not re-expanded, as in C, so only a chain of this many distinct macros reaches
/// it.
pub const MAX_MACRO_DEPTH: usize = 64;

/// A diagnostic's message is cut to this many characters (with an ellipsis), so a megabyte
/// identifier echoed in an error cannot flood a terminal or the page.
pub const MAX_MESSAGE_CHARS: usize = 240;

/// The names a file may declare at file scope, and the type aliases in scope at once: the parser
/// looks each name it reads up among them (`parser/names.rs`), so their number bounds the time a
/// file takes to read. Kernels from a course declare tens.
pub const MAX_DECLARED_NAMES: usize = 2_048;

/// The most kernel launches `launches` reads in a program's host code; each costs a few passes
/// of the front end over one expression.
pub const MAX_HOST_LAUNCHES: usize = 1_000;

/// Template instantiations a file may make, its own calls', the launch's and the deduced ones
/// together: each is a function read and checked, and a template that instantiates itself with
/// ever new arguments (`reduce<N / 2>` without an end) stops here.
pub const MAX_INSTANTIATIONS: usize = 256;

/// How many times the semantic check may read the file again for the instantiations that the
/// calls it deduced need (a deduced call in an instantiation needs one more reading).
pub const MAX_DEDUCTION_ROUNDS: usize = 8;

/// The most lines a launch's device `printf` output keeps; the rest are counted and reported as
/// "N more lines not shown", so a kernel printing from every thread of a large grid cannot flood
/// the page or the terminal.
pub const MAX_PRINTF_LINES: usize = 64;

/// The most bytes of device `printf` output a launch keeps, in the lines it keeps.
pub const MAX_PRINTF_BYTES: usize = 16 * 1024;

/// The most conversions one `printf` format string may hold. CUDA's `vprintf` takes at most 32
/// arguments after the format (CUDA C++ Programming Guide, "Formatted Output", limitations).
pub const MAX_PRINTF_ARGUMENTS: usize = 32;
