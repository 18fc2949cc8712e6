//! Measured beside predicted: the page's launch against the H100 measurements of the lectures.
//!
//! The lecture kernels were measured once on a real H100 (`tests/reference/`, whose README says
//! how): `h100-timing.json` holds timed launches (the median of 5 to 10 runs after a warm-up) and
//! `h100.json`'s `ncu` records hold Nsight Compute's counters of one launch each, every one with
//! the launch spec it was measured with. `build.rs` turns both files into the `TIMED` and
//! `COUNTED` tables below at build time, so that the page carries only what it compares and no
//! JSON parser. Of the probes of that folder only one kernel is shipped: probe group I's
//! `p_branch` is the warp-divergence lesson's `branch` under other names (the same statements,
//! which a test below compares), so its timed and counted launches are the lesson's, measured on
//! the same kind of H100 with the same driver and CUDA. The other probes are no launch of a
//! lesson.
//!
//! `MODEL_ERROR` is the model's error on kernels it was not built from, as `memplay-sim`'s
//! `students_reference` test computes it and checks the committed summary; `prediction_note`
//! makes of it the sentence every kernel card prints on why a prediction can differ from a
//! measurement.
//!
//! `compare` finds the measurements of the launch a run simulated. A measurement is of that
//! launch only when everything that makes the hardware's launch is the same:
//! - the device is the H100 preset, exactly;
//! - the source is the lesson file as measured (`www/kernels/` is `tests/reference/kernels/`,
//!   which `memplay-sim`'s reference test checks), so an edited kernel matches nothing;
//! - the kernel, grid, block, dynamic shared memory and scalar arguments are equal. The sizes of
//!   the buffers are not compared: a kernel gets only their pointers, and the measuring program
//!   allocated some larger than a launch reads (the strided copy's input for its largest stride);
//! - every define the measurement names has the same value. A define it does not name is one
//!   its kernel does not take: the measuring program (`kernels.cu`) makes exactly the defines a
//!   kernel uses its template parameters, so the naive matmul, measured without any, is the same
//!   launch whatever `TILE_WIDTH` the page passes;
//! - the page's registers per thread leave as many blocks resident per SM as the count nvcc
//!   chose. The page defaults to 32 where nvcc chose 16 for the adjacent difference and 30 for
//!   the padded matmul; on the H100 the warps, not the registers, limit those launches to the
//!   same blocks, so the launch is the same (the timing model reads no more of the occupancy),
//!   while 128 registers would leave a quarter of the padded matmul's blocks.
//!
//! Counting "as written" does not change the launch (the hardware runs what nvcc compiled), so
//! it is compared too: the difference then shows what nvcc's fused shared loads change.
//!
//! Nothing here reaches `memplay-sim`: the simulator comes close by modelling, and the page
//! only puts the measurement beside it.

use memplay_sim::device::h100;
use memplay_sim::kernel::Value;
use memplay_sim::occupancy::{self, BlockResources};
use memplay_sim::simulate::{SimulationInput, SimulationReport};

/// A measured launch, as its `launch_spec` (h100.json) or `spec` (h100-timing.json) wrote it.
#[derive(Debug, PartialEq)]
pub struct Spec {
    /// The kernel file under `tests/reference/kernels/`.
    pub file: &'static str,
    pub kernel: &'static str,
    /// `-D` defines by name, their values as the text `-D` carries.
    pub defines: &'static [(&'static str, &'static str)],
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dyn_smem: u32,
    /// The registers per thread nvcc chose.
    pub regs: u32,
    pub args: &'static [(&'static str, i64)],
}

/// A launch timed with CUDA events: the median of its runs after a warm-up.
#[derive(Debug, PartialEq)]
pub struct Timed {
    pub spec: Spec,
    pub ms: f64,
}

/// A launch measured by Nsight Compute: its counters, in the order of `METRICS`.
#[derive(Debug, PartialEq)]
pub struct Counted {
    pub spec: Spec,
    pub counters: [f64; METRICS.len()],
}

/// The model's error on the kernels of `tests/reference/students/`, which it was not built from:
/// the absolute difference of the predicted time from the measured one, in whole percent of the
/// measured, at the median and at the worst of `kernels` launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelError {
    pub kernels: u32,
    pub median_pct: u32,
    pub worst_pct: u32,
}

// METRICS, TIMED, COUNTED and MODEL_ERROR, written by build.rs from the measurement files.
include!(concat!(env!("OUT_DIR"), "/measured_data.rs"));

impl Counted {
    /// The measured value of an Nsight Compute counter, if the page ships it.
    pub fn get(&self, metric: &str) -> Option<f64> {
        let index = METRICS.iter().position(|name| *name == metric)?;
        Some(self.counters[index])
    }
}

/// Where the measurements come from, as `tests/reference/README.md` describes the machine.
pub const MEASURED_ON: &str =
    "an NVIDIA H100 80GB HBM3 (SXM, 132 SMs, driver 580.159.04, CUDA 13.0, nvcc -O3)";

/// What the measurements say about one simulated launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Comparison {
    /// At least one of the two was measured.
    Measured {
        timed: Option<&'static Timed>,
        counted: Option<&'static Counted>,
    },
    Unmeasured(Unmeasured),
}

/// Why no measurement is of the launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unmeasured {
    /// The device is not the H100 preset.
    OtherDevice,
    /// The source is not a lesson file as measured.
    EditedKernel,
    /// A lesson's own kernel that was written after the measurements (the boundary checks, the
    /// swizzled transpose).
    LessonKernel,
    /// The lesson's kernel on the H100, but not at these settings.
    OtherSettings,
}

impl Unmeasured {
    /// The page's one quiet line: that the comparison exists, and why it is not shown here.
    pub fn text(self) -> &'static str {
        match self {
            Unmeasured::OtherDevice => {
                "No H100 measurement of this exact launch: the lecture kernels were measured on \
                 an H100 only (choose the H100 to compare)."
            }
            Unmeasured::EditedKernel => {
                "No H100 measurement of this exact launch: the kernel is edited, and only the \
                 lesson's own kernels were measured."
            }
            Unmeasured::LessonKernel => {
                "No H100 measurement of this launch: this lesson's kernel was written for memplay \
                 after the lecture kernels were measured."
            }
            Unmeasured::OtherSettings => {
                "No H100 measurement of this exact launch: the lecture kernels were measured at \
                 some settings only."
            }
        }
    }
}

/// The sentence every kernel card prints under its prediction, measured or not: why a prediction
/// can differ from a measurement, and by how much it did on kernels the model was not built from
/// (`MODEL_ERROR`). The reasons named are the ones the timing model's own documentation gives for
/// what it approximates: it turns the simulation's counts into time with each unit's rate and
/// latency, and does not run the warp scheduler, the caches' replacement or DRAM's scheduling
/// cycle by cycle.
pub fn prediction_note(error: ModelError) -> String {
    format!(
        "A prediction is the model's estimate, not a measurement: on {} kernels the model was \
         not built from, its predicted time was within {}% of the time measured on an H100 at \
         the median, and within {}% at the worst. The model turns the work the simulation counts \
         into time with each unit's rate and latency; the warp scheduler, the caches' \
         replacement and DRAM's scheduling are approximated, not run cycle by cycle.",
        error.kernels, error.median_pct, error.worst_pct
    )
}

/// The files of `www/kernels/` that were measured: each is the text the H100 ran.
const MEASURED_FILES: [&str; 7] = [
    "adj_diff.cu",
    "atomics.cu",
    "banks.cu",
    "coalescing.cu",
    "matmul.cu",
    "transpose.cu",
    "divergence.cu",
];

/// The files of `www/kernels/` written for a lesson after the lecture kernels were measured.
const LESSON_ONLY_FILES: [&str; 2] = ["boundary.cu", "swizzle.cu"];

/// The file of `www/kernels/` whose text `source` is, if it is one. It is known by the hash of
/// its text, which `build.rs` writes for each file, so the module carries no kernel's text.
fn shipped_file(source: &str) -> Option<&'static str> {
    let hash = crate::lessons::text_hash(source);
    crate::lessons::SHIPPED_KERNELS
        .iter()
        .find(|(_, shipped)| *shipped == hash)
        .map(|(name, _)| *name)
}

/// The measurements of the launch `input` that simulated as `report`.
pub fn compare(input: &SimulationInput, report: &SimulationReport) -> Comparison {
    if input.device != h100() {
        return Comparison::Unmeasured(Unmeasured::OtherDevice);
    }
    let file = match shipped_file(&input.source) {
        Some(file) if LESSON_ONLY_FILES.contains(&file) => {
            return Comparison::Unmeasured(Unmeasured::LessonKernel)
        }
        Some(file) if MEASURED_FILES.contains(&file) => file,
        _ => return Comparison::Unmeasured(Unmeasured::EditedKernel),
    };
    let timed = TIMED
        .iter()
        .find(|t| is_launch(&t.spec, file, input, report));
    let counted = COUNTED
        .iter()
        .find(|c| is_launch(&c.spec, file, input, report));
    if timed.is_none() && counted.is_none() {
        return Comparison::Unmeasured(Unmeasured::OtherSettings);
    }
    Comparison::Measured { timed, counted }
}

/// Whether `spec` was measured as the launch `input`, whose kernel is the text of `file` (see
/// the module's header for the rules).
fn is_launch(spec: &Spec, file: &str, input: &SimulationInput, report: &SimulationReport) -> bool {
    let dim = |d: &memplay_sim::kernel::Dim3| [d.x, d.y, d.z];
    // The last `-D` of a name is the one the preprocessor keeps.
    let define = |name: &str| {
        input
            .defines
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let arg = |name: &str| input.args.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    spec.file == file
        && spec.kernel == input.kernel
        && spec.grid == dim(&input.grid)
        && spec.block == dim(&input.block)
        && spec.dyn_smem == input.dyn_smem
        && spec.defines.iter().all(|(n, v)| define(n) == Some(*v))
        && spec.args.len() == input.args.len()
        && spec
            .args
            .iter()
            .all(|(n, v)| arg(n) == Some(&Value::Int(*v)))
        && same_occupancy(spec, input, report)
}

/// Whether nvcc's register count leaves the launch as many resident blocks per SM as the page's.
fn same_occupancy(spec: &Spec, input: &SimulationInput, report: &SimulationReport) -> bool {
    let resources = BlockResources {
        threads_per_block: input
            .block
            .x
            .saturating_mul(input.block.y)
            .saturating_mul(input.block.z),
        regs_per_thread: spec.regs,
        smem_per_block: u32::try_from(report.shared_bytes_per_block).unwrap_or(u32::MAX),
    };
    occupancy::calculate(&input.device, resources).is_ok_and(|measured| {
        measured.active_blocks_per_sm == report.occupancy.active_blocks_per_sm
    })
}

/// How far the simulation is from the measurement, in percent of the measurement: positive when
/// the simulation is higher. `None` when the measurement is 0 and the simulation is not, as no
/// percentage of nothing means anything.
pub fn difference_pct(simulated: f64, measured: f64) -> Option<f64> {
    if simulated == measured {
        Some(0.0)
    } else if measured == 0.0 {
        None
    } else {
        Some(100.0 * (simulated - measured) / measured)
    }
}

/// The difference as the page writes it: "0%" when equal, "+3.2%" or "−12.5%" (one decimal
/// below 100%, a true minus sign), "−" where no percentage can be given.
pub fn difference_text(simulated: f64, measured: f64) -> String {
    let Some(pct) = difference_pct(simulated, measured) else {
        return "\u{2212}".to_string();
    };
    let text = if pct == 0.0 {
        "0%".to_string()
    } else if pct.abs() >= 100.0 {
        format!("{pct:+.0}%")
    } else {
        format!("{pct:+.1}%")
    };
    text.replace('-', "\u{2212}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lessons::Variant;
    use crate::state::State;
    use memplay_sim::lesson_kernels::{DIVERGENCE, MATMUL};
    use memplay_sim::simulate::simulate;
    use memplay_sim::DeviceId;
    use serde_json::Value as Json;

    /// Simulates the page's launch for `state` and compares it with the measurements.
    fn compare_state(state: &State) -> Comparison {
        let input = state.launch();
        let report = simulate(&input).expect("the lesson runs");
        compare(&input, &report)
    }

    fn tiled(tile: u32, pad: u32) -> State {
        State {
            variant: crate::lessons::variant("tiled-matmul", "tiled"),
            tile,
            pad,
            ..State::default()
        }
    }

    fn define<'a>(spec: &'a Spec, name: &str) -> Option<&'a str> {
        spec.defines
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    #[test]
    fn the_tiled_matmul_at_tile_16_on_the_h100_has_its_time_and_counters_measured() {
        let Comparison::Measured {
            timed: Some(timed),
            counted: Some(counted),
        } = compare_state(&tiled(16, 0))
        else {
            panic!("both measurements should match");
        };
        for spec in [&timed.spec, &counted.spec] {
            assert_eq!(spec.kernel, "mm_tiled");
            assert_eq!(define(spec, "TILE_WIDTH"), Some("16"));
            assert_eq!(define(spec, "PAD"), Some("0"));
            assert_eq!(spec.grid, [64, 64, 1]);
        }
        let shared_loads = counted
            .get("smsp__inst_executed_op_shared_ld.sum")
            .expect("a shipped counter");
        assert!(shared_loads > 0.0);
        assert_eq!(counted.get("gpu__time_duration.sum"), None);
    }

    #[test]
    fn the_tiled_matmul_at_tile_8_was_timed_but_not_counted() {
        let Comparison::Measured {
            timed: Some(timed),
            counted: None,
        } = compare_state(&tiled(8, 0))
        else {
            panic!("only the timing should match");
        };
        assert_eq!(timed.spec.block, [8, 8, 1]);
    }

    #[test]
    fn a_tile_width_never_measured_matches_nothing() {
        assert_eq!(
            compare_state(&tiled(4, 0)),
            Comparison::Unmeasured(Unmeasured::OtherSettings)
        );
        assert_eq!(
            compare_state(&tiled(16, 2)),
            Comparison::Unmeasured(Unmeasured::OtherSettings)
        );
    }

    #[test]
    fn another_device_matches_nothing() {
        for device in [DeviceId::G80, DeviceId::Gt200, DeviceId::A100] {
            let state = State {
                device,
                ..tiled(16, 0)
            };
            assert_eq!(
                compare_state(&state),
                Comparison::Unmeasured(Unmeasured::OtherDevice),
                "{device:?}"
            );
        }
    }

    #[test]
    fn an_edited_kernel_matches_nothing_even_at_the_measured_launch() {
        let edited = MATMUL.replace("float r = 0;", "float r = 0.0f;");
        assert_ne!(edited, MATMUL);
        let state = State {
            edited_source: Some(edited),
            ..tiled(16, 0)
        };
        assert_eq!(
            compare_state(&state),
            Comparison::Unmeasured(Unmeasured::EditedKernel)
        );
    }

    #[test]
    fn the_padded_matmul_matches_at_the_page_s_registers_when_the_occupancy_is_nvcc_s() {
        // nvcc chose 30 registers; at the page's default 32 as many blocks are resident.
        let padded = tiled(16, 1);
        assert!(matches!(
            compare_state(&padded),
            Comparison::Measured {
                timed: Some(_),
                counted: Some(_)
            }
        ));
        // 128 registers per thread leave two 256-thread blocks per SM instead of eight.
        let heavy = State {
            regs: 128,
            ..padded
        };
        assert_eq!(
            compare_state(&heavy),
            Comparison::Unmeasured(Unmeasured::OtherSettings)
        );
    }

    #[test]
    fn the_naive_matmul_matches_whatever_tile_width_define_the_page_passes() {
        // The naive kernel takes no define: the block's width is what was measured.
        for tile in [8, 16, 32] {
            let state = State {
                variant: crate::lessons::variant("tiled-matmul", "naive"),
                tile,
                ..State::default()
            };
            let Comparison::Measured {
                timed: Some(timed), ..
            } = compare_state(&state)
            else {
                panic!("the naive matmul at tile {tile} was timed");
            };
            assert_eq!(timed.spec.block, [tile, tile, 1]);
        }
    }

    #[test]
    fn counting_as_written_still_compares_with_what_nvcc_compiled() {
        let state = State {
            compile: memplay_sim::compile_effects::CompileEffects::AS_WRITTEN,
            ..tiled(16, 0)
        };
        assert!(matches!(
            compare_state(&state),
            Comparison::Measured {
                counted: Some(_),
                ..
            }
        ));
    }

    #[test]
    fn the_lessons_at_their_defaults_match_what_was_measured_at_the_page_s_sizes() {
        // The adjacent differences and the strided copy were timed at larger sizes than the
        // page runs (and than Nsight Compute counted), so only their counters compare; the
        // transposes were both timed and counted at the page's n = 2048.
        let expect = |lesson: Variant, timed: bool, counted: bool| {
            let state = State {
                variant: lesson,
                ..State::default()
            };
            match compare_state(&state) {
                Comparison::Measured {
                    timed: t,
                    counted: c,
                } => {
                    assert_eq!((t.is_some(), c.is_some()), (timed, counted), "{lesson:?}");
                }
                Comparison::Unmeasured(why) => {
                    assert!(!timed && !counted, "{lesson:?} should match: {why:?}");
                }
            }
        };
        expect(crate::lessons::variant("tiled-matmul", "naive"), true, true);
        expect(crate::lessons::variant("tiled-matmul", "tiled"), true, true);
        expect(
            crate::lessons::variant("adjacent-difference", "naive"),
            false,
            true,
        );
        expect(
            crate::lessons::variant("adjacent-difference", "shared"),
            false,
            true,
        );
        expect(
            crate::lessons::variant("bank-conflicts", "stride"),
            false,
            true,
        );
        expect(
            crate::lessons::variant("bank-conflicts", "row-per-thread"),
            false,
            false,
        );
        expect(
            crate::lessons::variant("coalescing", "strided-copy"),
            false,
            true,
        );
        expect(
            crate::lessons::variant("coalescing", "transpose"),
            true,
            true,
        );
        expect(
            crate::lessons::variant("bank-conflicts", "transpose"),
            true,
            true,
        );
        expect(crate::lessons::variant("atomics", "global"), false, true);
        expect(
            crate::lessons::variant("atomics", "hierarchical"),
            false,
            false,
        );
        expect(
            crate::lessons::variant("warp-divergence", "divergent"),
            true,
            true,
        );
        expect(
            crate::lessons::variant("warp-divergence", "uniform"),
            true,
            true,
        );
    }

    #[test]
    fn the_divergence_lesson_at_its_first_settings_shows_the_h100_s_time_and_counters() {
        // Probe group I timed the same loop at 1,056 blocks of 256 threads: split warps take
        // 0.090 ms, uniform ones 0.048 ms.
        for (variant, ms) in [
            (
                crate::lessons::variant("warp-divergence", "divergent"),
                0.090416,
            ),
            (
                crate::lessons::variant("warp-divergence", "uniform"),
                0.048208,
            ),
        ] {
            let state = State {
                variant,
                ..State::default()
            };
            let Comparison::Measured {
                timed: Some(timed),
                counted: Some(counted),
            } = compare_state(&state)
            else {
                panic!("{variant:?} was timed and counted on the H100");
            };
            assert_eq!(timed.ms, ms, "{variant:?}");
            assert_eq!(timed.spec.kernel, "branch");
            assert_eq!(timed.spec.grid, [1056, 1, 1]);
            assert_eq!(
                counted.get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
                Some(33792.0)
            );
        }
    }

    #[test]
    fn the_divergence_lesson_at_another_block_size_matches_nothing() {
        let state = State {
            variant: crate::lessons::variant("warp-divergence", "divergent"),
            block: 128,
            ..State::default()
        };
        assert_eq!(
            compare_state(&state),
            Comparison::Unmeasured(Unmeasured::OtherSettings)
        );
    }

    /// The text of the kernel `name` in `source`, from its `__global__` to its closing brace at
    /// the start of a line.
    fn kernel_text<'a>(source: &'a str, name: &str) -> &'a str {
        let start = source
            .find(&format!("__global__ void {name}("))
            .unwrap_or_else(|| panic!("no kernel {name}"));
        let end = source[start..].find("\n}").expect("a closing brace") + start + 2;
        &source[start..end]
    }

    #[test]
    fn the_divergence_kernel_is_probe_group_i_s_branch_kernel_under_other_names() {
        // The page ships the probe's measurements as the lesson's: the two kernels must be the
        // same statements, so that nvcc compiles the same code.
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/reference/probes/probe.cu");
        let probes = std::fs::read_to_string(path).expect("the probes are in the repository");
        let probe = kernel_text(&probes, "p_branch")
            .replace("p_branch", "branch")
            .replace("sel", "split");
        assert_eq!(kernel_text(DIVERGENCE, "branch"), probe);
    }

    #[test]
    fn the_card_s_sentence_on_prediction_error_prints_the_committed_summary() {
        let summary = reference("students/model_error.json");
        let whole = |key: &str| summary[key].as_u64().expect("a whole number");
        assert_eq!(u64::from(MODEL_ERROR.kernels), whole("kernels"));
        assert_eq!(
            u64::from(MODEL_ERROR.median_pct),
            whole("median_abs_error_pct")
        );
        assert_eq!(
            u64::from(MODEL_ERROR.worst_pct),
            whole("worst_abs_error_pct")
        );
        let note = prediction_note(MODEL_ERROR);
        let expected = format!(
            "on {} kernels the model was not built from, its predicted time was within {}% of \
             the time measured on an H100 at the median, and within {}% at the worst",
            whole("kernels"),
            whole("median_abs_error_pct"),
            whole("worst_abs_error_pct")
        );
        assert!(note.contains(&expected), "{note}");
    }

    #[test]
    fn the_difference_is_signed_relative_to_the_measurement() {
        let pct = difference_pct(0.3, 0.25).expect("a measurement of 0.25");
        assert!((pct - 20.0).abs() < 1e-9, "{pct}");
        assert_eq!(difference_text(0.3, 0.25), "+20.0%");
        assert_eq!(difference_text(0.95, 1.0), "\u{2212}5.0%");
        assert_eq!(difference_text(41.0, 41.0), "0%");
        assert_eq!(difference_text(0.0, 0.0), "0%");
        assert_eq!(difference_text(3.0, 1.0), "+200%");
        assert_eq!(difference_pct(5.0, 0.0), None);
        assert_eq!(difference_text(5.0, 0.0), "\u{2212}");
    }

    fn reference(name: &str) -> Json {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/reference")
            .join(name);
        let text = std::fs::read_to_string(&path).expect("the measurements are in the repository");
        serde_json::from_str(&text).expect("valid JSON")
    }

    /// Whether the shipped `spec` is the file's `json` spec, field by field.
    fn same_spec(spec: &Spec, json: &Json) -> bool {
        let dims = |key: &str| -> Vec<u64> {
            json[key]
                .as_array()
                .expect("a list")
                .iter()
                .filter_map(Json::as_u64)
                .collect()
        };
        let object_len = |key: &str| json[key].as_object().map_or(0, |o| o.len());
        json["file"] == spec.file
            && json["kernel"] == spec.kernel
            && dims("grid") == spec.grid.map(u64::from)
            && dims("block") == spec.block.map(u64::from)
            && json["dyn_smem"] == spec.dyn_smem
            && json["regs"] == spec.regs
            && object_len("defines") == spec.defines.len()
            && spec
                .defines
                .iter()
                .all(|(n, v)| json["defines"][n].to_string().trim_matches('"') == *v)
            && object_len("args") == spec.args.len()
            && spec.args.iter().all(|(n, v)| json["args"][n] == *v)
    }

    /// Probe group I's launches of `p_branch`: `sel` = 0, 1, 16 and 32, each timed and counted.
    const BRANCH_PROBE_LAUNCHES: usize = 4;

    #[test]
    fn the_page_ships_every_public_timing_and_counter_record_unchanged() {
        let timing = reference("h100-timing.json");
        let timing: Vec<&Json> = timing
            .as_array()
            .expect("a list")
            .iter()
            .filter(|t| t["public"] != Json::Bool(false))
            .collect();
        // The lecture launches come first, then the probes shipped as a lesson's.
        assert_eq!(TIMED.len(), timing.len() + BRANCH_PROBE_LAUNCHES);
        for (shipped, json) in TIMED.iter().zip(timing) {
            assert!(same_spec(&shipped.spec, &json["spec"]), "{}", json["id"]);
            assert_eq!(json["ms"], shipped.ms, "{}", json["id"]);
        }
        let counters = reference("h100.json");
        let records = counters["ncu"].as_array().expect("a list");
        assert_eq!(COUNTED.len(), records.len() + BRANCH_PROBE_LAUNCHES);
        for (shipped, json) in COUNTED.iter().zip(records) {
            assert!(
                same_spec(&shipped.spec, &json["launch_spec"]),
                "{}",
                json["launch"]
            );
            for metric in METRICS {
                assert_eq!(json[metric], shipped.get(metric).unwrap(), "{metric}");
            }
        }
    }

    #[test]
    fn every_measured_file_is_a_lesson_file_the_page_ships() {
        for spec in TIMED
            .iter()
            .map(|t| &t.spec)
            .chain(COUNTED.iter().map(|c| &c.spec))
        {
            assert!(MEASURED_FILES.contains(&spec.file), "{}", spec.file);
        }
    }
}
