//! Host code read past: the file-scope items nvcc's host pass compiles and its device pass does
//! not run.
//!
//! A whole `.cu` program holds `main`, host helpers, host globals and the classes the host uses
//! next to its kernels. nvcc splits the file (CUDA C++ Programming Guide, "Compilation with
//! NVCC"): a function without an execution space specifier, or with `__host__` alone, is a host
//! function ("Function Execution Space Specifiers"), and a file-scope variable without a memory
//! space is a host variable ("Variable Memory Space Specifiers"). Such an item is not parsed as
//! the kernel language: its extent is found by matching brackets, whatever C++ it holds
//! (lambdas, templates, `std::` types), and it becomes an `ast::Item::Host` with its name and
//! tokens, which sema skips and `launches` reads for the kernel launches.
//!
//! Which items are host code is decided in one place, `host_shape`, from the item's head (its
//! tokens before the first `;`, `{` or `=` outside brackets): `__global__`, `__device__`,
//! `__constant__`, `__shared__` or `__managed__` make it device code; `__host__` alone, a function
//! (a name and its parameter list) that is not `constexpr`, or a variable that is neither `const`
//! nor `constexpr` make it host code. A `struct` or `class` is device code (kernels may use it)
//! unless its body declares no `__device__` member and has member functions or qualified `::`
//! names, the marks of a class only the host uses. `extern "C"` is read past as a linkage
//! specification, its braces included.

use super::{is_decl_word, is_statement_word, Parser};
use crate::ast::{HostItem, Item};
use crate::lexer::{Punct, Token, TokenKind};
use crate::span::{Diagnostic, Span};

/// Words that put an item in device code.
const DEVICE_WORDS: [&str; 5] = [
    "__global__",
    "__device__",
    "__constant__",
    "__shared__",
    "__managed__",
];

/// Words before a `(` that is not a parameter list.
const NOT_A_NAME: [&str; 6] = [
    "__launch_bounds__",
    "__attribute__",
    "alignas",
    "__align__",
    "decltype",
    "sizeof",
];

/// C++ words of a host declaration that name no type of their own.
const HOST_WORDS: [&str; 8] = [
    "struct",
    "class",
    "typename",
    "mutable",
    "thread_local",
    "virtual",
    "explicit",
    "operator",
];

/// Words that start an item the device parser reads (or refuses by name).
const DECLARATIONS: [&str; 7] = [
    "typedef",
    "using",
    "namespace",
    "enum",
    "union",
    "static_assert",
    "template",
];

/// A host item found at a token: its name, the name's place, its kind and the token after it.
struct HostShape {
    name: String,
    span: Span,
    function: bool,
    end: usize,
}

impl Parser<'_> {
    /// Reads a host item at the current token, or a linkage specification's `extern "C"` and
    /// braces, and returns `Some` (with the item, if any) when it did; `None` leaves the
    /// position for the device parser.
    pub(super) fn host_item(&mut self) -> Result<Option<Option<Item>>, Diagnostic> {
        let tokens = self.tokens;
        let start = self.pos;
        if self.at(Punct::RBrace) && self.linkage_blocks > 0 {
            self.linkage_blocks -= 1;
            self.pos += 1;
            return Ok(Some(None));
        }
        if self.at_word("extern")
            && matches!(self.peek_at(1).map(|t| &t.kind), Some(TokenKind::Str(_)))
        {
            self.pos += 2;
            if self.eat(Punct::LBrace) {
                self.linkage_blocks += 1;
            }
            return Ok(Some(None));
        }
        let Some(shape) = host_shape(tokens, start)? else {
            return Ok(None);
        };
        self.pos = shape.end;
        Ok(Some(Some(Item::Host(HostItem {
            name: shape.name,
            span: shape.span,
            function: shape.function,
            tokens: start..shape.end,
        }))))
    }
}

/// The index of the token after the bracket that closes the one at `open`, or an error at the
/// opening bracket when the file ends first.
pub(crate) fn after_match(tokens: &[Token], open: usize) -> Result<usize, Diagnostic> {
    let mut depth = 0usize;
    for (index, token) in tokens.iter().enumerate().skip(open) {
        match &token.kind {
            TokenKind::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => depth += 1,
            TokenKind::Punct(Punct::RParen | Punct::RBracket | Punct::RBrace) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Ok(index + 1);
                }
            }
            _ => {}
        }
    }
    let bracket = tokens.get(open).map(|t| t.span).unwrap_or_default();
    let shown = tokens
        .get(open)
        .map(|t| t.kind.describe())
        .unwrap_or_default();
    Err(Diagnostic::new(
        bracket,
        format!("this {shown} is never closed"),
    ))
}

/// The index of the first `;` at bracket depth 0 from `from`, and the token after it (or the end).
fn after_semicolon(tokens: &[Token], from: usize) -> Result<usize, Diagnostic> {
    let mut index = from;
    while let Some(token) = tokens.get(index) {
        match &token.kind {
            TokenKind::Punct(Punct::Semi) => return Ok(index + 1),
            TokenKind::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => {
                index = after_match(tokens, index)?
            }
            _ => index += 1,
        }
    }
    Ok(index)
}

/// The token after a `template <...>` header at `at` (angle brackets matched outside
/// parentheses), or `at` when there is none.
fn after_template_header(tokens: &[Token], at: usize) -> usize {
    let is = |index: usize, p: Punct| tokens.get(index).is_some_and(|t| t.is_punct(p));
    if tokens.get(at).and_then(Token::ident) != Some("template") || !is(at + 1, Punct::Lt) {
        return at;
    }
    let (mut angles, mut parens, mut index) = (0usize, 0usize, at + 1);
    while let Some(token) = tokens.get(index) {
        index += 1;
        match &token.kind {
            TokenKind::Punct(Punct::LParen) => parens += 1,
            TokenKind::Punct(Punct::RParen) => parens = parens.saturating_sub(1),
            TokenKind::Punct(Punct::Lt) if parens == 0 => angles += 1,
            TokenKind::Punct(p @ (Punct::Gt | Punct::Shr)) if parens == 0 => {
                angles = angles.saturating_sub(if *p == Punct::Shr { 2 } else { 1 });
                if angles == 0 {
                    return index;
                }
            }
            _ => {}
        }
    }
    index
}

/// Whether the file-scope item at `start` is host code, and then its name and extent. The one
/// place where host and device code are told apart.
fn host_shape(tokens: &[Token], start: usize) -> Result<Option<HostShape>, Diagnostic> {
    Ok(item_shape(tokens, start, false)?
        .filter(|(host, _)| *host)
        .map(|(_, shape)| shape))
}

/// The file-scope item at `start`, whether it is host code (`true`), and its shape; `None` for
/// an item that starts with no word or a declaration word (`typedef`, `namespace`, ...). The
/// extent of device code is found only when `device_extent` asks (the device parser places its
/// own errors in it).
fn item_shape(
    tokens: &[Token],
    start: usize,
    device_extent: bool,
) -> Result<Option<(bool, HostShape)>, Diagnostic> {
    let head = after_template_header(tokens, start);
    let first = tokens.get(head).and_then(Token::ident);
    if matches!(first, Some("struct" | "class")) {
        return host_class(tokens, start, head);
    }
    if first.is_none_or(|word| DECLARATIONS.contains(&word)) {
        return Ok(None);
    }
    if first.is_some_and(is_statement_word) {
        return Ok(None);
    }
    let (mut device, mut host, mut constant, mut compile_time) = (false, false, false, false);
    let mut function = false;
    let mut qualified = false;
    let mut name: Option<(&str, Span)> = None;
    // The words of the first declarator, those no declaration word: a declaration has at most
    // a type's name and its own (`std::vector<float> v`); a words' run such as a sentence is no
    // declaration, and is left to the device parser's error.
    let (mut words, mut unknown, mut angles, mut first_declarator) = (0, 0, 0usize, true);
    let mut index = head;
    let stop = loop {
        let Some(token) = tokens.get(index) else {
            return Ok(None);
        };
        match &token.kind {
            TokenKind::Ident(word) => {
                device |= DEVICE_WORDS.contains(&word.as_str());
                host |= word == "__host__";
                constant |= word == "const";
                compile_time |= word == "constexpr";
                let continues = index > head && tokens[index - 1].is_punct(Punct::ColonColon);
                if first_declarator && angles == 0 && !continues && !function {
                    words += 1;
                    unknown +=
                        usize::from(!is_decl_word(word) && !HOST_WORDS.contains(&word.as_str()));
                }
                if !function {
                    name = Some((word, token.span));
                }
                index += 1;
            }
            TokenKind::Punct(Punct::ColonColon) => {
                qualified = true;
                index += 1;
            }
            TokenKind::Punct(Punct::Lt) if index > head && tokens[index - 1].ident().is_some() => {
                angles += 1;
                index += 1;
            }
            TokenKind::Punct(p @ (Punct::Gt | Punct::Shr)) if angles > 0 => {
                angles = angles.saturating_sub(if *p == Punct::Shr { 2 } else { 1 });
                index += 1;
            }
            TokenKind::Punct(Punct::Comma) if angles == 0 => {
                first_declarator = false;
                index += 1;
            }
            TokenKind::Punct(p @ (Punct::Semi | Punct::LBrace | Punct::Assign)) => break *p,
            TokenKind::Punct(p @ (Punct::LParen | Punct::LBracket)) => {
                let previous = index.checked_sub(1).and_then(|i| tokens.get(i));
                let before = previous.and_then(Token::ident);
                let operator = previous.is_some_and(|t| t.ident().is_none())
                    && name.is_some_and(|(word, _)| word == "operator");
                if *p == Punct::LParen
                    && (before.is_some_and(|w| !NOT_A_NAME.contains(&w)) || operator)
                {
                    function = true;
                }
                let Ok(after) = after_match(tokens, index) else {
                    return Ok(None);
                };
                index = after;
            }
            _ => index += 1,
        }
    };
    // A declaration names a type and itself (a constructor, `A::A(`, only itself).
    if unknown > 2 || (words < 2 && !qualified) {
        return Ok(None);
    }
    // A `constexpr` function is callable from device code; a `const` variable without `::` in
    // its type is a compile-time constant kernels may read.
    let on_device = device || (!host && (compile_time || (constant && !function && !qualified)));
    let end = match stop {
        _ if on_device && !device_extent => index,
        Punct::LBrace if function => after_function_body(tokens, index)?,
        _ => after_semicolon(tokens, index)?,
    };
    // A variable whose initialiser runs into device code lacks its `;`: no host item.
    let runs_into_device = !function
        && tokens[index..end.min(tokens.len())]
            .iter()
            .any(|t| t.ident().is_some_and(|w| DEVICE_WORDS.contains(&w)));
    if !on_device && runs_into_device {
        return Ok(None);
    }
    let (name, span) = name.unwrap_or(("", tokens[start].span));
    let shape = HostShape {
        name: name.to_string(),
        span,
        function,
        end,
    };
    Ok(Some((!on_device, shape)))
}

/// The file-scope items of `tokens`, in order: whether each is host code, whether it is a
/// function, and its tokens. Namespaces and `extern "C"` blocks are entered; every other item is
/// stepped over whole, whether or not the device parser could read it.
pub(crate) fn file_items(
    tokens: &[Token],
) -> Result<Vec<(bool, bool, std::ops::Range<usize>)>, Diagnostic> {
    let mut items = Vec::new();
    let mut index = 0;
    while let Some(token) = tokens.get(index) {
        let word = token.ident();
        let opens_block = |ahead: usize| {
            (1..=ahead).any(|k| {
                tokens
                    .get(index + k)
                    .is_some_and(|t| t.is_punct(Punct::LBrace))
            })
        };
        if token.is_punct(Punct::Semi) || token.is_punct(Punct::RBrace) {
            index += 1;
        } else if word == Some("namespace") && opens_block(2) {
            // `namespace N {` or `namespace {`: its items are file-scope items.
            while tokens
                .get(index)
                .is_some_and(|t| !t.is_punct(Punct::LBrace))
            {
                index += 1;
            }
            index += 1;
        } else if word == Some("extern")
            && matches!(
                tokens.get(index + 1).map(|t| &t.kind),
                Some(TokenKind::Str(_))
            )
        {
            index += if opens_block(2) && tokens[index + 2].is_punct(Punct::LBrace) {
                3
            } else {
                2
            };
        } else {
            match item_shape(tokens, index, true)? {
                Some((host, shape)) => {
                    items.push((host, shape.function, index..shape.end));
                    index = shape.end.max(index + 1);
                }
                None => index = after_semicolon(tokens, index)?.max(index + 1),
            }
        }
    }
    Ok(items)
}

/// The token after a function body whose first `{` at depth 0 is at `open`: the braces of a
/// constructor's member initialisers (`: a{1}, b(2) { ... }`) come before the body, so a `,` or
/// `{` after a closing brace goes on to the next.
fn after_function_body(tokens: &[Token], open: usize) -> Result<usize, Diagnostic> {
    let mut end = after_match(tokens, open)?;
    loop {
        match tokens.get(end).map(|t| &t.kind) {
            Some(TokenKind::Punct(Punct::LBrace)) => end = after_match(tokens, end)?,
            Some(TokenKind::Punct(Punct::Comma)) => {
                let mut next = end;
                while tokens.get(next).is_some_and(|t| !t.is_punct(Punct::LBrace)) {
                    next += 1;
                    if tokens.get(next).is_some_and(|t| t.is_punct(Punct::LParen)) {
                        next = after_match(tokens, next)?;
                        break;
                    }
                }
                if next >= tokens.len() {
                    return Ok(end);
                }
                end = next;
            }
            _ => return Ok(end),
        }
    }
}

/// A `struct` or `class` at `head` (after any template header from `start`), host code when only
/// the host uses it: its body has member functions or `::` names and no device word.
fn host_class(
    tokens: &[Token],
    start: usize,
    head: usize,
) -> Result<Option<(bool, HostShape)>, Diagnostic> {
    let mut open = head;
    while let Some(token) = tokens.get(open) {
        if token.is_punct(Punct::Semi) {
            return Ok(None);
        }
        if token.is_punct(Punct::LBrace) {
            break;
        }
        open += 1;
    }
    if open >= tokens.len() {
        return Ok(None);
    }
    let close = after_match(tokens, open)?;
    let body = &tokens[open + 1..close - 1];
    let device = body
        .iter()
        .any(|t| t.ident().is_some_and(|w| DEVICE_WORDS.contains(&w)));
    let method = body.windows(2).any(|pair| {
        pair[0].ident().is_some_and(|w| !NOT_A_NAME.contains(&w)) && pair[1].is_punct(Punct::LParen)
    });
    let qualified = body.iter().any(|t| t.is_punct(Punct::ColonColon));
    let name = tokens.get(head + 1).filter(|t| t.ident().is_some());
    let shape = HostShape {
        name: name.and_then(Token::ident).unwrap_or("").to_string(),
        span: name.map_or(tokens[start].span, |t| t.span),
        function: false,
        end: after_semicolon(tokens, close)?,
    };
    Ok(Some((!device && (method || qualified), shape)))
}
