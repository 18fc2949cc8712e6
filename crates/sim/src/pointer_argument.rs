//! Pointer arguments that point into a buffer rather than at its start.
//!
//! Host code often launches a kernel with a pointer moved into its allocation, as a stencil does
//! to keep its halo in bounds: `stencil<<<g, b>>>(d_in + RADIUS, d_out + RADIUS)`. The kernel then
//! reads `in[i - RADIUS]`, before the address it was given but inside the buffer, which C allows
//! (C++ standard, [expr.add]: pointer arithmetic stays defined within one array object).
//!
//! A launch names such an argument as `PARAMETER=BUFFER + K`: the parameter points `K` elements of
//! its pointee type past the start of the buffer `BUFFER` (bytes for a `void*`, whose pointee has
//! no size, and for a `char*`, whose elements are bytes). The command line's `--arg in=d_in+3`,
//! the page's launch form and launch files all read and write this one syntax (`parse`,
//! `PointerArgument`'s `Display`). A parameter without one points at the start of the buffer named
//! after it, as every launch did before offsets existed, so such a launch lays out and simulates
//! exactly as it did.
//!
//! Each buffer backs one pointer parameter: two parameters in one buffer would alias, which the
//! reuse proofs (`kernel::block_shift`, the warp and loop classes) do not model, so the launch
//! refuses it in words.

use crate::kernel::ast::Type;
use crate::kernel::interp::Launch;
use crate::kernel::ir::FunctionIr;
use crate::kernel::span::Diagnostic;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A pointer parameter that points `offset` elements of its pointee past the start of `buffer`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PointerArgument {
    pub parameter: String,
    pub buffer: String,
    /// Elements of the parameter's pointee type (bytes for `void*`).
    pub offset: u64,
}

/// As a launch is written: `d_in + 3`, or `d_in` when the offset is 0.
impl fmt::Display for PointerArgument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.buffer)?;
        if self.offset != 0 {
            write!(f, " + {}", self.offset)?;
        }
        Ok(())
    }
}

/// What is wrong with the text of a pointer argument, at a column of it (from 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointerSyntaxError {
    pub column: usize,
    pub message: &'static str,
}

impl fmt::Display for PointerSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

/// Whether `c` may appear in a C identifier.
fn identifier_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Reads `BUFFER` or `BUFFER + K` (spaces optional): a buffer's name, a C identifier, and a whole
/// number of elements.
pub fn parse(text: &str) -> Result<(String, u64), PointerSyntaxError> {
    let bytes = text.as_bytes();
    let error = |at: usize, message| {
        Err(PointerSyntaxError {
            column: at + 1,
            message,
        })
    };
    let skip_spaces = |mut at: usize| {
        while bytes.get(at) == Some(&b' ') {
            at += 1;
        }
        at
    };
    let start = skip_spaces(0);
    let mut end = start;
    while bytes.get(end).copied().is_some_and(identifier_char) {
        end += 1;
    }
    if end == start || bytes[start].is_ascii_digit() {
        return error(
            start,
            "a pointer argument starts with a buffer's name, as in d_in + 3",
        );
    }
    let name = text[start..end].to_string();
    let plus = skip_spaces(end);
    match bytes.get(plus) {
        None => return Ok((name, 0)),
        Some(b'+') => {}
        Some(b'-') => {
            return error(
                plus,
                "a pointer argument points into its buffer, so its offset is added: d_in + 3",
            )
        }
        Some(_) => {
            return error(
                plus,
                "only + and a number of elements may follow the buffer",
            )
        }
    }
    let digits = skip_spaces(plus + 1);
    let last = text.trim_end().len();
    match text.get(digits..last).map(str::parse::<u64>) {
        Some(Ok(offset)) if bytes[digits].is_ascii_digit() => Ok((name, offset)),
        _ => error(
            digits,
            "the offset is a whole number of elements, as in d_in + 3",
        ),
    }
}

/// The buffer pointer parameter `parameter` points into and how many elements past its start:
/// as a pointer argument names it, or the buffer named after the parameter, at its start.
pub(crate) fn target<'a>(pointers: &'a [PointerArgument], parameter: &'a str) -> (&'a str, u64) {
    pointers
        .iter()
        .find(|p| p.parameter == parameter)
        .map_or((parameter, 0), |p| (p.buffer.as_str(), p.offset))
}

/// Bytes of one element of what a pointer of type `ty` points to: the unit of its offset (1 for
/// `void*`).
pub(crate) fn element_bytes(ty: &Type) -> u64 {
    match ty {
        Type::Pointer { pointee, .. } => pointee.size().max(1),
        _ => 1,
    }
}

/// Checks the launch's pointer arguments against the kernel's parameters and buffers: each names
/// a pointer parameter, once, and a buffer of the launch, with an offset no further than the
/// buffer's end (one past the last element, as C allows); no buffer backs two parameters; a
/// buffer named after a parameter that points elsewhere is refused as unused.
pub(crate) fn check(func: &FunctionIr, launch: &Launch) -> Result<(), Diagnostic> {
    let error = |span, message: String| Err(Diagnostic::new(span, message));
    for (index, pointer) in launch.pointers.iter().enumerate() {
        let name = &pointer.parameter;
        let Some(p) = func.params.iter().find(|p| &p.name == name) else {
            return error(
                func.span,
                format!("'{}' has no parameter named '{name}'", func.name),
            );
        };
        if !matches!(p.ty, Type::Pointer { .. }) {
            return error(
                p.span,
                format!(
                    "'{name}' is not a pointer ({}): it takes a value, not a place in a buffer",
                    p.ty
                ),
            );
        }
        let earlier = &launch.pointers[..index];
        if earlier.iter().any(|e| &e.parameter == name) {
            return error(
                p.span,
                format!("the launch gives the parameter '{name}' twice"),
            );
        }
        let buffer = &pointer.buffer;
        if let Some(other) = earlier.iter().find(|e| &e.buffer == buffer) {
            return error(
                p.span,
                format!(
                    "'{}' and '{name}' both point into the buffer '{buffer}'; each pointer \
                     parameter needs a buffer of its own",
                    other.parameter
                ),
            );
        }
        let Some(&(_, bytes)) = launch.buffers.iter().find(|(b, _)| b == buffer) else {
            return error(
                p.span,
                format!(
                    "'{name}' points into the buffer '{buffer}', which the launch does not give"
                ),
            );
        };
        let unit = element_bytes(&p.ty);
        if u128::from(pointer.offset) * u128::from(unit) > u128::from(bytes) {
            return error(
                p.span,
                format!(
                    "'{name}' points {} elements into the buffer '{buffer}', past its end \
                     ({bytes} bytes, {} elements)",
                    pointer.offset,
                    bytes / unit
                ),
            );
        }
    }
    for (index, (buffer, _)) in launch.buffers.iter().enumerate() {
        if launch.buffers[..index].iter().any(|(b, _)| b == buffer) {
            return error(
                func.span,
                format!("the launch gives the buffer '{buffer}' twice"),
            );
        }
        let named = |p: &PointerArgument| &p.buffer == buffer;
        if let Some(moved) = launch.pointers.iter().find(|p| &p.parameter == buffer) {
            if !launch.pointers.iter().any(named) {
                return error(
                    func.span,
                    format!(
                        "no parameter points into the buffer '{buffer}': '{buffer}' points into \
                         '{}'",
                        moved.buffer
                    ),
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{element_bytes, parse, PointerArgument, PointerSyntaxError};
    use crate::device::h100;
    use crate::kernel::ast::{Scalar, Type};
    use crate::kernel::{Dim3, Value};
    use crate::simulate::{simulate, BlockSampling, SimulationInput, SimulationReport};

    const COPY: &str = "__global__ void copy(const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}
__global__ void stencil(const float* in, float* out, int radius) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i - radius] + in[i] + in[i + radius];
}";

    fn pointer(parameter: &str, buffer: &str, offset: u64) -> PointerArgument {
        PointerArgument {
            parameter: parameter.to_string(),
            buffer: buffer.to_string(),
            offset,
        }
    }

    /// 1024 threads in 8 blocks of 128, reading `in = buf + offset` with `buf` of 1024 + 64
    /// floats, and writing `out` of 1024 floats.
    fn launch(kernel: &str, offset: u64) -> SimulationInput {
        let mut input = SimulationInput::new(COPY, kernel, h100());
        input.grid = Dim3::new(8, 1, 1);
        input.block = Dim3::new(128, 1, 1);
        input.buffers = vec![
            ("buf".to_string(), 4 * (1024 + 64)),
            ("out".to_string(), 4 * 1024),
        ];
        input.pointers = vec![pointer("in", "buf", offset)];
        if kernel == "stencil" {
            input.args = vec![("radius".to_string(), Value::Int(3))];
        }
        input
    }

    fn loads(report: &SimulationReport) -> (f64, f64) {
        let c = &report.counters;
        (c.global_ld_requests, c.global_ld_sectors)
    }

    #[test]
    fn a_float_offset_of_one_spreads_every_warps_load_over_five_sectors() {
        // 32 warps load 32 floats each, one request of 128 bytes. At offsets 0 and 32 (128
        // bytes) each request covers 4 whole sectors; at offset 1 it starts 4 bytes into a
        // sector and ends 4 bytes into the fifth.
        for (offset, sectors) in [(0, 4.0), (1, 5.0), (32, 4.0)] {
            let report = simulate(&launch("copy", offset)).expect("the copy runs");
            assert_eq!(loads(&report), (32.0, 32.0 * sectors), "offset {offset}");
            // The stores go to `out`, at its start: 4 sectors each whatever the offset.
            assert_eq!(report.counters.global_st_sectors, 32.0 * 4.0);
            let mut every_block = launch("copy", offset);
            every_block.sampling = BlockSampling::All;
            let every = simulate(&every_block).expect("the copy runs");
            assert_eq!(every.counters, report.counters, "offset {offset}");
        }
    }

    #[test]
    fn a_launch_that_names_each_buffer_at_its_start_simulates_as_one_that_names_none() {
        let mut named = launch("copy", 0);
        named.buffers[0].0 = "in".to_string();
        named.pointers = vec![pointer("in", "in", 0)];
        let mut plain = named.clone();
        plain.pointers.clear();
        let (named, plain) = (simulate(&named), simulate(&plain));
        assert_eq!(
            named.expect("the named launch runs").counters,
            plain.expect("the plain launch runs").counters
        );
    }

    #[test]
    fn a_stencil_reads_before_its_pointer_inside_the_buffer() {
        // in = buf + 3: in[i - 3] is buf[i], 4 sectors a warp; in[i] and in[i + 3] start 12 and
        // 24 bytes into a sector, 5 each. 32 warps, 3 loads each.
        let report = simulate(&launch("stencil", 3)).expect("the stencil stays in bounds");
        assert_eq!(loads(&report), (32.0 * 3.0, 32.0 * (4.0 + 5.0 + 5.0)));
    }

    #[test]
    fn a_stencil_reading_before_the_buffer_is_out_of_bounds_of_the_buffer() {
        // in = buf + 2: thread 0's in[i - 3] is buf[-1].
        let error = simulate(&launch("stencil", 2)).expect_err("buf[-1] is out of bounds");
        assert_eq!(
            error.to_string(),
            "7:14: index -1 is outside buffer 'buf' (4352 bytes)"
        );
    }

    /// The error of simulating the copy with `edit` applied.
    fn copy_error(edit: impl Fn(&mut SimulationInput)) -> String {
        let mut input = launch("copy", 0);
        edit(&mut input);
        simulate(&input)
            .expect_err("the launch is refused")
            .to_string()
    }

    #[test]
    fn a_pointer_argument_names_a_pointer_parameter_and_a_buffer_it_fits_in() {
        assert_eq!(
            copy_error(|l| l.pointers[0].offset = 1089),
            "1:35: 'in' points 1089 elements into the buffer 'buf', past its end (4352 bytes, \
             1088 elements)"
        );
        assert_eq!(
            copy_error(|l| l.pointers[0].buffer = "d_in".to_string()),
            "1:35: 'in' points into the buffer 'd_in', which the launch does not give"
        );
        assert_eq!(
            copy_error(|l| l.pointers.push(pointer("out", "buf", 0))),
            "1:46: 'in' and 'out' both point into the buffer 'buf'; each pointer parameter needs \
             a buffer of its own"
        );
        assert_eq!(
            copy_error(|l| l.buffers.push(("in".to_string(), 4))),
            "1:17: no parameter points into the buffer 'in': 'in' points into 'buf'"
        );
        let mut stencil = launch("stencil", 0);
        stencil.pointers.push(pointer("radius", "out", 0));
        let error = simulate(&stencil).expect_err("radius is an int");
        assert_eq!(
            error.to_string(),
            "5:58: 'radius' is not a pointer (int): it takes a value, not a place in a buffer"
        );
    }

    #[test]
    fn an_offset_to_the_end_of_the_buffer_is_allowed_as_in_c() {
        // One past the last element is a valid pointer to hold; reading through it is not.
        let mut input = launch("copy", 1088);
        input.grid = Dim3::new(1, 1, 1);
        input.block = Dim3::new(1, 1, 1);
        let error = simulate(&input).expect_err("thread 0 reads buf[1088]");
        assert_eq!(
            error.to_string(),
            "3:14: index 1088 is outside buffer 'buf' (4352 bytes)"
        );
    }

    #[test]
    fn an_offset_counts_elements_of_the_pointee_and_bytes_of_void() {
        let to = |pointee| Type::pointer_to(pointee, false);
        assert_eq!(element_bytes(&to(Type::Scalar(Scalar::F32))), 4);
        assert_eq!(element_bytes(&to(Type::Vector(Scalar::F32, 4))), 16);
        assert_eq!(element_bytes(&to(Type::Scalar(Scalar::I8))), 1);
        assert_eq!(element_bytes(&to(Type::Void)), 1);
    }

    #[test]
    fn a_pointer_argument_reads_with_or_without_spaces_and_writes_with_them() {
        assert_eq!(parse("d_in+3"), Ok(("d_in".to_string(), 3)));
        assert_eq!(parse(" d_in + 3 "), Ok(("d_in".to_string(), 3)));
        assert_eq!(parse("d_in"), Ok(("d_in".to_string(), 0)));
        assert_eq!(pointer("in", "d_in", 3).to_string(), "d_in + 3");
        assert_eq!(pointer("in", "d_in", 0).to_string(), "d_in");
    }

    #[test]
    fn a_malformed_pointer_argument_names_the_column_of_its_fault() {
        let column = |text| parse(text).map_err(|e: PointerSyntaxError| e.column);
        assert_eq!(column("3"), Err(1));
        assert_eq!(column("d_in - 3"), Err(6));
        assert_eq!(column("d_in * 2"), Err(6));
        assert_eq!(column("d_in + x"), Err(8));
        assert_eq!(column("d_in +"), Err(7));
        assert_eq!(column("d_in + 3 4"), Err(8));
        assert_eq!(
            parse("d_in - 3").map_err(|e| e.to_string()),
            Err(
                "column 6: a pointer argument points into its buffer, so its offset is added: \
                 d_in + 3"
                    .to_string()
            )
        );
    }
}
