//! The lexer: kernel source text to tokens.
//!
//! It knows the tokens of C as the CUDA C++ Programming Guide's kernels use them (C11 standard,
//! section 6.4 "Lexical elements"): identifiers and keywords, integer literals in decimal and hex
//! with `u`/`l` suffixes, floating literals (`1.0f`, `2.0`, `1e-3f`), string and character literals
//! (only so that `#include "x.h"` lexes), every operator and punctuator, and `//` and `/* */`
//! comments. Each token remembers whether it starts a line, which is how the preprocessor finds
//! its `#` directives. A UTF-8 byte order mark at the start (editors on Windows write one) is
//! skipped; source longer than `limits::MAX_SOURCE_BYTES` is refused before any token is made.

use super::limits::MAX_SOURCE_BYTES;
use super::span::{Diagnostic, Span};

/// Operators and punctuation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Punct {
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Semi,
    Comma,
    Dot,
    Arrow,
    Question,
    Colon,
    /// `::`, the scope operator of C++ qualified names (`ns::f`, `::g`).
    ColonColon,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Amp,
    Pipe,
    Caret,
    Tilde,
    Bang,
    Lt,
    Gt,
    Le,
    Ge,
    EqEq,
    Ne,
    AndAnd,
    OrOr,
    Shl,
    Shr,
    Assign,
    PlusAssign,
    MinusAssign,
    StarAssign,
    SlashAssign,
    PercentAssign,
    AmpAssign,
    PipeAssign,
    CaretAssign,
    ShlAssign,
    ShrAssign,
    PlusPlus,
    MinusMinus,
    Hash,
    HashHash,
    Ellipsis,
}

impl Punct {
    pub fn as_str(self) -> &'static str {
        use Punct::*;
        match self {
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            Semi => ";",
            Comma => ",",
            Dot => ".",
            Arrow => "->",
            Question => "?",
            Colon => ":",
            ColonColon => "::",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Amp => "&",
            Pipe => "|",
            Caret => "^",
            Tilde => "~",
            Bang => "!",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
            EqEq => "==",
            Ne => "!=",
            AndAnd => "&&",
            OrOr => "||",
            Shl => "<<",
            Shr => ">>",
            Assign => "=",
            PlusAssign => "+=",
            MinusAssign => "-=",
            StarAssign => "*=",
            SlashAssign => "/=",
            PercentAssign => "%=",
            AmpAssign => "&=",
            PipeAssign => "|=",
            CaretAssign => "^=",
            ShlAssign => "<<=",
            ShrAssign => ">>=",
            PlusPlus => "++",
            MinusMinus => "--",
            Hash => "#",
            HashHash => "##",
            Ellipsis => "...",
        }
    }
}

/// Punctuators from longest to shortest, so that the first match is the longest one.
const PUNCTS: [(&str, Punct); 49] = [
    ("<<=", Punct::ShlAssign),
    (">>=", Punct::ShrAssign),
    ("...", Punct::Ellipsis),
    ("->", Punct::Arrow),
    ("++", Punct::PlusPlus),
    ("--", Punct::MinusMinus),
    ("<<", Punct::Shl),
    (">>", Punct::Shr),
    ("<=", Punct::Le),
    (">=", Punct::Ge),
    ("==", Punct::EqEq),
    ("!=", Punct::Ne),
    ("&&", Punct::AndAnd),
    ("||", Punct::OrOr),
    ("+=", Punct::PlusAssign),
    ("-=", Punct::MinusAssign),
    ("*=", Punct::StarAssign),
    ("/=", Punct::SlashAssign),
    ("%=", Punct::PercentAssign),
    ("&=", Punct::AmpAssign),
    ("|=", Punct::PipeAssign),
    ("^=", Punct::CaretAssign),
    ("##", Punct::HashHash),
    ("::", Punct::ColonColon),
    ("(", Punct::LParen),
    (")", Punct::RParen),
    ("[", Punct::LBracket),
    ("]", Punct::RBracket),
    ("{", Punct::LBrace),
    ("}", Punct::RBrace),
    (";", Punct::Semi),
    (",", Punct::Comma),
    (".", Punct::Dot),
    ("?", Punct::Question),
    (":", Punct::Colon),
    ("+", Punct::Plus),
    ("-", Punct::Minus),
    ("*", Punct::Star),
    ("/", Punct::Slash),
    ("%", Punct::Percent),
    ("&", Punct::Amp),
    ("|", Punct::Pipe),
    ("^", Punct::Caret),
    ("~", Punct::Tilde),
    ("!", Punct::Bang),
    ("<", Punct::Lt),
    (">", Punct::Gt),
    ("=", Punct::Assign),
    ("#", Punct::Hash),
];

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    Ident(String),
    /// An integer literal with its suffixes (`u`, `l`/`ll`).
    Int {
        value: u64,
        unsigned: bool,
        long: bool,
        hex: bool,
    },
    /// A floating literal; `single` for the `f` suffix.
    Float {
        value: f64,
        single: bool,
    },
    Str(String),
    Char(u64),
    Punct(Punct),
    /// `#pragma unroll` (with its count, if it has one): the preprocessor turns the directive
    /// into this token so that the parser can hand it to the loop that follows.
    PragmaUnroll(Option<u64>),
}

impl TokenKind {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Ident(name) => format!("'{name}'"),
            TokenKind::Int { value, .. } => format!("'{value}'"),
            TokenKind::Float { value, .. } => format!("'{value}'"),
            TokenKind::Str(_) => "a string".to_string(),
            TokenKind::Char(_) => "a character literal".to_string(),
            TokenKind::Punct(p) => format!("'{}'", p.as_str()),
            TokenKind::PragmaUnroll(_) => "'#pragma unroll'".to_string(),
        }
    }
}

/// One token and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
    /// The token is the first one on its source line (preprocessor directives start with one).
    pub line_start: bool,
    /// Whitespace or a comment comes before the token (tells `NAME(` of a function-like macro
    /// from `NAME (`).
    pub space_before: bool,
}

impl Token {
    pub fn is_punct(&self, p: Punct) -> bool {
        self.kind == TokenKind::Punct(p)
    }

    pub fn ident(&self) -> Option<&str> {
        match &self.kind {
            TokenKind::Ident(name) => Some(name),
            _ => None,
        }
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    col: u32,
}

impl Cursor<'_> {
    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn bump(&mut self) {
        if let Some(&b) = self.bytes.get(self.pos) {
            self.pos += 1;
            if b == b'\n' {
                self.line += 1;
                self.col = 1;
            } else if b & 0xC0 != 0x80 {
                // Columns count characters, not the continuation bytes of UTF-8.
                self.col += 1;
            }
        }
    }

    fn span_from(&self, start: usize, line: u32, col: u32) -> Span {
        Span {
            line,
            col,
            start: start as u32,
            end: self.pos as u32,
        }
    }
}

/// Splits `source` into tokens. Comments and whitespace disappear; a backslash at the end of a
/// line joins it to the next, as in C. Spans are byte offsets into `source`, a leading byte order
/// mark included.
pub fn lex(source: &str) -> Result<Vec<Token>, Diagnostic> {
    if source.len() > MAX_SOURCE_BYTES {
        let start = Span {
            line: 1,
            col: 1,
            start: 0,
            end: 0,
        };
        return Err(Diagnostic::new(
            start,
            format!(
                "the source is {} bytes, more than the simulator's limit of {MAX_SOURCE_BYTES}",
                source.len()
            ),
        ));
    }
    let mut cur = Cursor {
        bytes: source.as_bytes(),
        pos: 0,
        line: 1,
        col: 1,
    };
    // A byte order mark is not text: the first line still starts at column 1.
    if source.starts_with('\u{feff}') {
        cur.pos = '\u{feff}'.len_utf8();
    }
    let mut tokens = Vec::new();
    let mut line_start = true;
    let mut space_before = true;
    loop {
        let c = cur.peek(0);
        if cur.pos >= cur.bytes.len() {
            break;
        }
        if c == b'\n' {
            cur.bump();
            line_start = true;
            space_before = true;
            continue;
        }
        if c == b'\\' && (cur.peek(1) == b'\n' || (cur.peek(1) == b'\r' && cur.peek(2) == b'\n')) {
            // A line continuation: the next line belongs to this one.
            cur.bump();
            if cur.peek(0) == b'\r' {
                cur.bump();
            }
            cur.bump();
            space_before = true;
            continue;
        }
        if c.is_ascii_whitespace() {
            cur.bump();
            space_before = true;
            continue;
        }
        let (start, line, col) = (cur.pos, cur.line, cur.col);
        if c == b'/' && cur.peek(1) == b'/' {
            while cur.pos < cur.bytes.len() && cur.peek(0) != b'\n' {
                cur.bump();
            }
            space_before = true;
            continue;
        }
        if c == b'/' && cur.peek(1) == b'*' {
            cur.bump();
            cur.bump();
            loop {
                if cur.pos >= cur.bytes.len() {
                    let span = Span {
                        line,
                        col,
                        start: start as u32,
                        end: start as u32 + 2,
                    };
                    return Err(Diagnostic::new(span, "unterminated /* comment"));
                }
                if cur.peek(0) == b'*' && cur.peek(1) == b'/' {
                    cur.bump();
                    cur.bump();
                    break;
                }
                cur.bump();
            }
            space_before = true;
            continue;
        }
        let kind = if c.is_ascii_alphabetic() || c == b'_' {
            while cur.peek(0).is_ascii_alphanumeric() || cur.peek(0) == b'_' {
                cur.bump();
            }
            TokenKind::Ident(source[start..cur.pos].to_string())
        } else if c.is_ascii_digit() || (c == b'.' && cur.peek(1).is_ascii_digit()) {
            lex_number(&mut cur, source, start, line, col)?
        } else if c == b'"' {
            cur.bump();
            let mut text = String::new();
            loop {
                let d = cur.peek(0);
                if cur.pos >= cur.bytes.len() || d == b'\n' {
                    return Err(Diagnostic::new(
                        cur.span_from(start, line, col),
                        "unterminated string literal",
                    ));
                }
                if d == b'"' {
                    cur.bump();
                    break;
                }
                if d == b'\\' {
                    cur.bump();
                    if let Some(byte) = simple_escape(cur.peek(0)) {
                        cur.bump();
                        text.push(char::from(byte));
                        continue;
                    }
                }
                let from = cur.pos;
                cur.bump();
                while cur.pos < cur.bytes.len() && cur.bytes[cur.pos] & 0xC0 == 0x80 {
                    cur.bump();
                }
                text.push_str(source.get(from..cur.pos).unwrap_or(""));
            }
            TokenKind::Str(text)
        } else if c == b'\'' {
            cur.bump();
            let mut value = u64::from(cur.peek(0));
            if cur.peek(0) == b'\\' {
                cur.bump();
                value = u64::from(simple_escape(cur.peek(0)).unwrap_or(cur.peek(0)));
            }
            cur.bump();
            if cur.peek(0) != b'\'' {
                return Err(Diagnostic::new(
                    cur.span_from(start, line, col),
                    "unterminated character literal",
                ));
            }
            cur.bump();
            TokenKind::Char(value)
        } else {
            let rest = &cur.bytes[cur.pos..];
            let Some(&(text, punct)) = PUNCTS
                .iter()
                .find(|(text, _)| rest.starts_with(text.as_bytes()))
            else {
                cur.bump();
                while cur.pos < cur.bytes.len() && cur.bytes[cur.pos] & 0xC0 == 0x80 {
                    cur.bump();
                }
                let shown = source.get(start..cur.pos).unwrap_or("?");
                return Err(Diagnostic::new(
                    cur.span_from(start, line, col),
                    format!("unexpected character '{shown}'"),
                ));
            };
            for _ in 0..text.len() {
                cur.bump();
            }
            TokenKind::Punct(punct)
        };
        let span = cur.span_from(start, line, col);
        tokens.push(Token {
            kind,
            span,
            line_start,
            space_before,
        });
        line_start = false;
        space_before = false;
    }
    Ok(tokens)
}

/// The byte a one-letter escape sequence after a backslash stands for (C11 6.4.4.4), so that a
/// device `printf`'s `\n` ends its line; `None` for a character that stands for itself (`\\`,
/// `\"`, `\'`) or that starts a numeric escape, which memplay reads as the character.
fn simple_escape(letter: u8) -> Option<u8> {
    Some(match letter {
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'0' => 0,
        b'a' => 7,
        b'b' => 8,
        b'f' => 12,
        b'v' => 11,
        _ => return None,
    })
}

fn lex_number(
    cur: &mut Cursor<'_>,
    source: &str,
    start: usize,
    line: u32,
    col: u32,
) -> Result<TokenKind, Diagnostic> {
    let bad = |cur: &Cursor<'_>, what: &str| {
        Diagnostic::new(
            cur.span_from(start, line, col),
            format!("malformed number: {what}"),
        )
    };
    if cur.peek(0) == b'0' && (cur.peek(1) == b'x' || cur.peek(1) == b'X') {
        cur.bump();
        cur.bump();
        let digits_start = cur.pos;
        while cur.peek(0).is_ascii_hexdigit() {
            cur.bump();
        }
        let digits = &source[digits_start..cur.pos];
        if digits.is_empty() {
            return Err(bad(cur, "no digits after 0x"));
        }
        let value = u64::from_str_radix(digits, 16).map_err(|_| bad(cur, "too large"))?;
        let (unsigned, long) = int_suffix(cur).ok_or_else(|| bad(cur, "unknown suffix"))?;
        return Ok(TokenKind::Int {
            value,
            unsigned,
            long,
            hex: true,
        });
    }
    while cur.peek(0).is_ascii_digit() {
        cur.bump();
    }
    let mut is_float = false;
    if cur.peek(0) == b'.' {
        is_float = true;
        cur.bump();
        while cur.peek(0).is_ascii_digit() {
            cur.bump();
        }
    }
    if cur.peek(0) == b'e' || cur.peek(0) == b'E' {
        is_float = true;
        cur.bump();
        if cur.peek(0) == b'+' || cur.peek(0) == b'-' {
            cur.bump();
        }
        if !cur.peek(0).is_ascii_digit() {
            return Err(bad(cur, "no digits in the exponent"));
        }
        while cur.peek(0).is_ascii_digit() {
            cur.bump();
        }
    }
    let text = &source[start..cur.pos];
    if is_float {
        let value = crate::decimal::parse_f64(text).ok_or_else(|| bad(cur, text))?;
        let single = matches!(cur.peek(0), b'f' | b'F');
        if single || matches!(cur.peek(0), b'l' | b'L') {
            cur.bump();
        }
        if cur.peek(0).is_ascii_alphanumeric() || cur.peek(0) == b'_' {
            return Err(bad(cur, "unknown suffix"));
        }
        return Ok(TokenKind::Float { value, single });
    }
    if matches!(cur.peek(0), b'f' | b'F') {
        // `1f` is not C, but nobody is helped by rejecting it.
        let value = crate::decimal::parse_f64(text).ok_or_else(|| bad(cur, text))?;
        cur.bump();
        return Ok(TokenKind::Float {
            value,
            single: true,
        });
    }
    // A leading 0 makes an octal literal in C.
    let value = if text.len() > 1 && text.starts_with('0') {
        u64::from_str_radix(&text[1..], 8).map_err(|_| bad(cur, "invalid octal literal"))?
    } else {
        text.parse::<u64>().map_err(|_| bad(cur, "too large"))?
    };
    let (unsigned, long) = int_suffix(cur).ok_or_else(|| bad(cur, "unknown suffix"))?;
    Ok(TokenKind::Int {
        value,
        unsigned,
        long,
        hex: false,
    })
}

/// Reads `u`, `l`, `ll` suffixes in any order; `None` if letters follow that are not a suffix.
fn int_suffix(cur: &mut Cursor<'_>) -> Option<(bool, bool)> {
    let mut unsigned = false;
    let mut long = false;
    loop {
        match cur.peek(0) {
            b'u' | b'U' if !unsigned => {
                unsigned = true;
                cur.bump();
            }
            b'l' | b'L' if !long => {
                long = true;
                cur.bump();
                if matches!(cur.peek(0), b'l' | b'L') {
                    cur.bump();
                }
            }
            _ => break,
        }
    }
    if cur.peek(0).is_ascii_alphanumeric() || cur.peek(0) == b'_' {
        return None;
    }
    Some((unsigned, long))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lexes `source` and shows each token as `line:col kind`, or the error.
    fn check(source: &str, expected: &[&str]) {
        let shown: Vec<String> = match lex(source) {
            Ok(tokens) => tokens
                .iter()
                .map(|t| {
                    let kind = match &t.kind {
                        TokenKind::Ident(s) => s.clone(),
                        TokenKind::Int {
                            value,
                            unsigned,
                            long,
                            ..
                        } => {
                            format!(
                                "int {value}{}{}",
                                if *unsigned { "u" } else { "" },
                                if *long { "l" } else { "" }
                            )
                        }
                        TokenKind::Float { value, single } => {
                            format!("float {value}{}", if *single { "f" } else { "" })
                        }
                        TokenKind::Str(s) => format!("str {s}"),
                        TokenKind::Char(c) => format!("char {c}"),
                        TokenKind::Punct(p) => p.as_str().to_string(),
                        TokenKind::PragmaUnroll(count) => format!("pragma unroll {count:?}"),
                    };
                    format!("{} {kind}", t.span)
                })
                .collect(),
            Err(d) => vec![d.to_string()],
        };
        assert_eq!(shown, expected);
    }

    #[test]
    fn the_adjacent_difference_index_line_lexes_with_columns() {
        check(
            "int i = blockDim.x * blockIdx.x + threadIdx.x;",
            &[
                "1:1 int",
                "1:5 i",
                "1:7 =",
                "1:9 blockDim",
                "1:17 .",
                "1:18 x",
                "1:20 *",
                "1:22 blockIdx",
                "1:30 .",
                "1:31 x",
                "1:33 +",
                "1:35 threadIdx",
                "1:44 .",
                "1:45 x",
                "1:46 ;",
            ],
        );
    }

    #[test]
    fn the_scope_operator_is_one_token_and_a_colon_stays_one() {
        check(
            "a ? ::b : ns::c",
            &[
                "1:1 a", "1:3 ?", "1:5 ::", "1:7 b", "1:9 :", "1:11 ns", "1:13 ::", "1:15 c",
            ],
        );
    }

    #[test]
    fn number_literals_with_suffixes() {
        check(
            "1.0f 2.0 1e-3f 0x1F 10u 7UL 0.0F .5",
            &[
                "1:1 float 1f",
                "1:6 float 2",
                "1:10 float 0.001f",
                "1:16 int 31",
                "1:21 int 10u",
                "1:25 int 7ul",
                "1:29 float 0f",
                "1:34 float 0.5",
            ],
        );
    }

    #[test]
    fn comments_disappear_and_lines_count() {
        check(
            "a // one\n/* two\nthree */ b <<= c",
            &["1:1 a", "3:10 b", "3:12 <<=", "3:16 c"],
        );
    }

    #[test]
    fn an_unterminated_comment_points_at_its_start() {
        check(
            "int x;\n  /* never closed",
            &["2:3: unterminated /* comment"],
        );
    }

    #[test]
    fn a_stray_character_is_an_error() {
        check("int @x;", &["1:5: unexpected character '@'"]);
    }

    #[test]
    fn a_byte_order_mark_at_the_start_is_skipped() {
        check("\u{feff}int x;", &["1:1 int", "1:5 x", "1:6 ;"]);
    }

    #[test]
    fn source_over_the_size_limit_is_refused_before_lexing() {
        let source = "x".repeat(MAX_SOURCE_BYTES + 1);
        check(
            &source,
            &["1:1: the source is 1048577 bytes, more than the simulator's limit of 1048576"],
        );
        let at_the_limit = format!("{}\n", " ".repeat(MAX_SOURCE_BYTES - 2)) + "x";
        check(&at_the_limit, &["2:1 x"]);
    }

    #[test]
    fn include_lines_lex() {
        check(
            "#include \"x.h\"",
            &["1:1 #", "1:2 include", "1:10 str x.h"],
        );
    }
}
