//! The access patterns of seed 001 ("Reducing Bank Conflict"), built as warp-level accesses.
//!
//! Each pattern is one 4-byte (float) shared-memory load by the first warp of a block (lanes 0 to
//! 31), on a float array that starts at byte 0 of shared memory:
//!
//! - `Stride`: `shared[base + s*tid]` with base 0, so lane l reads word `s*l` ("Bank Addressing
//!   Examples"; s = 0 makes every lane read word 0).
//! - `TileRow` and `TileColumn`: the tiled matrix multiplication's `s_A[ty][k]` and `s_B[k][tx]`
//!   with k = 0, on a TILE x (TILE+PAD) tile ("Bank Conflicts in the Tiled Matrix
//!   Multiplication?"). The block is TILE x TILE threads and warps take threads x first, so lane
//!   l is `tx = l % TILE`, `ty = l / TILE` (for TILE >= 32 the warp is part of row 0). A block of
//!   fewer than 32 threads (TILE <= 5) leaves the warp's last lanes inactive.
//! - `RowPerThread`: the 32x32 array where thread t processes row t, `s[t][j]` with j = 0 and PAD
//!   floats of padding per row ("Avoiding Bank Conflict"), so lane t reads word `t*(32+PAD)`.
//! - `Broadcast`: every lane reads `a[32]` ("Broadcast Cases").
//! - `Multicast`: lane l reads `a[l/2]` ("Multicast Cases").
//!
//! The array's element is a float unless `PatternParams::element` says otherwise: the same
//! indices over 2-byte `half`s, 8-byte `double`s or 16-byte `float4`s (CUDA C++ Programming
//! Guide, "Shared Memory" of compute capability 5.x and later: a 64-bit access is served in
//! half-warp phases, and lanes reading the two halves of one 32-bit word share it). The padding
//! and the strides count elements.

use crate::access::{AccessKind, AccessWidth, Space, WarpAccess, WARP_LANES};
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The element type of a pattern's array, which decides how many 32-bit bank words one lane
/// touches: half a word, one, two or four.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum Element {
    /// A 2-byte `half` (or `short`).
    Half,
    #[default]
    Float,
    /// An 8-byte `double` (or `float2`).
    Double,
    /// A 16-byte `float4`.
    Float4,
}

impl Element {
    pub const ALL: [Element; 4] = [
        Element::Half,
        Element::Float,
        Element::Double,
        Element::Float4,
    ];

    pub fn bytes(self) -> u32 {
        match self {
            Element::Half => 2,
            Element::Float => 4,
            Element::Double => 8,
            Element::Float4 => 16,
        }
    }

    /// The C type, also the id in URLs.
    pub fn as_str(self) -> &'static str {
        match self {
            Element::Half => "half",
            Element::Float => "float",
            Element::Double => "double",
            Element::Float4 => "float4",
        }
    }
}

/// The patterns of the bank-map explorer, with their URL ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum PatternId {
    /// `shared[base + s*tid]`.
    Stride,
    /// `tile[ty][k]`: a row read of a TILE x (TILE+PAD) float tile.
    TileRow,
    /// `tile[k][tx]`: a column read of the same tile.
    TileColumn,
    /// The 32x32 array where each thread processes a row: `s[t][j]`.
    RowPerThread,
    /// Every lane reads `a[32]`.
    Broadcast,
    /// Lanes 2i and 2i+1 read `a[i]`.
    Multicast,
}

impl PatternId {
    pub const ALL: [PatternId; 6] = [
        PatternId::Stride,
        PatternId::TileRow,
        PatternId::TileColumn,
        PatternId::RowPerThread,
        PatternId::Broadcast,
        PatternId::Multicast,
    ];

    /// The id used in URLs and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            PatternId::Stride => "stride",
            PatternId::TileRow => "tile-row",
            PatternId::TileColumn => "tile-column",
            PatternId::RowPerThread => "row-per-thread",
            PatternId::Broadcast => "broadcast",
            PatternId::Multicast => "multicast",
        }
    }

    /// A short name for people, as the lecture calls the case.
    pub fn label(self) -> &'static str {
        match self {
            PatternId::Stride => "Stride",
            PatternId::TileRow => "Tile row",
            PatternId::TileColumn => "Tile column",
            PatternId::RowPerThread => "Row per thread",
            PatternId::Broadcast => "Broadcast",
            PatternId::Multicast => "Multicast",
        }
    }
}

impl fmt::Display for PatternId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The id was not one of the patterns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPattern(pub String);

impl fmt::Display for UnknownPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown pattern '{}' (expected one of stride, tile-row, tile-column, row-per-thread, \
             broadcast, multicast)",
            self.0
        )
    }
}

impl std::error::Error for UnknownPattern {}

impl FromStr for PatternId {
    type Err = UnknownPattern;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PatternId::ALL
            .into_iter()
            .find(|id| id.as_str() == s)
            .ok_or_else(|| UnknownPattern(s.to_string()))
    }
}

/// The knobs a pattern reads. `tile` is TILE (0 is treated as 1), `pad` is PAD in floats per
/// row, `stride` is s in floats. Any value is safe: addresses are computed in u64 and saturate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PatternParams {
    pub tile: u32,
    pub pad: u32,
    pub stride: u32,
    pub element: Element,
}

/// A built pattern: the access, and the source line it stands for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Pattern {
    pub id: PatternId,
    pub source: String,
    pub access: WarpAccess,
}

/// Builds the warp-level access of pattern `id` with `params` (see the module documentation for
/// each pattern's addresses). `tile` = 0 is treated as 1.
pub fn build(id: PatternId, params: PatternParams) -> Pattern {
    let tile = u64::from(params.tile.max(1));
    let tile_pitch = tile + u64::from(params.pad);
    let stride = u64::from(params.stride);
    let row_pitch = 32 + u64::from(params.pad);
    // Lanes past the end of a TILE x TILE block do not exist.
    let in_tile_block = |lane: u64| lane < tile.saturating_mul(tile);

    let (source, word): (String, Box<dyn Fn(u64) -> Option<u64>>) = match id {
        PatternId::Stride => {
            let source = match params.stride {
                1 => "shared[base + tid]".to_string(),
                s => format!("shared[base + {s}*tid]"),
            };
            (
                source,
                Box::new(move |lane| Some(stride.saturating_mul(lane))),
            )
        }
        PatternId::TileRow => (
            "tile[ty][k]".to_string(),
            Box::new(move |lane| {
                let ty = lane / tile;
                in_tile_block(lane).then(|| ty.saturating_mul(tile_pitch))
            }),
        ),
        PatternId::TileColumn => (
            "tile[k][tx]".to_string(),
            Box::new(move |lane| {
                let tx = lane % tile;
                in_tile_block(lane).then_some(tx)
            }),
        ),
        PatternId::RowPerThread => (
            "s[t][j]".to_string(),
            Box::new(move |lane| Some(lane.saturating_mul(row_pitch))),
        ),
        PatternId::Broadcast => ("a[32]".to_string(), Box::new(|_| Some(32))),
        PatternId::Multicast => ("a[tid/2]".to_string(), Box::new(|lane| Some(lane / 2))),
    };

    let bytes = params.element.bytes();
    let mut lanes = [None; WARP_LANES];
    for (lane, slot) in lanes.iter_mut().enumerate() {
        *slot = word(lane as u64).map(|index| index.saturating_mul(u64::from(bytes)));
    }
    Pattern {
        id,
        source,
        access: WarpAccess {
            space: Space::Shared,
            kind: AccessKind::Load,
            width: AccessWidth::try_from(bytes).unwrap_or(AccessWidth::FOUR),
            lanes,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::banks;
    use crate::device::{g80, h100};

    fn params(tile: u32, pad: u32, stride: u32) -> PatternParams {
        PatternParams {
            tile,
            pad,
            stride,
            element: Element::Float,
        }
    }

    /// What a test expects of a built pattern: the words some lanes read (None: inactive), and
    /// the conflict degree on H100 and on G80.
    #[derive(Debug)]
    struct Expected<'a> {
        words: &'a [(usize, Option<u64>)],
        h100_degree: u32,
        g80_degree: u32,
    }

    fn check(id: PatternId, params: PatternParams, expected: Expected<'_>) -> Pattern {
        let pattern = build(id, params);
        assert_eq!(pattern.id, id);
        assert_eq!(pattern.access.space, Space::Shared);
        assert_eq!(pattern.access.width, AccessWidth::FOUR);
        for &(lane, word) in expected.words {
            assert_eq!(
                pattern.access.lanes[lane],
                word.map(|w| w * 4),
                "{id} lane {lane}"
            );
        }
        let degree = |device| banks::analyze(&pattern.access, &device).conflict_degree;
        assert_eq!(degree(h100()), expected.h100_degree, "{id} on H100");
        assert_eq!(degree(g80()), expected.g80_degree, "{id} on G80");
        pattern
    }

    // Seed 001: `shared[BaseIndex + tid]` and `shared[BaseIndex + 2*tid]`.
    #[test]
    fn stride_one_and_two_are_the_bank_addressing_slides() {
        let one = check(
            PatternId::Stride,
            params(16, 0, 1),
            Expected {
                words: &[(0, Some(0)), (1, Some(1)), (31, Some(31))],
                h100_degree: 1,
                g80_degree: 1,
            },
        );
        assert_eq!(one.source, "shared[base + tid]");
        let two = check(
            PatternId::Stride,
            params(16, 0, 2),
            Expected {
                words: &[(0, Some(0)), (1, Some(2)), (31, Some(62))],
                h100_degree: 2,
                g80_degree: 2,
            },
        );
        assert_eq!(two.source, "shared[base + 2*tid]");
    }

    #[test]
    fn stride_zero_reads_word_zero_in_every_lane() {
        check(
            PatternId::Stride,
            params(16, 0, 0),
            Expected {
                words: &[(0, Some(0)), (17, Some(0)), (31, Some(0))],
                h100_degree: 1,
                g80_degree: 1,
            },
        );
    }

    // Seed 001, "Bank Conflicts in the Tiled Matrix Multiplication?", TILE = 16: lanes 16..31
    // are row ty = 1. With PAD = 1 the second row starts at word 17.
    #[test]
    fn tile_row_reads_the_first_word_of_each_lanes_row() {
        check(
            PatternId::TileRow,
            params(16, 0, 1),
            Expected {
                words: &[(0, Some(0)), (15, Some(0)), (16, Some(16)), (31, Some(16))],
                h100_degree: 1,
                g80_degree: 1,
            },
        );
        check(
            PatternId::TileRow,
            params(16, 1, 1),
            Expected {
                words: &[(0, Some(0)), (16, Some(17))],
                h100_degree: 1,
                g80_degree: 1,
            },
        );
        // TILE = 32: the warp is row 0, every lane reads word 0.
        check(
            PatternId::TileRow,
            params(32, 0, 1),
            Expected {
                words: &[(0, Some(0)), (31, Some(0))],
                h100_degree: 1,
                g80_degree: 1,
            },
        );
    }

    // TILE = 8: four rows of 8 lanes read words 0, 8, 16, 24, each shared by 8 lanes. H100
    // multicasts them from four banks in one wavefront. On G80 a half-warp holds two rows, whose
    // words lie in banks 0 and 8: the first step broadcasts the first row's word, but bank 8 serves
    // only one lane of the second row (one address per other bank); the other 7 lanes need a
    // second step, so 2-way.
    #[test]
    fn tile_row_of_small_tiles_is_free_on_h100_but_not_on_g80() {
        check(
            PatternId::TileRow,
            params(8, 0, 1),
            Expected {
                words: &[(7, Some(0)), (8, Some(8)), (31, Some(24))],
                h100_degree: 1,
                g80_degree: 2,
            },
        );
        // TILE = 4, PAD = 4: a 4 x 4 block has 16 threads, so lanes 16..31 do not exist. Rows 8
        // words apart read words 0, 8, 16, 24 in banks 0, 8, 0, 8 of G80. Each step broadcasts
        // one row's word and serves one lane of the next row in the other bank: 4 steps.
        check(
            PatternId::TileRow,
            params(4, 4, 1),
            Expected {
                words: &[(4, Some(8)), (15, Some(24)), (16, None), (31, None)],
                h100_degree: 1,
                g80_degree: 4,
            },
        );
    }

    #[test]
    fn tile_column_reads_word_tx_in_every_row() {
        check(
            PatternId::TileColumn,
            params(16, 1, 1),
            Expected {
                words: &[(0, Some(0)), (15, Some(15)), (16, Some(0)), (31, Some(15))],
                h100_degree: 1,
                g80_degree: 1,
            },
        );
    }

    // Seed 001, "Avoiding Bank Conflict": 32-way without padding on 32 banks, 16-way per
    // half-warp on 16 banks; one float of padding removes the conflict.
    #[test]
    fn row_per_thread_is_a_column_of_the_32_by_32_array() {
        let pattern = check(
            PatternId::RowPerThread,
            params(16, 0, 1),
            Expected {
                words: &[(0, Some(0)), (1, Some(32)), (31, Some(992))],
                h100_degree: 32,
                g80_degree: 16,
            },
        );
        assert_eq!(pattern.source, "s[t][j]");
        check(
            PatternId::RowPerThread,
            params(16, 1, 1),
            Expected {
                words: &[(1, Some(33)), (31, Some(1023))],
                h100_degree: 1,
                g80_degree: 1,
            },
        );
    }

    #[test]
    fn broadcast_reads_a_32_in_every_lane() {
        check(
            PatternId::Broadcast,
            params(16, 7, 9),
            Expected {
                words: &[(0, Some(32)), (31, Some(32))],
                h100_degree: 1,
                g80_degree: 1,
            },
        );
    }

    // Multicast is free on cc >= 2.0; on G80 the pairs cost a second broadcast step (see the
    // banks module's test of the G.3.3 algorithm).
    #[test]
    fn multicast_reads_a_of_half_the_lane() {
        check(
            PatternId::Multicast,
            params(16, 0, 1),
            Expected {
                words: &[(0, Some(0)), (1, Some(0)), (2, Some(1)), (31, Some(15))],
                h100_degree: 1,
                g80_degree: 2,
            },
        );
    }

    #[test]
    fn tile_zero_is_treated_as_one() {
        // A 1 x 1 block has one thread.
        check(
            PatternId::TileRow,
            params(0, 0, 1),
            Expected {
                words: &[(0, Some(0)), (1, None)],
                h100_degree: 1,
                g80_degree: 1,
            },
        );
    }

    #[test]
    fn huge_parameters_do_not_overflow() {
        for id in PatternId::ALL {
            let pattern = build(id, params(u32::MAX, u32::MAX, u32::MAX));
            assert!(pattern.access.n_active() >= 1, "{id}");
            banks::analyze(&pattern.access, &h100());
            banks::analyze(&pattern.access, &g80());
        }
        let stride = build(PatternId::Stride, params(1, 0, u32::MAX));
        assert_eq!(stride.access.lanes[31], Some(31 * u64::from(u32::MAX) * 4));
    }

    #[test]
    fn every_pattern_round_trips_through_its_url_id() {
        for id in PatternId::ALL {
            assert_eq!(id.as_str().parse::<PatternId>(), Ok(id));
            assert_eq!(id.to_string(), id.as_str());
            assert!(!id.label().is_empty());
        }
        assert_eq!("tile-column".parse(), Ok(PatternId::TileColumn));
    }

    #[test]
    fn unknown_pattern_is_an_error_not_a_panic() {
        let error = "diagonal".parse::<PatternId>().unwrap_err();
        assert_eq!(error, UnknownPattern("diagonal".into()));
        assert!(error.to_string().contains("'diagonal'"));
    }

    /// Wavefronts and conflict degree of lane t reading element `stride * t` of an array of
    /// `element`s, on the H100.
    fn check_element(element: Element, stride: u32, wavefronts: u32, degree: u32) {
        let pattern = build(
            PatternId::Stride,
            PatternParams {
                element,
                ..params(16, 0, stride)
            },
        );
        assert_eq!(pattern.access.width.bytes(), element.bytes());
        let report = banks::analyze(&pattern.access, &h100());
        assert_eq!(
            (report.wavefronts, report.conflict_degree),
            (wavefronts, degree),
            "{element:?} at stride {stride}"
        );
    }

    #[test]
    fn two_byte_elements_of_neighbouring_lanes_share_a_word_without_conflict() {
        // 32 halves fill 16 words: lanes 2i and 2i+1 read the two halves of word i, which the
        // bank delivers to both (multicast), so one wavefront serves the warp.
        check_element(Element::Half, 1, 1, 1);
        // At stride 2 each lane has a word of its own, still 32 banks: one wavefront.
        check_element(Element::Half, 2, 1, 1);
        // At stride 64 every lane's half is in bank 0, in 32 different words.
        check_element(Element::Half, 64, 32, 32);
    }

    #[test]
    fn doubles_at_stride_one_take_two_wavefronts_without_conflict() {
        // 32 doubles are 256 bytes: two half-warp phases of 128 bytes, each over all 32 banks.
        check_element(Element::Double, 1, 2, 1);
        // At stride 16 every lane's two words are in banks 0 and 1: a half-warp phase needs 16
        // wavefronts, the warp 32, a 16-way conflict.
        check_element(Element::Double, 16, 32, 16);
    }

    #[test]
    fn float4_reads_of_consecutive_lanes_take_four_wavefronts_without_conflict() {
        // 512 bytes: four wavefronts of 128 bytes, the fewest the bytes allow.
        check_element(Element::Float4, 1, 4, 1);
        // At stride 2 only every other 16 bytes is read: twice the wavefronts, a 2-way conflict.
        check_element(Element::Float4, 2, 8, 2);
    }
}
