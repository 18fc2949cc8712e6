//! A whole lesson in a link: the fragment `#lesson=1.<payload>`, and how it shares the fragment
//! with an edited kernel (`#src=1.<payload>`, `source_link`).
//!
//! The payload is the lesson file compressed and written exactly as a kernel is (raw deflate,
//! base64url, `source_link`). With both, the lesson comes first and `&` joins them:
//! `#lesson=1.<lesson>&src=1.<kernel>`. The two together keep to the one limit of a link's
//! fragment (`source_link::MAX_FRAGMENT_CHARS`): the lesson takes what it needs, and an edit of
//! its kernel goes into the link only if it fits the rest; otherwise the link keeps the lesson
//! and its settings, and the page says so as it does for any kernel too large for a link.
//!
//! The lesson's name is the link's `lesson=` (the page's editor writes it); a link without one
//! names it `shared-lesson`. Everything here is pure; the browser unpacks the payload
//! (`deflate`) and `app` reads the lesson (`lessons::load`) and the link again once it has.

use crate::format::format_number;
use crate::format::quote;
use crate::lessons::valid_key;
use crate::source_link::{decode_base64url, encode_base64url, FORMAT, MAX_FRAGMENT_CHARS};

/// What the lesson's part of the fragment starts with.
pub const LESSON_KEY: &str = "lesson=";

/// The name a lesson in a link gets when the link's query names none.
pub const SHARED_LESSON: &str = "shared-lesson";

/// A fragment cut into its lesson part (`lesson=1.…`, if any) and the rest (the kernel's part,
/// read by `source_link::read_fragment`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitFragment {
    pub lesson: Option<String>,
    pub rest: String,
}

/// Cuts `location.hash` (the `#` is optional) into the lesson's part and the rest.
pub fn split(hash: &str) -> SplitFragment {
    let fragment = hash.strip_prefix('#').unwrap_or(hash);
    match fragment.strip_prefix(LESSON_KEY) {
        Some(_) => {
            let (lesson, rest) = fragment.split_once('&').unwrap_or((fragment, ""));
            SplitFragment {
                lesson: Some(lesson.to_string()),
                rest: rest.to_string(),
            }
        }
        None => SplitFragment {
            lesson: None,
            rest: fragment.to_string(),
        },
    }
}

/// The fragment of a lesson's part and a kernel's part, either of which may be absent.
pub fn join(lesson: Option<&str>, kernel: Option<&str>) -> Option<String> {
    match (lesson, kernel) {
        (Some(lesson), Some(kernel)) => Some(format!("{lesson}&{kernel}")),
        (Some(part), None) | (None, Some(part)) => Some(part.to_string()),
        (None, None) => None,
    }
}

/// The characters left for a kernel's part beside a lesson's part of `lesson_chars`.
pub fn kernel_budget(lesson: Option<&str>) -> usize {
    match lesson {
        Some(lesson) => MAX_FRAGMENT_CHARS.saturating_sub(lesson.chars().count() + 1),
        None => MAX_FRAGMENT_CHARS,
    }
}

/// The compressed lesson a lesson part carries, or why it cannot be read.
pub fn payload(part: &str) -> Result<Vec<u8>, String> {
    let chars = part.chars().count();
    if chars > MAX_FRAGMENT_CHARS {
        return Err(format!(
            "The lesson in this link is {} characters long, more than the {} a link may carry",
            format_number(chars as f64),
            format_number(MAX_FRAGMENT_CHARS as f64)
        ));
    }
    let text = part.strip_prefix(LESSON_KEY).unwrap_or(part);
    let broken = || {
        format!(
            "#{LESSON_KEY}{} is not a lesson memplay can read: the link may be cut short or \
             altered",
            quote(text)
        )
    };
    let (format, data) = text.split_once('.').ok_or_else(broken)?;
    if format != FORMAT {
        return Err(broken());
    }
    decode_base64url(data).ok_or_else(broken)
}

/// The lesson part that carries `compressed`, if it fits a link.
pub fn write_part(compressed: &[u8]) -> Option<String> {
    let part = format!("{LESSON_KEY}{FORMAT}.{}", encode_base64url(compressed));
    (part.chars().count() <= MAX_FRAGMENT_CHARS).then_some(part)
}

/// The name a lesson read from a link gets: the link's `lesson=` (`named`, as `url::query_value`
/// reads it), where that is a lesson's name.
pub fn lesson_key(named: Option<&str>) -> String {
    named
        .filter(|key| valid_key(key))
        .map_or_else(|| SHARED_LESSON.to_string(), str::to_string)
}

/// The name a lesson loaded from `address` gets: its file's name without `.txt`.
pub fn file_key(address: &str) -> String {
    let name = address.rsplit('/').next().unwrap_or(address);
    let stem = name
        .strip_suffix(".txt")
        .unwrap_or(name)
        .to_ascii_lowercase();
    if valid_key(&stem) {
        stem
    } else {
        SHARED_LESSON.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lesson_and_a_kernel_share_the_fragment_lesson_first() {
        let both = split("#lesson=1.abc&src=1.def");
        assert_eq!(both.lesson.as_deref(), Some("lesson=1.abc"));
        assert_eq!(both.rest, "src=1.def");
        assert_eq!(
            join(both.lesson.as_deref(), Some(&both.rest)).as_deref(),
            Some("lesson=1.abc&src=1.def")
        );
        let kernel = split("#src=1.def");
        assert_eq!(kernel.lesson, None);
        assert_eq!(kernel.rest, "src=1.def");
        assert_eq!(join(None, None), None);
        assert_eq!(
            join(Some("lesson=1.abc"), None).as_deref(),
            Some("lesson=1.abc")
        );
    }

    #[test]
    fn the_kernel_gets_what_the_lesson_leaves_of_the_links_limit() {
        assert_eq!(kernel_budget(None), 7_000);
        assert_eq!(kernel_budget(Some("lesson=1.abc")), 7_000 - 13);
    }

    #[test]
    fn a_lesson_part_round_trips_and_a_broken_one_is_named() {
        let part = write_part(&[1, 2, 3, 250]).expect("fits");
        assert_eq!(payload(&part), Ok(vec![1, 2, 3, 250]));
        let broken = payload("lesson=2.AAAA").expect_err("an unknown format");
        assert!(broken.contains("cut short or altered"), "{broken}");
        assert!(payload(&format!("lesson=1.{}", "A".repeat(7_000))).is_err());
        assert_eq!(write_part(&vec![0; 6_000]), None);
    }

    #[test]
    fn a_linked_lesson_is_named_by_the_link_or_its_file() {
        let named = |query: &str| lesson_key(crate::url::query_value(query, "lesson").as_deref());
        assert_eq!(named("?device=h100&lesson=cache-lines"), "cache-lines");
        assert_eq!(named("device=h100"), "shared-lesson");
        assert_eq!(named("lesson=Not%20A%20Key"), "shared-lesson");
        assert_eq!(file_key("course/lessons/Cache-Lines.txt"), "cache-lines");
        assert_eq!(file_key("weird name.txt"), "shared-lesson");
    }
}
