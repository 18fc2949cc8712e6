//! Block profiles summed into the launch's (`ProfileBuilder`): each sampled block's footprints,
//! lines, passes and rows scaled by the blocks it stands for, footprints capped at the buffers'
//! sizes, the slowest warp's round trips, and the hottest address and L2 slice of the global
//! atomics.

use super::block::BlockProfiler;
use super::{BufferFootprint, Footprint, MemoryProfile};
use crate::coalescing::SECTOR_BYTES;
use crate::device::Device;
use crate::hashing::IntegerHashMap as HashMap;

/// The same over the grid: scaled by the blocks the sampled ones stand for, and as the largest
/// one sampled block made.
#[derive(Clone, Copy, Debug, Default)]
struct GridAtomicUpdates {
    scaled_requests: f64,
    scaled_lanes: f64,
    requests: f64,
    lanes: f64,
    /// Sampled blocks that updated the address.
    sampled: u32,
}

/// The updates of the busiest L2 slice over the grid's `grid_blocks` blocks, from each slice's
/// updates by each sampled block.
///
/// A slice's updates over the grid are estimated as the sampled blocks' mean times the grid's
/// blocks. Taking the largest of these estimates would overstate the busiest slice when the
/// updates are spread at random (a histogram of thousands of bins): each estimate rests on a few
/// sampled blocks, and the largest of many noisy estimates lies above every true value. Each is
/// lowered by its sampling error (the spread of the sampled blocks' counts over the root of their
/// number) times the expected largest of as many standard normal deviates, about sqrt(2 ln n); a
/// slice every sampled block updates alike (a sum's one word) has no error and keeps its
/// estimate.
fn busiest_slice(slices: &HashMap<u64, Vec<f64>>, grid_blocks: f64) -> f64 {
    if slices.is_empty() {
        return 0.0;
    }
    // The expected largest of n standard normal deviates is below sqrt(2 ln n).
    let z = (2.0 * (slices.len().max(2) as f64).ln()).sqrt();
    let estimate = |own: &[f64]| {
        let k = own.len().max(1) as f64;
        let average = own.iter().sum::<f64>() / k;
        let error = if own.len() >= 2 {
            let variance = own.iter().map(|x| (x - average).powi(2)).sum::<f64>() / (k - 1.0);
            variance.sqrt() / k.sqrt()
        } else {
            0.0
        };
        (average - z * error).max(0.0) * grid_blocks
    };
    slices.values().map(|own| estimate(own)).fold(0.0, f64::max)
}

/// Sums block profiles into a launch profile.
#[derive(Debug, Default)]
pub struct ProfileBuilder {
    profile: MemoryProfile,
    sizes: Vec<u64>,
    /// Global atomic address -> its updates over the grid.
    atomics: HashMap<u64, GridAtomicUpdates>,
    /// Slice granule -> the updates each sampled block made there: (the block's index among the
    /// sampled atomic blocks, its updates, the grid blocks it stands for).
    slice_granules: HashMap<u64, Vec<(u32, u64, f64)>>,
    /// Sampled blocks that made global atomics.
    atomic_blocks: u32,
    /// The grid blocks each of those stands for.
    atomic_block_times: Vec<f64>,
    /// The L2's slices (`DeviceTiming`).
    l2_slices: u64,
    missing_round_trips: f64,
    hitting_round_trips: f64,
}

impl ProfileBuilder {
    /// A builder for a launch on `device` whose global objects are `layout`.
    pub fn new(device: &Device, layout: &[(String, u64, u64)]) -> ProfileBuilder {
        ProfileBuilder {
            profile: MemoryProfile {
                buffers: layout
                    .iter()
                    .map(|(name, _, size)| BufferFootprint {
                        name: name.clone(),
                        size_bytes: *size,
                        read: Footprint::default(),
                        written: Footprint::default(),
                        partial_sectors: 0.0,
                    })
                    .collect(),
                ..MemoryProfile::default()
            },
            sizes: layout.iter().map(|(_, _, size)| *size).collect(),
            atomics: HashMap::default(),
            slice_granules: HashMap::default(),
            atomic_blocks: 0,
            atomic_block_times: Vec::new(),
            l2_slices: u64::from(device.timing.l2_slices.max(1)),
            missing_round_trips: 0.0,
            hitting_round_trips: 0.0,
        }
    }

    /// Adds `block` as standing for `times` blocks of the grid, and resets it for the next block.
    pub(crate) fn add_block(&mut self, block: &mut BlockProfiler, times: f64) {
        let p = &mut self.profile;
        let (mut fill_sectors, mut fill_lines) = (0u64, 0u64);
        for (i, buffer) in p.buffers.iter_mut().enumerate() {
            if let Some(reads) = block.reads.get(i) {
                let (read, sectors, lines) = reads.footprint_and_fills();
                buffer.read.add_scaled(&read, times);
                fill_sectors += sectors;
                fill_lines += lines;
            }
            if let Some(writes) = block.writes.get(i) {
                let masks = writes.iter().map(|(&sector, &mask)| (sector, mask));
                buffer.written.add_scaled(&Footprint::of(masks), times);
                let reads = block.reads.get(i);
                let partial = writes
                    .iter()
                    .filter(|&(sector, &mask)| {
                        mask != u32::MAX && reads.is_none_or(|r| !r.contains(*sector))
                    })
                    .count();
                buffer.partial_sectors += partial as f64 * times;
            }
        }
        // Buffers hold whole lines (they start 256-byte aligned), so the lines each buffer
        // loaded are distinct from every other buffer's.
        p.l1_fill_sectors += fill_sectors as f64 * times;
        p.l1_fill_lines += fill_lines as f64 * times;
        p.global_ld_lines += block.ld_lines as f64 * times;
        p.global_st_lines += block.st_lines as f64 * times;
        p.global_ld_wavefronts += block.ld_wavefronts as f64 * times;
        p.global_partial_st_lines += block.partial_st_lines as f64 * times;
        p.global_atomic_lines += block.atomic_lines as f64 * times;
        p.global_transactions += block.transactions as f64 * times;
        let row_bytes = block
            .device
            .timing
            .dram_rows
            .map_or(1, |rows| u64::from(rows.row_bytes));
        p.dram_row_activations += block.rows.activations(row_bytes) * times;
        p.local_sectors += block.local_sectors as f64 * times;
        p.shared_atomic_passes += block.shared_atomic_passes as f64 * times;
        p.blocks += times;
        for warp in &mut block.warps {
            warp.close();
        }
        // The slowest warp: the most round trips that miss, then the most that hit.
        let (missing, hitting) = block
            .warps
            .iter()
            .map(|w| (w.missing_round_trips, w.hitting_round_trips))
            .max()
            .unwrap_or((0, 0));
        self.missing_round_trips += f64::from(missing) * times;
        self.hitting_round_trips += f64::from(hitting) * times;
        for (&address, block_updates) in &block.atomics {
            let entry = self.atomics.entry(address).or_default();
            entry.scaled_requests += block_updates.requests as f64 * times;
            entry.scaled_lanes += block_updates.lanes as f64 * times;
            entry.requests = entry.requests.max(block_updates.requests as f64);
            entry.lanes = entry.lanes.max(block_updates.lanes as f64);
            entry.sampled += 1;
        }
        for (&granule, &updates) in &block.slice_granules {
            self.slice_granules.entry(granule).or_default().push((
                self.atomic_blocks,
                updates,
                times,
            ));
        }
        if !block.slice_granules.is_empty() {
            self.atomic_blocks += 1;
            self.atomic_block_times.push(times);
        }
        block.reset();
    }

    /// The launch profile: footprints capped at the buffers' sizes, and the hottest address. An
    /// address that several sampled blocks update is taken to be updated by every block they
    /// stand for (`result` of a sum); one that a single sampled block updates, by that block only
    /// (each block of its class then has an address of its own).
    pub fn finish(mut self) -> MemoryProfile {
        for (buffer, &size) in self.profile.buffers.iter_mut().zip(&self.sizes) {
            buffer.read = buffer.read.capped(size);
            buffer.written = buffer.written.capped(size);
            let unfilled = buffer.written.sectors - buffer.written.bytes / SECTOR_BYTES as f64;
            buffer.partial_sectors = buffer.partial_sectors.min(unfilled).max(0.0);
        }
        for a in self.atomics.values() {
            let (r, l) = if a.sampled >= 2 {
                (a.scaled_requests, a.scaled_lanes)
            } else {
                (a.requests, a.lanes)
            };
            self.profile.hottest_address_requests = self.profile.hottest_address_requests.max(r);
            self.profile.hottest_address_lanes = self.profile.hottest_address_lanes.max(l);
        }
        // A granule every sampled block updates is one the grid's blocks share (a sum's
        // `result`, a histogram's bins): each block of the grid updates it as the sampled ones
        // do on average. The others are the blocks' own (a per-block output, a block's range of
        // bins), and the blocks not simulated have theirs elsewhere, spread evenly over the
        // slices that the granules between the sampled blocks' lowest and highest cover (all of
        // them for a per-block output; 32 for `p_atom_seq`'s 4,096 bins, which every 16th block
        // updates again).
        let blocks = self.atomic_blocks as usize;
        let grid_blocks: f64 = self.atomic_block_times.iter().sum();
        // Per slice: each sampled block's updates of shared granules.
        let mut slices: HashMap<u64, Vec<f64>> = HashMap::default();
        let mut spread_updates = 0.0;
        let mut spread_granules = (u64::MAX, 0u64);
        for (&granule, updates) in &self.slice_granules {
            if updates.len() >= blocks {
                let slice = slices
                    .entry(granule % self.l2_slices)
                    .or_insert_with(|| vec![0.0; blocks]);
                for &(block, count, _) in updates {
                    if let Some(own) = slice.get_mut(block as usize) {
                        *own += count as f64;
                    }
                }
            } else {
                spread_updates += updates.iter().map(|&(_, c, t)| c as f64 * t).sum::<f64>();
                spread_granules = (
                    spread_granules.0.min(granule),
                    spread_granules.1.max(granule),
                );
            }
        }
        let spread_slices = if spread_granules.0 <= spread_granules.1 {
            (spread_granules.1 - spread_granules.0 + 1).min(self.l2_slices)
        } else {
            self.l2_slices
        };
        // However the estimates fall, the busiest slice takes at least an even share of all the
        // launch's updates.
        let all_updates: f64 = self
            .slice_granules
            .values()
            .flatten()
            .map(|&(_, count, times)| count as f64 * times)
            .sum();
        let even = all_updates / self.l2_slices as f64;
        self.profile.hottest_slice_updates =
            (busiest_slice(&slices, grid_blocks) + spread_updates / spread_slices as f64).max(even);
        if self.profile.blocks > 0.0 {
            self.profile.missing_round_trips_per_block =
                self.missing_round_trips / self.profile.blocks;
            self.profile.hitting_round_trips_per_block =
                self.hitting_round_trips / self.profile.blocks;
        }
        self.profile
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_every_sampled_block_updates_alike_keeps_its_estimate_and_a_noisy_one_is_lowered() {
        // One word every block updates 256 times: no sampling error, 16,384 blocks x 256.
        let sum: HashMap<u64, Vec<f64>> = [(0, vec![256.0, 256.0, 256.0])].into_iter().collect();
        assert_eq!(busiest_slice(&sum, 16_384.0), 4_194_304.0);
        // Random bins: 64 slices whose three sampled counts scatter around 4; the largest
        // estimate (from counts 9, 8, 7) is lowered by its error, sqrt(2 ln 64) x 1 x 16,384.
        let mut random: HashMap<u64, Vec<f64>> =
            (1..64).map(|slice| (slice, vec![4.0, 4.0, 4.0])).collect();
        random.insert(0, vec![9.0, 8.0, 7.0]);
        let z = (2.0 * 64f64.ln()).sqrt();
        let expected = (8.0 - z * (1.0 / 3f64.sqrt())) * 16_384.0;
        assert!((busiest_slice(&random, 16_384.0) - expected).abs() < 1e-6);
    }
}
