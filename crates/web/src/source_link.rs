//! An edited kernel in the page's link: the fragment `#src=1.<payload>` (README, "Links into the
//! playground").
//!
//! The payload is the kernel's UTF-8 text compressed with raw deflate (RFC 1951, the browser's
//! `CompressionStream("deflate-raw")`) and written in base64url without padding (RFC 4648 §5), so
//! every character is one a URL carries unescaped. The `1.` before it is the format's version:
//! a later memplay that writes kernels differently uses another number, and this page tells a
//! student that such a link is newer than it instead of calling it broken.
//!
//! The kernel goes into the fragment, not the query: a browser never sends the fragment to the
//! server, so a kernel never lands in a static host's access logs, and a static host serves the
//! same files whatever the fragment says. `history.replaceState` writes the query as before and
//! appends the fragment.
//!
//! Everything here is pure (framing, base64url, the size limits, reading a fragment, the notes
//! and messages the page shows), so the tests run on the host; `deflate` does the compression in
//! the browser and `app` wires the two together.

use crate::format::format_number;
use crate::format::quote;
use memplay_sim::kernel::limits::MAX_SOURCE_BYTES;

/// What the fragment starts with; the rest is the payload.
pub const FRAGMENT_KEY: &str = "src=";

/// The payload's format: base64url of the raw-deflated UTF-8 text. Written before a dot.
pub const FORMAT: &str = "1";

/// The longest fragment (what follows `#`, `src=1.` included) the page writes or reads.
///
/// RFC 9110 §4.1 recommends that everything handling URIs accept at least 8,000 octets, and that
/// is the length a link can rely on: browsers take far longer addresses (Chromium up to 2 MiB),
/// and chat tools and mail clients pass an 8,000-character link on, but a tool written to the
/// RFC's minimum may cut anything longer. The query of every setting is under 200 characters and
/// the address of a course site's copy of memplay rarely reaches 800, so 7,000 characters for the
/// fragment keep the whole link within 8,000. Compressed, that is about 15 KB of typical CUDA
/// source, ten times the longest lecture file.
pub const MAX_FRAGMENT_CHARS: usize = 7_000;

/// `src=1.`, the part of the fragment before the base64url text.
const PREFIX_CHARS: usize = FRAGMENT_KEY.len() + FORMAT.len() + 1;

/// The most compressed bytes whose base64url text fits the fragment: n bytes take ⌈4n/3⌉
/// characters, so this is ⌊3m/4⌋ for the m characters left after the prefix. The page stops
/// compressing once the output grows past it.
pub const MAX_COMPRESSED_BYTES: usize = (MAX_FRAGMENT_CHARS - PREFIX_CHARS) * 3 / 4;

/// The page's fragment as it was opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fragment {
    /// No fragment, or an empty one: the lesson's own kernel.
    Absent,
    /// A kernel to unpack: `fragment` is the text after `#`, kept so that the link stays exactly
    /// as it was opened; `compressed` the deflated bytes its payload spells.
    Kernel {
        fragment: String,
        compressed: Vec<u8>,
    },
    /// A fragment that cannot be used, and the note that says why.
    Unusable { note: String },
}

/// Reads `location.hash` (`#src=1.…`; the `#` is optional). Never fails: what cannot be used
/// becomes a note, as a bad value of the query does.
pub fn read_fragment(hash: &str) -> Fragment {
    let fragment = hash.strip_prefix('#').unwrap_or(hash);
    if fragment.is_empty() {
        return Fragment::Absent;
    }
    let Some(payload) = fragment.strip_prefix(FRAGMENT_KEY) else {
        return Fragment::Unusable {
            note: format!(
                "#{} is not part of a memplay link (the only one is #src=, an edited kernel); \
                 ignored.",
                quote(fragment)
            ),
        };
    };
    let unusable = |why: &str| Fragment::Unusable {
        note: format!(
            "{FRAGMENT_KEY}{} {why}; using the lesson's own kernel.",
            quote(payload)
        ),
    };
    let chars = fragment.chars().count();
    if chars > MAX_FRAGMENT_CHARS {
        return unusable(&format!(
            "is {} characters long, more than the {} a kernel in a link may have",
            format_number(chars as f64),
            format_number(MAX_FRAGMENT_CHARS as f64)
        ));
    }
    let Some((format, text)) = payload.split_once('.') else {
        return unusable(BROKEN);
    };
    if format != FORMAT {
        if !format.is_empty() && format.bytes().all(|byte| byte.is_ascii_digit()) {
            return unusable(&format!(
                "is a kernel in format {}, which this page cannot read (it reads format \
                 {FORMAT}): it may come from a newer memplay",
                quote(format)
            ));
        }
        return unusable(BROKEN);
    }
    match decode_base64url(text) {
        Some(compressed) => Fragment::Kernel {
            fragment: fragment.to_string(),
            compressed,
        },
        None => unusable(BROKEN),
    }
}

/// Why a payload cannot be read when it is not base64url or not deflate: most often a link cut
/// short by a tool that wrapped or truncated it.
const BROKEN: &str = "is not a kernel memplay can read: the link may be cut short or altered";

/// What unpacking a payload in the browser gave (`deflate::inflate`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inflated {
    /// The whole text, at most `MAX_SOURCE_BYTES`.
    Bytes(Vec<u8>),
    /// It unpacks to more than `MAX_SOURCE_BYTES`; unpacking stopped there.
    OverLimit,
    /// Not raw deflate, or cut short.
    Corrupt,
    /// This browser has no `DecompressionStream` for `deflate-raw`.
    Unavailable,
}

/// The kernel a payload unpacked to, or the note that says why the page uses the lesson's own.
/// `fragment` is the text after `#`, as `read_fragment` returned it.
pub fn opened_source(fragment: &str, inflated: Inflated) -> Result<String, String> {
    let payload = fragment.strip_prefix(FRAGMENT_KEY).unwrap_or(fragment);
    let note = |why: String| {
        format!(
            "{FRAGMENT_KEY}{} {why}; using the lesson's own kernel.",
            quote(payload)
        )
    };
    match inflated {
        Inflated::Bytes(bytes) if bytes.len() > MAX_SOURCE_BYTES => Err(note(too_large())),
        Inflated::Bytes(bytes) => String::from_utf8(bytes)
            .map_err(|_| note("unpacks to text that is not UTF-8".to_string())),
        Inflated::OverLimit => Err(note(too_large())),
        Inflated::Corrupt => Err(note(BROKEN.to_string())),
        Inflated::Unavailable => Err(note(
            "cannot be unpacked in this browser, which has no DecompressionStream for \
             deflate-raw"
                .to_string(),
        )),
    }
}

fn too_large() -> String {
    format!(
        "unpacks to more than {} bytes, the largest kernel memplay reads",
        format_number(MAX_SOURCE_BYTES as f64)
    )
}

/// What compressing an edit in the browser gave (`deflate::compress`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compressed {
    /// The whole compressed text, at most `MAX_COMPRESSED_BYTES`.
    Bytes(Vec<u8>),
    /// More than `MAX_COMPRESSED_BYTES`: it does not fit a link; compressing stopped there.
    OverLimit,
    /// This browser has no `CompressionStream` for `deflate-raw`, or it failed.
    Unavailable,
}

/// The fragment (without `#`) that carries these compressed bytes, if it fits the limit.
#[cfg(test)]
pub fn write_fragment(compressed: &[u8]) -> Option<String> {
    write_fragment_within(compressed, MAX_FRAGMENT_CHARS)
}

/// The fragment that carries these compressed bytes, if it fits in `budget` characters (what a
/// lesson in the same link leaves, `lesson_link::kernel_budget`).
pub fn write_fragment_within(compressed: &[u8], budget: usize) -> Option<String> {
    let fragment = format!("{FRAGMENT_KEY}{FORMAT}.{}", encode_base64url(compressed));
    (fragment.len() <= budget).then_some(fragment)
}

/// Where the kernel on the page stands in the page's link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceLink {
    /// The lesson's own kernel: the link has no fragment.
    Lesson,
    /// The page was opened with a kernel in its fragment, which the browser is unpacking; the
    /// link keeps the fragment meanwhile, so it is not lost before it is read.
    Opening {
        fragment: String,
        compressed: Vec<u8>,
    },
    /// The student's edit is being compressed for the link.
    Compressing,
    /// The edit is in the link as this fragment (without `#`).
    Shared { fragment: String },
    /// The edit does not fit a link; the link keeps the lesson and its settings.
    TooLarge,
    /// The browser cannot compress; the link keeps the lesson and its settings.
    Unavailable,
}

impl SourceLink {
    /// How the link stands right after an edit: `None` is the lesson's own text. A kernel over
    /// `MAX_SOURCE_BYTES` is too large without compressing it, since no page would unpack it.
    pub fn for_edit(edited_source: Option<&str>) -> SourceLink {
        match edited_source {
            None => SourceLink::Lesson,
            Some(source) if source.len() > MAX_SOURCE_BYTES => SourceLink::TooLarge,
            Some(_) => SourceLink::Compressing,
        }
    }

    /// How the link stands once the browser has compressed the edit.
    #[cfg(test)]
    pub fn after_compression(compressed: Compressed) -> SourceLink {
        SourceLink::after_compression_within(compressed, MAX_FRAGMENT_CHARS)
    }

    /// How the link stands once the browser has compressed the edit, with `budget` characters of
    /// the fragment left for it.
    pub fn after_compression_within(compressed: Compressed, budget: usize) -> SourceLink {
        match compressed {
            Compressed::Bytes(bytes) => match write_fragment_within(&bytes, budget) {
                Some(fragment) => SourceLink::Shared { fragment },
                None => SourceLink::TooLarge,
            },
            Compressed::OverLimit => SourceLink::TooLarge,
            Compressed::Unavailable => SourceLink::Unavailable,
        }
    }

    /// The fragment the page's address carries (without `#`), if any.
    pub fn fragment(&self) -> Option<&str> {
        match self {
            SourceLink::Opening { fragment, .. } | SourceLink::Shared { fragment } => {
                Some(fragment)
            }
            _ => None,
        }
    }

    /// The line the kernel card shows about the link, if any.
    pub fn status(&self) -> Option<LinkStatus> {
        let send_a_file = "To share it, send it as a file: the Download buttons below save the \
                           kernel (.cu) and the whole launch (.json).";
        match self {
            SourceLink::Lesson | SourceLink::Opening { .. } | SourceLink::Compressing => None,
            SourceLink::Shared { fragment } => Some(LinkStatus {
                text: format!(
                    "Your edit is in this page's address ({} characters after #), so a copy of \
                     the address shares it.",
                    format_number(fragment.chars().count() as f64)
                ),
                problem: false,
            }),
            SourceLink::TooLarge => Some(LinkStatus {
                text: format!(
                    "This kernel is too large to put into a link: a link holds at most {} \
                     characters of compressed kernel, so the address keeps only the lesson and \
                     its settings. {send_a_file}",
                    format_number(MAX_FRAGMENT_CHARS as f64)
                ),
                problem: true,
            }),
            SourceLink::Unavailable => Some(LinkStatus {
                text: format!(
                    "This browser cannot compress a kernel into a link (it has no \
                     CompressionStream for deflate-raw), so the address keeps only the lesson \
                     and its settings. {send_a_file}"
                ),
                problem: true,
            }),
        }
    }
}

/// A line about the link under the kernel: a hint, or a problem shown like the link's notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkStatus {
    pub text: String,
    pub problem: bool,
}

/// The 64 digits of base64url (RFC 4648 §5): `-` and `_` where base64 has `+` and `/`, which a
/// URL would have to escape.
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64url without padding: every 3 bytes become 4 digits, a last 1 or 2 bytes 2 or 3 digits.
/// Written here because it is twenty lines, less than a crate would add to the page's bundle.
pub fn encode_base64url(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let group = chunk.iter().enumerate().fold(0u32, |group, (i, &byte)| {
            group | u32::from(byte) << (16 - 8 * i)
        });
        for i in 0..=chunk.len() {
            text.push(char::from(ALPHABET[(group >> (18 - 6 * i)) as usize & 63]));
        }
    }
    text
}

/// The bytes of base64url text without padding, or `None` if it is not exactly what
/// `encode_base64url` writes: another character (`+`, `/`, `=`, a space), a length that no byte
/// count gives, or unused low bits that are not zero. So every payload has one spelling.
pub fn decode_base64url(text: &str) -> Option<Vec<u8>> {
    let digits = text
        .bytes()
        .map(|byte| ALPHABET.iter().position(|&digit| digit == byte))
        .collect::<Option<Vec<usize>>>()?;
    if digits.len() % 4 == 1 {
        return None;
    }
    let mut bytes = Vec::with_capacity(digits.len() / 4 * 3 + 2);
    for chunk in digits.chunks(4) {
        let group = chunk.iter().enumerate().fold(0u32, |group, (i, &digit)| {
            group | (digit as u32) << (18 - 6 * i)
        });
        let count = chunk.len() - 1;
        let unused_bits = (1u32 << (24 - 8 * count)) - 1;
        if group & unused_bits != 0 {
            return None;
        }
        bytes.extend((0..count).map(|i| (group >> (16 - 8 * i)) as u8));
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(hash: &str, expected: Fragment) {
        assert_eq!(read_fragment(hash), expected, "reading {hash:?}");
    }

    fn note(hash: &str) -> String {
        match read_fragment(hash) {
            Fragment::Unusable { note } => note,
            other => panic!("{hash:?} should be unusable, it reads as {other:?}"),
        }
    }

    /// A fragment of `length` characters in format 1 whose payload is valid base64url: all
    /// `A`s spell zero bytes, for any digit count that is not 4k + 1.
    fn fragment_of_length(length: usize) -> String {
        let digits = length - PREFIX_CHARS;
        assert_ne!(digits % 4, 1, "no byte count takes {digits} digits");
        format!("src=1.{}", "A".repeat(digits))
    }

    #[test]
    fn no_fragment_is_the_lessons_own_kernel() {
        check("", Fragment::Absent);
        check("#", Fragment::Absent);
    }

    #[test]
    fn a_written_fragment_is_read_back_to_the_same_bytes() {
        let compressed = b"\xcb\x48\xcd\xc9\xc9\x07\x00".to_vec();
        let fragment = write_fragment(&compressed).expect("seven bytes fit");
        assert_eq!(fragment, "src=1.y0jNyckHAA");
        check(
            &format!("#{fragment}"),
            Fragment::Kernel {
                fragment: fragment.clone(),
                compressed,
            },
        );
    }

    #[test]
    fn a_fragment_from_a_newer_format_falls_back_with_a_note() {
        assert_eq!(
            note("#src=2.y0jNyckHAA"),
            "src=2.y0jNyckHAA is a kernel in format 2, which this page cannot read (it reads \
             format 1): it may come from a newer memplay; using the lesson's own kernel."
        );
    }

    #[test]
    fn a_fragment_that_is_not_base64url_falls_back_with_a_note() {
        for hash in [
            "#src=1.y0jNyckHAA==",
            "#src=1.y0jN+ckH/A",
            "#src=1.y0jN ckHAA",
            "#src=1.y0jNy",
        ] {
            assert_eq!(
                note(hash),
                format!(
                    "{} is not a kernel memplay can read: the link may be cut short or altered; \
                     using the lesson's own kernel.",
                    &hash[1..]
                )
            );
        }
    }

    #[test]
    fn a_fragment_without_a_format_falls_back_with_a_note() {
        for hash in ["#src=", "#src=y0jNyckHAA", "#src=v1.y0jNyckHAA"] {
            assert!(
                note(hash).ends_with(
                    "is not a kernel memplay can read: the link may be cut short or altered; \
                     using the lesson's own kernel."
                ),
                "{hash}"
            );
        }
    }

    #[test]
    fn another_fragment_is_named_and_ignored() {
        assert_eq!(
            note("#kernel"),
            "#kernel is not part of a memplay link (the only one is #src=, an edited kernel); \
             ignored."
        );
    }

    #[test]
    fn a_fragment_at_the_limit_is_read_and_one_character_more_is_refused() {
        let longest = fragment_of_length(MAX_FRAGMENT_CHARS);
        assert_eq!(longest.len(), MAX_FRAGMENT_CHARS);
        assert!(
            matches!(read_fragment(&longest), Fragment::Kernel { .. }),
            "{} characters are read",
            longest.len()
        );
        let too_long = fragment_of_length(MAX_FRAGMENT_CHARS + 1);
        assert_eq!(
            note(&too_long),
            "src=1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA… is 7,001 characters long, more than the \
             7,000 a kernel in a link may have; using the lesson's own kernel."
        );
    }

    #[test]
    fn a_quote_in_a_note_is_cut_so_a_junk_link_cannot_flood_the_page() {
        let junk = format!("#src=9.{}", "<b>".repeat(2_000));
        let text = note(&junk);
        assert!(text.chars().count() < 200, "{text}");
        assert!(text.starts_with("src=9.<b><b><b>"), "{text}");
    }

    #[test]
    fn the_compressed_byte_limit_is_the_most_that_fits_the_fragment() {
        let fitting = vec![0xA5; MAX_COMPRESSED_BYTES];
        let fragment = write_fragment(&fitting).expect("the most that fits");
        assert!(fragment.len() <= MAX_FRAGMENT_CHARS);
        assert_eq!(
            write_fragment(&vec![0xA5; MAX_COMPRESSED_BYTES + 1]),
            None,
            "one byte more does not fit"
        );
    }

    #[test]
    fn an_edit_that_compresses_to_more_than_a_link_holds_is_too_large() {
        assert_eq!(
            SourceLink::after_compression(Compressed::Bytes(vec![1; MAX_COMPRESSED_BYTES + 1])),
            SourceLink::TooLarge
        );
        assert_eq!(
            SourceLink::after_compression(Compressed::OverLimit),
            SourceLink::TooLarge
        );
        let status = SourceLink::TooLarge.status().expect("a message");
        assert!(status.problem);
        assert_eq!(
            status.text,
            "This kernel is too large to put into a link: a link holds at most 7,000 characters \
             of compressed kernel, so the address keeps only the lesson and its settings. To \
             share it, send it as a file: the Download buttons below save the kernel (.cu) and \
             the whole launch (.json)."
        );
    }

    #[test]
    fn an_edit_over_a_megabyte_is_too_large_without_compressing_it() {
        let huge = "x".repeat(MAX_SOURCE_BYTES + 1);
        assert_eq!(SourceLink::for_edit(Some(&huge)), SourceLink::TooLarge);
        assert_eq!(
            SourceLink::for_edit(Some("__global__ void k() {}")),
            SourceLink::Compressing
        );
        assert_eq!(SourceLink::for_edit(None), SourceLink::Lesson);
    }

    #[test]
    fn a_compressed_edit_is_shared_and_says_so() {
        let link = SourceLink::after_compression(Compressed::Bytes(b"\x03\x00".to_vec()));
        assert_eq!(
            link,
            SourceLink::Shared {
                fragment: "src=1.AwA".to_string()
            }
        );
        assert_eq!(link.fragment(), Some("src=1.AwA"));
        assert_eq!(
            link.status(),
            Some(LinkStatus {
                text: "Your edit is in this page's address (9 characters after #), so a copy of \
                       the address shares it."
                    .to_string(),
                problem: false
            })
        );
    }

    #[test]
    fn a_browser_without_compression_streams_says_how_to_share_instead() {
        let link = SourceLink::after_compression(Compressed::Unavailable);
        assert_eq!(link, SourceLink::Unavailable);
        assert_eq!(link.fragment(), None);
        let status = link.status().expect("a message");
        assert!(status.problem);
        assert!(status.text.contains("Download buttons"), "{}", status.text);
    }

    #[test]
    fn an_opening_link_keeps_its_fragment_until_it_is_read() {
        let opening = SourceLink::Opening {
            fragment: "src=1.AwA".to_string(),
            compressed: vec![3, 0],
        };
        assert_eq!(opening.fragment(), Some("src=1.AwA"));
        assert_eq!(opening.status(), None);
        assert_eq!(SourceLink::Compressing.fragment(), None);
        assert_eq!(SourceLink::TooLarge.fragment(), None);
    }

    #[test]
    fn an_unpacked_kernel_is_its_utf8_text() {
        assert_eq!(
            opened_source(
                "src=1.x",
                Inflated::Bytes("// ü\n__global__ void k() {}".into())
            ),
            Ok("// ü\n__global__ void k() {}".to_string())
        );
    }

    #[test]
    fn a_kernel_that_is_not_utf8_falls_back_with_a_note() {
        assert_eq!(
            opened_source("src=1.x", Inflated::Bytes(vec![b'a', 0xFF, b'b'])),
            Err(
                "src=1.x unpacks to text that is not UTF-8; using the lesson's own kernel."
                    .to_string()
            )
        );
    }

    #[test]
    fn a_zip_bomb_falls_back_with_a_note() {
        let expected = Err(
            "src=1.x unpacks to more than 1,048,576 bytes, the largest kernel \
                            memplay reads; using the lesson's own kernel."
                .to_string(),
        );
        assert_eq!(opened_source("src=1.x", Inflated::OverLimit), expected);
        assert_eq!(
            opened_source("src=1.x", Inflated::Bytes(vec![b' '; MAX_SOURCE_BYTES + 1])),
            expected
        );
    }

    #[test]
    fn a_corrupt_payload_falls_back_with_a_note() {
        assert_eq!(
            opened_source("src=1.____", Inflated::Corrupt),
            Err(
                "src=1.____ is not a kernel memplay can read: the link may be cut short or \
                 altered; using the lesson's own kernel."
                    .to_string()
            )
        );
        assert!(opened_source("src=1.x", Inflated::Unavailable)
            .expect_err("no kernel")
            .contains("no DecompressionStream"));
    }

    fn check_base64url(bytes: &[u8], text: &str) {
        assert_eq!(encode_base64url(bytes), text, "encoding {bytes:?}");
        assert_eq!(
            decode_base64url(text).as_deref(),
            Some(bytes),
            "decoding {text:?}"
        );
    }

    #[test]
    fn base64url_gives_rfc_4648s_examples_without_padding() {
        // RFC 4648 §10's test vectors, whose padding base64url without padding leaves off.
        check_base64url(b"", "");
        check_base64url(b"f", "Zg");
        check_base64url(b"fo", "Zm8");
        check_base64url(b"foo", "Zm9v");
        check_base64url(b"foob", "Zm9vYg");
        check_base64url(b"fooba", "Zm9vYmE");
        check_base64url(b"foobar", "Zm9vYmFy");
    }

    #[test]
    fn base64url_uses_minus_and_underscore_for_the_last_two_digits() {
        check_base64url(&[0xFB, 0xFF, 0xBF], "-_-_");
        check_base64url(&[0xFF], "_w");
    }

    #[test]
    fn every_byte_value_and_length_survives_base64url() {
        for length in 0..=70 {
            let bytes: Vec<u8> = (0..length).map(|i| (i * 97 + length * 31) as u8).collect();
            let text = encode_base64url(&bytes);
            assert_eq!(text.len(), (4 * bytes.len()).div_ceil(3));
            assert_eq!(decode_base64url(&text), Some(bytes));
        }
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decode_base64url(&encode_base64url(&all)), Some(all));
    }

    #[test]
    fn base64url_refuses_padding_other_alphabets_odd_lengths_and_stray_bits() {
        for text in ["Zg==", "Zm9+", "Zm9/", "Zm9v Yg", "Z", "Zm9vY", "Zh", "Zm9"] {
            assert_eq!(decode_base64url(text), None, "{text:?}");
        }
    }
}
