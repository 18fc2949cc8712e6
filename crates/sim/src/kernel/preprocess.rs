//! The preprocessor: `#define`, `#ifdef`/`#ifndef`/`#if`/`#else`/`#endif`, `-D` overrides.
//!
//! The lecture kernels size their tiles with `#define TILE_WIDTH 16` inside an `#ifndef` guard, so
//! that a `-D TILE_WIDTH=32` given to nvcc wins (the reference kernels under
//! `tests/reference/kernels/` are written this way). This module does what the C preprocessor
//! (C11 standard, section 6.10) does for those: object-like and function-like macros, conditional
//! inclusion, and `-D` definitions made before the first line of the file. `#include` and `#pragma`
//! are ignored: the kernels need no headers. Tokens that come out of a macro carry the span of the
//! macro's use, so that errors point at the text the user wrote.

use super::lexer::{lex, Punct, Token, TokenKind};
use super::span::{Diagnostic, Span};
use std::collections::HashMap;

/// Macro expansion stops at this depth (a macro that expands to itself forever is an error).
const MAX_EXPANSION_DEPTH: usize = 64;

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

/// Runs the preprocessor over `tokens`. `defines` are `-D NAME=VALUE` overrides, defined before the
/// file (so the file's `#ifndef NAME` guard skips its own default).
pub fn preprocess(
    tokens: Vec<Token>,
    defines: &[(String, String)],
) -> Result<Vec<Token>, Diagnostic> {
    let mut macros: HashMap<String, Macro> = HashMap::new();
    for (name, value) in defines {
        let body = lex(value).map_err(|d| {
            Diagnostic::new(
                Span::default(),
                format!("in -D {name}={value}: {}", d.message),
            )
        })?;
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(Diagnostic::new(
                Span::default(),
                format!("-D {name}: a macro name is letters, digits and '_'"),
            ));
        }
        macros.insert(name.clone(), Macro { params: None, body });
    }

    let mut out = Vec::with_capacity(tokens.len());
    let mut stack: Vec<Conditional> = Vec::new();
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
            directive(hash_span, line, active, &mut macros, &mut stack)?;
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
        expand(&tokens[i..end], &macros, &mut disabled, 0, None, &mut out)?;
        i = end;
    }
    if let Some(open) = stack.last() {
        return Err(Diagnostic::new(open.span, "this conditional has no #endif"));
    }
    Ok(out)
}

fn directive(
    hash_span: Span,
    line: &[Token],
    active: bool,
    macros: &mut HashMap<String, Macro>,
    stack: &mut Vec<Conditional>,
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
            let taken = active && eval_condition(&line[1..], first.span, macros)?;
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
            let take =
                top.parent_active && !top.taken && eval_condition(&line[1..], first.span, macros)?;
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
/// expanded inside its own expansion); `use_span` is the span expanded tokens take.
fn expand(
    tokens: &[Token],
    macros: &HashMap<String, Macro>,
    disabled: &mut Vec<String>,
    depth: usize,
    use_span: Option<Span>,
    out: &mut Vec<Token>,
) -> Result<(), Diagnostic> {
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        let span = use_span.unwrap_or(token.span);
        let name = match token.ident() {
            Some(name) if macros.contains_key(name) && !disabled.iter().any(|d| d == name) => name,
            _ => {
                let mut t = token.clone();
                t.span = span;
                out.push(t);
                i += 1;
                continue;
            }
        };
        if depth >= MAX_EXPANSION_DEPTH {
            return Err(Diagnostic::new(
                span,
                format!("macro '{name}' expands too deeply"),
            ));
        }
        let Some(mac) = macros.get(name) else {
            i += 1;
            continue;
        };
        match &mac.params {
            None => {
                disabled.push(name.to_string());
                expand(&mac.body, macros, disabled, depth + 1, Some(span), out)?;
                disabled.pop();
                i += 1;
            }
            Some(params) => {
                // Without `(` after it, a function-like macro's name is an ordinary identifier.
                if !tokens.get(i + 1).is_some_and(|t| t.is_punct(Punct::LParen)) {
                    let mut t = token.clone();
                    t.span = span;
                    out.push(t);
                    i += 1;
                    continue;
                }
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
                for arg in &args {
                    let mut e = Vec::new();
                    expand(arg, macros, disabled, depth + 1, Some(span), &mut e)?;
                    expanded_args.push(e);
                }
                let mut substituted = Vec::new();
                for t in &mac.body {
                    match t.ident().and_then(|n| params.iter().position(|p| p == n)) {
                        Some(k) => substituted.extend(expanded_args[k].iter().cloned()),
                        None => substituted.push(t.clone()),
                    }
                }
                disabled.push(name.to_string());
                expand(&substituted, macros, disabled, depth + 1, Some(span), out)?;
                disabled.pop();
                i = after;
            }
        }
    }
    Ok(())
}

/// Splits the arguments of a function-like macro use; `open` is the index of its `(`. Returns the
/// arguments and the index after the closing `)`.
fn macro_arguments(
    tokens: &[Token],
    open: usize,
    name: &str,
    span: Span,
) -> Result<(Vec<Vec<Token>>, usize), Diagnostic> {
    let mut args = vec![Vec::new()];
    let mut depth = 0usize;
    let mut j = open + 1;
    while j < tokens.len() {
        let t = &tokens[j];
        if t.is_punct(Punct::LParen) {
            depth += 1;
        } else if t.is_punct(Punct::RParen) {
            if depth == 0 {
                return Ok((args, j + 1));
            }
            depth -= 1;
        } else if t.is_punct(Punct::Comma) && depth == 0 {
            args.push(Vec::new());
            j += 1;
            continue;
        }
        if let Some(last) = args.last_mut() {
            last.push(t.clone());
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
    macros: &HashMap<String, Macro>,
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
    expand(&replaced, macros, &mut Vec::new(), 0, None, &mut expanded)?;
    if expanded.is_empty() {
        return Err(Diagnostic::new(at, "#if needs a condition"));
    }
    let mut parser = CondParser {
        tokens: &expanded,
        pos: 0,
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

/// A precedence-climbing evaluator for `#if` conditions, over 64-bit signed integers.
struct CondParser<'a> {
    tokens: &'a [Token],
    pos: usize,
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

    fn expr(&mut self, min_prec: u8) -> Result<i64, Diagnostic> {
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
}
