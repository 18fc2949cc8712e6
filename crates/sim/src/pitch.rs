//! Pitched allocation: `cudaMallocPitch` pads every row of a 2-D array to the device's pitch.
//!
//! Seed 001, "Malloc for 2D data": `cudaMallocPitch(&devPtr, &pitch, width, height)` allocates
//! `height` rows of `width` bytes, checks whether a row's bytes keep the next row aligned "for
//! memory coalescing", and if not adds padding bytes; the pitch it returns is the bytes of one row
//! with its padding, and element (row, col) of type `T` is at
//! `(T*)((char*)devPtr + row * pitch) + col`. The CUDA Runtime API's `cudaMallocPitch` says the
//! same ("the function may pad the allocation to ensure that corresponding pointers in any given
//! row will continue to meet the alignment requirements for coalescing as the address is updated
//! from row to row"), as does the CUDA C++ Programming Guide, "Device Memory".
//!
//! The padding is a whole number of the device's `pitch_alignment_bytes` (`device.rs` gives each
//! preset's value and its source): the pitch is the width rounded up to that alignment, so every
//! row starts where the first one does, on a boundary of the texture hardware's alignment and so of
//! every 32-, 64- and 128-byte segment a warp's access is served in. This is a model of the rule,
//! not the allocator: the measured H100 pitches (`tests/reference/h100.json`, `"exp": "pitch"`)
//! are what a test compares it with.

use crate::device::Device;
use std::fmt;

/// The pitch `cudaMallocPitch` returns on `device` for rows of `width_bytes`: the width rounded up
/// to the device's pitch alignment. A row of no bytes needs no pitch (0).
///
/// Any `u32` width is exact: rounded up to an alignment of at most 2^32 it fits a `u64`.
pub fn pitch_bytes(device: &Device, width_bytes: u32) -> u64 {
    let alignment = u64::from(device.pitch_alignment_bytes.max(1));
    u64::from(width_bytes).div_ceil(alignment) * alignment
}

/// Widths, element sizes and heights a pitched layout accepts: far beyond what a picture of rows
/// or a lesson needs, and small enough that every byte count fits a `u64` with room to spare.
pub const MAX_WIDTH_ELEMENTS: u32 = 1 << 20;
pub const MAX_HEIGHT: u32 = 1 << 20;
/// `double4` and the other 32-byte vector types are the largest elements CUDA C++ names.
pub const MAX_ELEMENT_BYTES: u32 = 32;

/// A 2-D array of `height` rows of `width_elements` elements of `element_bytes` each, allocated
/// with `cudaMallocPitch` on one device: the numbers seed 001 asks a student to work out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PitchedLayout {
    pub width_elements: u32,
    pub element_bytes: u32,
    pub height: u32,
    /// The bytes of one row's elements (`width` in `cudaMallocPitch`).
    pub width_bytes: u64,
    /// The bytes from the start of one row to the start of the next.
    pub pitch_bytes: u64,
    /// What the device aligns rows to.
    pub alignment_bytes: u64,
}

/// Why a layout cannot be drawn: a setting outside the accepted range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PitchError {
    WidthOutOfRange(u32),
    ElementBytesOutOfRange(u32),
    HeightOutOfRange(u32),
}

impl fmt::Display for PitchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PitchError::WidthOutOfRange(width) => write!(
                f,
                "a row of {width} elements: the width must be 1 to {MAX_WIDTH_ELEMENTS}"
            ),
            PitchError::ElementBytesOutOfRange(bytes) => write!(
                f,
                "elements of {bytes} bytes: an element must be 1 to {MAX_ELEMENT_BYTES} bytes"
            ),
            PitchError::HeightOutOfRange(height) => {
                write!(f, "{height} rows: the height must be 1 to {MAX_HEIGHT}")
            }
        }
    }
}

impl std::error::Error for PitchError {}

impl PitchedLayout {
    /// The layout `cudaMallocPitch(&p, &pitch, width_elements * element_bytes, height)` makes on
    /// `device`.
    pub fn new(
        device: &Device,
        width_elements: u32,
        element_bytes: u32,
        height: u32,
    ) -> Result<PitchedLayout, PitchError> {
        if !(1..=MAX_WIDTH_ELEMENTS).contains(&width_elements) {
            return Err(PitchError::WidthOutOfRange(width_elements));
        }
        if !(1..=MAX_ELEMENT_BYTES).contains(&element_bytes) {
            return Err(PitchError::ElementBytesOutOfRange(element_bytes));
        }
        if !(1..=MAX_HEIGHT).contains(&height) {
            return Err(PitchError::HeightOutOfRange(height));
        }
        // At most 2^20 x 32 = 2^25 bytes: the product fits a u32.
        let width_bytes = width_elements * element_bytes;
        Ok(PitchedLayout {
            width_elements,
            element_bytes,
            height,
            width_bytes: u64::from(width_bytes),
            pitch_bytes: pitch_bytes(device, width_bytes),
            alignment_bytes: u64::from(device.pitch_alignment_bytes.max(1)),
        })
    }

    /// The padding at the end of every row.
    pub fn padding_bytes_per_row(&self) -> u64 {
        self.pitch_bytes - self.width_bytes
    }

    /// What the allocation takes: `height` rows of `pitch` bytes (below 2^20 x 2^26 bytes).
    pub fn total_bytes(&self) -> u64 {
        self.pitch_bytes * u64::from(self.height)
    }

    /// What `cudaMalloc(width * height)` would take, rows packed without padding.
    pub fn unpitched_bytes(&self) -> u64 {
        self.width_bytes * u64::from(self.height)
    }

    /// The offset of element (row, col) from the allocation's start, `row * pitch + col * size`,
    /// or `None` outside the array.
    pub fn element_offset(&self, row: u32, col: u32) -> Option<u64> {
        (row < self.height && col < self.width_elements).then(|| {
            u64::from(row) * self.pitch_bytes + u64::from(col) * u64::from(self.element_bytes)
        })
    }

    /// Where row `row` would start without padding: `row * width * size`, which is aligned only
    /// when the width happens to be a multiple of the alignment.
    pub fn unpitched_row_start(&self, row: u32) -> u64 {
        u64::from(row) * self.width_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{gt200, h100, DeviceId};

    /// `width elements x size bytes, height rows -> pitch, padding per row, total (unpitched)`.
    fn check(device: &Device, width: u32, size: u32, height: u32, expected: &str) {
        let shown = match PitchedLayout::new(device, width, size, height) {
            Ok(layout) => format!(
                "pitch {}, padding {}, total {} ({} unpitched)",
                layout.pitch_bytes,
                layout.padding_bytes_per_row(),
                layout.total_bytes(),
                layout.unpitched_bytes()
            ),
            Err(error) => format!("error: {error}"),
        };
        assert_eq!(shown, expected, "{} {width}x{size} B x {height}", device.id);
    }

    #[test]
    fn a_row_of_100_floats_is_padded_to_512_bytes_on_the_h100() {
        // Seed 001's example: width = 100 floats, height = 64.
        check(
            &h100(),
            100,
            4,
            64,
            "pitch 512, padding 112, total 32768 (25600 unpitched)",
        );
    }

    #[test]
    fn a_row_of_100_floats_is_padded_to_512_bytes_on_the_gt200_too() {
        // 400 bytes round up to 512 with 256-byte alignment as well as with 512.
        check(
            &gt200(),
            100,
            4,
            64,
            "pitch 512, padding 112, total 32768 (25600 unpitched)",
        );
        check(
            &gt200(),
            70,
            4,
            2,
            "pitch 512, padding 232, total 1024 (560 unpitched)",
        );
        check(
            &gt200(),
            60,
            4,
            2,
            "pitch 256, padding 16, total 512 (480 unpitched)",
        );
        check(
            &h100(),
            60,
            4,
            2,
            "pitch 512, padding 272, total 1024 (480 unpitched)",
        );
    }

    #[test]
    fn a_row_that_fills_the_alignment_needs_no_padding() {
        check(
            &h100(),
            128,
            4,
            10,
            "pitch 512, padding 0, total 5120 (5120 unpitched)",
        );
        check(
            &h100(),
            1024,
            8,
            3,
            "pitch 8192, padding 0, total 24576 (24576 unpitched)",
        );
    }

    #[test]
    fn the_pitch_is_the_width_rounded_up_to_the_alignment_on_every_preset() {
        for id in DeviceId::ALL {
            let device = id.device();
            let alignment = u64::from(device.pitch_alignment_bytes);
            assert_eq!(pitch_bytes(&device, 0), 0, "{id}");
            assert_eq!(pitch_bytes(&device, 1), alignment, "{id}");
            assert_eq!(
                pitch_bytes(&device, 4000),
                4000u64.div_ceil(alignment) * alignment
            );
            assert_eq!(
                pitch_bytes(&device, u32::MAX),
                u64::from(u32::MAX).div_ceil(alignment) * alignment,
                "{id}"
            );
        }
    }

    #[test]
    fn an_element_is_at_row_times_pitch_plus_col_times_size() {
        let layout = PitchedLayout::new(&h100(), 100, 4, 64).expect("a valid layout");
        assert_eq!(layout.element_offset(0, 0), Some(0));
        assert_eq!(layout.element_offset(0, 99), Some(396));
        assert_eq!(layout.element_offset(1, 0), Some(512));
        assert_eq!(layout.element_offset(2, 3), Some(2 * 512 + 12));
        assert_eq!(layout.element_offset(63, 99), Some(63 * 512 + 396));
        // Past the last column is the padding, past the last row the end: neither is an element.
        assert_eq!(layout.element_offset(0, 100), None);
        assert_eq!(layout.element_offset(64, 0), None);
        // Unpitched, row 1 would start at byte 400, which is 16 bytes past a 128-byte boundary.
        assert_eq!(layout.unpitched_row_start(1), 400);
    }

    #[test]
    fn settings_outside_the_range_are_errors_not_panics() {
        let device = h100();
        check(
            &device,
            0,
            4,
            1,
            "error: a row of 0 elements: the width must be 1 to 1048576",
        );
        check(
            &device,
            1,
            0,
            1,
            "error: elements of 0 bytes: an element must be 1 to 32 bytes",
        );
        check(
            &device,
            1,
            64,
            1,
            "error: elements of 64 bytes: an element must be 1 to 32 bytes",
        );
        check(
            &device,
            1,
            4,
            0,
            "error: 0 rows: the height must be 1 to 1048576",
        );
        check(
            &device,
            u32::MAX,
            u32::MAX,
            u32::MAX,
            "error: a row of 4294967295 elements: the width must be 1 to 1048576",
        );
        // The largest accepted layout's numbers all fit.
        let largest =
            PitchedLayout::new(&device, MAX_WIDTH_ELEMENTS, MAX_ELEMENT_BYTES, MAX_HEIGHT)
                .expect("the largest layout is valid");
        assert_eq!(largest.total_bytes(), (1u64 << 25) * (1 << 20));
        assert_eq!(
            largest.element_offset(MAX_HEIGHT - 1, MAX_WIDTH_ELEMENTS - 1),
            Some(((1u64 << 20) - 1) * (1 << 25) + ((1 << 20) - 1) * 32)
        );
    }
}
