//! The warps of a block that provably do the same work at moved addresses: the first warp of each
//! class runs (the first two, where the proof leaves a move open), and the records of the others
//! are the first one's records moved (issue 13, "run less", without changing a result).
//!
//! In a block of 256 x 1 threads that runs `out[i] = in[i]` with `i = blockIdx.x * 256 +
//! threadIdx.x`, warp 5 does what warp 0 does at addresses 5 x 128 bytes further on: the same
//! instructions, the same active lanes, the same accesses in the same order. `block_shift::
//! analyze_warps` proves that from the kernel's code (the same abstract interpretation that shows
//! blocks alike, with the warp as the variable) for warps `w` and `w + step` of a class; the tiled
//! matmul's 16 x 16 blocks move `threadIdx.y` by 2 a warp, the divergence lesson's `threadIdx.x &
//! 32` needs classes of every other warp (`step` 2). The proof says that each access site moves
//! by a fixed amount from a warp of a class to the next, and by how much
//! (`BlockShift::site_shifts`, by the span of the loading or storing expression and its kind):
//! then only the first warp of each class runs. Where one place moves by more than one amount,
//! the second warp of the class runs too, and its records, compared one by one with the first
//! warp's (the same site, kind, width, lanes and load order), give each record's move, which must
//! be the same in every lane. The warps that run are the *leaders*; each stands for the warps of
//! its class after it, up to the class's next leader. What the proof leaves to the run is checked
//! against what a leader did: every guard (`row < n`, a loop's test) keeps each lane's outcome in
//! every warp it stands for, and every moved access stays inside its object, aligned. A warp
//! whose guards come out otherwise leads from there on, and the leaders run again: the guarded
//! matmul's last tile of `b` (`p * TILE_WIDTH + ty < n` with n = 1000) holds rows for warps 0 to
//! 3 and not for warps 4 to 7, so warps 0 and 4 run. The next block starts from the leaders the
//! last one needed. Then the warps' records are handed to the sink in the order the interpreter
//! would have made them (each warp until its next barrier, warp by warp, `Simulation::
//! run_warps`), those of the warps that did not run through `RecordSink::record_moved`, and the
//! block's work is each leader's work times the warps it stands for.
//!
//! Only the records of a warp that does not run are made up; its data are not: it stores nothing,
//! so the warps that run may load other values than they would in a full run, into shared memory
//! above all. No branch and no address depends on a loaded value (the proof requires it), so the
//! records, counters and profile are those of the full run to the last digit; the block's memory
//! afterwards is not, and nothing reads it but later blocks, whose control and addresses cannot
//! see it either. A run that does not bear the proof out, or ends in an error, hands nothing to
//! the sink, and the block runs again warp by warp. So does a block whose attempts with more
//! leaders would together run more warps than the block has, so that a block costs at most twice
//! a plain run.

use super::launch::{
    holding_object, BlockStats, Dim3, MemRecord, MovedRecord, SiteMove, WarpWork, WarpsAlike,
};
use super::leader_records::LeaderRecords;
use super::reuse::{WarpClasses, WarpLog};
use super::simulation::Simulation;
use super::sink::RecordSink;
use crate::kernel::block_shift::{self, GuardRange};

/// How an attempt to replay a block with a set of leaders ended.
enum Attempt {
    Replayed(BlockStats),
    /// A warp's guards came out otherwise than its leader's: it must lead; the attempt took
    /// `steps`.
    Lead {
        warp: u32,
        steps: u64,
    },
    /// The run ended in an error or does not bear the proof out.
    Refused,
}

/// The last of `leaders` (in order) at or before `warp` in its class of every `step`-th warp, as
/// its index, and the steps from it to `warp`.
pub(super) fn leader_of(leaders: &[u32], step: u32, warp: u32) -> Option<(usize, u32)> {
    let step = step.max(1);
    leaders
        .iter()
        .enumerate()
        .rev()
        .find(|&(_, &leader)| leader <= warp && (warp - leader).is_multiple_of(step))
        .map(|(index, &leader)| (index, (warp - leader) / step))
}

/// How far `threadIdx` moves from each warp of a block to the warp `step` later, if that is the
/// same for every lane and warp (blocks of 256 x 1: 32 along x a warp; 16 x 16: 2 along y; 64 x 4:
/// only with `step` 2, one along y).
fn thread_shift(block: Dim3, n_warps: u32, step: u32) -> Option<[i64; 3]> {
    let index = |tid: u32| {
        [
            tid % block.x,
            (tid / block.x) % block.y,
            tid / (block.x * block.y),
        ]
        .map(i64::from)
    };
    let (zero, next) = (index(0), index(step * 32));
    let shift = [0, 1, 2].map(|d| next[d] - zero[d]);
    for w in step..n_warps {
        let q = i64::from(w / step);
        let first = (w % step) * 32;
        for lane in 0..32 {
            let (from, to) = (index(first + lane), index(w * 32 + lane));
            if (0..3).any(|d| to[d] - from[d] != q * shift[d]) {
                return None;
            }
        }
    }
    Some(shift)
}

/// How far every active lane of `second` is from the same lane of `first`, if the two records are
/// the same access of two warps of a class (the same place, kind, width, lanes and order) and
/// every lane moved by as much.
fn record_move(first: &MemRecord, second: &MemRecord) -> Option<i64> {
    let alike = first.access.space == second.access.space
        && first.access.kind == second.access.kind
        && first.access.width == second.access.width
        && first.span == second.span
        && first.block == second.block
        && first.order == second.order
        && first.fences_passed == second.fences_passed;
    if !alike {
        return None;
    }
    let mut by: Option<i64> = None;
    for (a, b) in first.access.lanes.iter().zip(&second.access.lanes) {
        match (a, b) {
            (None, None) => {}
            (Some(a), Some(b)) => {
                let d = i64::try_from(i128::from(*b) - i128::from(*a)).ok()?;
                if by.is_some_and(|by| by != d) {
                    return None;
                }
                by = Some(d);
            }
            _ => return None,
        }
    }
    Some(by.unwrap_or(0))
}

impl Simulation<'_> {
    /// Tries to prove the warps of every block alike (`block_shift::analyze_warps`), with
    /// classes of every warp, every other warp, every fourth, ..., and keeps the first proof:
    /// from then on `run_block_into` runs the leaders of each class. Call it after
    /// `shifted_buffers`, which starts the guards afresh. False where no proof holds, where no
    /// class has a third warp, or where the block's last warp is not whole.
    pub fn show_warps_alike(&mut self) -> bool {
        self.warp_classes = None;
        let block = self.launch.block;
        let threads = block.count();
        if !threads.is_multiple_of(32) {
            return false;
        }
        let n_warps = (threads / 32) as u32;
        let constants = self.launch_constants();
        let func = &self.program.functions[self.kernel];
        let mut step = 1;
        while 2 * step < n_warps {
            let proof = thread_shift(block, n_warps, step)
                .and_then(|shift| block_shift::analyze_warps(func, &constants, shift));
            if let Some(proof) = proof {
                let guards = proof
                    .guards
                    .iter()
                    .map(|guard| (self.guard_index(guard.site), *guard))
                    .collect();
                // With every site's move known, the first warp of each class is enough;
                // otherwise the second one runs too, and the moves are measured from the two.
                let leaders = if proof.site_shifts.is_some() {
                    (0..step).collect()
                } else {
                    (0..2 * step).collect()
                };
                self.warp_classes = Some(WarpClasses {
                    step,
                    n_warps,
                    guards,
                    site_shifts: proof.site_shifts,
                    leaders,
                    records: LeaderRecords::default(),
                });
                return true;
            }
            step *= 2;
        }
        false
    }

    /// Runs the leaders of each class and hands the sink every warp's records; `None`, with
    /// nothing handed, where a run ends in an error or does not bear the proof out. It starts
    /// from the leaders the last block needed; a warp whose guards come out otherwise than its
    /// leader's joins them and the leaders run again. The attempts together run at most as many
    /// warps as the block has (so that a block of many leaders costs at most twice a plain run)
    /// and stay within the step budget.
    pub(super) fn run_block_replayed(
        &mut self,
        block: [u32; 3],
        step_budget: u64,
        sink: &mut dyn RecordSink,
        classes: &mut WarpClasses,
    ) -> Option<BlockStats> {
        let mut leaders = classes.leaders.clone();
        let mut budget = step_budget;
        let mut warps_run = 0;
        let mut records = std::mem::take(&mut classes.records);
        let stats = loop {
            warps_run += leaders.len();
            records.clear();
            match self.replay_with(block, budget, sink, classes, &leaders, &mut records) {
                Attempt::Replayed(stats) => {
                    classes.leaders = leaders;
                    break Some(stats);
                }
                Attempt::Lead { warp, steps } => {
                    let Some(left) = budget.checked_sub(steps) else {
                        break None;
                    };
                    budget = left;
                    // Only the proof's site moves give a new leader's records their moves.
                    let affordable = warps_run + leaders.len() < classes.n_warps as usize;
                    if !affordable || classes.site_shifts.is_none() {
                        break None;
                    }
                    let at = leaders.partition_point(|&l| l < warp);
                    leaders.insert(at, warp);
                }
                Attempt::Refused => break None,
            }
        };
        classes.records = records;
        stats
    }

    /// One attempt of `run_block_replayed` with `leaders` (in order, each class's first warp
    /// among them).
    fn replay_with(
        &mut self,
        block: [u32; 3],
        step_budget: u64,
        sink: &mut dyn RecordSink,
        classes: &WarpClasses,
        leaders: &[u32],
        collected: &mut LeaderRecords,
    ) -> Attempt {
        let step = classes.step;
        let n_warps = classes.n_warps as usize;
        // Per warp: its leader (an index into `leaders`) and the steps from it.
        let Some(lead) = (0..n_warps as u32)
            .map(|w| leader_of(leaders, step, w))
            .collect::<Option<Vec<(usize, u32)>>>()
        else {
            return Attempt::Refused;
        };
        // Per leader: the steps from it to the last warp it stands for.
        let mut last_step = vec![0u32; leaders.len()];
        for &(k, q) in &lead {
            last_step[k] = last_step[k].max(q);
        }
        let n_sites = self.guard_sites.len();
        let mut log = WarpLog {
            runs: lead.iter().map(|&(_, q)| q == 0).collect(),
            pieces: vec![Vec::new(); n_warps],
            work: vec![WarpWork::default(); n_warps],
            guard_ranges: vec![vec![GuardRange::default(); n_sites]; n_warps],
        };
        let Ok(ran) = self.run_warps(block, step_budget, collected, Some(&mut log)) else {
            return Attempt::Refused;
        };
        // Every guard comes out in each warp as in its leader, lane by lane; the first warp
        // where one does not must lead. (Before the moves are checked: a warp past the edge,
        // whose guards keep it from reading, may lie where its leader's records, moved, would
        // leave the buffer.)
        for (w, &(k, q)) in lead.iter().enumerate() {
            if q == 0 {
                continue;
            }
            let ranges = &log.guard_ranges[leaders[k] as usize];
            let alike = classes.guards.iter().all(|&(site, guard)| {
                let per_step = i128::from(guard.shift[0]);
                guard.holds_alike(ranges[site], per_step * i128::from(q))
            });
            if !alike {
                return Attempt::Lead {
                    warp: w as u32,
                    steps: ran.steps,
                };
            }
        }

        let Some(moves) = self.record_moves(classes, leaders, &log, collected, &last_step) else {
            return Attempt::Refused;
        };

        // The block's guard ranges, as if every warp had run: each leader's, moved to the last
        // warp it stands for as far as the guard moves.
        let mut guard_ranges: Vec<GuardRange> = vec![GuardRange::default(); n_sites];
        for (site, slot) in guard_ranges.iter_mut().enumerate() {
            let per_step = classes
                .guards
                .iter()
                .find(|(s, _)| *s == site)
                .map_or(0, |(_, guard)| i128::from(guard.shift[0]));
            for (k, &leader) in leaders.iter().enumerate() {
                let far = per_step * i128::from(last_step[k]);
                let range = log.guard_ranges[leader as usize][site];
                *slot = slot.join(range.spread(far.min(0), far.max(0)));
            }
        }
        self.guard_ranges = guard_ranges;

        // How each access site of a leader moves, for the sink to reuse what it made of that
        // warp's records.
        let site_moves: Vec<Option<Vec<SiteMove>>> = leaders
            .iter()
            .map(|&leader| {
                let mut sites: Vec<SiteMove> = Vec::new();
                for &(first, end) in &log.pieces[leader as usize] {
                    for (at, &per_step) in (first..end).zip(&moves[first..end]) {
                        // Where the proof gives the moves, a record kept as the one it repeats
                        // moves as that one, whose copy was handed before it.
                        if classes.site_shifts.is_some() && collected.repeats(at) {
                            continue;
                        }
                        let record = collected.kept(at);
                        match sites.iter().find(|site| site.holds(record)) {
                            Some(site) if site.bytes_per_step != per_step => return None,
                            Some(_) => {}
                            None => sites.push(SiteMove {
                                span: record.span,
                                space: record.access.space,
                                kind: record.access.kind,
                                bytes_per_step: per_step,
                            }),
                        }
                    }
                }
                Some(sites)
            })
            .collect();
        sink.warps_alike(&WarpsAlike {
            block,
            leaders,
            lead: &lead,
            site_moves: &site_moves,
        });

        // The records in the interpreter's order: each round, every warp that has not ended runs
        // to its next barrier or its end, warp by warp. The leaders hand their own.
        // Per leader, how many of its records the earlier rounds made.
        let mut made_before = vec![0usize; leaders.len()];
        let mut next_note = 0;
        for round in 0.. {
            let mut any = false;
            for (w, &(k, q)) in lead.iter().enumerate() {
                let Some(&(first, end)) = log.pieces[leaders[k] as usize].get(round) else {
                    continue;
                };
                any = true;
                if q == 0 {
                    // A leader's own records, with what it said of its loops between them.
                    let mut at = first;
                    while at < end {
                        collected.hand_notes(&mut next_note, at, w as u32, sink);
                        // The records of skipped iterations up to the next note, at once.
                        let limit = collected
                            .note_at(next_note)
                            .map_or(end, |note_at| note_at.clamp(at + 1, end));
                        let run_end = (at..limit)
                            .find(|&k| !collected.repeats(k))
                            .unwrap_or(limit);
                        if run_end > at {
                            let repeated = |i: usize| collected.repeats_at(at + i);
                            sink.records_repeated_from(run_end - at, &repeated);
                            at = run_end;
                        } else {
                            collected.hand(at, sink);
                            at += 1;
                        }
                    }
                    collected.hand_notes(&mut next_note, end, w as u32, sink);
                    continue;
                }
                let moved_record = |index: usize| {
                    let at = first + index;
                    let moved = MovedRecord {
                        warp: w as u32,
                        steps: q,
                        by: moves[at] * i64::from(q),
                        from: k as u32,
                        index: made_before[k] + index,
                        repeated: None,
                    };
                    collected.moved(at, moved)
                };
                sink.records_moved(end - first, &moved_record);
            }
            for (k, made) in made_before.iter_mut().enumerate() {
                if let Some(&(first, end)) = log.pieces[leaders[k] as usize].get(round) {
                    *made += end - first;
                }
            }
            if !any {
                break;
            }
        }

        let mut work = WarpWork::default();
        for (k, &leader) in leaders.iter().enumerate() {
            work.add_times(&log.work[leader as usize], u64::from(last_step[k]) + 1);
        }
        Attempt::Replayed(BlockStats {
            block,
            flops: work.flops,
            warp_instructions: work.instructions,
            fp32_issued_flops: work.fp32_issued_flops,
            sfu_instructions: work.sfu,
            alu_instructions: work.alu,
            warp_unit_passes: work.warp_unit,
            barrier_warp_instructions: work.barriers,
            issued_instructions: work.issued,
            predicated_off: work.predicated_off,
            thread_issued_instructions: work.thread_issued,
            predicated_off_threads: work.predicated_off_threads,
            steps: ran.steps,
            warps_shown_alike: (n_warps - leaders.len()) as u32,
            iterations_skipped: ran.iterations_skipped,
        })
    }

    /// How far each of `records` moves per step of its class: from the proof's site moves, or
    /// measured between each class's first two warps; `None` where a record does not move as
    /// the proof needs, or would leave its object in a warp its leader stands for.
    fn record_moves(
        &self,
        classes: &WarpClasses,
        leaders: &[u32],
        log: &WarpLog,
        collected: &LeaderRecords,
        last_step: &[u32],
    ) -> Option<Vec<i64>> {
        let step = classes.step;
        let mut moves = vec![0i64; collected.len()];
        match classes.site_shifts.as_deref() {
            // Each record of a leader moves as the proof says its site does.
            Some(sites) => {
                // Per record kept: its site's move, looked up once for all that repeat it.
                let mut kept_moves: Vec<Option<i64>> = vec![None; collected.kept_len()];
                for (k, &leader) in leaders.iter().enumerate() {
                    for &(a, a_end) in &log.pieces[leader as usize] {
                        for (at, slot) in moves.iter_mut().enumerate().take(a_end).skip(a) {
                            let i = collected.kept_index(at);
                            let by = match kept_moves[i] {
                                Some(by) => by,
                                None => {
                                    let record = collected.kept_at(i);
                                    let key = (record.span, record.access.kind);
                                    let site = sites
                                        .binary_search_by_key(&key, |site| (site.span, site.kind))
                                        .ok()?;
                                    *kept_moves[i].insert(sites[site].bytes_per_step)
                                }
                            };
                            *slot = by;
                            // A record of a loop iteration skipped lies between the record it
                            // repeats and the same record of the last iteration skipped, which
                            // are checked: every lane moves alike, and an object is one range.
                            let between = collected
                                .repeated(at)
                                .is_some_and(|repeated| repeated.iteration < repeated.iterations);
                            let far = i64::from(last_step[k]);
                            if !between && !self.moves_inside(&collected.record(at), by, far) {
                                return None;
                            }
                        }
                    }
                }
            }
            // The leaders are each class's first two warps (`show_warps_alike`). The second did
            // the first's work, and every record of it is the first's moved: by how much, per
            // record of either. The second stands for the later warps of the class.
            None => {
                for j in 0..step as usize {
                    let (first, second) = (&log.pieces[j], &log.pieces[j + step as usize]);
                    if log.work[j] != log.work[j + step as usize] || first.len() != second.len() {
                        return None;
                    }
                    let second_leader = leaders
                        .iter()
                        .position(|&l| l as usize == j + step as usize)?;
                    for (&(a, a_end), &(b, b_end)) in first.iter().zip(second) {
                        if a_end - a != b_end - b {
                            return None;
                        }
                        for (i, k) in (a..a_end).zip(b..b_end) {
                            let second = collected.record(k);
                            let by = record_move(&collected.record(i), &second)?;
                            let far = i64::from(last_step[second_leader]);
                            if !self.moves_inside(&second, by, far) {
                                return None;
                            }
                            moves[i] = by;
                            moves[k] = by;
                        }
                    }
                }
            }
        }
        Some(moves)
    }

    /// Whether `record`, moved by `per_step` bytes up to `last_step` times, stays inside the
    /// object it accesses and aligned, as the interpreter requires of every access.
    fn moves_inside(&self, record: &MemRecord, per_step: i64, last_step: i64) -> bool {
        if per_step == 0 || last_step == 0 || record.access.lanes.iter().all(Option::is_none) {
            return true;
        }
        let Some((object, least, end)) = holding_object(&self.objects, record) else {
            return false;
        };
        let align = i64::from(record.access.width.bytes().min(16));
        if per_step % align != 0 {
            return false;
        }
        let far = i128::from(per_step) * i128::from(last_step);
        i128::from(least) + far.min(0) >= i128::from(object.base)
            && i128::from(end) + far.max(0) <= i128::from(object.base) + i128::from(object.size)
    }
}
