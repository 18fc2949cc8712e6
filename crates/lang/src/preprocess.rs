//! The preprocessor: `#define`, `#ifdef`/`#ifndef`/`#if`/`#else`/`#endif`, `-D` overrides.
//!
//! The lecture kernels size their tiles with `#define TILE_WIDTH 16` inside an `#ifndef` guard, so
//! that a `-D TILE_WIDTH=32` given to nvcc wins (the reference kernels under
//! `tests/reference/kernels/` are written this way). This module does what the C preprocessor
//! (C11 standard, section 6.10) does for those: object-like and function-like macros, conditional
//! inclusion, and `-D` definitions made before the first line of the file. `#include` is ignored,
//! and the macros of the headers kernels include (`FLT_MAX`, `M_PI`; `header_names`) are defined
//! before every file instead, except for the toolkit headers memplay writes itself
//! (`toolkit_headers`: `cuComplex.h`, `curand_kernel.h`), whose text is read in the include's
//! place. Every `#pragma` but `#pragma unroll` is ignored too; that one
//! becomes one token (`TokenKind::PragmaUnroll`) for the parser to give to the loop that follows.
//! Tokens that come out of a macro carry the span of the macro's use, so that errors point at the
//! text the user wrote.
//!
//! Its work is bounded whatever the text (`limits`): the output, counted as it is written and with
//! the tokens of expanded macro arguments included, stops at `MAX_PREPROCESSED_TOKENS`; the number
//! of macro expansions at `MAX_MACRO_EXPANSIONS`; the recursion of expansion at `MAX_MACRO_DEPTH`
//! and that of `#if` evaluation at `MAX_NESTING`. A `-D` name must be a C identifier.

use super::header_names::HEADER_MACROS;
use super::lexer::{lex, Punct, Token, TokenKind};
use super::limits::{MAX_MACRO_DEPTH, MAX_MACRO_EXPANSIONS, MAX_NESTING, MAX_PREPROCESSED_TOKENS};
use super::span::{Diagnostic, Span};
use crate::name_map::NameMap;
use std::ops::Range;

#[derive(Clone, Debug)]
struct Macro {
    /// `Some` for a function-like macro: the parameter names.
    params: Option<Vec<String>>,
    body: Vec<Token>,
}

/// One open `#if`/`#ifdef`/`#ifndef`.
#[derive(Clone, Copy, Debug)]
struct Conditional {
    /// The lines of the current branch are kept.
    active: bool,
    /// Some branch of this conditional has been taken already.
    taken: bool,
    /// The enclosing code is kept (otherwise nothing inside is).
    parent_active: bool,
    seen_else: bool,
    span: Span,
}

/// What the preprocessing of one file has spent, shared by every `expand` call (those of `#if`
/// conditions too), so that the bounds hold for the whole file and are checked as tokens are made.
#[derive(Default)]
struct Budget {
    /// Tokens written to the output or to an intermediate list (an expanded macro argument, a
    /// macro body with its arguments in place).
    tokens: usize,
    expansions: usize,
}

impl Budget {
    /// Appends `token` to `out`, or fails once the file has made `MAX_PREPROCESSED_TOKENS`.
    fn push(&mut self, out: &mut Vec<Token>, token: Token) -> Result<(), Diagnostic> {
        self.tokens += 1;
        if self.tokens > MAX_PREPROCESSED_TOKENS {
            return Err(Diagnostic::new(
                token.span,
                format!(
                    "the preprocessed source is longer than the simulator's limit of \
                     {MAX_PREPROCESSED_TOKENS} tokens"
                ),
            ));
        }
        out.push(token);
        Ok(())
    }

    /// Counts one macro expansion at `span`, or fails after `MAX_MACRO_EXPANSIONS`.
    fn expansion(&mut self, span: Span) -> Result<(), Diagnostic> {
        self.expansions += 1;
        if self.expansions > MAX_MACRO_EXPANSIONS {
            return Err(Diagnostic::new(
                span,
                format!(
                    "macros expand more often than the simulator's limit of \
                     {MAX_MACRO_EXPANSIONS} expansions"
                ),
            ));
        }
        Ok(())
    }
}

/// A C identifier: a letter or `_`, then letters, digits and `_`.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The macros the C and CUDA headers define (`header_names::HEADER_MACROS`), defined before the
/// file as including the headers would: a kernel's own `#define` or `-D` of one replaces it, and
/// `#ifndef M_PI` sees it. `inf` and `nan` become the one float token no literal can write.
fn header_macros() -> NameMap<Macro> {
    HEADER_MACROS
        .iter()
        .map(|&(name, text)| {
            let value = match text {
                "inf" => f64::INFINITY,
                "nan" => f64::NAN,
                _ => 0.0,
            };
            let body = match lex(text) {
                Ok(body) if value == 0.0 => body,
                _ => vec![Token {
                    kind: TokenKind::Float {
                        value,
                        single: true,
                    },
                    span: Span::default(),
                    line_start: false,
                    space_before: false,
                }],
            };
            (name.to_string(), Macro { params: None, body })
        })
        .collect()
}

/// Runs the preprocessor over `tokens`. `defines` are `-D NAME=VALUE` overrides, defined before the
/// file (so the file's `#ifndef NAME` guard skips its own default). Their errors have no place in
/// the source: their span is the default one, line 0.
pub fn preprocess(
    mut tokens: Vec<Token>,
    defines: &[(String, String)],
) -> Result<Vec<Token>, Diagnostic> {
    let mut macros = header_macros();
    for (name, value) in defines {
        if name.is_empty() {
            return Err(Diagnostic::new(
                Span::default(),
                format!("'-D ={value}': the macro name is missing"),
            ));
        }
        if !is_identifier(name) {
            return Err(Diagnostic::new(
                Span::default(),
                format!("'-D {name}': a macro name must be an identifier"),
            ));
        }
        let body = lex(value).map_err(|d| {
            Diagnostic::new(
                Span::default(),
                format!("in -D {name}={value}: {}", d.message),
            )
        })?;
        macros.insert(name.clone(), Macro { params: None, body });
    }

    let mut out = Vec::with_capacity(tokens.len().min(MAX_PREPROCESSED_TOKENS));
    let mut budget = Budget::default();
    let mut stack: Vec<Conditional> = Vec::new();
    let mut headers_read = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let active = stack.last().is_none_or(|c| c.active);
        if tokens[i].line_start && tokens[i].is_punct(Punct::Hash) {
            let hash_span = tokens[i].span;
            let mut end = i + 1;
            while end < tokens.len() && !tokens[end].line_start {
                end += 1;
            }
            let line = &tokens[i + 1..end];
            if active {
                if let Some(pragma) = unroll_pragma(hash_span, line, &macros) {
                    budget.push(&mut out, pragma)?;
                }
            }
            let header = active
                .then(|| toolkit_header(line, &mut headers_read))
                .flatten();
            directive(
                hash_span,
                line,
                active,
                &mut macros,
                &mut stack,
                &mut budget,
            )?;
            if let Some(text) = header {
                // The header's tokens follow the `#include` line, each at that line's span.
                let at = tokens[end - 1].span;
                let mut header = lex(text)?;
                for token in &mut header {
                    token.span = hash_span.to(at);
                }
                tokens.splice(end..end, header);
            }
            i = end;
            continue;
        }
        if !active {
            i += 1;
            continue;
        }
        // Expand a run of ordinary tokens up to the next directive.
        let mut end = i;
        while end < tokens.len() && !(tokens[end].line_start && tokens[end].is_punct(Punct::Hash)) {
            end += 1;
        }
        let mut disabled = Vec::new();
        expand(
            &tokens[i..end],
            &macros,
            &mut disabled,
            0,
            None,
            &mut budget,
            &mut out,
        )?;
        i = end;
    }
    if let Some(open) = stack.last() {
        return Err(Diagnostic::new(open.span, "this conditional has no #endif"));
    }
    Ok(out)
}

/// `#pragma unroll` with no count, a literal count or a macro whose body is one (`#pragma unroll
/// TILE`, as nvcc accepts an integral constant expression): the token the parser attaches to the
/// next loop. A count that is no such thing reads as no count, as a pragma is only a hint.
fn unroll_pragma(hash_span: Span, line: &[Token], macros: &NameMap<Macro>) -> Option<Token> {
    let [pragma, unroll, rest @ ..] = line else {
        return None;
    };
    if pragma.ident() != Some("pragma") || unroll.ident() != Some("unroll") {
        return None;
    }
    let literal = |token: &Token| match token.kind {
        TokenKind::Int { value, .. } => Some(value),
        _ => None,
    };
    let count = match rest {
        [] => None,
        [token] => literal(token).or_else(|| match macros.get(token.ident()?) {
            Some(Macro { params: None, body }) if body.len() == 1 => literal(&body[0]),
            _ => None,
        }),
        _ => None,
    };
    Some(Token {
        kind: TokenKind::PragmaUnroll(count),
        span: hash_span.to(unroll.span),
        line_start: true,
        space_before: true,
    })
}

/// The text of the toolkit header (`toolkit_headers`) that the directive `line` includes, if it is
/// an `#include` of one not read yet.
fn toolkit_header(line: &[Token], read: &mut Vec<usize>) -> Option<&'static str> {
    let (first, rest) = line.split_first()?;
    if first.ident() != Some("include") {
        return None;
    }
    let written: String = rest.iter().map(include_word).collect();
    crate::toolkit_headers::header_text(&written, read)
}

/// A token of an `#include` line as the header's name spells it: a quoted name's text, a word,
/// or nothing for punctuation.
fn include_word(t: &Token) -> String {
    match &t.kind {
        TokenKind::Str(text) => text.clone(),
        _ => t.ident().unwrap_or_default().to_string(),
    }
}

/// The typedefs of `cuda_fp16.h` and `cuda_bf16.h`: short name, the type's reserved name, and
/// the header that declares it.
const HALF_TYPEDEFS: [(&str, &str, &str); 4] = [
    ("half", "__half", "cuda_fp16"),
    ("half2", "__half2", "cuda_fp16"),
    ("nv_bfloat16", "__nv_bfloat16", "cuda_bf16"),
    ("nv_bfloat162", "__nv_bfloat162", "cuda_bf16"),
];

fn directive(
    hash_span: Span,
    line: &[Token],
    active: bool,
    macros: &mut NameMap<Macro>,
    stack: &mut Vec<Conditional>,
    budget: &mut Budget,
) -> Result<(), Diagnostic> {
    let Some(first) = line.first() else {
        // A lone `#` is the null directive.
        return Ok(());
    };
    let Some(name) = first.ident() else {
        if active {
            return Err(Diagnostic::new(
                first.span,
                "expected a directive name after '#'",
            ));
        }
        return Ok(());
    };
    let span = hash_span.to(first.span);
    let macro_name = |what: &str| -> Result<&Token, Diagnostic> {
        match line.get(1) {
            Some(t) if t.ident().is_some() => Ok(t),
            Some(t) => Err(Diagnostic::new(
                t.span,
                format!("expected a macro name after #{what}"),
            )),
            None => Err(Diagnostic::new(
                first.span.just_after(),
                format!("expected a macro name after #{what}"),
            )),
        }
    };
    match name {
        "ifdef" | "ifndef" => {
            let taken = if active {
                let t = macro_name(name)?;
                let defined = macros.contains_key(t.ident().unwrap_or_default());
                defined == (name == "ifdef")
            } else {
                false
            };
            stack.push(Conditional {
                active: active && taken,
                taken,
                parent_active: active,
                seen_else: false,
                span,
            });
        }
        "if" => {
            let taken = active && eval_condition(&line[1..], first.span, macros, budget)?;
            stack.push(Conditional {
                active: taken,
                taken,
                parent_active: active,
                seen_else: false,
                span,
            });
        }
        "elif" => {
            let Some(top) = stack.last().copied() else {
                return Err(Diagnostic::new(span, "#elif without #if"));
            };
            if top.seen_else {
                return Err(Diagnostic::new(span, "#elif after #else"));
            }
            let take = top.parent_active
                && !top.taken
                && eval_condition(&line[1..], first.span, macros, budget)?;
            if let Some(top) = stack.last_mut() {
                top.active = take;
                top.taken |= take;
            }
        }
        "else" => {
            let Some(top) = stack.last_mut() else {
                return Err(Diagnostic::new(span, "#else without #if"));
            };
            if top.seen_else {
                return Err(Diagnostic::new(span, "a second #else for the same #if"));
            }
            top.seen_else = true;
            top.active = top.parent_active && !top.taken;
            top.taken = true;
        }
        "endif" => {
            if stack.pop().is_none() {
                return Err(Diagnostic::new(span, "#endif without #if"));
            }
        }
        _ if !active => {}
        "define" => {
            let t = macro_name("define")?;
            let name = t.ident().unwrap_or_default().to_string();
            let mut body_start = 2;
            let mut params = None;
            // `NAME(` with no space between is a function-like macro.
            if line
                .get(2)
                .is_some_and(|p| p.is_punct(Punct::LParen) && !p.space_before)
            {
                let mut names = Vec::new();
                let mut j = 3;
                loop {
                    match line.get(j) {
                        Some(p) if p.is_punct(Punct::RParen) && names.is_empty() => break,
                        Some(p) if p.ident().is_some() => {
                            names.push(p.ident().unwrap_or_default().to_string());
                            j += 1;
                            match line.get(j) {
                                Some(q) if q.is_punct(Punct::Comma) => j += 1,
                                Some(q) if q.is_punct(Punct::RParen) => break,
                                Some(q) => {
                                    return Err(Diagnostic::new(
                                        q.span,
                                        "expected ',' or ')' in the macro's parameters",
                                    ))
                                }
                                None => {
                                    return Err(Diagnostic::new(
                                        p.span.just_after(),
                                        "expected ')' to close the macro's parameters",
                                    ))
                                }
                            }
                        }
                        Some(p) => {
                            return Err(Diagnostic::new(p.span, "expected a parameter name"))
                        }
                        None => {
                            return Err(Diagnostic::new(
                                t.span.just_after(),
                                "expected ')' to close the macro's parameters",
                            ))
                        }
                    }
                }
                body_start = j + 1;
                params = Some(names);
            }
            let body = line.get(body_start..).unwrap_or_default().to_vec();
            macros.insert(name, Macro { params, body });
        }
        "undef" => {
            let t = macro_name("undef")?;
            macros.remove(t.ident().unwrap_or_default());
        }
        "include" if active => {
            // cuda_fp16.h and cuda_bf16.h typedef the short names of their types; memplay knows
            // the types by their reserved names (`header_names`), so a kernel that does not
            // include them keeps `half` for a variable.
            let header: String = line[1..].iter().map(include_word).collect();
            for (short, reserved, file) in HALF_TYPEDEFS {
                if header.contains(file) {
                    let body = vec![Token {
                        kind: TokenKind::Ident(reserved.to_string()),
                        span: first.span,
                        line_start: false,
                        space_before: true,
                    }];
                    macros.insert(short.to_string(), Macro { params: None, body });
                }
            }
        }
        "include" | "pragma" | "line" => {}
        "error" => return Err(Diagnostic::new(span, "#error in the kernel source")),
        other => {
            return Err(Diagnostic::new(
                first.span,
                format!("unknown directive #{other}"),
            ));
        }
    }
    Ok(())
}

/// Expands macros in `tokens` into `out`. `disabled` lists the macros being expanded (a macro is not
/// expanded inside its own expansion); `use_span` is the span expanded tokens take. `depth` is the
/// number of expansions this one is inside, which bounds the recursion; `budget` bounds the work.
fn expand(
    tokens: &[Token],
    macros: &NameMap<Macro>,
    disabled: &mut Vec<String>,
    depth: usize,
    use_span: Option<Span>,
    budget: &mut Budget,
    out: &mut Vec<Token>,
) -> Result<(), Diagnostic> {
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        let span = use_span.unwrap_or(token.span);
        let found = token
            .ident()
            .filter(|name| !disabled.iter().any(|d| d == name))
            .and_then(|name| Some((name, macros.get(name)?)))
            // Without `(` after it, a function-like macro's name is an ordinary identifier.
            .filter(|(_, mac)| {
                mac.params.is_none() || tokens.get(i + 1).is_some_and(|t| t.is_punct(Punct::LParen))
            });
        let Some((name, mac)) = found else {
            let mut t = token.clone();
            t.span = span;
            budget.push(out, t)?;
            i += 1;
            continue;
        };
        if depth >= MAX_MACRO_DEPTH {
            return Err(Diagnostic::new(
                span,
                format!(
                    "macros nest deeper than the simulator's limit of {MAX_MACRO_DEPTH} levels \
                     (at '{name}')"
                ),
            ));
        }
        budget.expansion(span)?;
        let Some(params) = &mac.params else {
            disabled.push(name.to_string());
            expand(
                &mac.body,
                macros,
                disabled,
                depth + 1,
                Some(span),
                budget,
                out,
            )?;
            disabled.pop();
            i += 1;
            continue;
        };
        let (args, after) = macro_arguments(tokens, i + 1, name, span)?;
        let n_args = if params.is_empty() && args.len() == 1 && args[0].is_empty() {
            0
        } else {
            args.len()
        };
        if n_args != params.len() {
            return Err(Diagnostic::new(
                span,
                format!(
                    "macro '{name}' takes {} arguments, not {n_args}",
                    params.len()
                ),
            ));
        }
        // Arguments are expanded first, then put in place of the parameters.
        let mut expanded_args = Vec::with_capacity(args.len());
        for arg in args {
            let mut e = Vec::new();
            expand(
                &tokens[arg],
                macros,
                disabled,
                depth + 1,
                Some(span),
                budget,
                &mut e,
            )?;
            expanded_args.push(e);
        }
        let mut substituted = Vec::new();
        for t in &mac.body {
            match t.ident().and_then(|n| params.iter().position(|p| p == n)) {
                Some(k) => {
                    for a in &expanded_args[k] {
                        budget.push(&mut substituted, a.clone())?;
                    }
                }
                None => budget.push(&mut substituted, t.clone())?,
            }
        }
        drop(expanded_args);
        disabled.push(name.to_string());
        expand(
            &substituted,
            macros,
            disabled,
            depth + 1,
            Some(span),
            budget,
            out,
        )?;
        disabled.pop();
        i = after;
    }
    Ok(())
}

/// Splits the arguments of a function-like macro use; `open` is the index of its `(`. Returns
/// where each argument lies in `tokens` and the index after the closing `)`.
fn macro_arguments(
    tokens: &[Token],
    open: usize,
    name: &str,
    span: Span,
) -> Result<(Vec<Range<usize>>, usize), Diagnostic> {
    let mut args = Vec::new();
    let mut arg_start = open + 1;
    let mut depth = 0usize;
    let mut j = open + 1;
    while j < tokens.len() {
        let t = &tokens[j];
        if t.is_punct(Punct::LParen) {
            depth += 1;
        } else if t.is_punct(Punct::RParen) {
            if depth == 0 {
                args.push(arg_start..j);
                return Ok((args, j + 1));
            }
            depth -= 1;
        } else if t.is_punct(Punct::Comma) && depth == 0 {
            args.push(arg_start..j);
            arg_start = j + 1;
        }
        j += 1;
    }
    Err(Diagnostic::new(
        span,
        format!("the arguments of macro '{name}' have no closing ')'"),
    ))
}

/// Evaluates the condition of `#if`/`#elif`: an integer constant expression over macros and
/// `defined NAME`; unknown identifiers are 0, as in C.
fn eval_condition(
    line: &[Token],
    at: Span,
    macros: &NameMap<Macro>,
    budget: &mut Budget,
) -> Result<bool, Diagnostic> {
    // Replace `defined X` / `defined(X)` before expansion.
    let mut replaced = Vec::new();
    let mut i = 0;
    while i < line.len() {
        if line[i].ident() == Some("defined") {
            let (name, next) = if line.get(i + 1).is_some_and(|t| t.is_punct(Punct::LParen)) {
                (line.get(i + 2).and_then(|t| t.ident()), i + 4)
            } else {
                (line.get(i + 1).and_then(|t| t.ident()), i + 2)
            };
            let Some(name) = name else {
                return Err(Diagnostic::new(
                    line[i].span,
                    "expected a macro name after 'defined'",
                ));
            };
            let mut t = line[i].clone();
            t.kind = TokenKind::Int {
                value: u64::from(macros.contains_key(name)),
                unsigned: false,
                long: false,
                hex: false,
            };
            replaced.push(t);
            i = next;
            continue;
        }
        replaced.push(line[i].clone());
        i += 1;
    }
    let mut expanded = Vec::new();
    expand(
        &replaced,
        macros,
        &mut Vec::new(),
        0,
        None,
        budget,
        &mut expanded,
    )?;
    if expanded.is_empty() {
        return Err(Diagnostic::new(at, "#if needs a condition"));
    }
    let mut parser = CondParser {
        tokens: &expanded,
        pos: 0,
        depth: 0,
    };
    let value = parser.expr(0)?;
    if let Some(t) = expanded.get(parser.pos) {
        return Err(Diagnostic::new(
            t.span,
            format!("unexpected {} in #if", t.kind.describe()),
        ));
    }
    Ok(value != 0)
}

/// A precedence-climbing evaluator for `#if` conditions, over 64-bit signed integers. Its recursion
/// (`expr` and `unary` calls in progress) is bounded by `MAX_NESTING`.
struct CondParser<'a> {
    tokens: &'a [Token],
    pos: usize,
    depth: u32,
}

impl CondParser<'_> {
    fn binary_op(&self) -> Option<(Punct, u8)> {
        let t = self.tokens.get(self.pos)?;
        let TokenKind::Punct(p) = t.kind else {
            return None;
        };
        let prec = match p {
            Punct::OrOr => 1,
            Punct::AndAnd => 2,
            Punct::Pipe => 3,
            Punct::Caret => 4,
            Punct::Amp => 5,
            Punct::EqEq | Punct::Ne => 6,
            Punct::Lt | Punct::Gt | Punct::Le | Punct::Ge => 7,
            Punct::Shl | Punct::Shr => 8,
            Punct::Plus | Punct::Minus => 9,
            Punct::Star | Punct::Slash | Punct::Percent => 10,
            _ => return None,
        };
        Some((p, prec))
    }

    /// Runs `f` one level deeper, or fails past `MAX_NESTING` levels.
    fn nested(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<i64, Diagnostic>,
    ) -> Result<i64, Diagnostic> {
        if self.depth >= MAX_NESTING {
            let at = match self.tokens.get(self.pos) {
                Some(t) => t.span,
                None => self.tokens.last().map(|t| t.span).unwrap_or_default(),
            };
            return Err(Diagnostic::new(
                at,
                format!(
                    "the #if condition nests deeper than the simulator's limit of {MAX_NESTING} \
                     levels"
                ),
            ));
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn expr(&mut self, min_prec: u8) -> Result<i64, Diagnostic> {
        self.nested(|p| p.expr_inner(min_prec))
    }

    fn expr_inner(&mut self, min_prec: u8) -> Result<i64, Diagnostic> {
        let mut lhs = self.unary()?;
        if self
            .tokens
            .get(self.pos)
            .is_some_and(|t| t.is_punct(Punct::Question))
            && min_prec == 0
        {
            self.pos += 1;
            let a = self.expr(0)?;
            self.expect(Punct::Colon)?;
            let b = self.expr(0)?;
            return Ok(if lhs != 0 { a } else { b });
        }
        while let Some((op, prec)) = self.binary_op() {
            if prec < min_prec.max(1) {
                break;
            }
            let span = self.tokens[self.pos].span;
            self.pos += 1;
            let rhs = self.expr(prec + 1)?;
            lhs = match op {
                Punct::OrOr => i64::from(lhs != 0 || rhs != 0),
                Punct::AndAnd => i64::from(lhs != 0 && rhs != 0),
                Punct::Pipe => lhs | rhs,
                Punct::Caret => lhs ^ rhs,
                Punct::Amp => lhs & rhs,
                Punct::EqEq => i64::from(lhs == rhs),
                Punct::Ne => i64::from(lhs != rhs),
                Punct::Lt => i64::from(lhs < rhs),
                Punct::Gt => i64::from(lhs > rhs),
                Punct::Le => i64::from(lhs <= rhs),
                Punct::Ge => i64::from(lhs >= rhs),
                Punct::Shl => lhs.wrapping_shl(rhs as u32),
                Punct::Shr => lhs.wrapping_shr(rhs as u32),
                Punct::Plus => lhs.wrapping_add(rhs),
                Punct::Minus => lhs.wrapping_sub(rhs),
                Punct::Star => lhs.wrapping_mul(rhs),
                Punct::Slash | Punct::Percent => {
                    if rhs == 0 {
                        return Err(Diagnostic::new(span, "division by zero in #if"));
                    }
                    if op == Punct::Slash {
                        lhs.wrapping_div(rhs)
                    } else {
                        lhs.wrapping_rem(rhs)
                    }
                }
                _ => lhs,
            };
        }
        Ok(lhs)
    }

    fn expect(&mut self, p: Punct) -> Result<(), Diagnostic> {
        match self.tokens.get(self.pos) {
            Some(t) if t.is_punct(p) => {
                self.pos += 1;
                Ok(())
            }
            Some(t) => Err(Diagnostic::new(
                t.span,
                format!("expected '{}' in #if", p.as_str()),
            )),
            None => Err(Diagnostic::new(
                self.tokens
                    .last()
                    .map(|t| t.span.just_after())
                    .unwrap_or_default(),
                format!("expected '{}' in #if", p.as_str()),
            )),
        }
    }

    fn unary(&mut self) -> Result<i64, Diagnostic> {
        self.nested(Self::unary_inner)
    }

    fn unary_inner(&mut self) -> Result<i64, Diagnostic> {
        let Some(t) = self.tokens.get(self.pos) else {
            let at = self
                .tokens
                .last()
                .map(|t| t.span.just_after())
                .unwrap_or_default();
            return Err(Diagnostic::new(at, "the #if condition ends too early"));
        };
        self.pos += 1;
        match &t.kind {
            TokenKind::Int { value, .. } | TokenKind::Char(value) => Ok(*value as i64),
            TokenKind::Ident(_) => Ok(0),
            TokenKind::Punct(Punct::Minus) => Ok(self.unary()?.wrapping_neg()),
            TokenKind::Punct(Punct::Plus) => self.unary(),
            TokenKind::Punct(Punct::Bang) => Ok(i64::from(self.unary()? == 0)),
            TokenKind::Punct(Punct::Tilde) => Ok(!self.unary()?),
            TokenKind::Punct(Punct::LParen) => {
                let v = self.expr(0)?;
                self.expect(Punct::RParen)?;
                Ok(v)
            }
            other => Err(Diagnostic::new(
                t.span,
                format!("unexpected {} in #if", other.describe()),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Preprocesses `source` with `defines` and shows the result as `line:col text` per token, or
    /// the error.
    fn check(source: &str, defines: &[(&str, &str)], expected: &[&str]) {
        let defines: Vec<(String, String)> = defines
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let shown = match lex(source).and_then(|t| preprocess(t, &defines)) {
            Ok(tokens) => tokens
                .iter()
                .map(|t| {
                    let text = match &t.kind {
                        TokenKind::Ident(s) => s.clone(),
                        TokenKind::Int { value, .. } => value.to_string(),
                        TokenKind::Punct(p) => p.as_str().to_string(),
                        other => format!("{other:?}"),
                    };
                    format!("{} {text}", t.span)
                })
                .collect::<Vec<_>>(),
            Err(d) => vec![d.to_string()],
        };
        assert_eq!(shown, expected);
    }

    const GUARDED_TILE: &str = "#ifndef TILE_WIDTH\n#define TILE_WIDTH 16\n#endif\nx[TILE_WIDTH];";

    #[test]
    fn the_guarded_default_applies_without_an_override() {
        check(
            GUARDED_TILE,
            &[],
            &["4:1 x", "4:2 [", "4:3 16", "4:13 ]", "4:14 ;"],
        );
    }

    #[test]
    fn a_dash_d_override_wins_over_the_guarded_default() {
        check(
            GUARDED_TILE,
            &[("TILE_WIDTH", "32")],
            &["4:1 x", "4:2 [", "4:3 32", "4:13 ]", "4:14 ;"],
        );
    }

    #[test]
    fn a_macro_body_of_several_tokens_takes_the_span_of_its_use() {
        check(
            "#define ROW (TILE + PAD)\n#define TILE 16\n#define PAD 1\nROW",
            &[],
            &["4:1 (", "4:1 16", "4:1 +", "4:1 1", "4:1 )"],
        );
    }

    #[test]
    fn ifdef_else_endif_pick_one_branch() {
        check(
            "#ifdef FAST\na\n#else\nb\n#endif\nc",
            &[],
            &["4:1 b", "6:1 c"],
        );
        check(
            "#ifdef FAST\na\n#else\nb\n#endif\nc",
            &[("FAST", "1")],
            &["2:1 a", "6:1 c"],
        );
    }

    #[test]
    fn if_zero_comments_code_out() {
        check("#if 0\nbroken ( code\n#endif\nok", &[], &["4:1 ok"]);
        check(
            "#if defined(PAD) && PAD > 0\npadded\n#else\nplain\n#endif",
            &[("PAD", "1")],
            &["2:1 padded"],
        );
    }

    #[test]
    fn include_is_ignored() {
        check(
            "#include <stdio.h>\n#include \"helper.h\"\nk",
            &[],
            &["3:1 k"],
        );
    }

    #[test]
    fn function_like_macros_substitute_their_arguments() {
        check(
            "#define IDX(r, c) ((r) * 4 + (c))\nIDX(i, 1)",
            &[],
            &[
                "2:1 (", "2:1 (", "2:1 i", "2:1 )", "2:1 *", "2:1 4", "2:1 +", "2:1 (", "2:1 1",
                "2:1 )", "2:1 )",
            ],
        );
    }

    #[test]
    fn a_self_referencing_macro_stops() {
        check("#define X X + 1\nX", &[], &["2:1 X", "2:1 +", "2:1 1"]);
    }

    #[test]
    fn a_missing_endif_is_an_error() {
        check(
            "#ifndef PAD\n#define PAD 0\n",
            &[],
            &["1:1: this conditional has no #endif"],
        );
    }

    #[test]
    fn an_unknown_directive_is_an_error() {
        check(
            "#frobnicate\n",
            &[],
            &["1:2: unknown directive #frobnicate"],
        );
    }

    #[test]
    fn a_dash_d_name_must_be_an_identifier() {
        check(
            "x",
            &[("1X", "2")],
            &["0:0: '-D 1X': a macro name must be an identifier"],
        );
        check(
            "x",
            &[("A B", "1")],
            &["0:0: '-D A B': a macro name must be an identifier"],
        );
        check(
            "x",
            &[("", "1")],
            &["0:0: '-D =1': the macro name is missing"],
        );
        check("x", &[("_x1", "2")], &["1:1 x"]);
    }

    /// `check` on a thread with a 1 MB stack, about what a browser gives WebAssembly.
    fn check_on_a_small_stack(source: String, expected: &[&str]) {
        let expected: Vec<String> = expected.iter().map(|e| e.to_string()).collect();
        let thread = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
                check(&source, &[], &expected)
            })
            .expect("a thread starts");
        if let Err(panic) = thread.join() {
            std::panic::resume_unwind(panic);
        }
    }

    /// `#define X0 1`, then `#define Xk X(k-1)+X(k-1)` up to `last`, then a kernel that uses
    /// `X{last}` on line `last + 2`, column 36.
    fn doubling_chain(last: usize) -> String {
        let mut source = "#define X0 1\n".to_string();
        for k in 1..=last {
            source += &format!("#define X{k} X{}+X{}\n", k - 1, k - 1);
        }
        source + &format!("__global__ void k(int* a) {{ a[0] = X{last}; }}")
    }

    #[test]
    fn a_macro_doubled_eighteen_times_stops_at_the_expansion_limit() {
        check_on_a_small_stack(
            doubling_chain(18),
            &["20:36: macros expand more often than the simulator's limit of 100000 expansions"],
        );
    }

    #[test]
    fn a_macro_doubled_thirty_nine_times_stops_at_the_same_limit() {
        check_on_a_small_stack(
            doubling_chain(39),
            &["41:36: macros expand more often than the simulator's limit of 100000 expansions"],
        );
    }

    #[test]
    fn a_function_like_macro_nested_24_times_stops_at_the_token_limit() {
        check_on_a_small_stack(
            format!("#define F(x) x x\nv = {}1{};", "F(".repeat(24), ")".repeat(24)),
            &["2:5: the preprocessed source is longer than the simulator's limit of 200000 tokens"],
        );
    }

    #[test]
    fn many_uses_of_a_small_macro_stop_at_the_token_limit() {
        check_on_a_small_stack(
            format!("#define TEN {}\n{}", "; ".repeat(10), "TEN ".repeat(20_001)),
            &["2:80001: the preprocessed source is longer than the simulator's limit of 200000 tokens"],
        );
    }

    #[test]
    fn a_chain_of_a_hundred_macros_stops_at_the_depth_limit() {
        let mut source = "#define Y0 1\n".to_string();
        for k in 1..100 {
            source += &format!("#define Y{k} Y{}\n", k - 1);
        }
        check_on_a_small_stack(
            source + "Y99",
            &["101:1: macros nest deeper than the simulator's limit of 64 levels (at 'Y35')"],
        );
        check_on_a_small_stack(
            format!("#define G(x) x\n{}1{}", "G(".repeat(100), ")".repeat(100)),
            &["2:1: macros nest deeper than the simulator's limit of 64 levels (at 'G')"],
        );
    }

    #[test]
    fn an_if_with_50000_nested_parentheses_stops_at_the_nesting_limit() {
        check_on_a_small_stack(
            format!(
                "#if {}1{}\nx\n#endif",
                "(".repeat(50_000),
                ")".repeat(50_000)
            ),
            &["1:53: the #if condition nests deeper than the simulator's limit of 96 levels"],
        );
        check_on_a_small_stack(
            format!("#if {}1\nx\n#endif", "1 ? 1 : ".repeat(1_000)),
            &["1:761: the #if condition nests deeper than the simulator's limit of 96 levels"],
        );
        check_on_a_small_stack(
            format!("#if {}1\nx\n#endif", "- ".repeat(50_000)),
            &["1:195: the #if condition nests deeper than the simulator's limit of 96 levels"],
        );
    }
}
