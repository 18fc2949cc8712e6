//! Source positions and diagnostics of the kernel language.
//!
//! Every error the front end or the interpreter finds is a `Diagnostic`: a message and the place in
//! the kernel source it is about, shown as `LINE:COL: message` like a compiler (nvcc and clang print
//! `file:line:col: error: ...`). Nothing in the kernel module panics on bad input; it returns one.

use serde::Serialize;
use std::fmt;

/// A stretch of the original source. `line` and `col` are 1-based and point at the first character;
/// `start..end` are byte offsets into the source. Tokens that come from a macro carry the span of
/// the macro's use, so errors point at text the user wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Span {
    pub line: u32,
    pub col: u32,
    pub start: u32,
    pub end: u32,
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub span: Span,
    pub message: String,
}

impl Diagnostic {
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span,
            message: message.into(),
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
}
