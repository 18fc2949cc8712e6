//! The kernel launches of a whole program, found in its host code.
//!
//! A student's `.cu` file launches its kernels from `main`: `kernel<<<grid, block, shared,
//! stream>>>(args)` (CUDA C++ Programming Guide, "Execution Configuration"), with the grid and
//! block in `dim3` variables, sizes from `#define`s and `const` locals, and buffers from
//! `cudaMalloc`. This module reads the host functions (`parser`'s host items, in nvcc's host pass:
//! `__CUDACC__` defined, `__CUDA_ARCH__` not) token by token, in source order, and for each launch
//! gives what the host code fixes: the grid and block, the dynamic shared bytes, and each argument
//! as an integer, a floating constant or a pointer into an allocated buffer (`d_in + RADIUS`
//! included, with the buffer's `cudaMalloc` size and the bytes `cudaMemcpy` copies into it).
//!
//! It evaluates only what straight-line code fixes: declarations and assignments of integers,
//! `dim3` variables (`dim3 g(a, b)`, `dim3 g = dim3(..)`, `dim3 g{..}`, `g.x = ..`), folded by the
//! front end as an array size is (`constant_expression`). A value set under a condition or in a
//! loop, a loop variable, a function's parameter or anything computed at run time (`argc`,
//! `atoi(argv[1])`, a value read from a file) is `HostValue::Unknown` with its text, never
//! guessed. The walk is linear in the tokens, without recursion, and reads at most
//! `MAX_HOST_LAUNCHES` launches.

use crate::header_names::named_type;
use crate::lexer::{lex, Punct, Token, TokenKind};
use crate::limits::MAX_HOST_LAUNCHES;
use crate::parser::{after_match, file_items};
use crate::preprocess::preprocess;
use crate::span::{Diagnostic, Span};
use serde::Serialize;
use std::ops::Range;

/// A value of a launch: known, or the host code's text that computes it at run time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HostValue {
    Known(i64),
    Unknown(String),
}

impl HostValue {
    pub fn known(&self) -> Option<i64> {
        match self {
            HostValue::Known(value) => Some(*value),
            HostValue::Unknown(_) => None,
        }
    }
}

/// A pointer argument into a buffer the host allocated.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BufferArgument {
    /// The host's pointer variable (`d_in`).
    pub buffer: String,
    /// Elements of the host pointer's type past the buffer's start (`d_in + RADIUS`: RADIUS).
    pub offset: HostValue,
    /// The bytes `cudaMalloc` allocated.
    pub bytes: HostValue,
    /// The bytes the last `cudaMemcpy` into it copied, if one did.
    pub copied: Option<HostValue>,
}

/// What one argument of a launch is.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ArgumentValue {
    Integer(i64),
    Float(f64),
    Buffer(BufferArgument),
    /// Computed at run time: the text that computes it (where the value it names was set).
    Unknown(String),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LaunchArgument {
    /// The argument as written.
    pub text: String,
    pub value: ArgumentValue,
}

/// One `kernel<<<grid, block, shared, stream>>>(args)` of the host code.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostLaunch {
    /// The kernel as spelled, template arguments included (`mm<float, 16>`).
    pub kernel: String,
    /// Where the kernel's name is (a launch a macro writes is at the macro's use).
    pub span: Span,
    pub grid: [HostValue; 3],
    pub block: [HostValue; 3],
    /// The dynamic shared memory in bytes (0 when the launch gives none).
    pub shared_bytes: HostValue,
    /// The stream as written, when the launch names one.
    pub stream: Option<String>,
    pub args: Vec<LaunchArgument>,
}

/// What the host code has bound a name to.
#[derive(Clone, Debug)]
enum Binding {
    Integer(HostValue),
    Float(f64),
    Dim3([HostValue; 3]),
    Pointer {
        bytes: HostValue,
        copied: Option<HostValue>,
    },
}

/// The launches in `source`'s host functions, in source order (`defines` are the `-D`s).
pub fn find_launches(
    source: &str,
    defines: &[(String, String)],
) -> Result<Vec<HostLaunch>, Diagnostic> {
    let mut host_pass = vec![("__CUDACC__".to_string(), "1".to_string())];
    host_pass.extend_from_slice(defines);
    let tokens = preprocess(lex(source)?, &host_pass)?;
    let mut finder = Finder {
        tokens: &tokens,
        bindings: Vec::new(),
        scope_start: 0,
        launches: Vec::new(),
        evaluations: std::cell::Cell::new(0),
        source,
        defines: &host_pass,
        whole_file_folds: std::cell::Cell::new(0),
    };
    for (host, function, range) in file_items(&tokens)? {
        if !function {
            // File-scope values (`const int N = 1024;`) are seen by every function after them.
            let end = range.end - usize::from(finder.is(range.end - 1, Punct::Semi));
            finder.statement(range.start..end, false)?;
            continue;
        }
        if host {
            let file_scope = finder.bindings.len();
            finder.scope_start = file_scope;
            finder.function(range)?;
            finder.bindings.truncate(file_scope);
            finder.scope_start = 0;
        }
    }
    Ok(finder.launches)
}

struct Finder<'a> {
    tokens: &'a [Token],
    bindings: Vec<(String, Binding)>,
    /// Where the bindings of the function being read start (those before are file-scope).
    scope_start: usize,
    launches: Vec<HostLaunch>,
    /// Expressions folded so far, each a pass of the front end.
    evaluations: std::cell::Cell<usize>,
    /// The file and its defines, for the sizes only the file's own types give (`sizeof(Complex)`).
    source: &'a str,
    defines: &'a [(String, String)],
    /// Values folded against the whole file so far (`MAX_WHOLE_FILE_FOLDS`).
    whole_file_folds: std::cell::Cell<usize>,
}

/// The most values the host code may bind at once; a name bound again replaces its value.
const MAX_BINDINGS: usize = 4_096;

/// The most expressions of the host code folded; later ones are unknown. A program has tens.
const MAX_EVALUATIONS: usize = 20_000;

/// Values that name a type of the file (`n * sizeof(Particle)`) are folded with the whole file's
/// declarations in view, a pass of the front end each: at most this many a file.
const MAX_WHOLE_FILE_FOLDS: usize = 64;

/// Words that start a control statement, whose body runs under a condition or repeatedly.
const CONTROL: [&str; 8] = ["if", "else", "for", "while", "do", "switch", "try", "catch"];

/// Words a declaration of a host value may start with, besides the header types.
const DECLARATION_WORDS: [&str; 17] = [
    "const",
    "static",
    "constexpr",
    "volatile",
    "register",
    "unsigned",
    "signed",
    "int",
    "long",
    "short",
    "char",
    "bool",
    "float",
    "double",
    "size_t",
    "auto",
    "dim3",
];

/// How a token reads in C.
fn token_text(token: &Token) -> String {
    match &token.kind {
        TokenKind::Ident(name) => name.clone(),
        TokenKind::Int {
            value,
            unsigned,
            long,
            ..
        } => {
            let u = if *unsigned { "u" } else { "" };
            let l = if *long { "ll" } else { "" };
            format!("{value}{u}{l}")
        }
        TokenKind::Float { value, single } => {
            format!("{value:?}{}", if *single { "f" } else { "" })
        }
        TokenKind::Str(text) => format!("{text:?}"),
        TokenKind::Char(value) => value.to_string(),
        TokenKind::Punct(p) => p.as_str().to_string(),
        TokenKind::PragmaUnroll(_) => String::new(),
    }
}

/// Tokens as text, a space where the source had one.
fn text_of(tokens: &[Token]) -> String {
    let mut text = String::new();
    for (index, token) in tokens.iter().enumerate() {
        // A macro's argument keeps the space it had at the macro's use; none inside brackets.
        let opens = index > 0
            && (tokens[index - 1].is_punct(Punct::LParen)
                || tokens[index - 1].is_punct(Punct::LBracket));
        let closes = token.is_punct(Punct::RParen) || token.is_punct(Punct::RBracket);
        if index > 0 && token.space_before && !opens && !closes {
            text.push(' ');
        }
        text.push_str(&token_text(token));
    }
    text
}

/// The ranges between the commas at bracket depth 0 of `range` (none for an empty range).
fn split_commas(tokens: &[Token], range: Range<usize>) -> Result<Vec<Range<usize>>, Diagnostic> {
    let mut parts = Vec::new();
    let (mut start, mut index) = (range.start, range.start);
    while index < range.end {
        match &tokens[index].kind {
            TokenKind::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => {
                index = after_match(tokens, index)?.min(range.end)
            }
            TokenKind::Punct(Punct::Comma) => {
                parts.push(start..index);
                index += 1;
                start = index;
            }
            _ => index += 1,
        }
    }
    if start < range.end || !parts.is_empty() {
        parts.push(start..range.end);
    }
    Ok(parts)
}

/// The floating constant `tokens` write (`2.5f`, `-1.0`), if they are one.
fn float_literal(tokens: &[Token]) -> Option<f64> {
    let (sign, rest) = match tokens {
        [minus, rest @ ..] if minus.is_punct(Punct::Minus) => (-1.0, rest),
        _ => (1.0, tokens),
    };
    match rest {
        [Token {
            kind: TokenKind::Float { value, .. },
            ..
        }] => Some(sign * value),
        _ => None,
    }
}

impl Finder<'_> {
    fn word(&self, index: usize) -> Option<&str> {
        self.tokens.get(index).and_then(Token::ident)
    }

    fn is(&self, index: usize, p: Punct) -> bool {
        self.tokens.get(index).is_some_and(|t| t.is_punct(p))
    }

    fn binding(&self, name: &str) -> Option<&Binding> {
        self.bindings
            .iter()
            .rev()
            .find(|(bound, _)| bound == name)
            .map(|(_, binding)| binding)
    }

    /// Binds `name` in the current scope, replacing its value there if it has one.
    fn bind(&mut self, name: &str, binding: Binding) -> Result<(), Diagnostic> {
        let scope = &mut self.bindings[self.scope_start..];
        if let Some(slot) = scope.iter_mut().rev().find(|(bound, _)| bound == name) {
            slot.1 = binding;
            return Ok(());
        }
        if self.bindings.len() >= MAX_BINDINGS {
            return Err(Diagnostic::new(
                Span::default(),
                format!(
                    "the host code declares more than {MAX_BINDINGS} values, the simulator's limit"
                ),
            ));
        }
        self.bindings.push((name.to_string(), binding));
        Ok(())
    }

    /// Reads a host function's body: its statements split at `;`, `{` and `}`, each with
    /// whether it runs under a condition or in a loop.
    fn function(&mut self, range: Range<usize>) -> Result<(), Diagnostic> {
        let mut index = range.start;
        while index < range.end && !self.is(index, Punct::LBrace) {
            index = match self.is(index, Punct::LParen) {
                true => after_match(self.tokens, index)?,
                false => index + 1,
            };
        }
        // Whether each open block runs under a condition (a control statement's or a lambda's).
        let mut blocks: Vec<bool> = Vec::new();
        let mut start = index + 1;
        index += 1;
        while index < range.end {
            let under_condition = blocks.iter().any(|&b| b);
            match &self.tokens[index].kind {
                TokenKind::Punct(Punct::LParen | Punct::LBracket) => {
                    index = after_match(self.tokens, index)?
                }
                TokenKind::Punct(Punct::Semi) => {
                    self.statement(start..index, under_condition)?;
                    index += 1;
                    start = index;
                }
                TokenKind::Punct(Punct::LBrace) => {
                    let initializer = index > start
                        && !self.is(index - 1, Punct::RParen)
                        && !self.is(index - 1, Punct::RBracket)
                        && !self.word(index - 1).is_some_and(|w| CONTROL.contains(&w));
                    if initializer {
                        // `dim3 g{16, 16}` or `int v[] = {1, 2}`: part of the statement.
                        index = after_match(self.tokens, index)?;
                        continue;
                    }
                    self.statement(start..index, under_condition)?;
                    blocks.push(index > start);
                    index += 1;
                    start = index;
                }
                TokenKind::Punct(Punct::RBrace) => {
                    blocks.pop();
                    index += 1;
                    start = index;
                }
                _ => index += 1,
            }
        }
        Ok(())
    }

    /// One statement: a loop's variables, the launches and allocations in it, then the value it
    /// declares or assigns.
    fn statement(&mut self, range: Range<usize>, under_condition: bool) -> Result<(), Diagnostic> {
        let mut start = range.start;
        let mut conditional = under_condition;
        // A control statement's own head: what follows it runs under a condition.
        while let Some(word) = self.word(start).filter(|w| CONTROL.contains(w)) {
            conditional = true;
            let is_for = word == "for";
            start += 1;
            if self.is(start, Punct::LParen) {
                let end = after_match(self.tokens, start)?;
                if is_for {
                    // A loop variable changes from one iteration to the next.
                    self.declaration(start + 1..end - 1, true)?;
                }
                start = end;
            }
        }
        for index in range.clone() {
            match self.word(index) {
                Some("cudaMalloc" | "cudaMallocManaged") if self.is(index + 1, Punct::LParen) => {
                    self.allocation(index + 1)?
                }
                Some("cudaMemcpy" | "cudaMemcpyAsync") if self.is(index + 1, Punct::LParen) => {
                    self.copy(index + 1)?
                }
                _ if self.is(index, Punct::Shl) && self.is(index + 1, Punct::Lt) => {
                    self.launch(range.start, index)?
                }
                _ => {}
            }
        }
        if start >= range.end {
            return Ok(());
        }
        let first = self.word(start).unwrap_or("");
        if DECLARATION_WORDS.contains(&first) || named_type(first).is_some() {
            // A declaration holds its value wherever it runs.
            return self.declaration(start..range.end, false);
        }
        self.assignment(start..range.end, conditional)
    }

    /// `int n = 1 << 20, m;`, `dim3 grid(n / 16, n / 16);`, `float* d_a;`: the names declared;
    /// `varies` for a loop's own variables.
    fn declaration(&mut self, range: Range<usize>, varies: bool) -> Result<(), Diagnostic> {
        let is_type = |w: &str| DECLARATION_WORDS.contains(&w) || named_type(w).is_some();
        let mut start = range.start;
        let (mut dim3, mut float) = (false, false);
        while let Some(word) = self.word(start).filter(|w| is_type(w)) {
            dim3 |= word == "dim3";
            float |= matches!(word, "float" | "double");
            start += 1;
        }
        for part in split_commas(self.tokens, start..range.end)? {
            let mut index = part.start;
            let mut pointer = false;
            while self.is(index, Punct::Star) || self.is(index, Punct::Amp) {
                pointer |= self.is(index, Punct::Star);
                index += 1;
            }
            let Some(name) = self.word(index).map(str::to_string) else {
                continue;
            };
            index += 1;
            let bracketed = self.is(index, Punct::LParen) || self.is(index, Punct::LBrace);
            let init = if self.is(index, Punct::Assign) {
                index + 1..part.end
            } else if bracketed && index + 1 < part.end {
                index + 1..part.end - 1
            } else {
                part.end..part.end
            };
            let binding = if varies {
                Binding::Integer(HostValue::Unknown(format!("{name}, a loop variable")))
            } else if pointer {
                Binding::Pointer {
                    bytes: HostValue::Unknown(format!("the allocation of {name}")),
                    copied: None,
                }
            } else if dim3 {
                Binding::Dim3(self.dim3_of(init)?)
            } else if let Some(value) = float_literal(&self.tokens[init.clone()]).filter(|_| float)
            {
                Binding::Float(value)
            } else if init.is_empty() {
                Binding::Integer(HostValue::Unknown(name.clone()))
            } else {
                Binding::Integer(self.evaluate(init))
            };
            self.bind(&name, binding)?;
        }
        Ok(())
    }

    /// A `dim3`: a `dim3` variable, `dim3(..)`, `{..}`, the arguments of its constructor, or one
    /// integer; missing sizes are 1.
    fn dim3_of(&self, range: Range<usize>) -> Result<[HostValue; 3], Diagnostic> {
        let mut inner = range.clone();
        if self.word(inner.start) == Some("dim3") {
            inner.start += 1;
        }
        let bracketed = self.is(inner.start, Punct::LParen) || self.is(inner.start, Punct::LBrace);
        if bracketed && after_match(self.tokens, inner.start)? == inner.end {
            inner = inner.start + 1..inner.end - 1;
        } else if range.len() == 1 {
            if let Some(Binding::Dim3(value)) = self.word(range.start).and_then(|w| self.binding(w))
            {
                return Ok(value.clone());
            }
        }
        let mut value = [1, 1, 1].map(HostValue::Known);
        for (slot, part) in value.iter_mut().zip(split_commas(self.tokens, inner)?) {
            *slot = self.evaluate(part);
        }
        Ok(value)
    }

    /// `n = e`, `n += e`, `n++`, `--n`, `grid.x = e`: the new value, unknown under a condition.
    fn assignment(&mut self, range: Range<usize>, conditional: bool) -> Result<(), Diagnostic> {
        let step = |token: Option<&Token>| match token.map(|t| &t.kind) {
            Some(TokenKind::Punct(Punct::PlusPlus)) => Some("+"),
            Some(TokenKind::Punct(Punct::MinusMinus)) => Some("-"),
            _ => None,
        };
        let prefix = step(self.tokens.get(range.start));
        let name_at = range.start + usize::from(prefix.is_some());
        let Some(name) = self.word(name_at).map(str::to_string) else {
            return Ok(());
        };
        let Some(binding) = self.binding(&name).cloned() else {
            return Ok(());
        };
        let mut index = name_at + 1;
        let mut member = None;
        if self.is(index, Punct::Dot) {
            member = self
                .word(index + 1)
                .and_then(|m| "xyz".find(m).filter(|_| m.len() == 1));
            index += 2;
        }
        let old = match (&binding, member) {
            (Binding::Integer(value), None) => value.clone(),
            (Binding::Dim3(value), Some(axis)) => value[axis].clone(),
            _ => return Ok(()),
        };
        let operator = match prefix.or_else(|| step(self.tokens.get(index))) {
            Some(sign) => Some((sign.to_string(), HostValue::Known(1))),
            None => match self
                .tokens
                .get(index)
                .filter(|_| index < range.end)
                .map(|t| &t.kind)
            {
                Some(TokenKind::Punct(Punct::Assign)) => None,
                Some(TokenKind::Punct(p)) if p.as_str().len() >= 2 && p.as_str().ends_with('=') => {
                    let symbol = p.as_str().trim_end_matches('=').to_string();
                    Some((symbol, self.evaluate(index + 1..range.end)))
                }
                _ => return Ok(()),
            },
        };
        let value = match (conditional, operator, old) {
            (true, _, _) => {
                HostValue::Unknown(format!("{name}, set under a condition or in a loop"))
            }
            (false, None, _) => self.evaluate(index + 1..range.end),
            (false, Some((symbol, HostValue::Known(right))), HostValue::Known(left)) => {
                crate::constant_expression("", &[], &format!("({left}) {symbol} ({right})"))
                    .map_or_else(
                        |_| HostValue::Unknown(self.text(range.clone())),
                        HostValue::Known,
                    )
            }
            (false, Some(_), _) => HostValue::Unknown(self.text(range.clone())),
        };
        let binding = match (binding, member) {
            (Binding::Dim3(mut dims), Some(axis)) => {
                dims[axis] = value;
                Binding::Dim3(dims)
            }
            _ => Binding::Integer(value),
        };
        self.bind(&name, binding)?;
        Ok(())
    }

    fn text(&self, range: Range<usize>) -> String {
        text_of(&self.tokens[range])
    }

    /// The integer `range` computes, with the values bound so far put in place of their names.
    fn evaluate(&self, range: Range<usize>) -> HostValue {
        // A name alone that is unknown says where it was set.
        if let (1, Some(Binding::Integer(HostValue::Unknown(origin)))) = (
            range.len(),
            self.word(range.start).and_then(|w| self.binding(w)),
        ) {
            return HostValue::Unknown(origin.clone());
        }
        let unknown = || HostValue::Unknown(self.text(range.clone()));
        let mut text = String::new();
        let mut index = range.start;
        while index < range.end {
            let token = &self.tokens[index];
            let piece = match token.ident().and_then(|w| self.binding(w)) {
                Some(Binding::Integer(HostValue::Known(v))) => format!("({v})"),
                Some(Binding::Dim3(dims)) if self.is(index + 1, Punct::Dot) => {
                    let axis = self.word(index + 2).and_then(|m| "xyz".find(m));
                    index += 2;
                    match axis.and_then(|a| dims[a].known()) {
                        Some(v) => format!("({v})"),
                        None => return unknown(),
                    }
                }
                Some(_) => return unknown(),
                None => token_text(token),
            };
            if token.space_before {
                text.push(' ');
            }
            text.push_str(&piece);
            index += 1;
        }
        let done = self.evaluations.get();
        if done >= MAX_EVALUATIONS {
            return HostValue::Unknown(format!(
                "{} (not folded: past the simulator's limit of {MAX_EVALUATIONS} host values)",
                self.text(range)
            ));
        }
        self.evaluations.set(done + 1);
        match crate::constant_expression("", &[], &text) {
            Ok(value) => HostValue::Known(value),
            // `sizeof` of a struct the file declares needs the file's declarations.
            Err(_) if text.contains("sizeof") => {
                let folds = self.whole_file_folds.get();
                if folds >= MAX_WHOLE_FILE_FOLDS {
                    return unknown();
                }
                self.whole_file_folds.set(folds + 1);
                crate::constant_expression(self.source, self.defines, &text)
                    .map_or_else(|_| unknown(), HostValue::Known)
            }
            Err(_) => unknown(),
        }
    }

    /// `range` without the casts in front (`(float*)d_b`, `reinterpret_cast<int4*>(p)`) and
    /// the parentheses around it.
    fn strip_casts(&self, mut range: Range<usize>) -> Result<Range<usize>, Diagnostic> {
        while range.start < range.end {
            let open = range.start;
            if self.is(open, Punct::LParen) {
                let close = after_match(self.tokens, open)?;
                if close == range.end {
                    range = open + 1..close - 1;
                    continue;
                }
                if close < range.end && self.is(close - 2, Punct::Star) {
                    range.start = close;
                    continue;
                }
            }
            if self.word(open).is_some_and(|w| w.ends_with("_cast")) && self.is(open + 1, Punct::Lt)
            {
                let mut index = open + 2;
                while index < range.end && !self.is(index, Punct::Gt) {
                    index += 1;
                }
                if self.is(index + 1, Punct::LParen)
                    && after_match(self.tokens, index + 1)? == range.end
                {
                    range = index + 2..range.end - 1;
                    continue;
                }
            }
            break;
        }
        Ok(range)
    }

    /// The pointer variable an argument names after its casts and `&`: `(void**)&d_a` is `d_a`.
    fn pointer_name(&self, range: Range<usize>) -> Result<Option<String>, Diagnostic> {
        let mut range = self.strip_casts(range)?;
        if self.is(range.start, Punct::Amp) {
            range.start += 1;
        }
        Ok((range.len() == 1)
            .then(|| self.word(range.start).map(str::to_string))
            .flatten())
    }

    /// `cudaMalloc(&p, bytes)`, its parentheses at `open`.
    fn allocation(&mut self, open: usize) -> Result<(), Diagnostic> {
        let close = after_match(self.tokens, open)?;
        let parts = split_commas(self.tokens, open + 1..close - 1)?;
        if let [pointer, bytes, ..] = parts.as_slice() {
            if let Some(name) = self.pointer_name(pointer.clone())? {
                let bytes = self.evaluate(bytes.clone());
                self.bind(
                    &name,
                    Binding::Pointer {
                        bytes,
                        copied: None,
                    },
                )?;
            }
        }
        Ok(())
    }

    /// `cudaMemcpy(dst, src, count, kind)`, its parentheses at `open`: the bytes copied into a
    /// device buffer.
    fn copy(&mut self, open: usize) -> Result<(), Diagnostic> {
        let close = after_match(self.tokens, open)?;
        let parts = split_commas(self.tokens, open + 1..close - 1)?;
        if let [dst, _, count, kind, ..] = parts.as_slice() {
            let to_device = self.text(kind.clone()).contains("ToDevice");
            if let (true, Some(name)) = (to_device, self.pointer_name(dst.clone())?) {
                if let Some(Binding::Pointer { bytes, .. }) = self.binding(&name) {
                    let bytes = bytes.clone();
                    let copied = Some(self.evaluate(count.clone()));
                    self.bind(&name, Binding::Pointer { bytes, copied })?;
                }
            }
        }
        Ok(())
    }

    /// The launch whose `<<<` starts at `at`, in the statement that starts at `start`.
    fn launch(&mut self, start: usize, at: usize) -> Result<(), Diagnostic> {
        if self.launches.len() >= MAX_HOST_LAUNCHES {
            return Err(Diagnostic::new(
                self.tokens[at].span,
                format!(
                    "the host code launches kernels more than the simulator's limit of \
                     {MAX_HOST_LAUNCHES} times"
                ),
            ));
        }
        // The kernel's name, with its template arguments and namespaces.
        let mut name_start = at;
        if name_start > start && (self.is(at - 1, Punct::Gt) || self.is(at - 1, Punct::Shr)) {
            let mut depth = 0usize;
            while name_start > start {
                name_start -= 1;
                match &self.tokens[name_start].kind {
                    TokenKind::Punct(Punct::Gt) => depth += 1,
                    TokenKind::Punct(Punct::Shr) => depth += 2,
                    TokenKind::Punct(Punct::Lt) => depth = depth.saturating_sub(1),
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
            }
        }
        while name_start > start && self.word(name_start - 1).is_some() {
            name_start -= 1;
            if name_start > start && self.is(name_start - 1, Punct::ColonColon) {
                name_start -= 1;
            } else {
                break;
            }
        }
        if name_start == at {
            return Ok(());
        }
        // The configuration ends at `>>>`, lexed as `>>` `>`.
        let mut index = at + 2;
        while index < self.tokens.len()
            && !(self.is(index, Punct::Shr) && self.is(index + 1, Punct::Gt))
        {
            index = match &self.tokens[index].kind {
                TokenKind::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => {
                    after_match(self.tokens, index)?
                }
                _ => index + 1,
            };
        }
        let config = split_commas(self.tokens, at + 2..index.min(self.tokens.len()))?;
        let open = index + 2;
        if !self.is(open, Punct::LParen) {
            return Ok(());
        }
        let close = after_match(self.tokens, open)?;
        let mut args = Vec::new();
        for part in split_commas(self.tokens, open + 1..close - 1)? {
            args.push(self.argument(part)?);
        }
        let part = |k: usize| config.get(k).cloned();
        let launch = HostLaunch {
            kernel: self.text(name_start..at),
            span: self.tokens[name_start].span,
            grid: self.dim3_of(part(0).unwrap_or(at..at))?,
            block: self.dim3_of(part(1).unwrap_or(at..at))?,
            shared_bytes: part(2).map_or(HostValue::Known(0), |r| self.evaluate(r)),
            stream: part(3).map(|r| self.text(r)),
            args,
        };
        self.launches.push(launch);
        Ok(())
    }

    /// One argument of a launch.
    fn argument(&self, range: Range<usize>) -> Result<LaunchArgument, Diagnostic> {
        let text = self.text(range.clone());
        let inner = self.strip_casts(range.clone())?;
        let tokens = &self.tokens[inner.clone()];
        // `d_in + K` or `&d_in[K]`.
        let (name, offset) = match tokens {
            [amp, name, open, ..] if amp.is_punct(Punct::Amp) && open.is_punct(Punct::LBracket) => {
                let close = after_match(self.tokens, inner.start + 2)?;
                let offset = (close == inner.end).then(|| inner.start + 3..close - 1);
                (name.ident(), offset)
            }
            [name] => (name.ident(), Some(inner.start..inner.start)),
            [name, plus, ..] if plus.is_punct(Punct::Plus) => {
                (name.ident(), Some(inner.start + 2..inner.end))
            }
            _ => (None, None),
        };
        if let (Some(name), Some(offset)) = (name, offset) {
            if let Some(Binding::Pointer { bytes, copied }) = self.binding(name) {
                let offset = match offset.is_empty() {
                    true => HostValue::Known(0),
                    false => self.evaluate(offset),
                };
                let value = ArgumentValue::Buffer(BufferArgument {
                    buffer: name.to_string(),
                    offset,
                    bytes: bytes.clone(),
                    copied: copied.clone(),
                });
                return Ok(LaunchArgument { text, value });
            }
            if let Some(Binding::Float(value)) = self.binding(name).filter(|_| tokens.len() == 1) {
                let value = ArgumentValue::Float(*value);
                return Ok(LaunchArgument { text, value });
            }
        }
        let value = match (float_literal(tokens), self.evaluate(inner)) {
            (Some(value), _) => ArgumentValue::Float(value),
            (None, HostValue::Known(value)) => ArgumentValue::Integer(value),
            (None, HostValue::Unknown(text)) => ArgumentValue::Unknown(text),
        };
        Ok(LaunchArgument { text, value })
    }
}

#[cfg(test)]
mod tests {
    use super::{find_launches, ArgumentValue, HostLaunch, HostValue};

    fn value(v: &HostValue) -> String {
        match v {
            HostValue::Known(v) => v.to_string(),
            HostValue::Unknown(text) => format!("?({text})"),
        }
    }

    /// A launch in one line: `LINE: kernel<<<grid; block; shared>>>(args)`, a buffer argument
    /// as `buffer+offset[bytes, copied]`, an unknown value as `?(its text)`.
    fn show(launch: &HostLaunch) -> String {
        let dims = |d: &[HostValue; 3]| d.iter().map(value).collect::<Vec<_>>().join(" ");
        let args: Vec<String> = launch
            .args
            .iter()
            .map(|a| match &a.value {
                ArgumentValue::Integer(v) => v.to_string(),
                ArgumentValue::Float(v) => format!("{v:?}"),
                ArgumentValue::Buffer(b) => format!(
                    "{}+{}[{}, {}]",
                    b.buffer,
                    value(&b.offset),
                    value(&b.bytes),
                    b.copied.as_ref().map_or("-".to_string(), value)
                ),
                ArgumentValue::Unknown(text) => format!("?({text})"),
            })
            .collect();
        format!(
            "{}: {}<<<{}; {}; {}>>>({})",
            launch.span.line,
            launch.kernel,
            dims(&launch.grid),
            dims(&launch.block),
            value(&launch.shared_bytes),
            args.join(", ")
        )
    }

    fn check(source: &str, expected: &[&str]) {
        let found = find_launches(source, &[]).unwrap_or_else(|d| panic!("{d}"));
        let shown: Vec<String> = found.iter().map(show).collect();
        assert_eq!(shown, expected);
    }

    #[test]
    fn a_tiled_matmul_is_launched_with_dim3_sizes_from_defines_and_malloc_sizes() {
        // 1024 x 1024 floats are 4,194,304 bytes; 1024 / 16 = 64 tiles a side.
        check(
            "#include <vector>\n\
             #define N 1024\n\
             #define TILE 16\n\
             __global__ void matmul_tiled(const float* a, const float* b, float* c, int n) {\n\
               __shared__ float ta[TILE][TILE];\n\
               ta[threadIdx.y][threadIdx.x] = a[threadIdx.x];\n\
               c[0] = ta[0][0] + b[0] + n;\n\
             }\n\
             int main(int argc, char** argv) {\n\
               size_t bytes = N * N * sizeof(float);\n\
               float *d_a, *d_b, *d_c;\n\
               cudaMalloc(&d_a, bytes);\n\
               cudaMalloc((void**)&d_b, bytes);\n\
               cudaMalloc(&d_c, bytes);\n\
               std::vector<float> h(N * N, 1.0f);\n\
               cudaMemcpy(d_a, h.data(), bytes, cudaMemcpyHostToDevice);\n\
               dim3 block(TILE, TILE);\n\
               dim3 grid = dim3(N / TILE, N / TILE);\n\
               matmul_tiled<<<grid, block>>>(d_a, d_b, d_c, N);\n\
               cudaDeviceSynchronize();\n\
               return 0;\n\
             }\n",
            &[
                "19: matmul_tiled<<<64 64 1; 16 16 1; 0>>>(d_a+0[4194304, 4194304], \
               d_b+0[4194304, -], d_c+0[4194304, -], 1024)",
            ],
        );
    }

    #[test]
    fn a_size_of_a_struct_the_file_declares_folds_in_an_allocation() {
        // A struct of six floats is 24 bytes; 1024 of them 24,576.
        check(
            "struct Particle { float x, y, z, vx, vy, vz; };\n\
             __global__ void move(Particle* p, int n) { p[0].x += n; }\n\
             int main() {\n\
               const int n = 1024;\n\
               Particle* d_p;\n\
               cudaMalloc(&d_p, n * sizeof(Particle));\n\
               move<<<n / 256, 256>>>(d_p, n);\n\
               return 0;\n\
             }\n",
            &["7: move<<<4 1 1; 256 1 1; 0>>>(d_p+0[24576, -], 1024)"],
        );
    }

    #[test]
    fn a_stencil_is_launched_with_pointers_moved_past_its_halo() {
        // n = 2^20 floats and a halo of 3 on each side: 1,048,582 floats, 4,194,328 bytes; the
        // grid is 2^20 / 256 = 4096 blocks and the tile 256 + 6 floats, 1,048 bytes.
        check(
            "#define RADIUS 3\n\
             #define BLOCK 256\n\
             __global__ void stencil(const float* in, float* out, int n) { out[0] = in[0] + n; }\n\
             int main() {\n\
               const int n = 1 << 20;\n\
               float *d_in, *d_out;\n\
               cudaMalloc(&d_in, (n + 2 * RADIUS) * sizeof(float));\n\
               cudaMalloc(&d_out, (n + 2 * RADIUS) * sizeof(float));\n\
               stencil<<<(n + BLOCK - 1) / BLOCK, BLOCK, (BLOCK + 2 * RADIUS) * sizeof(float)>>>(\n\
                   d_in + RADIUS, &d_out[RADIUS], n);\n\
             }\n",
            &[
                "9: stencil<<<4096 1 1; 256 1 1; 1048>>>(d_in+3[4194328, -], \
               d_out+3[4194328, -], 1048576)",
            ],
        );
    }

    #[test]
    fn sizes_the_host_computes_at_run_time_are_unknown_with_their_text() {
        check(
            "__global__ void scale(float* d, float f, int n) { d[0] = f * n; }\n\
             int main(int argc, char** argv) {\n\
               int n = argc > 1 ? atoi(argv[1]) : 4096;\n\
               int threads = 128;\n\
               int blocks = (n + threads - 1) / threads;\n\
               float* d;\n\
               cudaMalloc(&d, n * sizeof(float));\n\
               for (int r = 0; r < 3; ++r) scale<<<blocks, threads>>>(d, 2.0f, r);\n\
               threads *= 2;\n\
               scale<<<1, threads>>>(d, 0.5f, 7);\n\
               if (argc > 2) { threads = 512; }\n\
               scale<<<1, threads>>>(d, -1.5, n);\n\
             }\n",
            &[
                "8: scale<<<?((n + threads - 1) / threads) 1 1; 128 1 1; 0>>>(\
                 d+0[?(n * sizeof(float)), -], 2.0, ?(r, a loop variable))",
                "10: scale<<<1 1 1; 256 1 1; 0>>>(d+0[?(n * sizeof(float)), -], 0.5, 7)",
                "12: scale<<<1 1 1; ?(threads, set under a condition or in a loop) 1 1; 0>>>(\
                 d+0[?(n * sizeof(float)), -], -1.5, ?(argc > 1 ? atoi(argv[1]) : 4096))",
            ],
        );
    }

    #[test]
    fn template_kernels_keep_their_spelling_and_host_classes_and_lambdas_are_read_past() {
        // 4096 / 32 = 128 blocks; 32 x 8 threads; the stream is named as written.
        check(
            "#include <vector>\n\
             template <typename T, int TILE> __global__ void mm(T* c, int n) { c[0] = n; }\n\
             class Timer {\n\
             public:\n\
               Timer() { cudaEventCreate(&start_); }\n\
               float stop() { return 0.0f; }\n\
             private:\n\
               cudaEvent_t start_;\n\
             };\n\
             static const int SIZE = 4096;\n\
             int main() {\n\
               Timer timer;\n\
               cudaStream_t stream;\n\
               float* c;\n\
               cudaMalloc(&c, SIZE * sizeof(float));\n\
               auto launch = [&](int n) {\n\
                 mm<float, 32><<<dim3(SIZE / 32), dim3(32, 8), 0, stream>>>(c, n);\n\
               };\n\
               launch(SIZE);\n\
               dim3 block{32, 8};\n\
               block.y = 4;\n\
               mm<float, 32><<<SIZE / 32, block>>>(c, SIZE);\n\
               return 0;\n\
             }\n",
            &[
                "17: mm<float, 32><<<128 1 1; 32 8 1; 0>>>(c+0[16384, -], ?(n))",
                "22: mm<float, 32><<<128 1 1; 32 4 1; 0>>>(c+0[16384, -], 4096)",
            ],
        );
    }

    #[test]
    fn a_launch_with_a_stream_names_it_and_an_unbalanced_file_is_an_error() {
        let found = find_launches(
            "__global__ void k(int* a) { a[0] = 1; }\n\
             int main() { cudaStream_t s; k<<<2, 64, 128, s>>>(nullptr); }\n",
            &[],
        )
        .unwrap_or_else(|d| panic!("{d}"));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].stream.as_deref(), Some("s"));
        assert_eq!(found[0].shared_bytes, HostValue::Known(128));
        let error = find_launches("int main() { k<<<1, 1>>>(", &[]).expect_err("unclosed");
        assert_eq!(error.to_string(), "1:12: this '{' is never closed");
    }

    #[test]
    fn hostile_host_code_stops_at_its_limits_without_overflowing_the_stack() {
        // 100,000 minus signs before a float, and 5,000 distinct names: the first is no
        // floating constant (an unknown argument), the second past the 4,096 values bound.
        let minus = format!(
            "__global__ void k(float f) {{ }}\nint main() {{ k<<<1, 1>>>({}1.0f); }}\n",
            "- ".repeat(100_000)
        );
        let found = find_launches(&minus, &[]).unwrap_or_else(|d| panic!("{d}"));
        assert!(matches!(found[0].args[0].value, ArgumentValue::Unknown(_)));
        let names: String = (0..5_000).map(|k| format!("int v{k} = {k};\n")).collect();
        let many = format!("int main() {{\n{names}}}\n");
        let error = find_launches(&many, &[]).expect_err("too many values");
        assert_eq!(
            error.message,
            "the host code declares more than 4096 values, the simulator's limit"
        );
    }
}
