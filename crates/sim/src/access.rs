//! One warp-level memory instruction: which lanes touch which byte addresses, how wide, where.
//!
//! This is the common currency of the simulator: the seed access patterns of the first page build
//! `WarpAccess` values directly, the kernel interpreter records them, and `banks` and `coalescing`
//! analyse them. Source: the warp as the unit of memory instructions, CUDA C++ Programming Guide,
//! "SIMT Architecture" and "Device Memory Accesses".

use serde::{Deserialize, Serialize};
use std::fmt;

/// Lanes in a warp on every preset (CUDA C++ Programming Guide, "SIMT Architecture").
pub const WARP_LANES: usize = 32;

/// The memory space an access goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Space {
    Global,
    Shared,
    Local,
    Constant,
}

/// Load, store or read-modify-write: the kernel language names it, as the IR's accesses carry it.
pub use memplay_lang::ir::AccessKind;

/// Bytes each lane moves: 1, 2, 4, 8 or 16 (a `float4` is 16). Read back from serialized data
/// through `AccessWidth::new`, so no other width can enter from a message or a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u32")]
pub struct AccessWidth(u32);

/// The width was not a power of two from 1 to 16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadAccessWidth(pub u32);

impl fmt::Display for BadAccessWidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "an access is 1, 2, 4, 8 or 16 bytes wide, not {}",
            self.0
        )
    }
}

impl std::error::Error for BadAccessWidth {}

impl TryFrom<u32> for AccessWidth {
    type Error = BadAccessWidth;

    fn try_from(bytes: u32) -> Result<AccessWidth, BadAccessWidth> {
        AccessWidth::new(bytes)
    }
}

impl AccessWidth {
    pub const FOUR: AccessWidth = AccessWidth(4);
    pub const EIGHT: AccessWidth = AccessWidth(8);
    pub const SIXTEEN: AccessWidth = AccessWidth(16);

    pub fn new(bytes: u32) -> Result<AccessWidth, BadAccessWidth> {
        match bytes {
            1 | 2 | 4 | 8 | 16 => Ok(AccessWidth(bytes)),
            other => Err(BadAccessWidth(other)),
        }
    }

    pub fn bytes(self) -> u32 {
        self.0
    }
}

/// One warp-level memory instruction. `lanes[i]` is lane i's byte address, `None` if the lane is
/// inactive (masked off by divergence or beyond the end of the block).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WarpAccess {
    pub space: Space,
    pub kind: AccessKind,
    pub width: AccessWidth,
    pub lanes: [Option<u64>; WARP_LANES],
}

impl WarpAccess {
    /// An access where every lane is active, lane i at `address(i)`.
    pub fn from_fn(
        space: Space,
        kind: AccessKind,
        width: AccessWidth,
        mut address: impl FnMut(u32) -> Option<u64>,
    ) -> WarpAccess {
        let mut lanes = [None; WARP_LANES];
        for (lane, slot) in lanes.iter_mut().enumerate() {
            *slot = address(lane as u32);
        }
        WarpAccess {
            space,
            kind,
            width,
            lanes,
        }
    }

    pub fn active_lanes(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.lanes
            .iter()
            .enumerate()
            .filter_map(|(lane, addr)| addr.map(|a| (lane as u32, a)))
    }

    pub fn n_active(&self) -> u32 {
        self.active_mask().count_ones()
    }

    /// Bit i set when lane i is active: the warp's active mask, as `__activemask()` gives it.
    pub(crate) fn active_mask(&self) -> u32 {
        // A plain loop: this runs for every record, and the size-optimised build does not
        // inline iterator adapters.
        let mut mask = 0u32;
        for (lane, address) in self.lanes.iter().enumerate() {
            mask |= u32::from(address.is_some()) << lane;
        }
        mask
    }
}

/// Random warp accesses for property tests that compare a fast analysis with its reference.
#[cfg(test)]
pub(crate) mod strategies {
    use super::*;
    use proptest::prelude::*;

    /// Lane addresses built from one of several patterns, so that the cases cover what kernels do
    /// (strides, broadcasts, groups of lanes sharing an address) and what they do not (random
    /// addresses anywhere, addresses at the top of memory).
    fn lane_addresses(width: u64) -> impl Strategy<Value = [u64; WARP_LANES]> {
        let stride = (0u64..1 << 16, 0u64..140, 1u64..9).prop_map(move |(base, stride, group)| {
            std::array::from_fn(|lane| {
                base.wrapping_mul(width) + (lane as u64 / group) * stride * width
            })
        });
        // Lanes that repeat every `period` lanes, as the rows of a 2D block narrower than the
        // warp do when they read one row.
        let periodic = (
            0u64..1 << 16,
            0u64..140,
            prop::sample::select(vec![1u64, 2, 4, 8, 16]),
        )
            .prop_map(move |(base, stride, period)| {
                std::array::from_fn(|lane| {
                    base.wrapping_mul(width) + (lane as u64 % period) * stride * width
                })
            });
        let nearby =
            (0u64..1 << 20, prop::array::uniform32(0u64..96)).prop_map(move |(base, offsets)| {
                offsets.map(|offset| base.wrapping_mul(width) + offset * width)
            });
        let unaligned = (0u64..1 << 12, prop::array::uniform32(0u64..512))
            .prop_map(|(base, offsets)| offsets.map(|offset| base + offset));
        let anywhere = prop::array::uniform32(any::<u64>());
        let top = prop::array::uniform32(0u64..64).prop_map(|below| below.map(|b| u64::MAX - b));
        prop_oneof![
            4 => stride,
            2 => periodic,
            3 => nearby,
            1 => unaligned,
            1 => anywhere,
            1 => top,
        ]
    }

    /// Which lanes are active: mostly all, often a half-warp or a random subset, sometimes none.
    fn active_mask() -> impl Strategy<Value = u32> {
        prop_oneof![
            4 => Just(u32::MAX),
            1 => Just(0x0000_FFFF),
            1 => Just(0xFFFF_0000),
            3 => any::<u32>(),
            1 => Just(0),
        ]
    }

    /// A device preset, or one with the memory parameters changed to values no preset has (bank
    /// counts that are not powers of two or exceed 64, other bank widths and warp sizes, either
    /// phase and delivery and coalescing rule), so that fast paths and their fallbacks both run.
    pub(crate) fn device() -> impl Strategy<Value = crate::device::Device> {
        use crate::device::{
            a100, fermi, g80, gt200, h100, v100, GlobalCoalescing, SharedPhase, SharedWordDelivery,
        };
        let presets = prop::sample::select(vec![g80(), gt200(), fermi(), v100(), a100(), h100()]);
        let odd = (
            prop::sample::select(vec![0u32, 1, 2, 8, 16, 24, 32, 64, 128]),
            prop::sample::select(vec![0u32, 1, 2, 4, 8, 16, 3]),
            prop::sample::select(vec![0u32, 1, 8, 16, 24, 32, 64]),
            prop_oneof![Just(SharedPhase::HalfWarp), Just(SharedPhase::FullWarp)],
            prop_oneof![
                Just(SharedWordDelivery::Broadcast),
                Just(SharedWordDelivery::Multicast)
            ],
            prop_oneof![
                Just(GlobalCoalescing::Sectors),
                Just(GlobalCoalescing::SegmentHalfWarp),
                Just(GlobalCoalescing::StrictHalfWarp)
            ],
        )
            .prop_map(
                |(n_banks, bank_width_bytes, warp_size, phase, delivery, coalescing)| {
                    crate::device::Device {
                        n_banks,
                        bank_width_bytes,
                        warp_size,
                        shared_phase: phase,
                        shared_word_delivery: delivery,
                        global_coalescing: coalescing,
                        ..h100()
                    }
                },
            );
        prop_oneof![2 => presets, 1 => odd]
    }

    /// A warp access in `space` of any kind, width, active mask and addresses.
    pub(crate) fn warp_access(space: Space) -> impl Strategy<Value = WarpAccess> {
        let kind = prop_oneof![
            Just(AccessKind::Load),
            Just(AccessKind::Store),
            Just(AccessKind::Atomic)
        ];
        (
            kind,
            prop::sample::select(vec![1u32, 2, 4, 8, 16]),
            active_mask(),
        )
            .prop_flat_map(move |(kind, bytes, mask)| {
                lane_addresses(u64::from(bytes)).prop_map(move |addresses| WarpAccess {
                    space,
                    kind,
                    width: AccessWidth(bytes),
                    lanes: std::array::from_fn(|lane| {
                        (mask >> lane & 1 != 0).then_some(addresses[lane])
                    }),
                })
            })
    }
}
