//! One warp-level memory instruction: which lanes touch which byte addresses, how wide, where.
//!
//! This is the common currency of the simulator: the seed access patterns of the first page build
//! `WarpAccess` values directly, the kernel interpreter records them, and `banks` and `coalescing`
//! analyse them. Source: the warp as the unit of memory instructions, CUDA C++ Programming Guide,
//! "SIMT Architecture" and "Device Memory Accesses".

use serde::Serialize;
use std::fmt;

/// Lanes in a warp on every preset (CUDA C++ Programming Guide, "SIMT Architecture").
pub const WARP_LANES: usize = 32;

/// The memory space an access goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Space {
    Global,
    Shared,
    Local,
    Constant,
}

/// Load, store or read-modify-write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum AccessKind {
    Load,
    Store,
    Atomic,
}

/// Bytes each lane moves: 1, 2, 4, 8 or 16 (a `float4` is 16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
        self.lanes.iter().filter(|a| a.is_some()).count() as u32
    }
}
