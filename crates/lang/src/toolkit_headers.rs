//! Headers of the CUDA toolkit that memplay supplies itself: `cuComplex.h` (the complex numbers
//! of the CUDA Math API, "Complex" in cuComplex.h's documented formulas) and `curand_kernel.h`
//! (the device API of cuRAND, cuRAND documentation, "Device API Overview").
//!
//! Each is written in the language memplay simulates (`cu_complex.cu`, `curand_kernel.cu`) and
//! read where the file includes it: the preprocessor puts the header's tokens in place of the
//! `#include` line, as the C preprocessor puts a header's text there (C11 6.10.2), so its macros
//! and declarations are the file's from that line on, and every token of it carries the span of
//! that line, so that what the header's functions do is shown there. A header is read once, as
//! its include guard makes it.

/// The headers memplay supplies: the name `#include` gives (without `.h`) and the text.
const HEADERS: [(&str, &str); 2] = [
    ("cuComplex", include_str!("cu_complex.cu")),
    ("curand_kernel", include_str!("curand_kernel.cu")),
];

/// The text of the header an `#include` line names (its words written out, `curand_kernelh` for
/// `<curand_kernel.h>`, or the quoted name), unless `read` holds it already: then `None`, as an
/// include guard makes a second inclusion empty. The header's index is added to `read`.
pub(crate) fn header_text(written: &str, read: &mut Vec<usize>) -> Option<&'static str> {
    let written = written.replace('.', "");
    let index = HEADERS
        .iter()
        .position(|(name, _)| written.strip_suffix('h') == Some(name))?;
    if read.contains(&index) {
        return None;
    }
    read.push(index);
    Some(HEADERS[index].1)
}
