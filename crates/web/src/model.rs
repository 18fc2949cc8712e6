//! What the views show, derived from the state by pure calls into `memplay-sim`.
//!
//! Nothing here touches the DOM, so the tests run on the host. The launch the occupancy view
//! checks is the tiled matrix multiplication of seed 003 ("Review: Tiled Matrix Multiplication
//! Kernel", seed 001): two `float` tiles of TILE x (TILE + PAD) in shared memory. Its arithmetic
//! intensity follows seed 003/004: the naive kernel does one FMA (2 FLOP) per two 4-byte loads,
//! 0.25 FLOP/B, and a TILE-wide tile reuses every loaded value TILE times.

use memplay_sim::banks::BankReport;
use memplay_sim::kernel::{DiagnosticKind, MemoryObject};
#[cfg(test)]
use memplay_sim::occupancy::Limiter;
use memplay_sim::occupancy::{self, BlockResources, OccupancyError, OccupancyReport};
use memplay_sim::simulate::{SimulationError, SimulationInput, SimulationReport};
use memplay_sim::sorting::sorted_distinct;
use memplay_sim::Device;

pub use memplay_sim::roofline::{tiled_matmul_intensity, NAIVE_MATMUL_INTENSITY};

/// What one block of the lesson's launch asks of an SM, and the occupancy that gives. The shared
/// memory is the kernel's own (its `__shared__` arrays plus the dynamic bytes), as the simulation
/// laid it out; when the kernel does not compile only the dynamic bytes are known.
pub fn lesson_occupancy(
    input: &SimulationInput,
    result: &Result<SimulationReport, SimulationError>,
) -> (BlockResources, Result<OccupancyReport, OccupancyError>) {
    let with_smem = |smem_per_block: u32| launch_resources(input, smem_per_block);
    match result {
        Ok(report) => (
            BlockResources {
                // The registers the kernel's `__launch_bounds__` leave, where they cap the input's.
                regs_per_thread: report.launch_bounds_regs.unwrap_or(input.regs),
                ..with_smem(u32::try_from(report.shared_bytes_per_block).unwrap_or(u32::MAX))
            },
            Ok(report.occupancy),
        ),
        Err(SimulationError::DoesNotLaunch(error)) => (with_smem(input.dyn_smem), Err(*error)),
        Err(
            SimulationError::Kernel(_)
            | SimulationError::BadLaunch(_)
            | SimulationError::StepBudget { .. }
            | SimulationError::Unsupported(_),
        ) => launch_occupancy(input),
    }
}

/// What one block of `input` asks of an SM with `smem_per_block` bytes of shared memory.
fn launch_resources(input: &SimulationInput, smem_per_block: u32) -> BlockResources {
    let threads = input
        .block
        .x
        .saturating_mul(input.block.y)
        .saturating_mul(input.block.z);
    BlockResources {
        threads_per_block: threads,
        regs_per_thread: input.regs,
        smem_per_block,
    }
}

/// The occupancy of a launch whose kernel has not run (before the page's first simulation comes
/// back, or when the kernel does not compile): only the dynamic shared memory is known.
pub fn launch_occupancy(
    input: &SimulationInput,
) -> (BlockResources, Result<OccupancyReport, OccupancyError>) {
    let resources = launch_resources(input, input.dyn_smem);
    (resources, occupancy::calculate(&input.device, resources))
}

// ---------------------------------------------------------------------------------------------
// Bank map

/// One 32-bit word in one cell of the bank map, with the lanes that read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordCell {
    pub word: u64,
    pub lanes: Vec<u32>,
}

impl WordCell {
    /// Several lanes get this word in one go (broadcast or multicast).
    pub fn is_shared(&self) -> bool {
        self.lanes.len() > 1
    }
}

/// One bank in one wavefront.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BankCell {
    pub words: Vec<WordCell>,
    /// The bank needs more than one wavefront in this phase.
    pub conflict: bool,
}

/// The bank map of one phase (the whole warp, or one half-warp).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseGrid {
    pub phase: u32,
    pub lanes: Vec<u32>,
    /// The wavefront (0-based, over the whole instruction) of the first row.
    pub first_wavefront: u32,
    /// `rows[w][bank]`: what bank `bank` delivers in the phase's w-th wavefront.
    pub rows: Vec<Vec<BankCell>>,
    /// Wavefronts each bank is busy in this phase: above 1 is a conflict.
    pub cycles_per_bank: Vec<u32>,
}

/// Rows drawn per phase at most. A warp of 16-byte accesses needs at most 128 wavefronts; the cap
/// only guards the page against a report it could not draw anyway.
const MAX_ROWS: u32 = 256;

/// Lays the report out as the lecture's picture: banks as columns, wavefronts as rows.
pub fn bank_grid(report: &BankReport) -> Vec<PhaseGrid> {
    let n_banks = report.n_banks as usize;
    let phases = sorted_distinct(report.lanes.iter().map(|l| l.phase));
    phases
        .into_iter()
        .map(|phase| {
            let entries: Vec<_> = report
                .lanes
                .iter()
                .filter(|l| l.phase == phase && (l.bank as usize) < n_banks)
                .collect();
            let first = entries.iter().map(|l| l.wavefront).min().unwrap_or(0);
            let entries: Vec<_> = entries
                .into_iter()
                .filter(|l| l.wavefront - first < MAX_ROWS)
                .collect();
            let last = entries.iter().map(|l| l.wavefront).max().unwrap_or(0);
            let mut rows = vec![vec![BankCell::default(); n_banks]; (last - first + 1) as usize];
            // The wavefronts in which each bank is busy, each once.
            let mut busy: Vec<Vec<u32>> = vec![Vec::new(); n_banks];
            for entry in &entries {
                let wavefronts = &mut busy[entry.bank as usize];
                if !wavefronts.contains(&entry.wavefront) {
                    wavefronts.push(entry.wavefront);
                }
                let cell = &mut rows[(entry.wavefront - first) as usize][entry.bank as usize];
                match cell.words.iter_mut().find(|w| w.word == entry.word) {
                    Some(word) => {
                        if !word.lanes.contains(&entry.lane) {
                            word.lanes.push(entry.lane);
                        }
                    }
                    None => cell.words.push(WordCell {
                        word: entry.word,
                        lanes: vec![entry.lane],
                    }),
                }
            }
            let cycles_per_bank: Vec<u32> = busy.iter().map(|set| set.len() as u32).collect();
            for row in &mut rows {
                for (bank, cell) in row.iter_mut().enumerate() {
                    cell.conflict = cycles_per_bank[bank] > 1;
                    for word in &mut cell.words {
                        memplay_sim::sorting::sort_by(&mut word.lanes, Ord::cmp);
                    }
                }
            }
            PhaseGrid {
                phase,
                lanes: sorted_distinct(entries.iter().map(|l| l.lane)),
                first_wavefront: first,
                rows,
                cycles_per_bank,
            }
        })
        .collect()
}

/// Banks drawn side by side in one block of the bank map: the 16 banks of compute capability 1.x.
pub const BANKS_PER_BLOCK: usize = 16;

/// The banks of each block of the bank map, in order. A map of 32 banks is two blocks, banks
/// 0-15 and 16-31, which the page sets side by side where there is room for 32 columns and one
/// above the other where there is not (a phone, a course page's frame), so every bank is on the
/// screen without scrolling sideways.
pub fn bank_blocks(n_banks: usize) -> Vec<std::ops::Range<usize>> {
    (0..n_banks)
        .step_by(BANKS_PER_BLOCK)
        .map(|first| first..(first + BANKS_PER_BLOCK).min(n_banks))
        .collect()
}

/// What the phases are called: a warp split in two is served by half-warps.
pub fn phase_name(n_phases: usize) -> &'static str {
    match n_phases {
        2 => "half-warp",
        4 => "quarter-warp",
        _ => "phase",
    }
}

/// Lanes as the page writes them: runs of three or more as `0–31`, the rest listed.
pub fn lane_list(lanes: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < lanes.len() {
        let mut j = i;
        while j + 1 < lanes.len() && lanes[j + 1] == lanes[j] + 1 {
            j += 1;
        }
        if j - i >= 2 {
            parts.push(format!("{}–{}", lanes[i], lanes[j]));
        } else {
            parts.extend(lanes[i..=j].iter().map(u32::to_string));
        }
        i = j + 1;
    }
    parts.join(", ")
}

fn plural(n: u32, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

/// What one bank does in one phase, for the explanation.
#[derive(Clone, Copy, Debug)]
struct BankLoad {
    phase: u32,
    bank: u32,
    lanes: u32,
    words: u32,
    cycles: u32,
    first_word: u64,
}

/// One plain-English sentence that says why the access takes the wavefronts it takes.
pub fn explain(report: &BankReport) -> String {
    let grids = bank_grid(report);
    let loads: Vec<BankLoad> = grids
        .iter()
        .flat_map(|grid| {
            (0..grid.cycles_per_bank.len()).filter_map(move |bank| {
                // Each word the bank holds for some lane, once, with the lanes that want it.
                let mut words: Vec<(u64, usize)> = Vec::new();
                for word in grid.rows.iter().flat_map(|row| row[bank].words.iter()) {
                    match words.iter_mut().find(|(held, _)| *held == word.word) {
                        Some(entry) => entry.1 = word.lanes.len(),
                        None => words.push((word.word, word.lanes.len())),
                    }
                }
                let first_word = words.iter().map(|&(word, _)| word).min()?;
                Some(BankLoad {
                    phase: grid.phase,
                    bank: bank as u32,
                    lanes: words.iter().map(|&(_, lanes)| lanes).sum::<usize>() as u32,
                    words: words.len() as u32,
                    cycles: grid.cycles_per_bank[bank],
                    first_word,
                })
            })
        })
        .collect();
    let Some(worst) = loads
        .iter()
        .copied()
        .max_by_key(|l| (l.cycles, u32::MAX - l.bank))
    else {
        return "No lane is active, so shared memory has nothing to deliver.".to_string();
    };
    let took = format!(
        "so the access takes {} instead of {}",
        plural(report.wavefronts, "wavefront", "wavefronts"),
        report.ideal_wavefronts
    );
    if worst.cycles > 1 {
        let worst_loads: Vec<&BankLoad> =
            loads.iter().filter(|l| l.cycles == worst.cycles).collect();
        let alike = worst_loads.len();
        let same_bank_each_phase = alike == grids.len()
            && worst_loads.iter().all(|l| l.bank == worst.bank)
            && sorted_distinct(worst_loads.iter().map(|l| l.phase)).len() == alike;
        let serves = if worst.cycles == worst.words {
            "the bank serves them one per cycle".to_string()
        } else {
            format!(
                "the bank serves them in {} cycles, one broadcast word per cycle",
                worst.cycles
            )
        };
        let what = format!(
            "{} read {} different words in bank {}",
            plural(worst.lanes, "lane", "lanes"),
            worst.words,
            worst.bank
        );
        if alike == 1 {
            format!("{what}: {serves}, {took}.")
        } else if same_bank_each_phase {
            format!(
                "In each {}, {what}: {serves}, {took}.",
                phase_name(grids.len())
            )
        } else {
            // The banks are counted in one phase where every phase has as many, as the map
            // draws each phase's banks apart: a 128-bit row read keeps banks 0-3 busy in each
            // half-warp, four banks, not eight.
            let phases = sorted_distinct(worst_loads.iter().map(|l| l.phase));
            let in_phase = |phase: u32| worst_loads.iter().filter(|l| l.phase == phase).count();
            let in_worst_phase = in_phase(worst.phase);
            let in_each = grids.len() > 1
                && phases.len() == grids.len()
                && phases
                    .iter()
                    .all(|&phase| in_phase(phase) == in_worst_phase);
            let (across, busy) = if in_each {
                (
                    format!("In each {}, ", phase_name(grids.len())),
                    in_worst_phase,
                )
            } else if grids.len() > 1 {
                (format!("Over the {}s, ", phase_name(grids.len())), alike)
            } else {
                (String::new(), alike)
            };
            let banks = format!(
                "{across}{busy} banks each hold {} different words that lanes want",
                worst.words
            );
            format!(
                "{banks} (bank {} holds words for {}): each bank serves one word per cycle, \
                 {took}.",
                worst.bank,
                plural(worst.lanes, "lane", "lanes")
            )
        }
    } else {
        let lanes = sorted_distinct(report.lanes.iter().map(|l| l.lane)).len() as u32;
        let per_phase = if grids.len() > 1 {
            format!(", one per {}", phase_name(grids.len()))
        } else {
            String::new()
        };
        let shared = loads.iter().filter(|l| l.lanes > l.words).count();
        let one_word = loads
            .iter()
            .all(|l| l.words == 1 && l.first_word == worst.first_word);
        let serve = if report.wavefronts == 1 {
            "1 wavefront serves".to_string()
        } else {
            format!("{} wavefronts serve", report.wavefronts)
        };
        if shared > 0 && one_word {
            format!(
                "Every lane reads the same word (word {} in bank {}): the bank reads it once and \
                 broadcasts it to all {lanes} lanes, so there is no conflict.",
                worst.first_word, worst.bank
            )
        } else if shared > 0 && loads.len() == grids.len() {
            format!(
                "In each {} all lanes read one word: it is read once and broadcast to them, so \
                 there is no conflict.",
                phase_name(grids.len())
            )
        } else if shared > 0 {
            format!(
                "Some lanes read the same word: each word is read once and sent to all of its \
                 lanes (multicast), and no bank holds two different words, so {serve} all \
                 {lanes} lanes{per_phase}."
            )
        } else {
            format!(
                "The {lanes} lanes read words in {} different banks: no bank is asked for two \
                 words, so {serve} them all{per_phase}.",
                loads.len()
            )
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Occupancy sweeps

/// Occupancy at one value of the swept resource; 0 where the launch fails.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepPoint {
    pub x: u32,
    pub occupancy_pct: f64,
}

/// The resource a sweep varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SweepKind {
    BlockSize,
    Registers,
    SharedMemory,
}

/// One of the Occupancy Calculator's three charts.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    pub kind: SweepKind,
    pub points: Vec<SweepPoint>,
    /// The value the launch uses now.
    pub current: u32,
}

/// The three sweeps, each varying one resource of `block` with the others held.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweeps {
    pub block_size: Sweep,
    pub registers: Sweep,
    pub shared_memory: Sweep,
}

fn sweep(
    device: &Device,
    xs: impl Iterator<Item = u32>,
    with: impl Fn(u32) -> BlockResources,
) -> Vec<SweepPoint> {
    xs.map(|x| SweepPoint {
        x,
        occupancy_pct: occupancy::calculate(device, with(x))
            .map(|report| report.theoretical_occupancy_pct)
            .unwrap_or(0.0),
    })
    .collect()
}

pub fn occupancy_sweeps(device: &Device, block: BlockResources) -> Sweeps {
    let warp = device.warp_size.max(1);
    let block_sizes = (1..=device.max_threads_per_block / warp).map(|warps| warps * warp);
    let registers = 1..=device.max_regs_per_thread;
    let smem_step = device.smem_alloc_unit.max(1) as usize;
    let smem = (0..=device.smem_per_block).step_by(smem_step);
    Sweeps {
        block_size: Sweep {
            kind: SweepKind::BlockSize,
            points: sweep(device, block_sizes, |threads| BlockResources {
                threads_per_block: threads,
                ..block
            }),
            current: block.threads_per_block,
        },
        registers: Sweep {
            kind: SweepKind::Registers,
            points: sweep(device, registers, |regs| BlockResources {
                regs_per_thread: regs,
                ..block
            }),
            current: block.regs_per_thread,
        },
        shared_memory: Sweep {
            kind: SweepKind::SharedMemory,
            points: sweep(device, smem, |bytes| BlockResources {
                smem_per_block: bytes,
                ..block
            }),
            current: block.smem_per_block,
        },
    }
}

/// The launch's integer scalar argument `name` (the matrices' `n`), if it has one.
pub fn int_argument(input: &SimulationInput, name: &str) -> Option<i64> {
    input.args.iter().find_map(|(argument, value)| match value {
        memplay_sim::kernel::Value::Int(value) if argument == name => Some(*value),
        _ => None,
    })
}

/// Why a tiled kernel read outside its matrices, when the reason is the one the notes on Memory
/// Access Efficiency (the textbook's chapter 5) give: n is not a multiple of the tile width, so
/// the last tiles hang over the edge and a kernel without boundary checks reads past it. `None`
/// for any other launch or error.
pub fn ragged_tile_reason(input: &SimulationInput, error: &SimulationError) -> Option<String> {
    let SimulationError::Kernel(diagnostic) = error else {
        return None;
    };
    if diagnostic.kind != DiagnosticKind::OutOfBounds(MemoryObject::Buffer) {
        return None;
    }
    let n = int_argument(input, "n")?;
    let tile: i64 = input
        .defines
        .iter()
        .find(|(name, _)| name == "TILE_WIDTH")?
        .1
        .parse()
        .ok()?;
    (tile > 0 && n % tile != 0).then(|| {
        format!(
            "n = {n} is not a multiple of the tile width {tile}: the last row and column of \
             tiles hang over the edge of the matrices, and this kernel loads them without \
             boundary checks (the notes on Memory Access Efficiency, the textbook's chapter 5)."
        )
    })
}

/// Where the simulation puts the current kernel on the roofline: FLOP per simulated DRAM byte (or
/// per useful byte where the data stays in L2), and the predicted GFLOP/s.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulatedPoint {
    pub kernel: String,
    pub intensity: f64,
    pub gflops: f64,
    /// DRAM moves nothing (the data stays in L2 between runs), so the intensity counts each
    /// useful byte once.
    pub from_l2: bool,
}

/// The roofline point of a launch that ran; `None` for a kernel without FP32 work.
pub fn simulated_point(
    kernel: &str,
    report: &SimulationReport,
    prediction: &memplay_sim::timing::Prediction,
) -> Option<SimulatedPoint> {
    let flops = report.counters.fp32_flops;
    prediction
        .arithmetic_intensity
        .or_else(|| (prediction.useful_bytes > 0.0).then(|| flops / prediction.useful_bytes))
        .filter(|&intensity| flops > 0.0 && intensity > 0.0)
        .map(|intensity| SimulatedPoint {
            kernel: kernel.to_string(),
            intensity,
            gflops: prediction.gflops,
            // Counted per useful byte only where DRAM moves nothing (a launch that writes
            // nothing and fits the L2); a write goes back to DRAM every time.
            from_l2: prediction.arithmetic_intensity.is_none(),
        })
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::*;
    use crate::state::State;
    use memplay_sim::banks::{LaneBank, WordSharing};

    /// A report built by hand: `(lane, word, bank, phase, wavefront)` per entry.
    fn report(
        n_banks: u32,
        wavefronts: u32,
        ideal: u32,
        entries: &[(u32, u64, u32, u32, u32)],
    ) -> BankReport {
        BankReport {
            n_banks,
            wavefronts,
            ideal_wavefronts: ideal,
            bank_conflicts: wavefronts.saturating_sub(ideal),
            conflict_degree: (wavefronts / ideal).max(1),
            sharing: WordSharing::None,
            lanes: entries
                .iter()
                .map(|&(lane, word, bank, phase, wavefront)| LaneBank {
                    lane,
                    address: word * 4,
                    word,
                    bank,
                    phase,
                    wavefront,
                })
                .collect(),
        }
    }

    /// The one helper: what the bank map and its sentence say about a report.
    fn check(
        report: &BankReport,
        expected_cells: &[(usize, usize, &str)],
        expected_sentence: &str,
    ) {
        let grids = bank_grid(report);
        for &(row, bank, lanes) in expected_cells {
            let cell = &grids[0].rows[row][bank];
            let text: Vec<String> = cell.words.iter().map(|w| lane_list(&w.lanes)).collect();
            assert_eq!(text.join(" "), lanes, "row {row}, bank {bank}");
        }
        assert_eq!(explain(report), expected_sentence);
    }

    #[test]
    fn thirty_two_banks_are_drawn_as_two_blocks_of_sixteen() {
        assert_eq!(bank_blocks(32), vec![0..16, 16..32]);
    }

    #[test]
    fn sixteen_banks_are_drawn_as_one_block() {
        assert_eq!(bank_blocks(16), vec![0..16]);
    }

    #[test]
    fn a_bank_count_that_is_not_a_multiple_of_sixteen_ends_with_a_shorter_block() {
        assert_eq!(bank_blocks(20), vec![0..16, 16..20]);
    }

    #[test]
    fn row_per_thread_without_padding_is_32_lanes_in_bank_0() {
        // s[t][0] of a 32x32 array: lane t reads word 32t, all in bank 0, one per wavefront.
        let entries: Vec<_> = (0..32).map(|t| (t, u64::from(t) * 32, 0, 0, t)).collect();
        let report = report(32, 32, 1, &entries);
        check(
            &report,
            &[(0, 0, "0"), (31, 0, "31"), (5, 1, "")],
            "32 lanes read 32 different words in bank 0: the bank serves them one per cycle, \
             so the access takes 32 wavefronts instead of 1.",
        );
        let grid = &bank_grid(&report)[0];
        assert_eq!(grid.rows.len(), 32);
        assert!(grid.rows[7][0].conflict);
        assert_eq!(grid.cycles_per_bank[0], 32);
        assert_eq!(grid.cycles_per_bank[1], 0);
    }

    #[test]
    fn stride_one_is_one_wavefront_without_conflict() {
        let entries: Vec<_> = (0..32).map(|t| (t, u64::from(t), t, 0, 0)).collect();
        check(
            &report(32, 1, 1, &entries),
            &[(0, 0, "0"), (0, 31, "31")],
            "The 32 lanes read words in 32 different banks: no bank is asked for two words, \
             so 1 wavefront serves them all.",
        );
    }

    #[test]
    fn stride_two_is_two_way_in_sixteen_banks() {
        let entries: Vec<_> = (0..32)
            .map(|t| (t, u64::from(2 * t), (2 * t) % 32, 0, t / 16))
            .collect();
        check(
            &report(32, 2, 1, &entries),
            &[(0, 0, "0"), (1, 0, "16"), (0, 2, "1")],
            "16 banks each hold 2 different words that lanes want (bank 0 holds words for 2 \
             lanes): each bank serves one word per cycle, so the access takes 2 wavefronts \
             instead of 1.",
        );
    }

    #[test]
    fn broadcast_of_a_32_is_one_cell_of_all_lanes() {
        let entries: Vec<_> = (0..32).map(|t| (t, 32, 0, 0, 0)).collect();
        check(
            &report(32, 1, 1, &entries),
            &[(0, 0, "0–31")],
            "Every lane reads the same word (word 32 in bank 0): the bank reads it once and \
             broadcasts it to all 32 lanes, so there is no conflict.",
        );
    }

    #[test]
    fn multicast_pairs_share_a_cell() {
        let entries: Vec<_> = (0..32)
            .map(|t| (t, u64::from(t / 2), t / 2, 0, 0))
            .collect();
        check(
            &report(32, 1, 1, &entries),
            &[(0, 0, "0, 1"), (0, 15, "30, 31")],
            "Some lanes read the same word: each word is read once and sent to all of its \
             lanes (multicast), and no bank holds two different words, so 1 wavefront serves \
             all 32 lanes.",
        );
    }

    #[test]
    fn g80_half_warps_get_one_grid_each() {
        // 16 banks, lane t reads word t: two half-warps, one wavefront each.
        let entries: Vec<_> = (0..32)
            .map(|t| (t, u64::from(t), t % 16, t / 16, t / 16))
            .collect();
        let report = report(16, 2, 2, &entries);
        check(
            &report,
            &[(0, 0, "0"), (0, 15, "15")],
            "The 32 lanes read words in 32 different banks: no bank is asked for two words, \
             so 2 wavefronts serve them all, one per half-warp.",
        );
        let grids = bank_grid(&report);
        assert_eq!(grids.len(), 2);
        assert_eq!(grids[1].first_wavefront, 1);
        assert_eq!(lane_list(&grids[1].lanes), "16–31");
    }

    #[test]
    fn g80_row_per_thread_is_16_way_in_each_half_warp() {
        // 16 banks: lane t reads word 32t, bank 0; each half-warp takes 16 wavefronts.
        let entries: Vec<_> = (0..32)
            .map(|t| (t, u64::from(t) * 32, 0, t / 16, t))
            .collect();
        check(
            &report(16, 32, 2, &entries),
            &[(0, 0, "0"), (15, 0, "15")],
            "In each half-warp, 16 lanes read 16 different words in bank 0: the bank serves \
             them one per cycle, so the access takes 32 wavefronts instead of 2.",
        );
    }

    #[test]
    fn no_active_lane_is_said_plainly() {
        check(
            &report(32, 0, 1, &[]),
            &[],
            "No lane is active, so shared memory has nothing to deliver.",
        );
    }

    #[test]
    fn a_number_keeps_three_significant_digits() {
        assert_eq!(format_significant(0.25), "0.25");
        assert_eq!(format_significant(36.4879), "36.5");
        assert_eq!(format_significant(4.0), "4");
        assert_eq!(format_significant(16064.0), "16,064");
        assert_eq!(format_significant(0.0), "0");
        assert_eq!(format_significant(512.4), "512");
    }

    #[test]
    fn numbers_are_grouped_and_intensities_are_short() {
        assert_eq!(format_number(55_637.0), "55,637");
        assert_eq!(format_number(5.4), "5.4");
        assert_eq!(format_number(209.375), "209.4");
        assert_eq!(format_number(346.5), "346.5");
        assert_eq!(format_number(2048.0), "2,048");
        assert_eq!(format_intensity(0.25), "0.25");
        assert_eq!(format_intensity(4.0), "4");
        assert_eq!(format_intensity(18.478), "18.5");
        assert_eq!(format_intensity(4.0104), "4.01");
        assert_eq!(format_intensity(256.0), "256");
        assert_eq!(tiled_matmul_intensity(16), 4.0);
    }

    /// Seed 003, "G80 Block Granularity Considerations", run through the tiled matmul lesson:
    /// (threads per SM, limiter) for each tile width, or the launch error.
    fn check_g80_tile(tile: u32, expected: Result<(u32, Limiter), OccupancyError>) {
        let state = State {
            device: memplay_sim::DeviceId::G80,
            tile,
            regs: 10,
            ..State::default()
        };
        let input = state.launch();
        let result = memplay_sim::simulate::simulate(&input);
        let (_, launch) = lesson_occupancy(&input, &result);
        let found = launch.map(|r| (r.active_warps_per_sm * 32, r.limiter));
        assert_eq!(found, expected, "TILE = {tile}");
    }

    #[test]
    fn g80_tiles_of_8_16_and_32_give_512_768_threads_or_no_launch() {
        check_g80_tile(8, Ok((512, Limiter::Blocks)));
        check_g80_tile(16, Ok((768, Limiter::Warps)));
        check_g80_tile(
            32,
            Err(OccupancyError::TooManyThreads {
                threads: 1024,
                max: 512,
            }),
        );
    }

    #[test]
    fn the_tiled_matmul_has_a_roofline_point_and_a_copy_without_flops_has_none() {
        let point_of = |state: State| {
            let input = state.launch();
            let report = memplay_sim::simulate::simulate(&input).expect("the lesson runs");
            let prediction = memplay_sim::timing::predict(&report);
            simulated_point(&input.kernel, &report, &prediction)
        };
        let tiled = point_of(State::default()).expect("the tiled matmul does FP32 work");
        assert_eq!(tiled.kernel, "mm_tiled");
        // The lecture counts 4 FLOP/B for 16-wide tiles at the loads; the simulated point counts
        // only what leaves the caches, so it sits higher.
        assert!(tiled.intensity > 4.0, "{tiled:?}");
        let copy = State {
            variant: crate::lessons::variant("coalescing", "strided-copy"),
            ..State::default()
        };
        assert_eq!(point_of(copy), None);
    }

    #[test]
    fn times_keep_three_significant_digits() {
        for (ms, text) in [
            (0.2684, "0.268 ms"),
            (3.181, "3.18 ms"),
            (41.93, "41.9 ms"),
            (0.0042, "4.20 µs"),
            (0.02432, "24.3 µs"),
            (0.00583, "5.83 µs"),
        ] {
            assert_eq!(format_time(ms), text);
        }
    }

    #[test]
    fn a_tile_that_does_not_divide_n_is_named_as_the_reason_for_reading_outside() {
        let at_tile = |tile| {
            let input = State {
                tile,
                ..State::default()
            }
            .launch();
            let result = memplay_sim::simulate::simulate(&input);
            (input, result)
        };
        let (input, result) = at_tile(17);
        let error = result.expect_err("17 does not divide 1024");
        let reason = ragged_tile_reason(&input, &error).expect("the reason is the ragged tile");
        assert!(
            reason.starts_with("n = 1024 is not a multiple of the tile width 17"),
            "{reason}"
        );
        // The lecture notes are named by their title, never by the page's own file numbers.
        assert!(
            reason.ends_with(
                "boundary checks (the notes on Memory Access Efficiency, the textbook's chapter 5)."
            ),
            "{reason}"
        );
        // A kernel error of another kind has no such reason.
        let mut broken = input.clone();
        broken.source =
            "__global__ void mm_tiled(float* a, float* b, float* c, int n) { m; }".into();
        let other = memplay_sim::simulate::simulate(&broken).expect_err("m is not declared");
        assert_eq!(ragged_tile_reason(&broken, &other), None);
    }
}
