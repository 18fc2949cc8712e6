//! Source positions and diagnostics of the kernel language.
//!
//! Every error the front end or the interpreter finds is a `Diagnostic`: a message and the place in
//! the kernel source it is about, shown as `LINE:COL: message` like a compiler (nvcc and clang print
//! `file:line:col: error: ...`). Nothing in the kernel module panics on bad input; it returns one.
//!
//! A message is one line of printable text, whatever the kernel text or the command line held:
//! `one_line` escapes control characters and cuts long text to `limits::MAX_MESSAGE_CHARS`
//! characters. `Diagnostic::new` applies it, and so do the simulator's other errors and the
//! command line's own, so that no error can span lines, move a terminal's cursor or flood a page.

use super::limits::MAX_MESSAGE_CHARS;
use serde::{Deserialize, Serialize};
use std::fmt;

/// `text` as one line of printable characters, at most `MAX_MESSAGE_CHARS` long.
///
/// Newline, carriage return and tab become `\n`, `\r` and `\t`; every other control character
/// (C0, DEL, C1), the Unicode line separators and the bidirectional-text controls become
/// `\u{..}`, as Rust writes them. Text longer than the limit is cut, between characters and never
/// inside an escape, and ends in `…`. The result is unchanged by a second call.
pub fn one_line(text: &str) -> String {
    let mut out = String::new();
    let mut chars = 0usize;
    // Where to cut if the text turns out too long: the end of the last piece that leaves room
    // for the ellipsis.
    let mut cut = 0usize;
    let mut piece = String::new();
    for c in text.chars() {
        piece.clear();
        match c {
            '\n' => piece.push_str("\\n"),
            '\r' => piece.push_str("\\r"),
            '\t' => piece.push_str("\\t"),
            c if c.is_control() || is_layout_control(c) => {
                piece.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => piece.push(c),
        }
        let n = piece.chars().count();
        if chars + n > MAX_MESSAGE_CHARS {
            out.truncate(cut);
            out.push('…');
            return out;
        }
        out.push_str(&piece);
        chars += n;
        if chars < MAX_MESSAGE_CHARS {
            cut = out.len();
        }
    }
    out
}

/// Characters that are not control characters to Rust but still break a line (U+2028, U+2029) or
/// reorder what a terminal shows (U+202A..U+202E, U+2066..U+2069), so that a message could look
/// like something other than what it says.
fn is_layout_control(c: char) -> bool {
    matches!(c, '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A stretch of the original source. `line` and `col` are 1-based and point at the first character;
/// `start..end` are byte offsets into the source. Tokens that come from a macro carry the span of
/// the macro's use, so errors point at text the user wrote.
// Ordered by line, then column: the order of the source, in which the per-line view lists sites.
#[derive(Clone, Copy, Debug, Default, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Span {
    pub line: u32,
    pub col: u32,
    pub start: u32,
    pub end: u32,
}

// Field by field, as derived: but the page's size-optimised build makes the derived comparison a
// call of `memcmp`, and spans are compared for each record a skipped loop iteration or a warp
// shown alike hands on (a tenth of the guarded matmul's time in the page's module).
impl PartialEq for Span {
    fn eq(&self, other: &Span) -> bool {
        self.line == other.line
            && self.col == other.col
            && self.start == other.start
            && self.end == other.end
    }
}

impl std::hash::Hash for Span {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.line.hash(state);
        self.col.hash(state);
        self.start.hash(state);
        self.end.hash(state);
    }
}

impl Span {
    /// The span from the start of `self` to the end of `other` (both on the same source).
    pub fn to(self, other: Span) -> Span {
        if other.end < self.start {
            return self;
        }
        Span {
            line: self.line,
            col: self.col,
            start: self.start,
            end: other.end.max(self.end),
        }
    }

    /// The empty span just after this one, where a missing token (such as a `;`) belongs. It
    /// assumes the span lies on one line, which holds for every token.
    pub fn just_after(self) -> Span {
        let len = self.end.saturating_sub(self.start);
        Span {
            line: self.line,
            col: self.col.saturating_add(len),
            start: self.end,
            end: self.end,
        }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// An error in a kernel, at a place in its source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub span: Span,
    pub message: String,
    /// What kind of error it is, for code that acts on one kind: set where the diagnostic is
    /// made, so that no one reads the message to learn it. Diagnostics written before the field
    /// existed read as `DiagnosticKind::Other`.
    #[serde(default)]
    pub kind: DiagnosticKind,
}

/// The kinds of diagnostic that the simulator or a front end acts on; every other is `Other`.
/// The message says the same in words, for a person.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticKind {
    #[default]
    Other,
    /// A run used up its step budget: the interpreter's budget, which is what was left of the
    /// simulation's when the block began (`interp::step_budget_message`).
    StepBudget,
    /// An access at an index outside the memory object its pointer points into, and what kind
    /// of object that is.
    OutOfBounds(MemoryObject),
    /// A value that must be a constant expression (a file-scope initialiser, an array's size)
    /// is not one.
    NotConstant,
    /// The parser met a token where the grammar wanted another; the message says what it
    /// expected and what it found.
    Syntax,
    /// CUDA C++ that nvcc accepts and the simulator does not run (`refused`): a template, a warp
    /// shuffle, `printf`. The message names the construct.
    NotSimulated,
    /// A kernel's `assert` failed in a thread; the message names its block and thread.
    AssertionFailed,
}

/// The kinds of memory object a launch lays out, as an error names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryObject {
    /// The buffer behind a pointer parameter.
    Buffer,
    DeviceVariable,
    ConstantVariable,
    SharedArray,
    DynamicSharedArray,
    /// A per-thread array in local memory.
    LocalArray,
}

impl MemoryObject {
    /// How a message names it: "buffer", "shared array", ...
    pub fn noun(self) -> &'static str {
        match self {
            MemoryObject::Buffer => "buffer",
            MemoryObject::DeviceVariable => "__device__ variable",
            MemoryObject::ConstantVariable => "__constant__ variable",
            MemoryObject::SharedArray => "shared array",
            MemoryObject::DynamicSharedArray => "dynamic shared array",
            MemoryObject::LocalArray => "local array",
        }
    }
}

impl fmt::Display for MemoryObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.noun())
    }
}

impl Diagnostic {
    /// A diagnostic at `span` of no kind anyone acts on; the message is made one printable line
    /// (`one_line`).
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::of_kind(DiagnosticKind::Other, span, message)
    }

    /// A diagnostic of `kind` at `span`; the message is made one printable line (`one_line`).
    pub fn of_kind(kind: DiagnosticKind, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span,
            message: one_line(&message.into()),
            kind,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.span, self.message)
    }
}

impl std::error::Error for Diagnostic {}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(diagnostic: Diagnostic, expected: &str) {
        assert_eq!(diagnostic.to_string(), expected);
    }

    #[test]
    fn a_diagnostic_shows_line_colon_column_then_the_message() {
        let span = Span {
            line: 3,
            col: 14,
            start: 40,
            end: 41,
        };
        check(
            Diagnostic::new(span, "'m' is not declared"),
            "3:14: 'm' is not declared",
        );
    }

    #[test]
    fn a_message_with_a_newline_or_escape_codes_stays_on_one_printable_line() {
        let span = Span {
            line: 1,
            col: 5,
            start: 4,
            end: 5,
        };
        check(
            Diagnostic::new(span, "'a\nb' is\tnot a name \u{1b}[2J\u{7f}\u{85}\u{202e}"),
            "1:5: 'a\\nb' is\\tnot a name \\u{1b}[2J\\u{7f}\\u{85}\\u{202e}",
        );
    }

    #[test]
    fn a_long_message_is_cut_to_the_limit_with_an_ellipsis() {
        let identifier = "x".repeat(1 << 20);
        let message = one_line(&format!("'{identifier}' is not declared"));
        assert_eq!(message.chars().count(), MAX_MESSAGE_CHARS);
        assert_eq!(message, format!("'{}…", "x".repeat(MAX_MESSAGE_CHARS - 2)));
        // Multi-byte characters are cut between characters, escapes are never split.
        let wide = one_line(&"é".repeat(300));
        assert_eq!(wide, format!("{}…", "é".repeat(MAX_MESSAGE_CHARS - 1)));
        let escapes = one_line(&format!("{}\u{1}", "y".repeat(MAX_MESSAGE_CHARS - 4)));
        assert_eq!(escapes, format!("{}…", "y".repeat(MAX_MESSAGE_CHARS - 4)));
        // Exactly at the limit nothing is cut, and a second pass changes nothing.
        let full = "z".repeat(MAX_MESSAGE_CHARS);
        assert_eq!(one_line(&full), full);
        assert_eq!(one_line(&message), message);
        assert_eq!(one_line(&escapes), escapes);
    }

    #[test]
    fn a_missing_token_belongs_just_after_the_previous_one() {
        let previous = Span {
            line: 2,
            col: 11,
            start: 30,
            end: 33,
        };
        check(
            Diagnostic::new(previous.just_after(), "expected ';'"),
            "2:14: expected ';'",
        );
    }

    #[test]
    fn a_diagnostic_written_before_kinds_existed_reads_as_of_no_kind() {
        let json =
            r#"{"span":{"line":2,"col":3,"start":10,"end":11},"message":"'m' is not declared"}"#;
        let diagnostic: Diagnostic = serde_json::from_str(json).expect("it reads");
        assert_eq!(diagnostic.kind, DiagnosticKind::Other);
        let out_of_bounds = Diagnostic::of_kind(
            DiagnosticKind::OutOfBounds(MemoryObject::DynamicSharedArray),
            Span::default(),
            "index 9 is outside dynamic shared array 's' (32 bytes)",
        );
        let json = serde_json::to_string(&out_of_bounds).expect("it writes");
        let back: Diagnostic = serde_json::from_str(&json).expect("it reads back");
        assert_eq!(back, out_of_bounds);
    }
}
