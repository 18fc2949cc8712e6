//! Where one block's records go: `BlockSink`'s implementation of `RecordSink`, the trait the
//! interpreter hands a counted block's records to, through load reuse, the profiler, the fuser
//! and the counting.
//!
//! A record a full run makes passes through everything (`BlockSink::pass`). The records of a
//! warp shown alike and of a loop iteration a warp skipped come as copies of a leader's or of
//! the iteration run's records; the sink takes them from what those made (`warp_copies`,
//! `repeats`) wherever the premises of `RecordSink` hold: the copy is exactly what a full run
//! makes, the compiler effects treat it as they treated its origin (`effects_move_alike`,
//! `reuse_over_iterations`), and its measure holds under its move (`OutputMove::holds`).
//! Where one fails, the copy is made whole and passes through everything, as the trait's
//! default does.
//!
//! This module ties the others together and sits above them: the sink's fields and its plain
//! pass (`block_sink`), the logs it keeps (`iteration_log`, `warp_classes`), and the ways it
//! takes copies from them (`repeats`, `warp_copies`), whose methods it calls. Its tests check
//! the trait's contract on the block sink: every override leaves what the default leaves.

use super::block_sink::{BlockSink, NestedStart};
use super::iteration_log::{
    add_compiler_effects, gather_site_moves, may_reuse, reuse_over_iterations, IterationLog,
    LoggedRecord,
};
use super::warp_classes::{effects_move_alike, Inert, MovedWarps};
use crate::compile_effects::{add_tally_difference, ReusedLoads, TallyChanges};
use crate::kernel::{
    IterationFences, IterationsRepeated, MemRecord, MovedRecord, RecordSink, RepeatNeed, Repeated,
    RepeatsNeeded, WarpsAlike,
};
use crate::profile::CopyKind;
use std::cell::RefCell;
use std::rc::Rc;

impl RecordSink for BlockSink<'_> {
    fn record(&mut self, record: &MemRecord) {
        let leader = self.leader_of(record);
        let logging = self
            .iterations
            .iter()
            .position(|log| log.logging && log.warp == record.warp);
        if leader.is_none() && logging.is_none() {
            self.pass(record, None, None);
            return;
        }
        if let Some(nested) = self
            .nested
            .as_mut()
            .filter(|nested| nested.warp == record.warp && !nested.reuse_checked)
        {
            // The inner iteration's first record: it must not reuse what the warp loaded before.
            nested.reuse_checked = true;
            nested.clean &= !may_reuse(self.reuse.as_deref(), record);
        }
        if let Some(i) = logging {
            if self.iterations[i].records.is_empty() {
                // The iteration's first record: it must not reuse what the warp loaded before.
                self.iterations[i].clean_start &= !may_reuse(self.reuse.as_deref(), record);
            }
        }
        let (mut before, mut after) = std::mem::take(&mut self.tallies);
        // The outputs go to the class's list if the warp leads one, else to the iteration's.
        let mut outputs = match (leader, logging) {
            (Some(j), _) => self
                .moved
                .as_mut()
                .map(|moved| std::mem::take(&mut moved.classes[j].kept))
                .unwrap_or_default(),
            (None, Some(i)) => std::mem::take(&mut self.iterations[i].outputs),
            (None, None) => Vec::new(),
        };
        let outputs_start = outputs.len();
        let reused_before = self.effects_so_far(&mut before);
        let mut shape = None;
        let issued = self.pass(record, Some(&mut outputs), Some(&mut shape));
        let reused_after = self.effects_so_far(&mut after);
        let shape = shape.map(Rc::new);
        let reused = ReusedLoads {
            instructions: reused_after.instructions - reused_before.instructions,
            lanes: reused_after.lanes - reused_before.lanes,
        };
        if let Some(i) = logging {
            let class_input = leader.and_then(|j| {
                self.moved
                    .as_ref()
                    .map(|moved| moved.classes[j].inputs.len())
            });
            let log = &mut self.iterations[i];
            if leader.is_some() {
                log.outputs.extend_from_slice(&outputs[outputs_start..]);
            } else {
                log.outputs = std::mem::take(&mut outputs);
            }
            log.records.push(LoggedRecord {
                issued,
                outputs_end: log.outputs.len(),
                shape: shape.clone(),
                reused,
                tally: TallyChanges::between(&before, &after),
                batched: false,
                copy: CopyKind::of(record),
                class_input,
                quiet: false,
                span: record.span,
                space: record.access.space,
                kind: record.access.kind,
                fences_passed: record.fences_passed,
                first_lane: record
                    .access
                    .lanes
                    .iter()
                    .enumerate()
                    .find_map(|(lane, address)| address.map(|address| (lane, address))),
            });
        }
        if let (Some(j), Some(moved)) = (leader, self.moved.as_mut()) {
            let class = &mut moved.classes[j];
            let start = class.outputs.len();
            for (k, (output, measure)) in outputs.iter().enumerate().skip(outputs_start) {
                class.push_move(output, measure.is_some(), 0, self.counting.device);
                class.outputs.push(k);
            }
            class.kept = outputs;
            let shape = shape.map(|shape| (shape, 0));
            class.push_input(start, issued, shape, (None, CopyKind::of(record)));
            class.reused.instructions += reused.instructions;
            class.reused.lanes += reused.lanes;
            add_tally_difference(&mut class.tally, &before, &after);
        }
        self.tallies = (before, after);
    }

    fn iteration_begins(&mut self, warp: u32) {
        let fuser_clean = self
            .fuser
            .as_deref()
            .is_none_or(|fuser| !fuser.has_pending(warp));
        let i = match self.iterations.iter().position(|log| log.warp == warp) {
            Some(i) => i,
            None => {
                self.iterations.push(IterationLog {
                    warp,
                    logging: false,
                    clean_start: false,
                    records: Vec::new(),
                    outputs: Vec::new(),
                    reusable: false,
                    tail: 1,
                    quiet_effects_added: false,
                    site_moves: Vec::new(),
                    output_moves: Vec::new(),
                    moved_measures: RefCell::new(Vec::new()),
                });
                self.iterations.len() - 1
            }
        };
        let log = &mut self.iterations[i];
        log.logging = true;
        log.clean_start = fuser_clean;
        log.records.clear();
        log.outputs.clear();
        log.reusable = false;
        log.quiet_effects_added = false;
        log.site_moves.clear();
        log.output_moves.clear();
        log.moved_measures.get_mut().clear();
    }

    fn iterations_end(&mut self, warp: u32) {
        // A warp that gave up skipping logs no more of its records.
        for log in self.iterations.iter_mut().filter(|log| log.warp == warp) {
            log.logging = false;
        }
    }

    fn repeats_begin(&mut self, warp: u32, moves: &[i64], iteration_fences: IterationFences) {
        let Some(i) = self
            .iterations
            .iter()
            .position(|log| log.logging && log.warp == warp)
        else {
            return;
        };
        let fuser_clean = self
            .fuser
            .as_deref()
            .is_none_or(|fuser| !fuser.has_pending(warp));
        let log = &mut self.iterations[i];
        log.logging = false;
        // The compiler effects must hold nothing at either end of the iteration, as below.
        let mut reusable = log.clean_start && fuser_clean && moves.len() == log.records.len();
        reusable &= gather_site_moves(&log.records, moves, &mut log.site_moves);
        let (alike, tail) =
            reuse_over_iterations(self.reuse.as_deref(), &log.records, moves, iteration_fences);
        log.tail = tail;
        reusable &= alike;
        // Every record counted comes from one of the iteration's own.
        reusable &= log
            .outputs
            .iter()
            .all(|(output, _)| log.site_moves.iter().any(|site| site.holds(output)));
        reusable &= effects_move_alike(
            self.reuse.as_deref(),
            self.fuser.as_deref(),
            &log.site_moves,
        );
        log.reusable = reusable;
    }

    fn record_repeated(&mut self, record: &MemRecord, repeated: &Repeated) {
        self.repeat(record, repeated, false);
    }

    /// A quiet record's repeats (`LoggedRecord::quiet`) need not be handed: they are counted
    /// here, for all the iterations batched at once, as the first of them would be; their
    /// compiler effects are added here for every iteration they are quiet in; and the profile
    /// needs to know only that the warp ran. A leader's class takes every record, iterations
    /// on, so a leader needs them all, and so does the traced warp.
    fn repeats_needed(&mut self, warp: u32, iterations: u64) -> Option<RepeatsNeeded> {
        if self.leader_of_warp(warp).is_some() {
            return None;
        }
        let traced_warp = self
            .counting
            .trace
            .as_deref()
            .is_some_and(|trace| trace.request().warp == warp);
        if traced_warp {
            return None;
        }
        let i = self.reusable_log(warp)?;
        let device = self.counting.device;
        let log = &mut self.iterations[i];
        // The batched iterations are the 1st to the `iterations - tail`-th, as `repeat` takes
        // them; a log with no quiet record needs every record of them.
        let window = log.window(iterations);
        if window.after_the_first() == 0 {
            return None;
        }
        let times = window.batched();
        log.output_moves(device);
        // As `repeat` decides at the first skipped iteration (the warp neither traced nor
        // leading, as above).
        for k in 0..log.records.len() {
            log.decide_repeats(k, times, false, false);
        }
        if !log.records.iter().any(|logged| logged.quiet) {
            return None;
        }
        // What the first skipped iteration's repeat of each quiet record counts, for all the
        // iterations batched, and adds to the compiler effects.
        let log = &self.iterations[i];
        for (k, logged) in log.records.iter().enumerate() {
            if !logged.quiet {
                continue;
            }
            log.count_batched(k, times, &mut self.counting);
            add_compiler_effects(
                (self.reuse.as_deref_mut(), self.fuser.as_deref_mut()),
                logged,
            );
        }
        let needs = log
            .records
            .iter()
            .map(|logged| match (logged.quiet, logged.issued, logged.copy) {
                (false, _, _) => RepeatNeed::Record,
                (true, true, CopyKind::WarpOnly) => RepeatNeed::WarpRan,
                (true, _, _) => RepeatNeed::Nothing,
            })
            .collect();
        let tail = log.tail;
        self.add_quiet_effects(i, iterations);
        Some(RepeatsNeeded { tail, needs })
    }

    fn repeats_ran(&mut self, warp: u32) {
        self.profiler.warp_runs(warp);
    }

    fn record_repeated_from(&mut self, ran: &MemRecord, repeated: &Repeated) {
        self.repeat(ran, repeated, true);
    }

    fn warps_alike(&mut self, warps: &WarpsAlike<'_>) {
        let mut spare = std::mem::take(self.spare_classes);
        let classes = warps
            .site_moves
            .iter()
            .map(|sites| {
                let mut class = spare.pop().unwrap_or_default();
                class.clear();
                let Some(sites) = sites else {
                    return class;
                };
                class.reusable =
                    effects_move_alike(self.reuse.as_deref(), self.fuser.as_deref(), sites);
                class.site_moves.extend_from_slice(sites);
                class
            })
            .collect();
        *self.spare_classes = spare;
        self.moved = Some(MovedWarps {
            block: warps.block,
            leaders: warps.leaders.to_vec(),
            lead: warps.lead.to_vec(),
            classes,
        });
    }

    fn records_repeated_from<'r>(
        &mut self,
        count: usize,
        repeated: &dyn Fn(usize) -> (&'r MemRecord, Repeated),
    ) {
        let Some((ran, _)) = (count > 0).then(|| repeated(0)) else {
            return;
        };
        let warp = ran.warp;
        let log = self.reusable_log(warp);
        let leader = self.leader_of(ran);
        let mut noted = false;
        for i in 0..count {
            let (ran, repeated) = repeated(i);
            // After the first skipped iteration, a quiet record (`LoggedRecord::quiet`) only
            // notes that the warp ran and adds what its iteration run added to the compiler
            // effects' tallies, and its class takes it as that record, iterations on.
            let quiet = log.filter(|&i| {
                let log = &self.iterations[i];
                repeated.iteration > 1
                    && log.window(repeated.iterations).batches(repeated.iteration)
                    && log
                        .records
                        .get(repeated.index)
                        .is_some_and(|logged| logged.quiet)
            });
            let Some(log) = quiet else {
                self.repeat_logged(ran, &repeated, true, log);
                continue;
            };
            self.add_quiet_effects(log, repeated.iterations);
            let logged = &self.iterations[log].records[repeated.index];
            if logged.issued && logged.copy == CopyKind::WarpOnly && !noted {
                self.profiler.warp_runs(warp);
                noted = true;
            }
            let class = leader.and_then(|j| self.moved.as_mut().map(|moved| &mut moved.classes[j]));
            if let (Some(class), Some(run)) = (class, logged.class_input) {
                let shape = logged.shape.clone().map(|shape| (shape, repeated.by));
                class.push_repeat(run, repeated.iteration as i64, shape, Some(0));
                class.add_effects_of(logged);
            }
        }
    }

    fn iterations_repeated_from(&mut self, batch: &IterationsRepeated<'_>) {
        let from = self.repeat_iterations(batch);
        if from <= batch.last {
            batch.each_from(self, from);
        }
    }

    fn nested_iteration_begins(&mut self, warp: u32) {
        let fuser_clean = self
            .fuser
            .as_deref()
            .is_none_or(|fuser| !fuser.has_pending(warp));
        self.nested = self
            .iterations
            .iter()
            .find(|log| log.logging && log.warp == warp)
            .map(|log| NestedStart {
                warp,
                records: log.records.len(),
                clean: fuser_clean,
                reuse_checked: false,
            });
    }

    fn nested_iterations_repeated(&mut self, batch: &IterationsRepeated<'_>) {
        let from = self.log_nested_repeats(batch);
        if from <= batch.last {
            batch.each_record_from(self, from);
        }
    }

    fn records_moved<'r>(
        &mut self,
        count: usize,
        moved: &dyn Fn(usize) -> (&'r MemRecord, MovedRecord),
    ) {
        let Some((record, first)) = (count > 0).then(|| moved(0)) else {
            return;
        };
        let (warp, from, index) = (first.warp, first.from as usize, first.index);
        let reusable = self.moved.as_ref().is_some_and(|moved| {
            moved.classes.get(from).is_some_and(|class| {
                class.reusable && index.saturating_add(count) <= class.inputs.len()
            })
        });
        let inert = |sink: &BlockSink<'_>, i: usize| {
            sink.moved.as_ref().map_or(Inert::No, |moved| {
                moved.classes[from].inputs[index + i].inert()
            })
        };
        if !reusable || self.traced(record.block, warp) {
            for i in 0..count {
                let (record, moved_record) = moved(i);
                self.pass(&moved_record.of(record), None, None);
            }
            return;
        }
        let mut noted = false;
        for i in 0..count {
            // A copy that only notes that its warp ran is not asked for: the warp's copies
            // until its next barrier note it once.
            match inert(self, i) {
                Inert::No => {}
                Inert::Quiet => continue,
                Inert::NotesWarp => {
                    if !noted {
                        self.profiler.warp_runs(warp);
                        noted = true;
                    }
                    continue;
                }
            }
            let (record, moved_record) = moved(i);
            self.copy_moved(record, &moved_record);
        }
    }

    /// A run of one: the same checks and the same copy as `records_moved`'s.
    fn record_moved(&mut self, record: &MemRecord, moved_record: &MovedRecord) {
        self.records_moved(1, &|_| (record, *moved_record));
    }
}

#[cfg(test)]
mod tests {
    use super::BlockSink;
    use crate::compile_effects::{fusible_loads, LoadFuser, LoadReuse, ReusedLoads};
    use crate::counters::Counters;
    use crate::device::{a100, fermi, gt200, h100, Device};
    use crate::kernel::{
        self, Diagnostic, Dim3, Launch, MemRecord, RecordSink, Simulation, Span, Value,
    };
    use crate::lesson_kernels::{ADJ_DIFF, ATOMICS, BANKS, DIVERGENCE, MATMUL, TRANSPOSE};
    use crate::profile::{BlockProfiler, MemoryProfile, ProfileBuilder};
    use crate::sampling;
    use crate::simulate::counting::{Counting, SharedMeasures};
    use crate::simulate::profile_copies::ShapeCopies;
    use crate::simulate::DEFAULT_STEP_BUDGET;
    use crate::trace::{LineCounters, LineTally, TraceRecorder, TraceRequest, WarpTrace};

    /// One launch whose blocks the contract is checked on.
    #[derive(Clone, Debug)]
    struct Case {
        source: String,
        kernel: String,
        defines: Vec<(String, String)>,
        grid: Dim3,
        block: Dim3,
        dyn_smem: u32,
        args: Vec<(String, Value)>,
        buffers: Vec<(String, u64)>,
        device: Device,
    }

    impl Case {
        fn new(source: &str, kernel: &str, grid: Dim3, block: Dim3, device: Device) -> Case {
            Case {
                source: source.to_string(),
                kernel: kernel.to_string(),
                defines: Vec::new(),
                grid,
                block,
                dyn_smem: 0,
                args: Vec::new(),
                buffers: Vec::new(),
                device,
            }
        }

        fn arg(mut self, name: &str, value: i64) -> Case {
            self.args.push((name.to_string(), Value::Int(value)));
            self
        }

        fn buffer(mut self, name: &str, bytes: u64) -> Case {
            self.buffers.push((name.to_string(), bytes));
            self
        }

        fn dynamic_shared(mut self, bytes: u32) -> Case {
            self.dyn_smem = bytes;
            self
        }

        fn define(mut self, name: &str, value: u32) -> Case {
            self.defines.push((name.to_string(), value.to_string()));
            self
        }
    }

    /// How the block sink receives a block's records.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Handing {
        /// Straight from the interpreter, through every method the block sink overrides.
        Overrides,
        /// Kept by a `Vec<MemRecord>`, which overrides nothing, then passed to the block sink's
        /// `record` one by one: what the trait's defaults make of them.
        DefaultsOnly,
    }

    /// Everything the block sink leaves of a launch's edge-class blocks, each counted once.
    #[derive(Debug, PartialEq)]
    struct Counted {
        counters: Vec<Counters>,
        reused: Vec<ReusedLoads>,
        fused: Vec<(Span, u64, u64, u32)>,
        lines: Vec<LineCounters>,
        profile: MemoryProfile,
        trace: WarpTrace,
    }

    /// How much of the launch the interpreter did not run, and handed as copies: the warps
    /// shown alike and the loop iterations skipped, over its blocks.
    #[derive(Debug, Default)]
    struct Copies {
        warps: u64,
        iterations: u64,
    }

    /// Runs the representative block of each edge class of `case`, with its warps and loop
    /// iterations shown alike as `simulate` shows them and both compiler effects on, and counts
    /// its records through a block sink handed them as `handing` says. Warp 1 of the first block
    /// is traced.
    fn count(case: &Case, handing: Handing) -> Result<(Counted, Copies), Diagnostic> {
        let unit = kernel::parse(&case.source, &case.defines)?;
        let program = kernel::sema::check(&unit)?;
        let launch = Launch {
            grid: case.grid,
            block: case.block,
            dyn_smem: case.dyn_smem,
            args: case.args.clone(),
            buffers: case.buffers.clone(),
            fills: Vec::new(),
            pointers: Vec::new(),
        };
        let mut sim = Simulation::new(&program, &case.kernel, &launch, 1)?;
        sim.show_warps_alike();
        let fusible = fusible_loads(&unit, &program);
        let move_units: Vec<(Span, u32)> = fusible
            .iter()
            .map(|site| (site.span, site.max_width))
            .collect();
        sim.summarise_loops(&move_units);
        let layout = sim.global_objects();
        let mut profiler = BlockProfiler::new(&case.device, layout.clone());
        let mut profile = ProfileBuilder::new(&case.device, &layout);
        let mut fuser = LoadFuser::new(fusible);
        let mut reuse = LoadReuse::new(kernel::issue::load_classes(&program.functions));
        let mut lines = LineTally::default();
        let mut shared_measures = SharedMeasures::default();
        let mut spare_classes = Vec::new();
        let classes = sampling::classes([case.grid.x, case.grid.y, case.grid.z]);
        let mut trace = TraceRecorder::new(TraceRequest {
            block: classes[0].representative,
            warp: 1,
        });
        let (mut counters, mut reused, mut fused) = (Vec::new(), Vec::new(), Vec::new());
        let mut copies = Copies::default();
        for class in &classes {
            let block = class.representative;
            let mut sink = BlockSink {
                counting: Counting {
                    device: &case.device,
                    counters: Counters::default(),
                    lines: &mut lines,
                    trace: Some(&mut trace),
                    shared_measures: &mut shared_measures,
                },
                reuse: Some(&mut reuse),
                fuser: Some(&mut fuser),
                profiler: &mut profiler,
                moved: None,
                spare_classes: &mut spare_classes,
                iterations: Vec::new(),
                tallies: (Vec::new(), Vec::new()),
                shapes: ShapeCopies::default(),
                nested: None,
            };
            let stats = match handing {
                Handing::Overrides => sim.run_block_into(block, DEFAULT_STEP_BUDGET, &mut sink)?,
                Handing::DefaultsOnly => {
                    let mut records: Vec<MemRecord> = Vec::new();
                    let stats = sim.run_block_into(block, DEFAULT_STEP_BUDGET, &mut records)?;
                    for record in &records {
                        sink.record(record);
                    }
                    stats
                }
            };
            copies.warps += u64::from(stats.warps_shown_alike);
            copies.iterations += stats.iterations_skipped;
            sink.finish_moved_warps();
            let BlockSink {
                mut counting,
                fuser: Some(block_fuser),
                reuse: Some(block_reuse),
                ..
            } = sink
            else {
                unreachable!("the sink was made with both compiler effects");
            };
            block_fuser.finish(&mut |record| {
                counting.count(record);
            });
            counters.push(counting.counters);
            fused.extend(
                block_fuser
                    .tally()
                    .map(|(site, loads, instructions, widest)| {
                        (site.span, loads, instructions, widest)
                    }),
            );
            block_fuser.reset_tally();
            reused.push(block_reuse.take_reused());
            profile.add_block(&mut profiler, 1.0);
            lines.finish_block(1.0);
        }
        let counted = Counted {
            counters,
            reused,
            fused,
            lines: lines.into_lines(),
            profile: profile.finish(),
            trace: trace.finish(layout, None),
        };
        Ok((counted, copies))
    }

    /// Checks the contract on `case`: the block sink's overrides leave what its `record` alone
    /// leaves of the records a `Vec<MemRecord>` keeps. Returns the copies the interpreter made.
    fn check(case: &Case) -> Copies {
        let (overrides, copies) = count(case, Handing::Overrides)
            .unwrap_or_else(|error| panic!("{error}: {} in {}", case.kernel, case.source));
        let (defaults, _) = count(case, Handing::DefaultsOnly).expect("the launch runs again");
        assert_eq!(overrides, defaults, "{} in {}", case.kernel, case.source);
        copies
    }

    /// Lecture kernels at lesson-sized launches: tiled matmuls whose loads fuse, a naive one whose
    /// iterations are skipped by thousands, shared-memory neighbours, bank strides, transposes
    /// through a padded tile, atomics and divergent loops.
    fn lecture_cases() -> Vec<Case> {
        let matmul = |kernel: &str, n: u32, tile: u32, pad: u32| {
            let bytes = u64::from(n * n * 4);
            Case::new(
                MATMUL,
                kernel,
                Dim3::new(n / tile, n / tile, 1),
                Dim3::new(tile, tile, 1),
                h100(),
            )
            .define("TILE_WIDTH", tile)
            .define("PAD", pad)
            .arg("n", i64::from(n))
            .buffer("a", bytes)
            .buffer("b", bytes)
            .buffer("c", bytes)
        };
        let transpose = |kernel: &str| {
            Case::new(
                TRANSPOSE,
                kernel,
                Dim3::new(2, 2, 1),
                Dim3::new(32, 8, 1),
                h100(),
            )
            .define("PAD", 1)
            .arg("n", 64)
            .buffer("out", 64 * 64 * 4)
            .buffer("in", 64 * 64 * 4)
        };
        vec![
            matmul("mm_tiled", 64, 16, 0),
            matmul("mm_tiled", 96, 32, 1),
            matmul("mm_naive", 64, 16, 0),
            Case::new(
                ADJ_DIFF,
                "adj_diff_shared",
                Dim3::new(5, 1, 1),
                Dim3::new(64, 1, 1),
                h100(),
            )
            .dynamic_shared(256)
            .arg("n", 5 * 64 - 20)
            .buffer("result", 4 * 320)
            .buffer("input", 4 * 320),
            Case::new(
                ADJ_DIFF,
                "adj_diff_naive",
                Dim3::new(4, 1, 1),
                Dim3::new(256, 1, 1),
                gt200(),
            )
            .arg("n", 1024)
            .buffer("result", 4096)
            .buffer("input", 4096),
            Case::new(
                BANKS,
                "smem_stride",
                Dim3::new(2, 1, 1),
                Dim3::new(256, 1, 1),
                h100(),
            )
            .arg("stride", 4)
            .arg("iters", 8)
            .buffer("out", 2048),
            Case::new(
                BANKS,
                "row_per_thread",
                Dim3::new(3, 1, 1),
                Dim3::new(32, 1, 1),
                a100(),
            )
            .buffer("out", 3 * 32 * 4)
            .buffer("in", 3 * 1024 * 4),
            transpose("tr_naive"),
            transpose("tr_shared"),
            Case::new(
                ATOMICS,
                "sum_hier_atomic",
                Dim3::new(3, 1, 1),
                Dim3::new(128, 1, 1),
                fermi(),
            )
            .arg("n", 3 * 128 - 7)
            .buffer("in", 4 * 384)
            .buffer("result", 4),
            Case::new(
                DIVERGENCE,
                "branch",
                Dim3::new(2, 1, 1),
                Dim3::new(64, 1, 1),
                h100(),
            )
            .arg("iters", 20)
            .arg("split", 4)
            .buffer("out", 2 * 64 * 4),
        ]
    }

    /// A small deterministic source of choices (SplitMix64).
    struct Choices(u64);

    impl Choices {
        fn pick<T: Copy>(&mut self, options: &[T]) -> T {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            options[(z % options.len() as u64) as usize]
        }
    }

    /// A generated kernel of the shapes students write: a loop with a constant step over a
    /// global buffer (its iterations skipped where alike), now and then behind a guard, with a
    /// loop inside it, a tile staged in shared memory once or in every iteration between
    /// barriers, shared reads that move with the iteration, and an atomic; blocks of 1 to 8
    /// warps, on devices of every coalescing rule.
    fn generated_case(seed: u64) -> Case {
        let mut choose = Choices(seed);
        let threads: u32 = choose.pick(&[32, 64, 96, 128, 256]);
        let blocks: u32 = choose.pick(&[1, 2, 3, 5]);
        let per_thread: u32 = choose.pick(&[1, 2, 4, 32, 33]);
        let per_iteration: u32 = choose.pick(&[0, 1, 4, 32, 64, 128]);
        let iterations: u32 = choose.pick(&[1, 2, 5, 17, 40]);
        let inner: u32 = choose.pick(&[0, 0, 3]);
        let guard = choose.pick(&["true", "i < n", "t % 2 == 0", "t < 48"]);
        let tile = choose.pick(&["none", "once", "each iteration"]);
        let shared_step: u32 = choose.pick(&[0, 1, 2, 32]);
        let atomic = choose.pick(&[false, true]);
        let device = choose.pick(&[0usize, 0, 1, 2, 3]);
        let short = choose.pick(&[0u32, 20]);
        let index = format!("i * {per_thread} + k * {per_iteration}");
        let inner_loop = if inner > 0 {
            format!("for (int j = 0; j < {inner}; ++j) acc += a[{index} + j];")
        } else {
            String::new()
        };
        let (tile_once, tile_each, tile_read) = match tile {
            "once" => ("tile[t] = a[i]; __syncthreads();", "", true),
            "each iteration" => (
                "",
                "__syncthreads(); tile[t] = a[i * {per_thread} + k * {per_iteration}]; __syncthreads();",
                true,
            ),
            _ => ("", "", false),
        };
        let tile_each = tile_each
            .replace("{per_thread}", &per_thread.to_string())
            .replace("{per_iteration}", &per_iteration.to_string());
        let shared_read = if tile_read {
            format!("acc += tile[(t + k * {shared_step}) % {threads}];")
        } else {
            String::new()
        };
        let atomic = if atomic {
            "atomicAdd(&out[t % 32], acc);"
        } else {
            ""
        };
        let source = format!(
            "__global__ void generated(const float* a, float* out, int n) {{\n\
             __shared__ float tile[{threads}];\n\
             int t = threadIdx.x;\n\
             int i = blockIdx.x * blockDim.x + t;\n\
             float acc = 0.0f;\n\
             {tile_once}\n\
             for (int k = 0; k < {iterations}; ++k) {{\n\
             {tile_each}\n\
             if ({guard}) {{ acc += a[{index}]; {inner_loop} }}\n\
             {shared_read}\n\
             }}\n\
             out[i] = acc;\n\
             {atomic}\n\
             }}\n"
        );
        let total = blocks * threads;
        let a_elements = u64::from(total - 1) * u64::from(per_thread)
            + u64::from((iterations - 1) * per_iteration)
            + u64::from(inner)
            + 1;
        let device = [h100, a100, fermi, gt200][device]();
        Case::new(
            &source,
            "generated",
            Dim3::new(blocks, 1, 1),
            Dim3::new(threads, 1, 1),
            device,
        )
        .arg("n", i64::from(total - short.min(total - 1)))
        .buffer("a", a_elements * 4)
        .buffer("out", u64::from(total) * 4)
    }

    #[test]
    fn every_override_of_the_block_sink_leaves_what_its_record_alone_leaves_of_a_full_run() {
        let mut copies = Copies::default();
        let cases = lecture_cases()
            .into_iter()
            .chain((0..40).map(|seed| generated_case(0x5eed_0000 + seed)));
        for case in cases {
            let made = check(&case);
            copies.warps += made.warps;
            copies.iterations += made.iterations;
        }
        // The interpreter handed copies of both kinds, so the overrides were exercised.
        assert!(copies.warps > 100, "{copies:?}");
        assert!(copies.iterations > 1000, "{copies:?}");
    }
}
