//! The kernel card: a lecture kernel, editable, run warp by warp on the chosen device, with the
//! counters Nsight Compute would show and what the simulation cost.
//!
//! The source is shown in a plain `<textarea>`: the student's text is only ever a form value and
//! the argument of the simulator, never HTML. An edit is applied when the text area loses focus or
//! on "Run", so the simulator does not run on every keystroke.
//!
//! The simulations run in a Web Worker (the page's `bridge`): the card shows the last run that
//! came back, and while a newer one is pending it says "updating…" (with a spinner once the wait
//! is longer than a frame) and dims the old result, so the student can tell it is not yet theirs.

use crate::components::export;
use crate::components::measured_view::measured_lines;
use crate::format::{format_number, format_time};
use crate::lessons::{Lesson, Variant};
use crate::measured::{self, difference_text, Comparison, Counted};
use crate::source_link::LinkStatus;
use crate::state::Action;
use crate::statements::{Claim, Statement};
use crate::url::compile_key;
use memplay_sim::compile_effects::CompileEffects;
use memplay_sim::printf_output::PrintfOutput;
use memplay_sim::sanitizer::SanitizerReport;
use memplay_sim::simulate::{SimulationError, SimulationInput, SimulationReport};
use memplay_sim::timing::{Prediction, Unit};
use web_sys::{HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

pub use crate::run::{Shared, SimulationRun};

/// What a pending request still waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// The launch itself.
    Launch,
    /// The launch it is compared with.
    Compare,
    /// The sweep's launches, `done` of `total` answered.
    Sweep { done: usize, total: usize },
}

impl Progress {
    /// The words next to the spinner: "updating…", or how far the sweep has come.
    pub fn text(self) -> String {
        match self {
            Progress::Launch => "updating…".to_string(),
            Progress::Compare => "updating… the comparison".to_string(),
            Progress::Sweep { done, total } => {
                format!("updating… the sweep, {done} of {total} launches")
            }
        }
    }
}

/// The headline of a prediction: time, the rate that matters for the kernel, and the bottleneck.
/// The launch's copies to and from pinned host memory against its kernel time, in one line: every
/// lesson's launch beside what getting its data there and back costs (`transfer`).
pub fn copies_text(report: &SimulationReport, prediction: &Prediction) -> String {
    use memplay_sim::transfer::{launch_transfers, HostMemory, Layout};
    let transfers = launch_transfers(report, prediction, HostMemory::Pinned, Layout::Linear);
    if transfers.copies.is_empty() {
        return "No buffer to copy to or from the host.".to_string();
    }
    let bytes: u64 = transfers.copies.iter().map(|c| c.time.bytes).sum();
    format!(
        "Copying its {} MB to and from pinned host memory over {} would take {}, {}x the kernel.",
        crate::format::format_number(bytes as f64 / 1e6),
        report.device.host_link.name,
        crate::components::transfer_view::time_text(transfers.copy_seconds()),
        crate::format::format_number((transfers.ratio() * 10.0).round() / 10.0)
    )
}

pub fn throughput_text(prediction: &Prediction) -> String {
    let useful = format!("{} GB/s useful", rate_text(prediction.gbps));
    let rate = if prediction.gflops > 0.0 {
        format!("{} GFLOP/s, {useful}", rate_text(prediction.gflops))
    } else {
        useful
    };
    // The useful bytes count each distinct byte once, as the lectures do; what DRAM moves can be
    // far more (a naive matmul rereads its rows) or nothing (a launch that stays in the L2). A
    // student told "bottleneck: DRAM bandwidth" next to 0.1 GB/s needs the second figure.
    let time_seconds = prediction.time_ms / 1e3;
    let dram = if prediction.l2_warm && prediction.dram_bytes <= 0.0 {
        Some("data stays in L2".to_string())
    } else if prediction.l2_warm {
        // What it reads stays in the L2 between runs; what it writes goes back to DRAM each time.
        (time_seconds > 0.0).then(|| {
            format!(
                "reads stay in L2, DRAM {} GB/s",
                rate_text(prediction.dram_bytes / time_seconds / 1e9)
            )
        })
    } else {
        (time_seconds > 0.0).then(|| {
            format!(
                "DRAM {} GB/s",
                rate_text(prediction.dram_bytes / time_seconds / 1e9)
            )
        })
    };
    let bottleneck = format!("bottleneck: {}", prediction.bottleneck.describe());
    [
        Some(format_time(prediction.time_ms)),
        Some(rate),
        dram,
        Some(bottleneck),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" · ")
}

/// A rate as the headline prints it: whole numbers from 100 up, one decimal from 1, as the
/// lectures write 36.8 GB/s and 183.9 GFLOP/s, and two significant figures below 1, so that a
/// small rate (a matmul's useful bytes) does not round to nothing.
fn rate_text(rate: f64) -> String {
    if rate >= 100.0 {
        format_number(rate.round())
    } else if rate >= 1.0 || rate <= 0.0 {
        format!("{rate:.1}")
    } else {
        let decimals = (1 - rate.log10().floor() as i32) as usize;
        format!("{rate:.decimals$}")
    }
}

/// The units the bars show: those busy at least 1% of the predicted time, busiest first, at
/// most five, each with its share in whole percent as printed.
fn shown_units(prediction: &Prediction) -> Vec<(Unit, f64)> {
    let mut units: Vec<_> = prediction
        .units
        .iter()
        .filter(|unit| unit.share >= 0.01)
        .collect();
    memplay_sim::sorting::sort_by(&mut units, |a, b| b.share.total_cmp(&a.share));
    units
        .into_iter()
        .take(5)
        .map(|unit| (unit.unit, (unit.share * 100.0).min(100.0).round()))
        .collect()
}

/// The kernel card's view name in the bars' statements.
const BARS_VIEW: &str = "kernel-card";

/// What the unit bars and the headline's rates show, as statements: each bar's share, what a
/// bar is and why the shares do not add up to 100%, what instruction issue is where it has a
/// bar, and what the useful GB/s counts.
pub fn unit_bar_statements(prediction: &Prediction) -> Vec<Statement> {
    let units = shown_units(prediction);
    let mut statements: Vec<Statement> = units
        .iter()
        .map(|&(unit, pct)| {
            Statement::figure(
                BARS_VIEW,
                format!("{} busy", unit.describe()),
                pct,
                format!("{}: {pct:.0}%", unit.describe()),
            )
        })
        .collect();
    let sum: f64 = units.iter().map(|(_, pct)| pct).sum();
    if !units.is_empty() {
        statements.push(Statement {
            view: BARS_VIEW,
            text: format!(
                "Each bar is the share of the predicted time a unit is busy. The units work at \
                 the same time, a load in flight while another warp computes, so the shares need \
                 not add up to 100%: here they add up to {sum:.0}%."
            ),
            claim: Claim::Formula {
                shown: sum,
                recomputed: units.iter().map(|(_, pct)| pct).sum(),
                tolerance: 0.0,
            },
        });
    }
    if units.iter().any(|(unit, _)| *unit == Unit::Issue) || prediction.bottleneck == Unit::Issue {
        statements.push(Statement::words(
            BARS_VIEW,
            "Instruction issue is the SMs' warp schedulers starting instructions, each up to \
             one warp instruction per clock: every instruction of the kernel, arithmetic, \
             address or load, passes through it.",
        ));
    }
    let useful_mb = prediction.useful_bytes / 1e6;
    let mut useful = format!(
        "Useful GB/s counts each distinct byte the launch reads or writes once ({} MB) over the \
         predicted time; a byte read again, from DRAM or a cache, does not count again.",
        format_number(useful_mb)
    );
    // Why the figure can be small, where the launch says so itself: it rereads its bytes, or it
    // does much arithmetic per distinct byte.
    let reread = prediction.dram_bytes / prediction.useful_bytes.max(1.0);
    if reread >= 2.0 {
        useful.push_str(&format!(
            " DRAM moves {}× as many bytes: the kernel reads the same bytes again and again.",
            format_number(reread.round())
        ));
    }
    let flop_per_byte = prediction.gflops / prediction.gbps.max(f64::MIN_POSITIVE);
    if prediction.gflops > 0.0 && flop_per_byte >= 1.0 {
        useful.push_str(&format!(
            " It does {} FLOP per useful byte, so beside the rate at which it computes its \
             useful GB/s is small.",
            format_number(flop_per_byte.round())
        ));
    }
    statements.push(Statement::figure(
        BARS_VIEW,
        "useful megabytes",
        useful_mb,
        useful,
    ));
    statements
}

/// The units that were busy, busiest first, as bars of their share of the time, with what a bar
/// is and what the headline's terms mean beneath them.
fn unit_bars(prediction: &Prediction) -> Html {
    let statements = unit_bar_statements(prediction);
    let units = shown_units(prediction);
    let notes = statements
        .iter()
        .filter(|statement| !matches!(statement.claim, Claim::Figure { ref label, .. } if label.ends_with(" busy")));
    html! {
        <div class="unit-bars-block">
            <ul class="unit-bars" aria-label="How busy each unit is, as a share of the predicted time">
                { for units.into_iter().map(|(unit, pct)| {
                    html! {
                        <li>
                            <span class="unit-name">{ unit.describe() }</span>
                            // An SVG bar, whose width is an attribute rather than an inline style,
                            // which the page's Content-Security-Policy forbids.
                            <svg class="unit-bar" aria-hidden="true" viewBox="0 0 100 1"
                                preserveAspectRatio="none">
                                <rect width={format!("{pct:.0}")} height="1" />
                            </svg>
                            <span class="unit-pct">{ format!("{pct:.0}%") }</span>
                        </li>
                    }
                }) }
            </ul>
            { for notes.map(|note| html! {
                <p class="hint" data-testid="unit-bars-note">{ note.text.clone() }</p>
            }) }
        </div>
    }
}

#[derive(Properties, PartialEq, Debug)]
pub struct KernelViewProps {
    pub variant: Variant,
    pub source: String,
    pub edited: bool,
    /// Whether the edit is in the page's link, or why not.
    pub link_status: Option<LinkStatus>,
    pub compile: CompileEffects,
    /// Whether the launch runs the sanitizer (`State::sanitizes`).
    #[prop_or_default]
    pub sanitize: bool,
    /// The launch the settings ask for, as `launch_text` writes it.
    pub launch: String,
    /// The last run that came back; `None` before the first one.
    pub run: Option<Shared<SimulationRun>>,
    /// What is pending, while a newer run than `run` is on its way.
    pub progress: Option<Progress>,
    /// Why the simulation worker stopped during the shown request's job, if it did.
    #[prop_or_default]
    pub worker_failure: Option<String>,
    /// How many superseded runs were cancelled (the worker stopped and started afresh).
    #[prop_or_default]
    pub cancelled: u32,
    pub on_action: Callback<Action>,
    /// The sweep chart, shown beside the throughput.
    #[prop_or_default]
    pub children: Html,
}

/// `mm_tiled<<<(64, 64, 1), (16, 16, 1)>>>` with its defines, its pointers that point past the
/// start of their buffers (`in = in + 3`) and its scalar arguments.
pub fn launch_text(input: &SimulationInput) -> String {
    let dim = |d: &memplay_sim::kernel::Dim3| format!("({}, {}, {})", d.x, d.y, d.z);
    let mut text = format!(
        "{}<<<{}, {}",
        input.kernel,
        dim(&input.grid),
        dim(&input.block)
    );
    if input.dyn_smem > 0 {
        text.push_str(&format!(", {}", input.dyn_smem));
    }
    text.push_str(">>>");
    let pointers = input
        .pointers
        .iter()
        .map(|p| format!("{} = {p}", p.parameter));
    let args: Vec<String> = pointers
        .chain(
            input
                .args
                .iter()
                .map(|(name, value)| format!("{name} = {}", value_text(value))),
        )
        .collect();
    if !args.is_empty() {
        text.push_str(&format!("({})", args.join(", ")));
    }
    for (name, value) in &input.defines {
        text.push_str(&format!(" -D {name}={value}"));
    }
    text
}

fn value_text(value: &memplay_sim::kernel::Value) -> String {
    match value {
        memplay_sim::kernel::Value::Int(v) => v.to_string(),
        memplay_sim::kernel::Value::Float(v) => v.to_string(),
        memplay_sim::kernel::Value::Bool(v) => v.to_string(),
    }
}

/// "simulated 9 blocks of 4,096, 5,120 warp instructions in 1.8 ms", or, where edge classes
/// were shown to do another run block's work at shifted addresses and reused its run,
/// "simulated 9 blocks of 4,096 (4 run, 5 shown alike), ...", and where the warps of a block were
/// shown to do each other's work at moved addresses and only the first of each class ran,
/// "simulated 9 blocks of 1,024 (1 run, 8 shown alike; 1 of 32 warps run), ...", and where the
/// iterations of a loop were shown alike and the warps skipped them, "...; 732 loop iterations
/// skipped), ...".
pub fn cost_text(report: &SimulationReport, elapsed_ms: f64) -> String {
    let run = report.sampled_blocks.len();
    let alike: usize = report
        .sampled_blocks
        .iter()
        .map(|block| block.reused_for.len())
        .sum();
    let blocks = run + alike;
    let warp_instructions: f64 = report
        .sampled_blocks
        .iter()
        .map(|block| block.counters.warp_instructions)
        .sum();
    let warps = run as u64 * u64::from(report.occupancy.warps_per_block);
    let warps_alike: u64 = report
        .sampled_blocks
        .iter()
        .map(|block| u64::from(block.warps_shown_alike))
        .sum();
    let mut shown_alike = Vec::new();
    if alike > 0 {
        shown_alike.push(format!("{run} run, {alike} shown alike"));
    }
    if warps_alike > 0 {
        shown_alike.push(format!(
            "{} of {} warps run",
            format_number((warps - warps_alike.min(warps)) as f64),
            format_number(warps as f64)
        ));
    }
    let iterations_skipped: u64 = report
        .sampled_blocks
        .iter()
        .map(|block| block.iterations_skipped)
        .sum();
    if iterations_skipped > 0 {
        shown_alike.push(format!(
            "{} loop iteration{} skipped",
            format_number(iterations_skipped as f64),
            if iterations_skipped == 1 { "" } else { "s" }
        ));
    }
    format!(
        "simulated {} block{} of {}{}, {} warp instructions in {} ms",
        blocks,
        if blocks == 1 { "" } else { "s" },
        format_number(report.grid_blocks as f64),
        if shown_alike.is_empty() {
            String::new()
        } else {
            format!(" ({})", shown_alike.join("; "))
        },
        format_number(warp_instructions),
        if elapsed_ms < 10.0 {
            format!("{elapsed_ms:.1}")
        } else {
            format!("{elapsed_ms:.0}")
        }
    )
}

/// The source line an error points at, with a caret under its column.
fn error_excerpt(source: &str, error: &SimulationError) -> Option<String> {
    let span = error.span()?;
    let line = source.lines().nth(span.line.checked_sub(1)? as usize)?;
    // Columns count characters. A line of a generated kernel can be a megabyte long, so only a
    // window around the column is shown, and a control character shows as a space so that the
    // caret stays under the character it points at.
    let chars: Vec<char> = line.chars().collect();
    let col = (span.col as usize).saturating_sub(1).min(chars.len());
    let from = col.saturating_sub(EXCERPT_CONTEXT);
    let to = (col + EXCERPT_CONTEXT).min(chars.len());
    let visible = |c: &char| if c.is_control() { ' ' } else { *c };
    let mut text = String::new();
    if from > 0 {
        text.push('…');
    }
    text.extend(chars[from..to].iter().map(visible));
    if to < chars.len() {
        text.push('…');
    }
    let caret = " ".repeat(col - from + usize::from(from > 0));
    Some(format!("{text}\n{caret}^"))
}

/// Characters of the error's line shown on each side of its column.
const EXCERPT_CONTEXT: usize = 60;

/// The numbers of one row of the counters table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Figure {
    Count(f64),
    /// `of / per`, shown with two decimals, or "-" when `per` is 0.
    Ratio {
        of: f64,
        per: f64,
    },
    /// Two counts shown as "a / b".
    Pair(f64, f64),
}

impl Figure {
    /// The figure as the page shows it.
    pub fn shown(self) -> String {
        match self {
            Figure::Count(value) => format_number(value),
            Figure::Ratio { of, per } if per > 0.0 => format!("{:.2}", of / per),
            Figure::Ratio { .. } => "-".to_string(),
            Figure::Pair(a, b) => format!("{} / {}", format_number(a), format_number(b)),
        }
    }

    /// The figure in full, for the CSV export.
    pub fn exact(self) -> String {
        match self {
            Figure::Count(value) => value.to_string(),
            Figure::Ratio { of, per } if per > 0.0 => (of / per).to_string(),
            Figure::Ratio { .. } => String::new(),
            Figure::Pair(a, b) => format!("{a} / {b}"),
        }
    }

    /// How far this simulated figure is from the `measured` one of the same row, in percent of
    /// the measurement ("+0.3%", "0%", "−37.5%"; a pair gives both, "0% / +0.0%"), or nothing
    /// where a ratio has no instructions to divide by.
    pub fn difference_from(self, measured: Figure) -> String {
        match (self, measured) {
            (Figure::Count(simulated), Figure::Count(measured)) => {
                difference_text(simulated, measured)
            }
            (
                Figure::Ratio { of, per },
                Figure::Ratio {
                    of: m_of,
                    per: m_per,
                },
            ) if per > 0.0 && m_per > 0.0 => difference_text(of / per, m_of / m_per),
            (Figure::Pair(a, b), Figure::Pair(m_a, m_b)) => {
                format!("{} / {}", difference_text(a, m_a), difference_text(b, m_b))
            }
            _ => String::new(),
        }
    }
}

/// One row of the counters table: its label on the page, Nsight Compute's metric name (or how
/// the row is derived) and its numbers, `None` where they are not known (a measurement of a
/// counter Nsight Compute was not asked for).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CounterRow {
    pub label: &'static str,
    pub metric: &'static str,
    pub figure: Option<Figure>,
}

/// The counters a lesson is about, from `get` (a counter by Nsight Compute's name), `flops`
/// (the FP32 operations) and `shared_ld_conflicts` (the shared loads' bank conflicts, which the
/// page ships for the simulation only). The same rows serve the simulation and the H100's
/// measurement, so the two columns of the table cannot be derived differently.
pub fn counter_figures(
    get: impl Fn(&str) -> Option<f64>,
    flops: Option<f64>,
    shared_ld_conflicts: Option<f64>,
) -> Vec<CounterRow> {
    let shared_ld = get("smsp__inst_executed_op_shared_ld.sum");
    let shared_ld_wavefronts = get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum");
    let global_ld = get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum");
    let global_ld_sectors = get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum");
    let global_st = get("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum");
    let global_st_sectors = get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum");
    let row = |label, metric, figure| CounterRow {
        label,
        metric,
        figure,
    };
    let count = |label, metric, value: Option<f64>| row(label, metric, value.map(Figure::Count));
    let ratio = |label, metric, of: Option<f64>, per: Option<f64>| {
        row(
            label,
            metric,
            of.zip(per).map(|(of, per)| Figure::Ratio { of, per }),
        )
    };
    vec![
        count(
            "shared loads (warp instructions)",
            "smsp__inst_executed_op_shared_ld.sum",
            shared_ld,
        ),
        count(
            "shared load wavefronts",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            shared_ld_wavefronts,
        ),
        ratio(
            "wavefronts per shared load",
            "wavefronts / instructions",
            shared_ld_wavefronts,
            shared_ld,
        ),
        // The degree is the wavefronts over the conflict-free ideal, as every other label of
        // a shared access reads it (`line_model::conflict_degree`): a 128-bit load needs 4
        // wavefronts without a conflict and a G80 load 2, so wavefronts per load alone is not it.
        ratio(
            "bank conflict degree of shared loads (1 = no conflict)",
            "wavefronts / (wavefronts - bank conflicts)",
            shared_ld_wavefronts,
            shared_ld_wavefronts
                .zip(shared_ld_conflicts)
                .map(|(w, c)| w - c),
        ),
        count(
            "shared stores",
            "smsp__inst_executed_op_shared_st.sum",
            get("smsp__inst_executed_op_shared_st.sum"),
        ),
        count(
            "global load requests",
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
            global_ld,
        ),
        count(
            "global load sectors (32 B)",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
            global_ld_sectors,
        ),
        ratio(
            "sectors per load request (4 = coalesced floats)",
            "sectors / requests",
            global_ld_sectors,
            global_ld,
        ),
        row(
            "global store requests / sectors",
            "l1tex__t_requests/sectors_pipe_lsu_mem_global_op_st.sum",
            global_st
                .zip(global_st_sectors)
                .map(|(requests, sectors)| Figure::Pair(requests, sectors)),
        ),
        count("FP32 operations", "2 per FMA", flops),
    ]
}

/// The simulated rows of the counters table (a counter the simulator does not know reads 0).
fn simulated_figures(report: &SimulationReport) -> Vec<CounterRow> {
    let c = &report.counters;
    counter_figures(
        |name| Some(c.get(name).unwrap_or(0.0)),
        Some(c.fp32_flops),
        Some(c.shared_ld_bank_conflicts),
    )
}

/// The counters a lesson is about: its label on the page, Nsight Compute's metric name (or how
/// the row is derived), the value as the page shows it, and the value in full for the CSV export.
pub fn counter_rows(
    report: &SimulationReport,
) -> Vec<(&'static str, &'static str, String, String)> {
    simulated_figures(report)
        .into_iter()
        .map(|row| {
            let (shown, exact) = row
                .figure
                .map_or_else(Default::default, |f| (f.shown(), f.exact()));
            (row.label, row.metric, shown, exact)
        })
        .collect()
}

/// What the counters table shows of the simulated launch, as statements: each row's figure by
/// its label, with the row's words as the page prints them.
#[cfg(test)]
pub fn counter_statements(report: &SimulationReport) -> Vec<Statement> {
    simulated_figures(report)
        .into_iter()
        .filter_map(|row| {
            let figure = row.figure?;
            let value = match figure {
                Figure::Count(value) => value,
                Figure::Ratio { of, per } if per > 0.0 => of / per,
                Figure::Ratio { .. } => return None,
                Figure::Pair(requests, _) => requests,
            };
            Some(Statement::figure(
                "counters",
                row.label,
                value,
                format!("{} {}", row.label, figure.shown()),
            ))
        })
        .collect()
}

/// The measured column of the counters table: each row's H100 figure, as shown, and how far
/// the simulated figure is from it. Nsight Compute was not asked for FP32 operations, so that
/// row reads "not measured".
pub fn measured_cells(report: &SimulationReport, counted: &Counted) -> Vec<(String, String)> {
    let measured = counter_figures(|name| counted.get(name), None, None);
    simulated_figures(report)
        .into_iter()
        .zip(measured)
        .map(
            |(simulated, measured)| match (simulated.figure, measured.figure) {
                (Some(simulated), Some(measured)) => {
                    (measured.shown(), simulated.difference_from(measured))
                }
                _ => ("not measured".to_string(), String::new()),
            },
        )
        .collect()
}

/// The counters a lesson is about, with Nsight Compute's names as tooltips, and beside them the
/// H100's measurement of the same launch where there is one.
fn counters_table(report: &SimulationReport, counted: Option<&Counted>) -> Html {
    let rows = counter_rows(report);
    let measured = counted.map(|counted| measured_cells(report, counted));
    let caption = if measured.is_some() {
        "What the whole launch does (Nsight Compute's counters), beside the same launch \
         measured by Nsight Compute on a real H100"
    } else {
        "What the whole launch does (Nsight Compute's counters)"
    };
    // The table scrolls inside its own box where it is wider than the page (a phone beside a
    // measured launch), a named region with a tab stop so the keyboard scrolls it too; the page
    // itself never pans sideways.
    html! {
        <div class="counters-scroll scroll-edge" tabindex="0" role="region"
             aria-label="The launch's counters">
            <table class={classes!("counters", measured.is_some().then_some("with-measured"))}
                   data-testid="counters">
                <caption>{ caption }</caption>
                if measured.is_some() {
                    <thead>
                        <tr>
                            <th scope="col">{ "Counter" }</th>
                            <th scope="col" class="number">{ "Simulated" }</th>
                            <th scope="col" class="number" data-testid="measured-counters">
                                { "Measured (H100)" }
                            </th>
                            <th scope="col" class="number">{ "Difference" }</th>
                        </tr>
                    </thead>
                }
                <tbody>
                    { for rows.into_iter().enumerate().map(|(i, (label, metric, value, _))| {
                        let measured = measured.as_ref().and_then(|cells| cells.get(i)).cloned();
                        html! {
                            <tr title={metric}>
                                <th scope="row">{ label }</th>
                                <td>{ value }</td>
                                if let Some((value, difference)) = measured {
                                    <td class="measured">{ value }</td>
                                    <td class="difference">{ difference }</td>
                                }
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
        </div>
    }
}

/// Buttons that download the run's counters as CSV, the kernel as `<kernel>.cu` (the text the
/// student sees, edited or not) and the launch as a launch file for `memplay replay`. The files
/// are made when a button is pressed, not at every render.
fn kernel_exports(run: &Shared<SimulationRun>, source: &str) -> Html {
    let kernel = run.input.kernel.clone();
    let on_csv = {
        let run = run.clone();
        let name = format!("{kernel}-counters.csv");
        Callback::from(move |_: MouseEvent| {
            let Ok(report) = &run.result else {
                return;
            };
            let rows = counter_rows(report);
            let rows: Vec<(&str, &str, String)> = rows
                .into_iter()
                .map(|(label, metric, _, exact)| (label, metric, exact))
                .collect();
            export::download_text(&name, "text/csv", &export::counters_csv(&rows));
        })
    };
    let on_cu = {
        let source = source.to_string();
        let name = format!("{kernel}.cu");
        Callback::from(move |_: MouseEvent| export::download_text(&name, "text/plain", &source))
    };
    let on_launch = {
        let run = run.clone();
        let name = format!("{kernel}-launch.json");
        Callback::from(move |_: MouseEvent| {
            if let Some(json) = export::launch_json(&run) {
                export::download_text(&name, "application/json", &json);
            }
        })
    };
    let has_launch_file = run.result.is_ok() && run.prediction.is_some();
    html! {
        <div class="export-bar" role="group" aria-label="Download the run">
            <span class="export-label">{ "Download:" }</span>
            <button type="button" data-testid="export-csv" onclick={on_csv}>
                { "counters (.csv)" }
            </button>
            <button type="button" data-testid="export-cu" onclick={on_cu}>
                { format!("{kernel}.cu") }
            </button>
            if has_launch_file {
                <button type="button" data-testid="export-launch" onclick={on_launch}
                        title="The launch and its results, for memplay replay FILE.json --check">
                    { "launch (.json)" }
                </button>
            }
        </div>
    }
}

/// The sanitizer's findings as text, one a line, or that it found nothing.
pub fn sanitizer_text(sanitizer: &SanitizerReport) -> String {
    let mut text = match sanitizer.findings.len() as u64 + sanitizer.more {
        0 => "Sanitizer: no race, barrier or uninitialized read found.".to_string(),
        count => format!("Sanitizer: {count} found."),
    };
    for finding in &sanitizer.findings {
        text.push('\n');
        text.push_str(&finding.to_string());
    }
    text
}

/// What the kernel printed in the simulated blocks, under a line that says so, and how many lines
/// were left out. The lines are text: the page never reads them as markup.
pub fn printf_text(printf: &PrintfOutput) -> String {
    let mut text = String::from("printf output of the simulated blocks, in block order:");
    for line in &printf.lines {
        text.push('\n');
        text.push_str(line);
    }
    match printf.lines_not_shown {
        0 => {}
        1 => text.push_str("\n(1 more line not shown)"),
        more => text.push_str(&format!("\n({more} more lines not shown)")),
    }
    text
}

/// A run's throughput, counters and cost, or its error. `sweep` is the sweep chart, shown beside
/// the throughput.
fn run_outcome(run: &Shared<SimulationRun>, sweep: Html, source: &str, variant: Variant) -> Html {
    match &run.result {
        Ok(report) => {
            // The launch that ran, not the settings now: a newer run may still be on its way.
            let comparison = measured::compare(&run.input, report);
            let counted = match comparison {
                Comparison::Measured { counted, .. } => counted,
                Comparison::Unmeasured(_) => None,
            };
            let measured = measured_lines(
                comparison,
                run.prediction.as_ref().map(|prediction| prediction.time_ms),
            );
            html! {
            <>
                if let Some(prediction) = &run.prediction {
                    <div class="throughput">
                        <p class="throughput-line">
                            { format!("Predicted on the {}: ", run.input.device.name) }
                            <strong data-testid="throughput">{ throughput_text(prediction) }</strong>
                        </p>
                        { measured }
                        <p class="copies-line" data-testid="copies-line">
                            { copies_text(report, prediction) }
                        </p>
                        <div class="throughput-layout">
                            { unit_bars(prediction) }
                            { sweep }
                        </div>
                    </div>
                } else {
                    { measured }
                }
                { counters_table(report, counted) }
                if let Some(sanitizer) = &report.sanitizer {
                    <pre class="sanitizer" tabindex="0" role="region" aria-label="Sanitizer"
                         data-testid="sanitizer-report">{ sanitizer_text(sanitizer) }</pre>
                }
                if let Some(printf) = &report.printf {
                    <pre class="sanitizer" tabindex="0" role="region" aria-label="printf output"
                         data-testid="printf-output">{ printf_text(printf) }</pre>
                }
                { kernel_exports(run, source) }
                <p class="sim-cost" data-testid="sim-cost">{ cost_text(report, run.elapsed_ms) }</p>
            </>
            }
        }
        // The excerpt comes from the source that ran, which a newer edit may already have changed.
        Err(error) => html! {
            <div class="kernel-error" role="alert">
                <p data-testid="kernel-error">{ error.to_string() }</p>
                if let Some(reason) = crate::model::ragged_tile_reason(&run.input, error) {
                    <p class="error-reason" data-testid="boundary-hint">
                        { reason }
                        if let Some((key, title)) = Lesson::explaining("ragged-tiles").filter(|(key, _)| *key != variant.lesson().key()) {
                            { " " }
                            <a href={format!("?lesson={key}")}>{ format!("The lesson {title}") }</a>
                            { " shows the guarded kernel." }
                        } else {
                            { " Choose the guarded kernel in the Kernel menu." }
                        }
                    </p>
                }
                if let Some(excerpt) = error_excerpt(&run.input.source, error) {
                    // A long line scrolls sideways; the tab stop lets the keyboard scroll it.
                    <pre class="error-excerpt" tabindex="0" role="region"
                         aria-label="The line of the error">{ excerpt }</pre>
                }
            </div>
        },
    }
}

#[function_component(KernelView)]
pub fn kernel_view(props: &KernelViewProps) -> Html {
    let textarea = use_node_ref();
    // The text area is not bound to `source` on every render: Yew puts a bound value back into
    // the element whenever the component renders, and it renders whenever the worker answers, so
    // a student typing while the sweep fills in would lose the text not yet sent. The element's
    // text is set only when the source itself changes (another lesson, a reset, a link's kernel),
    // and the student's own edit arrives as the same text, which is left alone.
    {
        let textarea = textarea.clone();
        use_effect_with(props.source.clone(), move |source| {
            if let Some(area) = textarea.cast::<HtmlTextAreaElement>() {
                if area.value() != *source {
                    area.set_value(source);
                }
            }
        });
    }
    let on_compile = {
        let on_action = props.on_action.clone();
        Callback::from(move |event: Event| {
            let select: HtmlSelectElement = event.target_unchecked_into();
            let compile = if select.value() == "as-written" {
                CompileEffects::AS_WRITTEN
            } else {
                CompileEffects::AS_COMPILED
            };
            on_action.emit(Action::SetCompile { compile });
        })
    };
    let on_sanitize = {
        let on_action = props.on_action.clone();
        Callback::from(move |event: Event| {
            let input: HtmlInputElement = event.target_unchecked_into();
            on_action.emit(Action::SetSanitize {
                sanitize: input.checked(),
            });
        })
    };
    let apply_edit = {
        let on_action = props.on_action.clone();
        let textarea = textarea.clone();
        move || {
            if let Some(area) = textarea.cast::<HtmlTextAreaElement>() {
                on_action.emit(Action::EditSource {
                    source: area.value(),
                });
            }
        }
    };
    let on_source_change = {
        let apply_edit = apply_edit.clone();
        Callback::from(move |_: Event| apply_edit())
    };
    let on_run = Callback::from(move |_: MouseEvent| apply_edit());
    let on_reset = {
        let on_action = props.on_action.clone();
        let textarea = textarea.clone();
        let original = props.variant.source();
        Callback::from(move |_: MouseEvent| {
            // The text area keeps what was typed until it is told otherwise.
            if let Some(area) = textarea.cast::<HtmlTextAreaElement>() {
                area.set_value(original);
            }
            on_action.emit(Action::ResetSource);
        })
    };

    let outcome = match &props.run {
        None => html! { <p class="sim-cost">{ "Simulating the lesson's kernel…" }</p> },
        Some(run) => run_outcome(run, props.children.clone(), &props.source, props.variant),
    };
    let updating = props.progress.map(|progress| {
        html! {
            <p class="updating" data-testid="updating" role="status">
                <span class="spinner" aria-hidden="true"></span>
                { progress.text() }
            </p>
        }
    });
    let busy = props.progress.is_some();
    let failure = props.worker_failure.as_ref().map(|message| {
        html! {
            <p class="worker-failure" data-testid="worker-failure" role="alert">
                { format!("{message}. The results below are from the last run that finished; \
                           the next change of a setting tries again with a fresh worker.") }
            </p>
        }
    });

    html! {
        <section class="card kernel" data-testid="kernel" aria-labelledby="kernel-title">
            <h2 id="kernel-title">{ format!("Kernel: {}", props.variant.title()) }</h2>
            // Labels name their controls by `for`, and hints describe them by
            // `aria-describedby`: a label wrapped around a control and its hint would make the
            // hint part of the control's name.
            <div class="kernel-controls">
                <div class="field">
                    <label class="label" for="compile">{ "Count instructions" }</label>
                    <select id="compile" data-testid="control-compile" onchange={on_compile}>
                        <option value="as-compiled" selected={compile_key(props.compile) == "as-compiled"}>
                            { "as nvcc -O3 compiles them (fused 128-bit shared loads, short ifs predicated, loaded values reused)" }
                        </option>
                        <option value="as-written" selected={compile_key(props.compile) == "as-written"}>
                            { "as written (one load per element read, by the warps that take it)" }
                        </option>
                    </select>
                </div>
                <div class="field">
                    <input type="checkbox" id="sanitize" data-testid="control-sanitize"
                           checked={props.sanitize} onchange={on_sanitize} />
                    <label for="sanitize">
                        { "Sanitize: racecheck, synccheck and initcheck every warp of the blocks run" }
                    </label>
                </div>
            </div>
            <p class="launch"><code data-testid="launch">{ props.launch.clone() }</code></p>
            <div class="field source">
                <label class="label" for="kernel-source">
                    { if props.edited { "Kernel source (edited)" } else { "Kernel source" } }
                </label>
                <textarea
                    ref={textarea}
                    id="kernel-source"
                    data-testid="kernel-source"
                    spellcheck="false"
                    wrap="off"
                    rows="16"
                    onchange={on_source_change}
                />
            </div>
            <div class="kernel-buttons">
                <button type="button" data-testid="run" onclick={on_run}>{ "Run" }</button>
                if props.edited {
                    <button type="button" data-testid="reset-source" onclick={on_reset}>
                        { "Back to the lesson's kernel" }
                    </button>
                }
            </div>
            if let Some(status) = &props.link_status {
                <p class={classes!("source-link", status.problem.then_some("problem"))}
                   data-testid="source-link" role="status">
                    { status.text.clone() }
                </p>
            }
            // The status line keeps its height whether or not anything is pending, so the
            // result below does not jump at every slider step.
            <div class="status-line" data-cancelled-runs={props.cancelled.to_string()}>
                { for updating }
            </div>
            { for failure }
            <div class={classes!("outcome", busy.then_some("stale"))} aria-busy={busy.to_string()}>
                { outcome }
            </div>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::State;
    use memplay_sim::simulate::simulate;

    #[test]
    fn a_shared_run_equals_its_copies_and_no_other_answer_even_an_equal_one() {
        let answer = Shared::new(vec![1u8; 4]);
        assert!(answer == answer.clone());
        assert!(answer != Shared::new(vec![1u8; 4]));
        assert_eq!(*answer, vec![1u8; 4]);
    }

    fn check(state: State, expected_launch: &str) {
        let input = state.launch();
        assert_eq!(launch_text(&input), expected_launch);
    }

    #[test]
    fn the_tiled_matmul_launch_reads_like_cuda() {
        check(
            State::default(),
            "mm_tiled<<<(64, 64, 1), (16, 16, 1)>>>(n = 1024) -D TILE_WIDTH=16 -D PAD=0",
        );
    }

    #[test]
    fn a_pointer_into_its_buffer_is_shown_with_its_offset() {
        let mut state = State::from_query("lesson=my-kernel");
        state.my_launch.set_points_to("x", "x + 32".to_string());
        check(
            state,
            "saxpy<<<(4096, 1, 1), (256, 1, 1)>>>(x = x + 32, a = 2, n = 1048576)",
        );
    }

    #[test]
    fn the_shared_adjacent_difference_passes_its_dynamic_shared_memory() {
        check(
            State {
                variant: crate::lessons::variant("adjacent-difference", "shared"),
                ..State::default()
            },
            "adj_diff_shared<<<(16384, 1, 1), (256, 1, 1), 1024>>>(n = 4194304)",
        );
    }

    #[test]
    fn an_undeclared_name_is_shown_with_its_line_and_a_caret() {
        let source =
            "__global__ void mm_tiled(float* a, float* b, float* c, int n) {\n  c[0] = m;\n}\n";
        let state = State {
            edited_source: Some(source.to_string()),
            ..State::default()
        };
        let input = state.launch();
        let error = simulate(&input).expect_err("m is not declared");
        assert_eq!(error.to_string(), "2:10: 'm' is not declared");
        assert_eq!(
            error_excerpt(source, &error).as_deref(),
            Some("  c[0] = m;\n         ^")
        );
    }

    #[test]
    fn an_error_on_a_megabyte_line_shows_a_window_around_its_column() {
        let line = format!("{}m{}", "1+".repeat(50_000), "+1".repeat(50_000));
        let source = format!("__global__ void k() {{\n{line}\n}}\n");
        let error = SimulationError::Kernel(memplay_sim::kernel::Diagnostic::new(
            memplay_sim::kernel::Span {
                line: 2,
                col: 100_001,
                start: 0,
                end: 0,
            },
            "'m' is not declared",
        ));
        let excerpt = error_excerpt(&source, &error).expect("the line exists");
        // Sixty characters before the column, and sixty from it on (the 'm' and 59 more).
        let expected_line = format!("…{}m{}…", "1+".repeat(30), &"+1".repeat(30)[..59]);
        let expected_caret = format!("{}^", " ".repeat(61));
        assert_eq!(excerpt, format!("{expected_line}\n{expected_caret}"));
    }

    #[test]
    fn a_tab_in_the_error_line_keeps_the_caret_under_its_column() {
        let source = "__global__ void k() {\n\tc[0] = m;\n}\n";
        let error = SimulationError::Kernel(memplay_sim::kernel::Diagnostic::new(
            memplay_sim::kernel::Span {
                line: 2,
                col: 9,
                start: 0,
                end: 0,
            },
            "'m' is not declared",
        ));
        assert_eq!(
            error_excerpt(source, &error).as_deref(),
            Some(" c[0] = m;\n        ^")
        );
    }

    #[test]
    fn every_launch_says_what_its_copies_to_the_host_would_cost() {
        // The adjacent difference's 32 MB over the H100's PCIe 5.0: some 0.6 ms, 36 kernels.
        let state = State {
            variant: crate::lessons::variant("adjacent-difference", "naive"),
            ..State::default()
        };
        let report = simulate(&state.launch()).expect("runs");
        let prediction = memplay_sim::timing::predict(&report);
        assert_eq!(
            copies_text(&report, &prediction),
            "Copying its 33.6 MB to and from pinned host memory over PCIe 5.0 x16 would take \
             592.5 us, 36.5x the kernel."
        );
    }

    /// Simulates the lesson of `state` and checks its throughput headline.
    fn check_throughput(state: State, expected: &str) {
        let input = state.launch();
        let report = simulate(&input).expect("the lesson runs");
        let prediction = memplay_sim::timing::predict(&report);
        assert_eq!(throughput_text(&prediction), expected);
    }

    #[test]
    fn g80_naive_matmul_names_the_dram_traffic_next_to_the_useful_bytes() {
        // Seed 003's naive matmul on G80: 12 MB of distinct data, but every half-warp rereads
        // a's word and b's row from DRAM, 96 bytes per 32 flops: DRAM moves some 37 GB/s.
        check_throughput(
            State {
                device: memplay_sim::DeviceId::G80,
                variant: crate::lessons::variant("tiled-matmul", "naive"),
                regs: 10,
                ..State::default()
            },
            "175 ms · 12.3 GFLOP/s, 0.072 GB/s useful · DRAM 36.8 GB/s · bottleneck: DRAM bandwidth",
        );
    }

    /// The bars' statements of `state`'s launch.
    fn bar_statements(state: State) -> Vec<Statement> {
        let report = simulate(&state.launch()).expect("the lesson runs");
        unit_bar_statements(&memplay_sim::timing::predict(&report))
    }

    #[test]
    fn the_bars_say_what_a_share_is_and_add_up_to_the_sum_they_print() {
        let statements = bar_statements(State {
            variant: crate::lessons::variant("tiled-matmul", "naive"),
            ..State::default()
        });
        let shares: f64 = statements
            .iter()
            .filter_map(|s| match &s.claim {
                Claim::Figure { label, value } if label.ends_with(" busy") => Some(*value),
                _ => None,
            })
            .sum();
        let sum = statements
            .iter()
            .find(|s| {
                s.text
                    .starts_with("Each bar is the share of the predicted time")
            })
            .unwrap_or_else(|| panic!("no word on what a bar is: {statements:?}"));
        assert!(
            sum.text
                .ends_with(&format!("here they add up to {shares:.0}%.")),
            "{}",
            sum.text
        );
        assert!(shares > 100.0, "the naive matmul's units overlap: {shares}");
        assert!(
            statements
                .iter()
                .any(|s| s.text.starts_with("Instruction issue is")),
            "{statements:?}"
        );
    }

    #[test]
    fn a_matmuls_small_useful_rate_is_explained_by_its_rereads_and_its_arithmetic() {
        let statements = bar_statements(State {
            device: memplay_sim::DeviceId::G80,
            variant: crate::lessons::variant("tiled-matmul", "naive"),
            regs: 10,
            ..State::default()
        });
        let useful = &statements.last().expect("the useful bytes").text;
        assert!(
            useful.starts_with(
                "Useful GB/s counts each distinct byte the launch reads or writes once (12.6 MB)"
            ),
            "{useful}"
        );
        assert!(
            useful.contains("the kernel reads the same bytes again and again")
                && useful.contains("FLOP per useful byte"),
            "{useful}"
        );
    }

    #[test]
    fn small_rates_keep_two_significant_figures() {
        assert_eq!(rate_text(0.0719), "0.072");
        assert_eq!(rate_text(36.84), "36.8");
        assert_eq!(rate_text(1073.2), "1,073");
    }

    #[test]
    fn a_launch_that_fits_the_l2_says_its_reads_stay_there() {
        // The strided copy of 1 M floats reads 4 MB, which H100's L2 keeps between the timed
        // launches, and writes 4 MB, which go back to DRAM each time (tests/reference/dram_mix);
        // the launch overhead is most of the time.
        check_throughput(
            State {
                variant: crate::lessons::variant("coalescing", "strided-copy"),
                ..State::default()
            },
            "7.82 µs · 1,073 GB/s useful · reads stay in L2, DRAM 536 GB/s · bottleneck: the launch overhead",
        );
    }

    #[test]
    fn every_counter_of_the_table_is_one_the_page_ships_measured() {
        // The measured column reads the same rows through `Counted::get`: a counter the table
        // asks for that build.rs does not ship would read "not measured" on every lesson.
        let asked = std::cell::RefCell::new(Vec::new());
        counter_figures(
            |name| {
                asked.borrow_mut().push(name.to_string());
                Some(1.0)
            },
            None,
            None,
        );
        let asked = asked.into_inner();
        assert!(!asked.is_empty());
        for name in asked {
            assert!(crate::measured::METRICS.contains(&name.as_str()), "{name}");
        }
    }

    /// The table's rows of `state`'s launch and their measured cells.
    type MeasuredColumn = (
        Vec<(&'static str, &'static str, String, String)>,
        Vec<(String, String)>,
    );

    /// The measured column of `state`'s launch, which must have been counted on the H100.
    fn measured_column(state: &State) -> MeasuredColumn {
        let input = state.launch();
        let report = simulate(&input).expect("the lesson runs");
        let measured::Comparison::Measured {
            counted: Some(counted),
            ..
        } = measured::compare(&input, &report)
        else {
            panic!("{:?} was counted on the H100", state.variant);
        };
        (counter_rows(&report), measured_cells(&report, counted))
    }

    #[test]
    fn the_measured_column_sits_beside_the_simulated_counters_with_their_difference() {
        let (rows, cells) = measured_column(&State::default());
        assert_eq!(rows.len(), cells.len());
        let row = |label: &str| {
            let i = rows.iter().position(|r| r.0 == label).expect("a row");
            (rows[i].2.clone(), cells[i].clone())
        };
        // The tiled matmul's global loads are the simulator's exactly: 2 n^3 / 16 / 32.
        let (simulated, (measured, difference)) = row("global load requests");
        assert_eq!(simulated, "4,194,304");
        assert_eq!(measured, simulated);
        assert_eq!(difference, "0%");
        // Nsight Compute's arbitration adds a few wavefronts to conflict-free code.
        let (_, (_, difference)) = row("shared load wavefronts");
        assert!(difference.starts_with('\u{2212}'), "{difference}");
        assert_eq!(
            row("FP32 operations").1,
            ("not measured".to_string(), String::new())
        );
    }

    #[test]
    fn counting_as_written_shows_how_far_the_source_s_loads_are_from_nvcc_s() {
        let (rows, cells) = measured_column(&State {
            compile: CompileEffects::AS_WRITTEN,
            ..State::default()
        });
        // As written, each of the 16 steps of k reads sa and sb: 32 loads per tile. nvcc fuses
        // four reads of sa's row into one 128-bit load, 20 loads: the source's 67.1 million
        // are 60% more than the 41.9 million measured.
        assert_eq!(rows[0].0, "shared loads (warp instructions)");
        assert_eq!(cells[0].1, "+60.0%");
    }

    #[test]
    fn a_ratio_without_instructions_has_no_difference() {
        let none = Figure::Ratio { of: 0.0, per: 0.0 };
        assert_eq!(none.shown(), "-");
        assert_eq!(none.difference_from(none), "");
        assert_eq!(
            Figure::Pair(2.0, 8.0).difference_from(Figure::Pair(2.0, 10.0)),
            "0% / \u{2212}20.0%"
        );
    }

    #[test]
    fn the_cost_counts_simulated_blocks_and_their_warp_instructions() {
        let state = State {
            variant: crate::lessons::variant("adjacent-difference", "naive"),
            ..State::default()
        };
        let report = simulate(&state.launch()).expect("runs");
        let text = cost_text(&report, 1.84);
        // Its first block differs (`i > 0` idles a lane); the last one is shown alike to the
        // interior block and reuses its run. In the first block `i > 0` also sets warp 0 apart
        // from the others, so warp 0 runs for itself and warp 1 for warps 1 to 7; in the
        // interior block one warp runs for all.
        assert!(
            text.starts_with(
                "simulated 3 blocks of 16,384 (2 run, 1 shown alike; 3 of 16 warps run), "
            ),
            "{text}"
        );
        assert!(text.ends_with(" warp instructions in 1.8 ms"), "{text}");
    }

    #[test]
    fn the_cost_says_which_blocks_ran_and_which_were_shown_alike() {
        let state = State {
            variant: crate::lessons::variant("tiled-matmul", "tiled"),
            tile: 32,
            ..State::default()
        };
        let report = simulate(&state.launch()).expect("runs");
        let text = cost_text(&report, 12.0);
        // Warp w of a 32 x 32 block reads row w of each tile: one warp runs for the other 31.
        // Each of the 32 phases reads the tiles 32 columns of `a` and 32 rows of `b` further on:
        // that warp runs the first phase and skips the other 31, and in the phase it runs, it
        // runs the first four of the `k` loop's 32 iterations (whose reads of `sa` nvcc fuses
        // into one 16-byte load) and skips the other 28, four at a time.
        assert!(
            text.starts_with("simulated 9 blocks of ")
                && text.contains(
                    " (1 run, 8 shown alike; 1 of 32 warps run; 59 loop iterations skipped), "
                ),
            "{text}"
        );
    }
}
