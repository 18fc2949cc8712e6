//! What memplay refuses of the CUDA C++ that nvcc accepts, named in words.
//!
//! A student pastes the kernel their course gave them. Where it uses a construct the simulator
//! does not run, the parser or the semantic check stops at some token, and what it expected there
//! ("expected ';', found 'f'") says nothing of why. This module names the construct instead: the
//! parser's error is explained from the tokens of the statement it stopped in (`explain`), and a
//! call of a function CUDA declares but memplay does not simulate is named by the semantic check
//! (`function`). Either way the diagnostic keeps its place and becomes
//! `DiagnosticKind::NotSimulated`.
//!
//! The words come from the CUDA C++ Programming Guide (sections "C++ Language Support",
//! "Warp Shuffle Functions", "Warp Vote Functions", "Formatted Output", "Dynamic Global Memory
//! Allocation", "Texture Functions", "Warp Matrix Functions", "Cooperative Groups", "Time
//! Function") and the C++ standard's keywords; the table of all of them is tested with a kernel
//! each (`tests/refused.rs`).

use crate::lexer::{Punct, Token, TokenKind};
use crate::span::{Diagnostic, DiagnosticKind};

/// C++ keywords that start a construct memplay does not simulate, and the refusal for it. A
/// keyword cannot be a name, so meeting one in the statement where parsing failed is what failed.
const KEYWORDS: [(&str, &str); 14] = [
    ("template", TEMPLATES),
    ("typename", TEMPLATES),
    ("struct", STRUCTS),
    ("class", STRUCTS),
    ("union", "unions are not simulated"),
    ("asm", "inline PTX assembly (`asm`) is not simulated"),
    ("new", "`new` (allocation in device code) is not simulated"),
    (
        "delete",
        "`delete` (allocation in device code) is not simulated",
    ),
    ("throw", EXCEPTIONS),
    ("try", EXCEPTIONS),
    ("catch", EXCEPTIONS),
    ("operator", OPERATORS),
    ("virtual", "virtual functions are not simulated"),
    (
        "wmma",
        "tensor core matrix fragments (`wmma::`) are not simulated",
    ),
];

const TEMPLATES: &str = "this use of templates (a dependent name `typename T::type`, \
                         `x.template f<...>`, a template inside a function) is not simulated";
const STRUCTS: &str = "this use of `struct` or `class` is not simulated; define the struct in a \
                       declaration of its own";

/// The refusal of an operator function whose operands include no struct.
pub const OPERATORS: &str =
    "operator overloading is simulated for structs, classes and vector types only \
                             (`operator+` of a struct or a `float3`)";
const EXCEPTIONS: &str = "exceptions (`throw`, `try`, `catch`) are not allowed in device code";

/// Types from CUDA's headers that memplay does not simulate, refused where one stands in place
/// of a type.
const TYPES: [(&str, &str); 5] = [
    ("half", HALF),
    ("half2", HALF),
    ("cudaTextureObject_t", TEXTURES),
    ("cudaSurfaceObject_t", TEXTURES),
    ("texture", TEXTURES),
];

const HALF: &str = "`half` and `half2` are declared by cuda_fp16.h: `#include <cuda_fp16.h>` \
                    (or write `__half`)";
const TEXTURES: &str = "textures and surfaces are not simulated; read the array through a pointer";

/// Functions CUDA declares that memplay does not simulate: a name, or the start of names where it
/// ends in `*`.
const FUNCTIONS: [(&str, &str); 18] = [
    ("__shfl", SHUFFLES),
    ("__shfl_up", SHUFFLES),
    ("__shfl_down", SHUFFLES),
    ("__shfl_xor", SHUFFLES),
    ("__ballot", SHUFFLES),
    ("__any", SHUFFLES),
    ("__all", SHUFFLES),
    (
        "__match_all_sync",
        "`__match_all_sync` is not simulated; `__match_any_sync` is",
    ),
    ("__globaltimer", CLOCK),
    ("malloc", ALLOCATION),
    ("free", ALLOCATION),
    ("tex1D*", TEXTURES),
    ("tex2D*", TEXTURES),
    ("tex3D*", TEXTURES),
    ("curand_poisson*", DISCRETE),
    ("curand_discrete*", DISCRETE),
    ("this_grid", COOPERATIVE_GROUPS),
    ("this_thread_block", COOPERATIVE_GROUPS),
];

const SHUFFLES: &str =
    "the warp functions without `_sync` were removed in CUDA 9: name the lanes, \
                        as in `__shfl_down_sync(0xffffffff, v, 1)`";
const DISCRETE: &str = "cuRAND's discrete distributions (`curand_poisson`, `curand_discrete`) are \
                        not simulated; the uniform, normal and log-normal ones are";
const GENERATORS: &str = "cuRAND's device API is simulated for `curandState` (XORWOW) and \
                          `curandStatePhilox4_32_10_t`, with `#include <curand_kernel.h>`; the \
                          MRG32k3a, MTGP32 and Sobol generators are not";
const COMPLEX: &str = "the complex types are declared by cuComplex.h: `#include <cuComplex.h>`";
const CLOCK: &str = "the global timer is not simulated; `clock64()` reads the simulated clock";
const ALLOCATION: &str = "`malloc` and `free` in device code are not simulated";
const COOPERATIVE_GROUPS: &str = "cooperative groups are read where the file names them: \
                                  `#include <cooperative_groups.h>` and \
                                  `namespace cg = cooperative_groups;`";

/// The refusal for a call of `name` that nothing declares, if CUDA declares it.
pub fn function(name: &str) -> Option<&'static str> {
    FUNCTIONS
        .iter()
        .find(|(pattern, _)| match pattern.strip_suffix('*') {
            Some(start) => name.starts_with(start),
            None => name == *pattern,
        })
        .map(|&(_, message)| message)
}

/// The refusal for the word `word` standing where the parser failed or before it in the same
/// statement, if it names a construct memplay does not simulate.
pub(crate) fn keyword(word: &str) -> Option<&'static str> {
    KEYWORDS
        .iter()
        .find(|(keyword, _)| *keyword == word)
        .map(|&(_, message)| message)
}

/// The parser's `error`, explained when the statement it stopped in (the tokens since the last
/// `;`, `{` or `}` before the failing one, and that one) holds a construct memplay does not
/// simulate; otherwise `error` as it is.
pub fn explain(error: Diagnostic, tokens: &[Token]) -> Diagnostic {
    if error.kind != DiagnosticKind::Syntax {
        return error;
    }
    let Some(failed) = tokens
        .iter()
        .position(|token| token.span.start >= error.span.start)
    else {
        return error;
    };
    let start = tokens[..failed]
        .iter()
        .rposition(|token| {
            matches!(
                token.kind,
                TokenKind::Punct(Punct::Semi | Punct::LBrace | Punct::RBrace)
            )
        })
        .map_or(0, |at| at + 1);
    let statement = &tokens[start..=failed];
    let refusal = statement.iter().enumerate().find_map(|(at, token)| {
        let TokenKind::Ident(word) = &token.kind else {
            return None;
        };
        let calls = matches!(
            statement.get(at + 1).map(|next| &next.kind),
            Some(TokenKind::Punct(Punct::LParen))
        );
        keyword(word)
            .or_else(|| calls.then(|| function(word)).flatten())
            .or_else(|| missing_header_type(word, tokens))
            .map(|message| (token, message))
    });
    let refusal = refusal.or_else(|| {
        // A type from a header stands where the parser wanted a type or a name.
        let token = &tokens[failed];
        let TokenKind::Ident(word) = &token.kind else {
            return lambda(tokens, failed).map(|message| (token, message));
        };
        TYPES
            .iter()
            .find(|(name, _)| name == word)
            .map(|&(_, message)| message)
            .or_else(|| missing_header_type(word, tokens))
            .map(|message| (token, message))
    });
    match refusal {
        Some((token, message)) => {
            Diagnostic::of_kind(DiagnosticKind::NotSimulated, token.span, message)
        }
        None => error,
    }
}

/// The refusal for `word`, a type of a toolkit header memplay supplies (`toolkit_headers`) that
/// the file does not have: the complex types without `#include <cuComplex.h>`, and a cuRAND state
/// of another generator or without `#include <curand_kernel.h>`. Whether a header was read shows
/// in `tokens`, which then hold its declaration of its first type.
fn missing_header_type(word: &str, tokens: &[Token]) -> Option<&'static str> {
    let declares = |first: &str, second: &str| {
        tokens
            .windows(2)
            .any(|pair| pair[0].ident() == Some(first) && pair[1].ident() == Some(second))
    };
    if matches!(word, "cuFloatComplex" | "cuDoubleComplex" | "cuComplex") {
        return (!declares("float2", "cuFloatComplex")).then_some(COMPLEX);
    }
    let simulated = [
        "curandState",
        "curandState_t",
        "curandStateXORWOW",
        "curandStateXORWOW_t",
        "curandStatePhilox4_32_10",
        "curandStatePhilox4_32_10_t",
    ];
    let included = declares("struct", "curandStateXORWOW");
    (word.starts_with("curandState") && !(included && simulated.contains(&word)))
        .then_some(GENERATORS)
}

/// The refusal of a lambda, when the failing token of `tokens` (at `failed`) is a `[` where an
/// expression starts (after `=`, `(`, `,` or `return`).
fn lambda(tokens: &[Token], failed: usize) -> Option<&'static str> {
    let before = failed
        .checked_sub(1)
        .and_then(|at| tokens.get(at))
        .map(|token| &token.kind);
    let starts_expression = matches!(
        before,
        Some(TokenKind::Punct(
            Punct::Assign | Punct::LParen | Punct::Comma
        ))
    ) || matches!(before, Some(TokenKind::Ident(word)) if word == "return");
    (tokens[failed].kind == TokenKind::Punct(Punct::LBracket) && starts_expression)
        .then_some("lambdas (`[](...) { ... }`) are not simulated")
}
