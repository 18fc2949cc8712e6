//! A sanitizer for the mistakes students make with shared memory and barriers, after NVIDIA's
//! Compute Sanitizer (Compute Sanitizer User Manual, "Racecheck Tool", "Synccheck Tool",
//! "Initcheck Tool"), on the blocks the simulator runs.
//!
//! - **racecheck**: two accesses to the same byte of shared memory by different warps with no
//!   `__syncthreads()` between them, at least one a write: read after write, write after read or
//!   write after write, the manual's three hazard types. The interpreter runs a block's warps
//!   one at a time from one barrier to the next, so a barrier interval is one round of the
//!   block's warps: each byte keeps, for the interval it was last touched in, the warp that
//!   wrote it and a warp that read it (and whether several did), each with its span. Lanes of
//!   one warp do not race with each other here, and atomics do not race at all, as the manual
//!   says of them.
//! - **synccheck**: a `__syncthreads()` that part of a warp reaches ("divergent thread(s) in
//!   block"), warps of a block waiting at different `__syncthreads()`, and a `__syncwarp(mask)`
//!   whose mask names a lane that has exited or is not executing it ("invalid arguments").
//!   `warp_mask_lanes` is the one test of a warp-synchronous mask, for every primitive that takes
//!   one.
//! - **initcheck**: a read of shared or local memory that nothing wrote since the block began:
//!   neither is initialised at launch (CUDA C++ Programming Guide, "Variable Memory Space
//!   Specifiers"), dynamic shared memory included. The manual's initcheck looks at global memory;
//!   here global buffers are filled by the launch, so the check is kept to the memory a block
//!   owns.
//!
//! The findings are plain data (`Finding`), one per pair of sites, the first block and warp
//! that showed it; the simulator runs every warp and iteration of the blocks it checks while the
//! sanitizer is on (`simulate`'s reuse plan), so no warp goes unchecked, and the counters are
//! those of a run without it.

use memplay_lang::span::Span;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The most findings a launch keeps; the others are only counted (`SanitizerReport::more`).
pub const MAX_FINDINGS: usize = 64;

/// Which checks a launch runs; all off by default, as Compute Sanitizer runs on request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SanitizerConfig {
    pub racecheck: bool,
    pub synccheck: bool,
    pub initcheck: bool,
}

impl SanitizerConfig {
    /// Every check.
    pub const ALL: SanitizerConfig = SanitizerConfig {
        racecheck: true,
        synccheck: true,
        initcheck: true,
    };

    /// Whether any check is on.
    pub fn any(self) -> bool {
        self.racecheck || self.synccheck || self.initcheck
    }
}

/// What a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hazard {
    /// A warp reads shared memory another warp wrote in the same barrier interval.
    ReadAfterWrite,
    /// A warp writes shared memory another warp read in the same barrier interval.
    WriteAfterRead,
    /// A warp writes shared memory another warp wrote in the same barrier interval.
    WriteAfterWrite,
    /// A `__syncthreads()` reached by only some of a warp's threads that have not exited.
    DivergentSyncthreads,
    /// Warps of one block waiting at different `__syncthreads()`.
    DifferentSyncthreads,
    /// A warp-synchronous mask naming lanes that are not executing the call.
    InvalidWarpMask,
    /// A read of shared memory nothing wrote since the block began.
    UninitializedShared,
    /// A read of a thread's local memory it never wrote.
    UninitializedLocal,
}

impl Hazard {
    /// The Compute Sanitizer tool that reports it.
    pub fn tool(self) -> &'static str {
        match self {
            Hazard::ReadAfterWrite | Hazard::WriteAfterRead | Hazard::WriteAfterWrite => {
                "racecheck"
            }
            Hazard::DivergentSyncthreads
            | Hazard::DifferentSyncthreads
            | Hazard::InvalidWarpMask => "synccheck",
            Hazard::UninitializedShared | Hazard::UninitializedLocal => "initcheck",
        }
    }

    fn words(self) -> &'static str {
        match self {
            Hazard::ReadAfterWrite => "read after write of shared memory",
            Hazard::WriteAfterRead => "write after read of shared memory",
            Hazard::WriteAfterWrite => "write after write of shared memory",
            Hazard::DivergentSyncthreads => "__syncthreads() reached by only some threads",
            Hazard::DifferentSyncthreads => "warps wait at different __syncthreads()",
            Hazard::InvalidWarpMask => "the mask names lanes that do not execute the call",
            Hazard::UninitializedShared => "read of shared memory never written",
            Hazard::UninitializedLocal => "read of local memory never written",
        }
    }
}

/// One thing the sanitizer found, where it first showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub hazard: Hazard,
    /// The access or call that shows it.
    pub span: Span,
    pub block: [u32; 3],
    pub warp: u32,
    /// The warp's lanes concerned: those that made the access, reached the barrier, or the
    /// lanes the mask names that do not execute the call.
    pub lanes: u32,
    /// For a race, the other warp's access; for warps at different barriers, the barrier the
    /// first warp waits at.
    pub other: Option<(Span, u32)>,
    /// The first byte concerned, within shared memory or the thread's local memory.
    pub address: Option<u64>,
}

/// As the command line prints it: `racecheck 12:9: read after write of shared memory ...`.
impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.block;
        write!(
            f,
            "{} {}:{}: {}, block ({x},{y},{z}) warp {} lanes {:#010x}",
            self.hazard.tool(),
            self.span.line,
            self.span.col,
            self.hazard.words(),
            self.warp,
            self.lanes
        )?;
        if let Some(address) = self.address {
            write!(f, " byte {address}")?;
        }
        if let Some((span, warp)) = self.other {
            write!(f, "; against warp {warp} at {}:{}", span.line, span.col)?;
        }
        Ok(())
    }
}

/// What the sanitizer found in a launch.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SanitizerReport {
    /// One finding per hazard and pair of sites, in the order found, at most `MAX_FINDINGS`.
    pub findings: Vec<Finding>,
    /// Findings past `MAX_FINDINGS`, not kept.
    pub more: u64,
}

/// The lanes a warp-synchronous primitive's `mask` names that are not executing it (`active`):
/// they have exited or diverged. Lanes past the end of the block do not exist and are left out.
pub fn warp_mask_lanes(mask: u32, active: u32, valid: u32) -> u32 {
    mask & valid & !active
}

/// What one access shows of a hazard: the lanes that show it, the first byte, and the other
/// warp's access with its span.
type Shown = (u32, u64, Option<(Span, u32)>);

/// How a warp touches memory, as the checks see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Touch {
    Read,
    Write,
    /// Reads and writes, and races with nothing.
    Atomic,
}

/// One byte of shared memory in the barrier interval it was last touched in: warps are stored
/// plus one, 0 meaning none.
#[derive(Clone, Copy, Debug, Default)]
struct ByteUse {
    interval: u32,
    writer: u32,
    writer_span: Span,
    reader: u32,
    reader_span: Span,
    readers: bool,
}

/// The sanitizer's state over a launch: the findings, and the block being run.
#[derive(Debug)]
pub struct Sanitizer {
    config: SanitizerConfig,
    block: [u32; 3],
    /// Barrier intervals counted over the launch, so a byte's use in an earlier one (or an
    /// earlier block) reads as none without clearing.
    interval: u32,
    bytes: Vec<ByteUse>,
    /// Bits of shared and local bytes written since the block began.
    shared_written: Vec<u64>,
    local_written: Vec<u64>,
    /// The warps waiting at a barrier in this interval, with its span.
    waiting: Vec<(u32, Span)>,
    /// The mask of the `__syncwarp` about to run, when its argument was evaluated.
    pub(crate) pending_mask: Option<u32>,
    report: SanitizerReport,
}

fn bit(bits: &[u64], at: u64) -> bool {
    bits.get((at / 64) as usize)
        .is_some_and(|word| word >> (at % 64) & 1 != 0)
}

fn set_bit(bits: &mut Vec<u64>, at: u64) {
    let index = (at / 64) as usize;
    if bits.len() <= index {
        bits.resize(index + 1, 0);
    }
    bits[index] |= 1 << (at % 64);
}

impl Sanitizer {
    pub fn new(config: SanitizerConfig) -> Sanitizer {
        Sanitizer {
            config,
            block: [0; 3],
            interval: 1,
            bytes: Vec::new(),
            shared_written: Vec::new(),
            local_written: Vec::new(),
            waiting: Vec::new(),
            pending_mask: None,
            report: SanitizerReport::default(),
        }
    }

    /// The findings so far.
    pub fn report(&self) -> &SanitizerReport {
        &self.report
    }

    /// A block begins: its shared and local memory hold nothing written.
    pub fn begin_block(&mut self, block: [u32; 3], shared_bytes: usize) {
        self.block = block;
        self.interval = self.interval.wrapping_add(1).max(1);
        if self.bytes.len() < shared_bytes {
            self.bytes.resize(shared_bytes, ByteUse::default());
        }
        self.shared_written.clear();
        self.local_written.clear();
        self.waiting.clear();
        self.pending_mask = None;
    }

    fn find(&mut self, finding: Finding) {
        let seen = self.report.findings.iter().any(|f| {
            f.hazard == finding.hazard
                && f.span == finding.span
                && f.other.map(|o| o.0) == finding.other.map(|o| o.0)
        });
        if seen {
            return;
        }
        if self.report.findings.len() < MAX_FINDINGS {
            self.report.findings.push(finding);
        } else {
            self.report.more += 1;
        }
    }

    fn finding(&self, hazard: Hazard, span: Span, warp: u32, lanes: u32) -> Finding {
        Finding {
            hazard,
            span,
            block: self.block,
            warp,
            lanes,
            other: None,
            address: None,
        }
    }

    /// One warp-level access of shared memory: `addresses` holds each active lane's first byte,
    /// `width` bytes each.
    pub fn shared_access(
        &mut self,
        warp: u32,
        touch: Touch,
        addresses: &[Option<u64>; 32],
        width: u32,
        span: Span,
    ) {
        let me = warp + 1;
        // Per hazard (read after write, write after read, write after write, uninitialized).
        let mut found: [Shown; 4] = [(0, 0, None); 4];
        for (lane, address) in addresses.iter().enumerate() {
            let Some(address) = *address else { continue };
            for at in address..address + u64::from(width) {
                if self.config.initcheck {
                    if touch != Touch::Write && !bit(&self.shared_written, at) {
                        let slot = &mut found[3];
                        if slot.0 == 0 {
                            slot.1 = at;
                        }
                        slot.0 |= 1 << lane;
                    }
                    set_bit_if(&mut self.shared_written, at, touch != Touch::Read);
                }
                if !self.config.racecheck || touch == Touch::Atomic {
                    continue;
                }
                let Some(byte) = self.bytes.get_mut(at as usize) else {
                    continue;
                };
                if byte.interval != self.interval {
                    *byte = ByteUse {
                        interval: self.interval,
                        ..ByteUse::default()
                    };
                }
                let mut hazard = |index: usize, other: u32, other_span: Span| {
                    let slot = &mut found[index];
                    if slot.0 == 0 {
                        slot.1 = at;
                        slot.2 = Some((other_span, other - 1));
                    }
                    slot.0 |= 1 << lane;
                };
                match touch {
                    Touch::Read => {
                        if byte.writer != 0 && byte.writer != me {
                            hazard(0, byte.writer, byte.writer_span);
                        }
                        if byte.reader == 0 {
                            byte.reader = me;
                            byte.reader_span = span;
                        } else if byte.reader != me {
                            byte.readers = true;
                        }
                    }
                    _ => {
                        if byte.writer != 0 && byte.writer != me {
                            hazard(2, byte.writer, byte.writer_span);
                        }
                        if byte.reader != 0 && (byte.reader != me || byte.readers) {
                            // With several readers, one is another warp; the one kept may be
                            // this warp, and then the span is of its own read.
                            hazard(1, byte.reader, byte.reader_span);
                        }
                        byte.writer = me;
                        byte.writer_span = span;
                    }
                }
            }
        }
        let hazards = [
            Hazard::ReadAfterWrite,
            Hazard::WriteAfterRead,
            Hazard::WriteAfterWrite,
            Hazard::UninitializedShared,
        ];
        for (hazard, (lanes, address, other)) in hazards.into_iter().zip(found) {
            if lanes != 0 {
                let mut finding = self.finding(hazard, span, warp, lanes);
                finding.address = Some(address);
                finding.other = other;
                self.find(finding);
            }
        }
    }

    /// One warp-level access of local memory: `addresses` holds each active lane's first
    /// physical byte in the block's local memory.
    pub fn local_access(
        &mut self,
        warp: u32,
        touch: Touch,
        addresses: &[Option<u64>; 32],
        width: u32,
        span: Span,
    ) {
        if !self.config.initcheck {
            return;
        }
        let (mut lanes, mut first) = (0u32, 0u64);
        for (lane, address) in addresses.iter().enumerate() {
            let Some(address) = *address else { continue };
            for at in address..address + u64::from(width) {
                if touch != Touch::Write && !bit(&self.local_written, at) {
                    if lanes == 0 {
                        first = at;
                    }
                    lanes |= 1 << lane;
                }
                set_bit_if(&mut self.local_written, at, touch != Touch::Read);
            }
        }
        if lanes != 0 {
            let mut finding = self.finding(Hazard::UninitializedLocal, span, warp, lanes);
            finding.address = Some(first);
            self.find(finding);
        }
    }

    /// A warp reaches `__syncthreads()` with the lanes `arrived`, of the `expected` that have
    /// not exited; whether the sanitizer reports it (else it is the interpreter's error).
    pub fn barrier(&mut self, warp: u32, span: Span, arrived: u32, expected: u32) -> bool {
        if !self.config.synccheck {
            return false;
        }
        self.waiting.push((warp, span));
        if arrived != expected {
            self.find(self.finding(Hazard::DivergentSyncthreads, span, warp, arrived));
        }
        true
    }

    /// Every warp has run to a barrier or its end: the barrier releases and a new interval
    /// begins. Warps waiting at different barriers are reported against the first warp's.
    pub fn barrier_released(&mut self) {
        if let Some(&(first_warp, first_span)) = self.waiting.first() {
            for i in 1..self.waiting.len() {
                let (warp, span) = self.waiting[i];
                if span != first_span {
                    let mut finding = self.finding(Hazard::DifferentSyncthreads, span, warp, 0);
                    finding.other = Some((first_span, first_warp));
                    self.find(finding);
                }
            }
        }
        self.waiting.clear();
        self.interval = self.interval.wrapping_add(1).max(1);
    }

    /// A warp-synchronous call (`__syncwarp(mask)`) with `mask`, run by the lanes `active` of
    /// a warp whose existing lanes are `valid`.
    pub fn warp_mask(&mut self, warp: u32, span: Span, mask: u32, active: u32, valid: u32) {
        let lanes = warp_mask_lanes(mask, active, valid);
        if self.config.synccheck && lanes != 0 {
            self.find(self.finding(Hazard::InvalidWarpMask, span, warp, lanes));
        }
    }
}

fn set_bit_if(bits: &mut Vec<u64>, at: u64, on: bool) {
    if on {
        set_bit(bits, at);
    }
}

#[cfg(test)]
mod tests {
    use super::{warp_mask_lanes, Hazard, Sanitizer, SanitizerConfig, Touch};
    use memplay_lang::span::Span;

    fn at(line: u32) -> Span {
        Span {
            line,
            col: 1,
            start: 0,
            end: 0,
        }
    }

    fn lanes(first: u64) -> [Option<u64>; 32] {
        std::array::from_fn(|l| Some(first + 4 * l as u64))
    }

    #[test]
    fn a_read_of_words_another_warp_wrote_before_the_barrier_is_a_read_after_write() {
        let mut s = Sanitizer::new(SanitizerConfig::ALL);
        s.begin_block([0, 0, 0], 256);
        s.shared_access(0, Touch::Write, &lanes(0), 4, at(3));
        s.shared_access(1, Touch::Read, &lanes(0), 4, at(4));
        let found = &s.report().findings;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].hazard, Hazard::ReadAfterWrite);
        assert_eq!(found[0].warp, 1);
        assert_eq!(found[0].other, Some((at(3), 0)));
        assert_eq!(found[0].lanes, u32::MAX);
    }

    #[test]
    fn the_same_accesses_with_a_barrier_between_them_are_silent() {
        let mut s = Sanitizer::new(SanitizerConfig::ALL);
        s.begin_block([0, 0, 0], 256);
        s.shared_access(0, Touch::Write, &lanes(0), 4, at(3));
        s.barrier_released();
        s.shared_access(1, Touch::Read, &lanes(0), 4, at(4));
        s.shared_access(1, Touch::Write, &lanes(128), 4, at(5));
        assert_eq!(s.report().findings, []);
    }

    #[test]
    fn a_write_over_bytes_two_other_warps_read_is_a_write_after_read() {
        let mut s = Sanitizer::new(SanitizerConfig::ALL);
        s.begin_block([0, 0, 0], 256);
        s.shared_access(0, Touch::Write, &lanes(0), 4, at(2));
        s.barrier_released();
        s.shared_access(2, Touch::Read, &lanes(0), 4, at(4));
        s.shared_access(1, Touch::Read, &lanes(0), 4, at(4));
        s.shared_access(2, Touch::Write, &lanes(0), 4, at(6));
        let found = &s.report().findings;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].hazard, Hazard::WriteAfterRead);
        assert_eq!(found[0].address, Some(0));
    }

    #[test]
    fn a_read_of_the_last_word_nobody_wrote_is_uninitialized() {
        let mut s = Sanitizer::new(SanitizerConfig::ALL);
        s.begin_block([0, 0, 0], 256);
        // Lanes 0 to 30 write words 0 to 30; lane 31 reads word 31, bytes 124 to 127.
        let mut written = lanes(0);
        written[31] = None;
        s.shared_access(0, Touch::Write, &written, 4, at(2));
        s.shared_access(0, Touch::Read, &lanes(0), 4, at(3));
        let found = &s.report().findings;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].hazard, Hazard::UninitializedShared);
        assert_eq!(found[0].lanes, 1 << 31);
        assert_eq!(found[0].address, Some(124));
    }

    #[test]
    fn a_full_mask_in_a_branch_half_the_warp_takes_names_the_other_half() {
        assert_eq!(
            warp_mask_lanes(u32::MAX, 0x5555_5555, u32::MAX),
            0xaaaa_aaaa
        );
        // The lanes past the end of a block of 48 threads do not exist.
        assert_eq!(warp_mask_lanes(u32::MAX, 0xffff, 0xffff), 0);
    }
}
