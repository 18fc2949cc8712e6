//! Shared-memory banks: how one warp-level access is served in wavefronts.
//!
//! The model, with its sources:
//!
//! - **Words and banks** (seed 001, "Banked Memory Layout"; CUDA C Programming Guide 3.2, G.3.3 and
//!   G.4.3): shared memory is cut into 32-bit words, and successive words go to successive banks,
//!   so `bank = word % n_banks`. A lane with an 8- or 16-byte access touches 2 or 4 consecutive
//!   words; a 1- or 2-byte access touches the one word that contains it. The word size is the
//!   preset's `bank_width_bytes` (4 on every preset).
//! - **Phases**: the lanes that shared memory serves together. On cc 1.x (`SharedPhase::HalfWarp`)
//!   each half-warp is a request of its own (Programming Guide 3.2, G.3.3: "there can be no bank
//!   conflict between a thread belonging to the first half of a warp and a thread belonging to the
//!   second half"). On cc >= 2.0 (`SharedPhase::FullWarp`) accesses of 4 bytes or less are served
//!   for the whole warp at once, and 8- and 16-byte accesses in half-warp phases (lanes 0-15, then
//!   16-31). The half-warp phases for wide accesses are what the H100 measurements in
//!   `tests/reference/h100.json` show: `mm_tiled` with TILE=32 reads `sa[ty][k..k+3]` as one
//!   128-bit load that every lane of the warp reads from the same 16 bytes, and it costs two
//!   wavefronts, not one.
//! - **cc >= 2.0 delivery** (`SharedWordDelivery::Multicast`, Programming Guide 3.2, G.4.3.1, and
//!   seed 001, "Multicast Cases"): a word read by several lanes is delivered to all of them at
//!   once, so a phase takes as many wavefronts as the busiest bank has *distinct* words. Its ideal
//!   is `ceil(distinct words / n_banks)`, the wavefronts the same bytes would need if they were
//!   spread evenly over the banks.
//! - **cc 1.x delivery** (`SharedWordDelivery::Broadcast`, Programming Guide 2.x/3.x, G.3.3.1): a
//!   half-warp's request is served in steps. Each step picks one broadcast word and serves every
//!   remaining address within it, plus one address for each other bank that still has remaining
//!   addresses. The guide leaves open which word and which addresses are picked; this model picks
//!   the word of the lowest-numbered remaining lane and, in every other bank, the lowest-numbered
//!   remaining lane. So two lanes that read the same word which is not the broadcast word still
//!   cost two steps: cc 1.x has broadcast but no multicast. A wide (8- or 16-byte) access is
//!   treated as one address per 32-bit word of each lane.
//!
//! One step or wavefront is one shared-memory cycle, the unit Nsight Compute counts in
//! `l1tex__data_pipe_lsu_wavefronts_mem_shared`; the difference to the ideal is its "bank
//! conflicts". The n of the lectures' "n-way bank conflict" is the worst phase's wavefronts over
//! its ideal, rounded up.

use crate::access::WarpAccess;
use crate::device::{Device, SharedPhase, SharedWordDelivery};
use serde::Serialize;

/// One 32-bit word that one lane touches: its bank and the wavefront that serves it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LaneBank {
    pub lane: u32,
    /// Byte address of the 32-bit word.
    pub address: u64,
    /// Word index in shared memory (`address / 4`).
    pub word: u64,
    pub bank: u32,
    /// Which phase of the warp (half-warp on cc 1.x and for 8/16-byte accesses) serves it.
    pub phase: u32,
    /// The wavefront (0-based, counted over the whole instruction) in which it is served.
    pub wavefront: u32,
}

/// Whether the lanes of the access share words. This describes the access, not the hardware:
/// whether sharing is free shows in the wavefronts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum WordSharing {
    /// Every lane touches a different word.
    None,
    /// All active lanes of a phase (more than one) read one word.
    Broadcast,
    /// Some word is read by several lanes, but no phase is one single word. cc >= 2.0 delivers
    /// each such word once (multicast); cc 1.x broadcasts only one word per step, so the other
    /// shared words cost steps of their own.
    Multicast,
}

/// The result of analysing one warp-level shared-memory access.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BankReport {
    pub n_banks: u32,
    /// Wavefronts (shared-memory cycles) the access takes, as Nsight Compute counts them.
    pub wavefronts: u32,
    /// Wavefronts the same bytes would take without conflicts.
    pub ideal_wavefronts: u32,
    /// `wavefronts - ideal_wavefronts`, Nsight Compute's bank conflicts.
    pub bank_conflicts: u32,
    /// The n of "n-way bank conflict": 1 when there is no conflict, 0 when no lane is active.
    pub conflict_degree: u32,
    pub sharing: WordSharing,
    /// One entry per (active lane, 32-bit word), in lane order.
    pub lanes: Vec<LaneBank>,
}

impl BankReport {
    /// "no conflict" or "n-way", as the lectures say it.
    pub fn degree_label(&self) -> String {
        if self.conflict_degree <= 1 {
            "no conflict".to_string()
        } else {
            format!("{}-way", self.conflict_degree)
        }
    }
}

/// One 32-bit word that one lane of a phase touches.
#[derive(Clone, Copy, Debug)]
struct WordAccess {
    lane: u32,
    word: u64,
    bank: u32,
}

/// How a phase was served: the wavefront (counted from the phase's first) of each word access.
#[derive(Debug)]
struct PhaseService {
    wavefront_of: Vec<u32>,
    wavefronts: u32,
}

/// Serves one warp-level shared-memory access on `device` and counts its wavefronts.
///
/// Inactive lanes are ignored; an access with no active lane takes 0 wavefronts. Degenerate
/// device numbers (0 banks, a bank width of 0) are treated as 1 instead of panicking.
pub fn analyze(access: &WarpAccess, device: &Device) -> BankReport {
    let n_banks = device.n_banks.max(1);
    let word_bytes = u64::from(device.bank_width_bytes.max(1));
    let words_per_lane = (u64::from(access.width.bytes()) / word_bytes).max(1);
    let phase_lanes = phase_lanes(access, device);

    let mut report = BankReport {
        n_banks,
        wavefronts: 0,
        ideal_wavefronts: 0,
        bank_conflicts: 0,
        conflict_degree: 0,
        sharing: WordSharing::None,
        lanes: Vec::new(),
    };
    let mut any_broadcast = false;
    let mut any_shared_word = false;

    for (phase, phase_slots) in access.lanes.chunks(phase_lanes).enumerate() {
        let first_lane = phase * phase_lanes;
        let words: Vec<WordAccess> = phase_slots
            .iter()
            .enumerate()
            .filter_map(|(offset, slot)| slot.map(|address| (first_lane + offset, address)))
            .flat_map(|(lane, address)| {
                let first_word = address / word_bytes;
                (0..words_per_lane).map(move |i| {
                    let word = first_word.saturating_add(i);
                    WordAccess {
                        lane: lane as u32,
                        word,
                        bank: (word % u64::from(n_banks)) as u32,
                    }
                })
            })
            .collect();
        if words.is_empty() {
            // A phase with no active lane is never issued.
            continue;
        }

        let service = match device.shared_word_delivery {
            SharedWordDelivery::Multicast => serve_with_multicast(&words),
            SharedWordDelivery::Broadcast => serve_with_broadcast(&words),
        };
        let distinct = distinct_words(&words);
        let ideal = (distinct.len() as u32).div_ceil(n_banks).max(1);

        let active_lanes = count_distinct(words.iter().map(|w| w.lane));
        if distinct.len() == 1 && active_lanes > 1 {
            any_broadcast = true;
        }
        if distinct.iter().any(|&word| {
            count_distinct(words.iter().filter(|w| w.word == word).map(|w| w.lane)) > 1
        }) {
            any_shared_word = true;
        }

        for (word_access, offset) in words.iter().zip(&service.wavefront_of) {
            report.lanes.push(LaneBank {
                lane: word_access.lane,
                address: word_access.word.saturating_mul(word_bytes),
                word: word_access.word,
                bank: word_access.bank,
                phase: phase as u32,
                wavefront: report.wavefronts + offset,
            });
        }
        report.wavefronts += service.wavefronts;
        report.ideal_wavefronts += ideal;
        report.conflict_degree = report
            .conflict_degree
            .max(service.wavefronts.div_ceil(ideal));
    }

    report.bank_conflicts = report.wavefronts.saturating_sub(report.ideal_wavefronts);
    report.sharing = if any_broadcast {
        WordSharing::Broadcast
    } else if any_shared_word {
        WordSharing::Multicast
    } else {
        WordSharing::None
    };
    report
}

/// The totals of one warp-level shared-memory access: what `analyze` reports in `wavefronts`,
/// `ideal_wavefronts` and `bank_conflicts`, without the per-lane detail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WavefrontCount {
    pub wavefronts: u32,
    pub ideal_wavefronts: u32,
    /// `wavefronts - ideal_wavefronts`, Nsight Compute's bank conflicts.
    pub bank_conflicts: u32,
}

/// The most 32-bit word accesses one phase may have for `wavefronts` to count it with bit masks
/// of one `u64`. Every preset stays within it: a full-warp phase of 4-byte banks has at most 32
/// words, a half-warp phase of 16-byte accesses 64.
const FAST_PHASE_WORDS: usize = 64;

/// The most banks the fast path of `wavefronts` handles, one bit of a `u64` per bank.
const FAST_BANKS: u32 = 64;

/// Counts the wavefronts of one warp-level shared-memory access on `device`, exactly as `analyze`
/// does, without allocating.
///
/// `Counters::record` calls this for every shared load and store of a simulation, so it must be
/// cheap: the per-lane report of `analyze` is for the page's bank map only. Devices with a
/// power-of-two number of banks up to 64 and a power-of-two bank width (every preset) take a path
/// built on bit masks; anything else is handed to `analyze`.
pub fn wavefronts(access: &WarpAccess, device: &Device) -> WavefrontCount {
    let n_banks = device.n_banks.max(1);
    let word_bytes = device.bank_width_bytes.max(1);
    let words_per_lane = (access.width.bytes() / word_bytes).max(1) as usize;
    let phase_lanes = phase_lanes(access, device);
    if !n_banks.is_power_of_two()
        || n_banks > FAST_BANKS
        || !word_bytes.is_power_of_two()
        || phase_lanes * words_per_lane > FAST_PHASE_WORDS
    {
        let report = analyze(access, device);
        return WavefrontCount {
            wavefronts: report.wavefronts,
            ideal_wavefronts: report.ideal_wavefronts,
            bank_conflicts: report.bank_conflicts,
        };
    }
    let shape = PhaseShape {
        word_shift: word_bytes.trailing_zeros(),
        words_per_lane: words_per_lane as u64,
        n_banks,
        bank_shift: n_banks.trailing_zeros(),
    };
    let mut count = WavefrontCount::default();
    let mut first_lane = 0;
    while first_lane < access.lanes.len() {
        let end = (first_lane + phase_lanes).min(access.lanes.len());
        let phase = &access.lanes[first_lane..end];
        first_lane = end;
        // A phase with no active lane is never issued.
        if phase.iter().all(Option::is_none) {
            continue;
        }
        let (wavefronts, distinct) = match device.shared_word_delivery {
            SharedWordDelivery::Multicast => shape.multicast(phase),
            SharedWordDelivery::Broadcast => shape.broadcast(phase),
        };
        count.wavefronts += wavefronts;
        count.ideal_wavefronts += distinct.div_ceil(n_banks).max(1);
    }
    count.bank_conflicts = count.wavefronts.saturating_sub(count.ideal_wavefronts);
    count
}

/// What `wavefronts` needs to know of the device and access to serve one phase.
#[derive(Clone, Copy, Debug)]
struct PhaseShape {
    /// log2 of the bank width: a byte address shifted right by it is a word index.
    word_shift: u32,
    words_per_lane: u64,
    n_banks: u32,
    /// log2 of `n_banks`: a word shifted right by it is its row, the words of one bank in a row
    /// being `n_banks` apart.
    bank_shift: u32,
}

impl PhaseShape {
    fn bank(self, word: u64) -> usize {
        // `n_banks` is at most `FAST_BANKS`, so the second mask changes nothing; it lets the
        // compiler drop the bounds checks of the per-bank arrays.
        (word & u64::from(self.n_banks - 1)) as usize & (FAST_BANKS as usize - 1)
    }

    /// The words of a phase in `analyze`'s order (lane by lane, each lane's words ascending) in
    /// a fixed array, so that the passes over them are plain loops over a slice.
    fn collect(self, phase: &[Option<u64>]) -> PhaseWords {
        let mut collected = PhaseWords {
            words: [0; FAST_PHASE_WORDS],
            n: 0,
            same_address: true,
        };
        let lead = phase.iter().flatten().next().copied();
        // `wavefronts` has checked that the words fit; the masked index only spares the
        // compiler's bounds checks and can never wrap.
        let slot = FAST_PHASE_WORDS - 1;
        if self.words_per_lane == 1 {
            for &address in phase.iter().flatten() {
                collected.words[collected.n & slot] = address >> self.word_shift;
                collected.same_address &= Some(address) == lead;
                collected.n += 1;
            }
        } else {
            for &address in phase.iter().flatten() {
                let first = address >> self.word_shift;
                for i in 0..self.words_per_lane {
                    collected.words[collected.n & slot] = first.saturating_add(i);
                    collected.n += 1;
                }
                collected.same_address &= Some(address) == lead;
            }
        }
        collected.n = collected.n.min(FAST_PHASE_WORDS);
        collected
    }

    /// cc >= 2.0: (wavefronts, distinct words) of one phase. A phase takes as many wavefronts as
    /// its busiest bank has distinct words, so the result depends only on the set of words.
    ///
    /// A phase whose second half repeats its first (the rows of a 2D block narrower than the
    /// warp reading the same row) has the set of its first half. A first pass over the lanes
    /// then catches the other common shapes: every lane at one address (a broadcast: the set is
    /// that of one lane), and one word per lane with every word in a bank of its own (no
    /// conflict). Otherwise the words
    /// of one bank differ in their row (the word over `n_banks`); when the rows of the phase span
    /// fewer than 64, a `u64` per bank holds the rows it has seen as bits, and each word is
    /// counted in one pass. Failing that, the words are compared pairwise.
    fn multicast(self, phase: &[Option<u64>]) -> (u32, u32) {
        if phase.len() >= 2 && phase.len().is_multiple_of(2) {
            let (first_half, second_half) = phase.split_at(phase.len() / 2);
            if first_half == second_half {
                return self.multicast(first_half);
            }
        }
        let Some(&lead) = phase.iter().flatten().next() else {
            return (0, 0);
        };
        let (mut banks, mut n_lanes, mut same_address) = (0u64, 0u32, true);
        for &address in phase.iter().flatten() {
            banks |= 1 << self.bank(address >> self.word_shift);
            same_address &= address == lead;
            n_lanes += 1;
        }
        let last = self.words_per_lane - 1;
        if same_address
            && self.words_per_lane <= u64::from(self.n_banks)
            && (lead >> self.word_shift).checked_add(last).is_some()
        {
            // One address: its consecutive words lie in banks of their own.
            return (1, self.words_per_lane as u32);
        }
        if last == 0 && banks.count_ones() == n_lanes {
            return (1, n_lanes);
        }
        let collected = self.collect(phase);
        let mut words = &collected.words[..collected.n];
        if collected.same_address {
            words = &words[..words.len().min(self.words_per_lane as usize)];
        }
        let (mut low, mut high, mut banks) = (u64::MAX, 0u64, 0u64);
        for &word in words {
            low = low.min(word);
            high = high.max(word);
            banks |= 1 << self.bank(word);
        }
        let n_words = words.len() as u32;
        if banks.count_ones() == n_words {
            return (u32::from(n_words > 0), n_words);
        }
        let low_row = low >> self.bank_shift;
        if (high >> self.bank_shift) - low_row < 64 {
            let mut rows = [0u64; FAST_BANKS as usize];
            // At most `FAST_PHASE_WORDS` (64) words per bank: a `u8` holds the count.
            let mut per_bank = [0u8; FAST_BANKS as usize];
            let (mut busiest, mut distinct) = (0u8, 0u32);
            for &word in words {
                let bank = self.bank(word);
                let bit = 1u64 << (((word >> self.bank_shift) - low_row) & 63);
                if rows[bank] & bit == 0 {
                    rows[bank] |= bit;
                    per_bank[bank] += 1;
                    busiest = busiest.max(per_bank[bank]);
                    distinct += 1;
                }
            }
            return (u32::from(busiest), distinct);
        }
        let mut per_bank = [0u32; FAST_BANKS as usize];
        let mut distinct = 0;
        for (index, &word) in words.iter().enumerate() {
            if !words[..index].contains(&word) {
                per_bank[self.bank(word)] += 1;
                distinct += 1;
            }
        }
        (per_bank.iter().copied().max().unwrap_or(0), distinct)
    }

    /// cc 1.x: (steps, distinct words) of one phase, served as `serve_with_broadcast` serves it,
    /// with the served word accesses and the banks of a step as bit masks.
    fn broadcast(self, phase: &[Option<u64>]) -> (u32, u32) {
        let collected = self.collect(phase);
        let words = &collected.words[..collected.n];
        let mut remaining = u64::MAX.checked_shr(64 - words.len() as u32).unwrap_or(0);
        let mut steps = 0;
        while remaining != 0 {
            let broadcast = words[remaining.trailing_zeros() as usize];
            let mut banks_served = 1u64 << self.bank(broadcast);
            let mut candidates = remaining;
            while candidates != 0 {
                let index = candidates.trailing_zeros() as usize;
                candidates &= candidates - 1;
                let word = words[index];
                let bank = 1u64 << self.bank(word);
                if word == broadcast {
                    remaining &= !(1 << index);
                } else if banks_served & bank == 0 {
                    banks_served |= bank;
                    remaining &= !(1 << index);
                }
            }
            steps += 1;
        }
        let distinct = words
            .iter()
            .enumerate()
            .filter(|&(index, word)| !words[..index].contains(word))
            .count() as u32;
        (steps, distinct)
    }
}

/// The words of one phase, collected by `PhaseShape::collect`.
#[derive(Debug)]
struct PhaseWords {
    words: [u64; FAST_PHASE_WORDS],
    n: usize,
    /// Every active lane of the phase has the same address.
    same_address: bool,
}

/// Lanes per phase: half-warps on cc 1.x, and on cc >= 2.0 for accesses wider than a bank word.
fn phase_lanes(access: &WarpAccess, device: &Device) -> usize {
    let warp = device.warp_size.max(1) as usize;
    let half_warp = (warp / 2).max(1);
    let lanes = match device.shared_phase {
        SharedPhase::HalfWarp => half_warp,
        SharedPhase::FullWarp if access.width.bytes() > device.bank_width_bytes.max(1) => half_warp,
        SharedPhase::FullWarp => warp,
    };
    lanes.min(access.lanes.len()).max(1)
}

/// cc >= 2.0: each bank delivers its distinct words one per wavefront, in the order of the
/// lowest lane that reads each; every lane reading a word gets it in that word's wavefront.
fn serve_with_multicast(words: &[WordAccess]) -> PhaseService {
    // For each bank in use, its distinct words in order of first appearance.
    let mut banks: Vec<(u32, Vec<u64>)> = Vec::new();
    let wavefront_of = words
        .iter()
        .map(|access| {
            let bank_index = match banks.iter().position(|(bank, _)| *bank == access.bank) {
                Some(index) => index,
                None => {
                    banks.push((access.bank, Vec::new()));
                    banks.len() - 1
                }
            };
            let bank_words = &mut banks[bank_index].1;
            match bank_words.iter().position(|&word| word == access.word) {
                Some(rank) => rank as u32,
                None => {
                    bank_words.push(access.word);
                    (bank_words.len() - 1) as u32
                }
            }
        })
        .collect();
    let wavefronts = banks
        .iter()
        .map(|(_, bank_words)| bank_words.len() as u32)
        .max()
        .unwrap_or(0);
    PhaseService {
        wavefront_of,
        wavefronts,
    }
}

/// cc 1.x, Programming Guide G.3.3.1: in each step, the word of the lowest remaining lane is
/// broadcast to every remaining address within it, and every other bank serves the remaining
/// address of its lowest lane.
fn serve_with_broadcast(words: &[WordAccess]) -> PhaseService {
    let mut wavefront_of: Vec<Option<u32>> = vec![None; words.len()];
    let mut step = 0;
    while let Some(first) = wavefront_of.iter().position(Option::is_none) {
        let broadcast = words[first];
        let mut banks_served = vec![broadcast.bank];
        for (index, access) in words.iter().enumerate().skip(first) {
            if wavefront_of[index].is_some() {
                continue;
            }
            if access.word == broadcast.word {
                wavefront_of[index] = Some(step);
            } else if !banks_served.contains(&access.bank) {
                banks_served.push(access.bank);
                wavefront_of[index] = Some(step);
            }
        }
        step += 1;
    }
    PhaseService {
        wavefront_of: wavefront_of.into_iter().map(|w| w.unwrap_or(0)).collect(),
        wavefronts: step,
    }
}

/// The distinct words of a phase, in order of first appearance.
fn distinct_words(words: &[WordAccess]) -> Vec<u64> {
    let mut distinct: Vec<u64> = Vec::new();
    for access in words {
        if !distinct.contains(&access.word) {
            distinct.push(access.word);
        }
    }
    distinct
}

fn count_distinct(values: impl Iterator<Item = u32>) -> usize {
    let mut seen: Vec<u32> = Vec::new();
    for value in values {
        if !seen.contains(&value) {
            seen.push(value);
        }
    }
    seen.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::{AccessKind, AccessWidth, Space, WARP_LANES};
    use crate::device::{g80, h100};

    /// The numbers a test expects of a report.
    #[derive(Debug, PartialEq, Eq)]
    struct Expected {
        wavefronts: u32,
        ideal_wavefronts: u32,
        conflict_degree: u32,
    }

    fn expect(wavefronts: u32, ideal_wavefronts: u32, conflict_degree: u32) -> Expected {
        Expected {
            wavefronts,
            ideal_wavefronts,
            conflict_degree,
        }
    }

    /// Analyses `access` on `device`, compares it with `expected`, checks the report's own
    /// invariants, and returns the report for tests that look at single lanes.
    fn check(access: &WarpAccess, device: &Device, expected: Expected) -> BankReport {
        let report = analyze(access, device);
        let got = expect(
            report.wavefronts,
            report.ideal_wavefronts,
            report.conflict_degree,
        );
        assert_eq!(got, expected, "on {}", device.name);
        assert_eq!(
            report.bank_conflicts,
            report.wavefronts - report.ideal_wavefronts
        );
        let served = report.lanes.iter().map(|l| l.wavefront + 1).max();
        assert_eq!(
            served.unwrap_or(0),
            report.wavefronts,
            "every wavefront serves a word"
        );
        for entry in &report.lanes {
            assert_eq!(entry.bank as u64, entry.word % u64::from(report.n_banks));
            assert_eq!(entry.address, entry.word * 4);
        }
        report
    }

    /// A 4-byte load where lane l reads float `word(l)` of a shared array at byte 0.
    fn floats(word: impl Fn(u64) -> u64) -> WarpAccess {
        words_of_width(AccessWidth::FOUR, word)
    }

    /// A load of `width` bytes where lane l starts at 32-bit word `word(l)`.
    fn words_of_width(width: AccessWidth, word: impl Fn(u64) -> u64) -> WarpAccess {
        WarpAccess::from_fn(Space::Shared, AccessKind::Load, width, |lane| {
            Some(word(u64::from(lane)) * 4)
        })
    }

    /// `shared[BaseIndex + stride*tid]` with BaseIndex = 0.
    fn stride(stride: u64) -> WarpAccess {
        floats(|lane| stride * lane)
    }

    // Seed 001, "Bank Addressing Examples": `shared[BaseIndex + tid]`.
    #[test]
    fn consecutive_floats_have_no_conflict() {
        let report = check(&stride(1), &h100(), expect(1, 1, 1));
        assert_eq!(report.degree_label(), "no conflict");
        assert_eq!(report.sharing, WordSharing::None);
        check(&stride(1), &g80(), expect(2, 2, 1));
    }

    // Seed 001: `shared[BaseIndex + 2*tid]` is the "2-way Bank Conflicts" slide.
    #[test]
    fn stride_two_is_two_way_conflict() {
        let report = check(&stride(2), &h100(), expect(2, 1, 2));
        assert_eq!(report.degree_label(), "2-way");
        assert_eq!(report.bank_conflicts, 1);
        // On G80 each half-warp reads 16 even words from 8 banks: two each.
        check(&stride(2), &g80(), expect(4, 2, 2));
    }

    // Seed 001, "16-way Bank Conflicts, even or odd case": stride 16 puts the warp in banks 0
    // and 16 on H100, and a half-warp all in bank 0 on G80.
    #[test]
    fn stride_sixteen_is_sixteen_way_conflict() {
        check(&stride(16), &h100(), expect(16, 1, 16));
        check(&stride(16), &g80(), expect(32, 2, 16));
    }

    // Seed 001, "Serialization Cases": a[0], a[32], a[64], ... all live in bank 0.
    #[test]
    fn stride_thirty_two_is_thirty_two_way_conflict_on_h100() {
        let report = check(&stride(32), &h100(), expect(32, 1, 32));
        assert!(report.lanes.iter().all(|l| l.bank == 0));
        let wavefronts: Vec<u32> = report.lanes.iter().map(|l| l.wavefront).collect();
        assert_eq!(wavefronts, (0..32).collect::<Vec<u32>>());
    }

    // An odd stride is coprime to any power-of-two bank count.
    #[test]
    fn stride_three_has_no_conflict() {
        check(&stride(3), &h100(), expect(1, 1, 1));
        check(&stride(3), &g80(), expect(2, 2, 1));
    }

    // Seed 001, "Avoiding Bank Conflict": the 32x32 array where thread t processes row t reads a
    // column, s[t][j]; one float of padding per row moves every row to the next bank.
    #[test]
    fn row_per_thread_without_padding_is_thirty_two_way_on_h100_and_sixteen_way_on_g80() {
        let column = floats(|t| t * 32);
        check(&column, &h100(), expect(32, 1, 32));
        check(&column, &g80(), expect(32, 2, 16));
    }

    #[test]
    fn row_per_thread_with_one_float_of_padding_has_no_conflict() {
        let column = floats(|t| t * 33);
        check(&column, &h100(), expect(1, 1, 1));
        check(&column, &g80(), expect(2, 2, 1));
    }

    // Seed 001, "Broadcast Cases": every thread reads a[32]. H100 serves the warp in one
    // wavefront; G80 serves each half-warp separately, one broadcast step each, so the warp
    // takes two steps, which is its ideal: no conflict on either.
    #[test]
    fn broadcast_of_one_word_is_one_wavefront_per_phase() {
        let broadcast = floats(|_| 32);
        let report = check(&broadcast, &h100(), expect(1, 1, 1));
        assert_eq!(report.sharing, WordSharing::Broadcast);
        assert!(report.lanes.iter().all(|l| l.bank == 0 && l.wavefront == 0));
        let report = check(&broadcast, &g80(), expect(2, 2, 1));
        assert_eq!(report.sharing, WordSharing::Broadcast);
    }

    // Seed 001, "Multicast Cases" (cc >= 2.0 only): lanes 2i and 2i+1 read a[i].
    #[test]
    fn multicast_pairs_have_no_conflict_on_h100() {
        let report = check(&floats(|lane| lane / 2), &h100(), expect(1, 1, 1));
        assert_eq!(report.sharing, WordSharing::Multicast);
    }

    // The same pairs on G80, by the G.3.3 algorithm. Half-warp 0 reads words 0..7, each twice.
    // Step 1 broadcasts word 0 (lanes 0 and 1) and serves one address in each of banks 1..7:
    // lanes 2, 4, ..., 14. Lanes 3, 5, ..., 15 remain. Step 2 broadcasts word 1 (lane 3) and
    // serves lanes 5, ..., 15 in banks 2..7. Two steps where one would do (8 words, 16 banks):
    // 2-way. Half-warp 1 (words 8..15) is the same.
    #[test]
    fn multicast_pairs_are_two_way_on_g80_without_multicast() {
        let report = check(&floats(|lane| lane / 2), &g80(), expect(4, 2, 2));
        assert_eq!(report.sharing, WordSharing::Multicast);
        let lanes_in_first_step: Vec<u32> = report
            .lanes
            .iter()
            .filter(|l| l.wavefront == 0)
            .map(|l| l.lane)
            .collect();
        assert_eq!(
            lanes_in_first_step,
            vec![0, 1, 2, 4, 6, 8, 10, 12, 14],
            "word 0 is broadcast, the other banks serve their lowest lane"
        );
    }

    /// The tiled matmul's warp: tx = lane % TILE, ty = lane / TILE (one row when TILE = 32).
    fn tile_lane(lane: u64, tile: u64) -> (u64, u64) {
        (lane % tile, lane / tile)
    }

    // Seed 001, "Bank Conflicts in the Tiled Matrix Multiplication?": s_A[ty][k] with k = 0.
    // TILE = 32: the warp is one row, so all lanes read one word: a broadcast on both devices.
    // TILE = 16: the warp holds rows 0 and 1 and reads two words in banks 0 and 16. The slide
    // calls this 16-way on cc 1.0, but cc 1.x serves each half-warp on its own (Programming
    // Guide G.3.3), and each half-warp is one row reading one word: a broadcast, no conflict.
    #[test]
    fn tiled_matmul_row_reads_of_s_a_have_no_conflict() {
        for tile in [16, 32] {
            let s_a = floats(|lane| tile_lane(lane, tile).1 * tile);
            check(&s_a, &h100(), expect(1, 1, 1));
            check(&s_a, &g80(), expect(2, 2, 1));
        }
    }

    // Seed 001: s_B[k][tx] with k = 0. TILE = 32: 32 consecutive words. TILE = 16: rows 0 and 1
    // of the warp read the same 16 words: multicast on H100. The slide calls this 2-way on
    // cc 1.0, but again each G80 half-warp reads 16 different words in 16 different banks.
    #[test]
    fn tiled_matmul_column_reads_of_s_b_have_no_conflict() {
        for tile in [16, 32] {
            let s_b = floats(|lane| tile_lane(lane, tile).0);
            check(&s_b, &h100(), expect(1, 1, 1));
            check(&s_b, &g80(), expect(2, 2, 1));
        }
        let s_b = floats(|lane| tile_lane(lane, 16).0);
        assert_eq!(analyze(&s_b, &h100()).sharing, WordSharing::Multicast);
    }

    // h100.json, mm_tiled TILE=16 PAD=0: nvcc fuses sa[ty][k..k+3] into one 128-bit load; lanes
    // 0-15 read one 16-byte chunk, lanes 16-31 the next row's. Each half-warp phase is one
    // wavefront.
    #[test]
    fn mm_tiled_128_bit_row_load_takes_two_wavefronts_without_conflict() {
        let sa = words_of_width(AccessWidth::SIXTEEN, |lane| tile_lane(lane, 16).1 * 16);
        let report = check(&sa, &h100(), expect(2, 2, 1));
        assert_eq!(report.bank_conflicts, 0);
        assert_eq!(report.lanes.len(), 4 * WARP_LANES);
        assert!(report.lanes.iter().all(|l| l.wavefront == l.phase));
    }

    // h100.json, mm_tiled TILE=16 PAD=1: the store sa[ty][tx] with a row pitch of 17 words puts
    // word 0 (lane 0) and word 32 (lane 31, ty = 1, tx = 15) in bank 0.
    #[test]
    fn mm_tiled_padded_store_is_two_way_on_h100() {
        let store = WarpAccess {
            kind: AccessKind::Store,
            ..floats(|lane| {
                let (tx, ty) = tile_lane(lane, 16);
                ty * 17 + tx
            })
        };
        let report = check(&store, &h100(), expect(2, 1, 2));
        assert_eq!(report.bank_conflicts, 1);
    }

    // float2 and float4 loads of consecutive elements: 256 and 512 bytes through 128 bytes of
    // banks per wavefront, so 2 and 4 wavefronts, with no conflict.
    #[test]
    fn contiguous_float2_and_float4_loads_have_no_conflict() {
        let float2 = words_of_width(AccessWidth::EIGHT, |lane| 2 * lane);
        check(&float2, &h100(), expect(2, 2, 1));
        let float4 = words_of_width(AccessWidth::SIXTEEN, |lane| 4 * lane);
        let report = check(&float4, &h100(), expect(4, 4, 1));
        assert_eq!(report.lanes.len(), 128);
        // On G80 each half-warp's 32 (float2) or 64 (float4) words fill the 16 banks 2 or 4 times.
        check(&float2, &g80(), expect(4, 4, 1));
        check(&float4, &g80(), expect(8, 8, 1));
    }

    #[test]
    fn inactive_lanes_are_ignored() {
        // Only even lanes of a stride-32 access are active: 16 words in bank 0.
        let mut access = stride(32);
        for (lane, slot) in access.lanes.iter_mut().enumerate() {
            if lane % 2 == 1 {
                *slot = None;
            }
        }
        let report = check(&access, &h100(), expect(16, 1, 16));
        assert!(report.lanes.iter().all(|l| l.lane % 2 == 0));
        // On G80 only half-warp 1 is active: it is phase 1, and its wavefronts count from 0.
        let upper_half =
            WarpAccess::from_fn(Space::Shared, AccessKind::Load, AccessWidth::FOUR, |l| {
                (l >= 16).then_some(u64::from(l) * 4)
            });
        let report = check(&upper_half, &g80(), expect(1, 1, 1));
        assert!(report
            .lanes
            .iter()
            .all(|l| l.phase == 1 && l.wavefront == 0));
    }

    #[test]
    fn all_inactive_access_takes_no_wavefront() {
        let idle =
            WarpAccess::from_fn(Space::Shared, AccessKind::Load, AccessWidth::FOUR, |_| None);
        for device in [h100(), g80()] {
            let report = check(&idle, &device, expect(0, 0, 0));
            assert!(report.lanes.is_empty());
            assert_eq!(report.degree_label(), "no conflict");
            assert_eq!(report.sharing, WordSharing::None);
        }
    }

    #[test]
    fn huge_addresses_and_a_bankless_device_do_not_panic() {
        let far = words_of_width(AccessWidth::SIXTEEN, |_| u64::MAX / 4);
        let report = analyze(&far, &h100());
        assert_eq!(report.wavefronts, 2);
        let bankless = Device {
            n_banks: 0,
            bank_width_bytes: 0,
            warp_size: 0,
            ..h100()
        };
        let report = analyze(&stride(1), &bankless);
        assert_eq!(report.n_banks, 1);
        assert!(report.wavefronts >= 1);
    }

    // Stride 8 on H100: 4 banks (0, 8, 16, 24) with 8 words each.
    #[test]
    fn stride_eight_is_eight_way_on_h100() {
        check(&stride(8), &h100(), expect(8, 1, 8));
    }

    // ---- The fast count against the full analysis. ------------------------------------------

    /// `wavefronts` as `analyze` reports it.
    fn analyzed(access: &WarpAccess, device: &Device) -> WavefrontCount {
        let report = analyze(access, device);
        WavefrontCount {
            wavefronts: report.wavefronts,
            ideal_wavefronts: report.ideal_wavefronts,
            bank_conflicts: report.bank_conflicts,
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

        #[test]
        fn fast_wavefront_count_equals_the_full_analysis(
            access in crate::access::strategies::warp_access(Space::Shared),
            device in crate::access::strategies::device(),
        ) {
            proptest::prop_assert_eq!(wavefronts(&access, &device), analyzed(&access, &device));
        }
    }

    // Every stride from 0 to 2100 words, at every width, on both kinds of delivery: the strides
    // of the lessons' sliders, exhaustively, including the rows-span limit of the fast path.
    #[test]
    fn fast_wavefront_count_equals_the_full_analysis_for_every_stride() {
        for device in [h100(), g80()] {
            for bytes in [1, 2, 4, 8, 16] {
                let width = AccessWidth::new(bytes).expect("a valid width");
                for stride in 0..2100u64 {
                    let access = words_of_width(width, |lane| (lane * stride) % 4096);
                    assert_eq!(
                        wavefronts(&access, &device),
                        analyzed(&access, &device),
                        "stride {stride}, {bytes} bytes, on {}",
                        device.name
                    );
                }
            }
        }
    }

    // ---- Comparison with the H100 measurements (h100.json, `ncu` records). ---------------------

    /// Nsight Compute counts stray conflicts even on conflict-free code (reference README): the
    /// conflict-free stores of mm_tiled T=32 PAD=0 measure 1.11 wavefronts each. So measured
    /// wavefronts per instruction are compared within 12 %, which still tells 1 from 2 wavefronts
    /// and mm_tiled's 1.2 from the 1.0 that whole-warp phases for 128-bit loads would give.
    const MEASURED_TOLERANCE: f64 = 0.12;

    fn measured(launch: &str, counter: &str) -> f64 {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/reference/h100.json"
        ))
        .expect("the H100 reference measurements are readable");
        let json: serde_json::Value = serde_json::from_str(&text).expect("h100.json is JSON");
        let record = json["ncu"]
            .as_array()
            .and_then(|records| records.iter().find(|r| r["launch"] == launch))
            .unwrap_or_else(|| panic!("h100.json has no ncu record {launch}"));
        record[counter]
            .as_f64()
            .unwrap_or_else(|| panic!("{launch} has no counter {counter}"))
    }

    /// Measured wavefronts per shared instruction of `op` ("ld" or "st").
    fn measured_wavefronts_per_instruction(launch: &str, op: &str) -> f64 {
        measured(
            launch,
            &format!("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"),
        ) / measured(launch, &format!("smsp__inst_executed_op_shared_{op}.sum"))
    }

    fn assert_close(model: f64, launch: &str, op: &str) {
        let measured = measured_wavefronts_per_instruction(launch, op);
        assert!(
            (model - measured).abs() <= MEASURED_TOLERANCE * measured,
            "{launch} {op}: model {model} wavefronts per instruction, measured {measured}"
        );
    }

    // kernels/banks.cu, smem_stride: lane l reads s[(l * stride) & 2047].
    #[test]
    fn smem_stride_wavefronts_match_h100_measurements() {
        for s in [1, 2, 4, 8, 32, 33] {
            let access = floats(|lane| (lane * s) & 2047);
            let model = f64::from(analyze(&access, &h100()).wavefronts);
            let launch = format!("smem_stride stride={s} grid=132 block=256 iters=64");
            assert_close(model, &launch, "ld");
        }
    }

    // kernels/matmul.cu, mm_tiled: per TILE steps of k, a warp issues TILE/4 fused 128-bit loads
    // of sa[ty][k..k+3] and TILE 32-bit loads of sb[k][tx] (with PAD=1 the rows lose their
    // 16-byte alignment and sa is loaded 32 bits at a time); the stores are sa[ty][tx] and
    // sb[ty][tx]. The model's wavefronts for one of each, weighted by the counts, must match the
    // measured wavefronts per instruction.
    #[test]
    fn mm_tiled_wavefronts_match_h100_measurements() {
        for (tile, pad) in [(16u64, 0u64), (32, 0), (16, 1)] {
            let pitch = tile + pad;
            let device = h100();
            let wavefronts = |access: &WarpAccess| f64::from(analyze(access, &device).wavefronts);
            let position = |lane: u64| tile_lane(lane, tile);
            let sb_load = wavefronts(&floats(|lane| position(lane).0));
            let (sa_loads, sa_load) = if pad == 0 {
                let fused = words_of_width(AccessWidth::SIXTEEN, |lane| position(lane).1 * pitch);
                (tile / 4, wavefronts(&fused))
            } else {
                (tile, wavefronts(&floats(|lane| position(lane).1 * pitch)))
            };
            let loads =
                (sa_loads as f64 * sa_load + tile as f64 * sb_load) / (sa_loads + tile) as f64;
            let store = wavefronts(&floats(|lane| {
                let (tx, ty) = position(lane);
                ty * pitch + tx
            }));
            let launch = format!("mm_tiled T={tile} PAD={pad} n=1024");
            assert_close(loads, &launch, "ld");
            assert_close(store, &launch, "st");
        }
    }
}
