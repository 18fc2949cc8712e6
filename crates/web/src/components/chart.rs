//! Small SVG chart helpers: linear and logarithmic scales, tick labels, the Occupancy
//! Calculator's step chart (occupancy against one resource, the current value marked), and the
//! numbers behind a chart as a table (`ChartNumbers`).
//!
//! The scales are plain arithmetic, tested on the host; the charts draw with them. Every chart is
//! an `<svg role="img">` whose `aria-label` names it and whose `aria-describedby` gives its
//! numbers in a sentence, and under it a disclosure holds the same numbers as a table, so that a
//! student who cannot see the chart, or cannot see it well, gets everything it shows.

use crate::components::export::{chart_export, ChartExportProps};
use crate::format::format_number;
use crate::model::{Sweep, SweepKind, SweepPoint};
use yew::prelude::*;

/// Maps data values to SVG coordinates, linearly or by their logarithm.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    from: (f64, f64),
    to: (f64, f64),
    log: bool,
}

impl Scale {
    pub fn linear(from: (f64, f64), to: (f64, f64)) -> Scale {
        Scale {
            from,
            to,
            log: false,
        }
    }

    /// A log scale; its domain must be positive.
    pub fn log(from: (f64, f64), to: (f64, f64)) -> Scale {
        Scale {
            from: (from.0.ln(), from.1.ln()),
            to,
            log: true,
        }
    }

    pub fn map(&self, value: f64) -> f64 {
        let value = if self.log {
            value.max(f64::MIN_POSITIVE).ln()
        } else {
            value
        };
        let span = self.from.1 - self.from.0;
        let t = if span == 0.0 {
            0.0
        } else {
            (value - self.from.0) / span
        };
        self.to.0 + t * (self.to.1 - self.to.0)
    }
}

/// An SVG coordinate with one decimal, which is plenty on a 700-unit canvas.
pub fn px(value: f64) -> String {
    format!("{value:.1}")
}

/// The `points` attribute of a polyline.
pub fn points(coordinates: &[(f64, f64)]) -> String {
    coordinates
        .iter()
        .map(|(x, y)| format!("{},{}", px(*x), px(*y)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `2^exponent` as the lectures write intensities: `1/16`, `1/4`, `1`, `4`, `1024`.
pub fn power_of_two_label(exponent: i32) -> String {
    if exponent < 0 {
        format!("1/{}", 1u64 << exponent.unsigned_abs().min(62))
    } else {
        (1u64 << exponent.min(62)).to_string()
    }
}

/// `10^exponent` with thousands separators: `1`, `100`, `10,000`.
pub fn power_of_ten_label(exponent: i32) -> String {
    format_number(10f64.powi(exponent))
}

/// A byte count as the Occupancy Calculator's axis writes it: `0`, `512`, `12K`, `48K`.
fn bytes_label(bytes: u32) -> String {
    if bytes >= 1024 && bytes % 1024 == 0 {
        format!("{}K", bytes / 1024)
    } else {
        bytes.to_string()
    }
}

fn sweep_texts(kind: SweepKind) -> (&'static str, &'static str) {
    match kind {
        SweepKind::BlockSize => ("Occupancy vs block size", "threads per block"),
        SweepKind::Registers => ("Occupancy vs registers", "registers per thread"),
        SweepKind::SharedMemory => ("Occupancy vs shared memory", "shared memory per block (B)"),
    }
}

fn x_tick_label(kind: SweepKind, value: u32) -> String {
    match kind {
        SweepKind::SharedMemory => bytes_label(value),
        SweepKind::BlockSize | SweepKind::Registers => value.to_string(),
    }
}

/// Ticks at multiples of a power of two (GPU resources come in powers of two), about four of
/// them after zero, never past the axis's end.
fn x_ticks(max: u32) -> Vec<u32> {
    let step = (max / 4).max(1).next_power_of_two();
    (0..=max / step).map(|i| i * step).collect()
}

/// A value of the swept resource in the text alternatives: the exact number, with separators.
fn x_text(value: u32) -> String {
    format_number(f64::from(value))
}

/// A run of the x axis, "32" or "32 to 256", in the words of the text alternatives.
fn range_text(first: u32, last: u32) -> String {
    if first == last {
        x_text(first)
    } else {
        format!("{} to {}", x_text(first), x_text(last))
    }
}

/// An occupancy as the chart's label writes it.
fn pct_text(pct: f64) -> String {
    format!("{pct:.0}%")
}

/// Whether two occupancies print alike (`pct_text`), without printing them: a percentage prints
/// rounded to the nearest whole number, half to even, as `round_ties_even` rounds. A sweep has
/// hundreds of points, and the page draws three sweeps at each step of a slider.
fn same_pct_text(a: f64, b: f64) -> bool {
    a.round_ties_even() == b.round_ties_even() && a.is_sign_negative() == b.is_sign_negative()
}

/// The sweep's points as runs of the same occupancy (as the chart rounds it): the first and last
/// x of each run and its occupancy. A step chart is a few such runs, however many points it has.
pub fn occupancy_runs(points: &[SweepPoint]) -> Vec<(u32, u32, f64)> {
    let mut runs: Vec<(u32, u32, f64)> = Vec::new();
    for point in points {
        match runs.last_mut() {
            Some(run) if same_pct_text(run.2, point.occupancy_pct) => run.1 = point.x,
            _ => runs.push((point.x, point.x, point.occupancy_pct)),
        }
    }
    runs
}

/// The corners of a step line through `points` (x, height), each height held to the next point's
/// x (the last point's to its own): a run of points of one height is one flat segment, drawn
/// from its first point to the point after it, so the line has a corner only where the height
/// changes (a sweep of 255 register counts has a few dozen, not 510).
fn step_line(points: impl Iterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    let mut corners: Vec<(f64, f64)> = Vec::new();
    let mut points = points.peekable();
    while let Some((x, height)) = points.next() {
        let mut end = x;
        while let Some(&(next_x, next_height)) = points.peek() {
            end = next_x;
            if next_height != height {
                break;
            }
            points.next();
        }
        corners.push((x, height));
        corners.push((end, height));
    }
    corners
}

/// The sweep's numbers in a sentence: the chart's description for screen readers.
pub fn describe_sweep(sweep: &Sweep) -> String {
    let (_, x_label) = sweep_texts(sweep.kind);
    let runs: Vec<String> = occupancy_runs(&sweep.points)
        .into_iter()
        .map(|(first, last, pct)| {
            let at = if first == last { "at" } else { "from" };
            format!("{} {at} {}", pct_text(pct), range_text(first, last))
        })
        .collect();
    format!("Occupancy against {x_label}: {}.", runs.join("; "))
}

/// The sweep's runs as rows of its table, the run holding the current value noted "now".
pub fn sweep_rows(sweep: &Sweep) -> Vec<NumberRow> {
    occupancy_runs(&sweep.points)
        .into_iter()
        .map(|(first, last, pct)| NumberRow {
            label: range_text(first, last),
            value: pct_text(pct),
            notes: if (first..=last).contains(&sweep.current) {
                vec!["now"]
            } else {
                Vec::new()
            },
        })
        .collect()
}

/// Text with its first letter in capitals, for a table's column heading. The page's titles are
/// ASCII, and the ASCII conversions keep Unicode's case tables out of the wasm module.
pub fn capitalized(text: &str) -> String {
    let mut text = text.to_string();
    if let Some(first) = text.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    text
}

/// Text with its first letter in lower case, for a title inside a sentence.
pub fn in_sentence(text: &str) -> String {
    let mut text = text.to_string();
    if let Some(first) = text.get_mut(0..1) {
        first.make_ascii_lowercase();
    }
    text
}

/// One row of a chart's numbers: the value on the chart's x axis, what the chart shows there,
/// and in words what the chart marks with colour or size ("now", "fastest").
#[derive(Clone, Debug, PartialEq)]
pub struct NumberRow {
    pub label: String,
    pub value: String,
    pub notes: Vec<&'static str>,
}

impl NumberRow {
    /// The value with its notes: "0.268 ms (now, fastest)".
    pub fn value_text(&self) -> String {
        if self.notes.is_empty() {
            self.value.clone()
        } else {
            format!("{} ({})", self.value, self.notes.join(", "))
        }
    }
}

#[derive(Debug)]
pub struct ChartNumbersProps {
    /// The chart's title: the table's caption, and what the disclosure's name says it opens.
    pub title: String,
    /// The headings of the two columns: the x axis and what the chart shows.
    pub columns: (String, String),
    pub rows: Vec<NumberRow>,
    pub test_id: String,
}

/// The numbers behind a chart, as a table in a disclosure: one short line under the chart until a
/// click, Enter or Space opens it. It is native HTML, so the keyboard and screen readers work
/// without help, and magnified or read aloud a table is easier than a chart.
pub fn chart_numbers(props: &ChartNumbersProps) -> Html {
    html! {
        <details class="chart-numbers" data-testid={props.test_id.clone()}>
            // The hidden words tell the page's several "Numbers" apart for a screen reader.
            <summary>
                { "Numbers" }
                <span class="sr-only">{ format!("of {}", in_sentence(&props.title)) }</span>
            </summary>
            <table>
                <caption class="sr-only">{ props.title.clone() }</caption>
                <thead>
                    <tr>
                        <th scope="col">{ props.columns.0.clone() }</th>
                        <th scope="col">{ props.columns.1.clone() }</th>
                    </tr>
                </thead>
                <tbody>
                    { for props.rows.iter().map(|row| html! {
                        <tr class={classes!((!row.notes.is_empty()).then_some("marked"))}>
                            <th scope="row">{ row.label.clone() }</th>
                            <td>{ row.value_text() }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        </details>
    }
}

#[derive(Debug)]
pub struct SweepChartProps {
    pub sweep: Sweep,
    /// Occupancy at the current value, 0 if that launch fails.
    pub current_pct: f64,
}

const WIDTH: f64 = 320.0;
const HEIGHT: f64 = 190.0;
const LEFT: f64 = 44.0;
const RIGHT: f64 = 18.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 52.0;

/// One of the Occupancy Calculator's three charts: occupancy (%) against one resource.
pub fn sweep_chart(props: &SweepChartProps) -> Html {
    let sweep = &props.sweep;
    let (title, x_label) = sweep_texts(sweep.kind);
    let last_x = sweep.points.last().map(|p| p.x).unwrap_or(1);
    let x_max = last_x.max(sweep.current).max(1);
    let x = Scale::linear((0.0, f64::from(x_max)), (LEFT, WIDTH - RIGHT));
    let y = Scale::linear((0.0, 100.0), (HEIGHT - BOTTOM, TOP));

    // A step line: occupancy holds from one point to the next, as in the Calculator's charts.
    let line = step_line(
        sweep
            .points
            .iter()
            .map(|point| (x.map(f64::from(point.x)), y.map(point.occupancy_pct))),
    );
    let current_x = x.map(f64::from(sweep.current));
    let current_y = y.map(props.current_pct);
    let current_text = format!(
        "{} {}: {:.0}%",
        x_tick_label(sweep.kind, sweep.current),
        x_label,
        props.current_pct
    );
    let label = format!("{title}. Now {current_text}.");
    // The value label sits left of the marker when the marker is in the right half.
    let (label_x, anchor) = if current_x > (LEFT + WIDTH - RIGHT) / 2.0 {
        (current_x - 6.0, "end")
    } else {
        (current_x + 6.0, "start")
    };
    let label_y = if current_y < TOP + 16.0 {
        current_y + 16.0
    } else {
        current_y - 8.0
    };

    // A new reference each render: Yew binds it to the element as this render is drawn, and the
    // export buttons made in this render read it.
    let figure = NodeRef::default();
    let (file_name, id_suffix) = match sweep.kind {
        SweepKind::BlockSize => ("occupancy-vs-block-size", "-occupancy-block-size"),
        SweepKind::Registers => ("occupancy-vs-registers", "-occupancy-registers"),
        SweepKind::SharedMemory => ("occupancy-vs-shared-memory", "-occupancy-shared-memory"),
    };
    // The description is hidden from view and from reading order: a screen reader reads it as
    // the chart's description, and the table below shows the same numbers to everyone.
    let description_id = format!("description{id_suffix}");

    html! {
        <figure class="sweep" ref={figure.clone()}>
            <figcaption>{ title }</figcaption>
            <svg viewBox={format!("0 0 {WIDTH} {HEIGHT}")} role="img" aria-label={label}
                 aria-describedby={description_id.clone()}>
                { for [0.0, 50.0, 100.0].into_iter().map(|pct| {
                    let at = y.map(pct);
                    html! {
                        <g class="tick">
                            <line class="grid" x1={px(LEFT)} x2={px(WIDTH - RIGHT)}
                                  y1={px(at)} y2={px(at)} />
                            <text x={px(LEFT - 6.0)} y={px(at + 4.0)} text-anchor="end">
                                { format!("{pct:.0}%") }
                            </text>
                        </g>
                    }
                }) }
                { for x_ticks(x_max).into_iter().map(|value| {
                    let at = x.map(f64::from(value));
                    html! {
                        <g class="tick">
                            <line class="axis" x1={px(at)} x2={px(at)}
                                  y1={px(HEIGHT - BOTTOM)} y2={px(HEIGHT - BOTTOM + 5.0)} />
                            <text x={px(at)} y={px(HEIGHT - BOTTOM + 18.0)} text-anchor="middle">
                                { x_tick_label(sweep.kind, value) }
                            </text>
                        </g>
                    }
                }) }
                <line class="axis" x1={px(LEFT)} x2={px(WIDTH - RIGHT)}
                      y1={px(HEIGHT - BOTTOM)} y2={px(HEIGHT - BOTTOM)} />
                <line class="axis" x1={px(LEFT)} x2={px(LEFT)}
                      y1={px(TOP)} y2={px(HEIGHT - BOTTOM)} />
                <text class="axis-title" x={px((LEFT + WIDTH - RIGHT) / 2.0)}
                      y={px(HEIGHT - 8.0)} text-anchor="middle">{ x_label }</text>
                <polyline class="sweep-line" points={points(&line)} />
                <line class="current" x1={px(current_x)} x2={px(current_x)}
                      y1={px(TOP)} y2={px(HEIGHT - BOTTOM)} />
                <circle class="current-dot" cx={px(current_x)} cy={px(current_y)} r="5" />
                <text class="current-label" x={px(label_x)} y={px(label_y)} text-anchor={anchor}>
                    { format!("{:.0}%", props.current_pct) }
                </text>
            </svg>
            <p id={description_id} hidden=true>{ describe_sweep(sweep) }</p>
            { chart_export(&ChartExportProps {
                chart: figure,
                name: file_name.to_string(),
                id_suffix,
                title: in_sentence(title).into(),
            }) }
            { chart_numbers(&ChartNumbersProps {
                title: title.to_string(),
                columns: (capitalized(x_label), "Occupancy".to_string()),
                rows: sweep_rows(sweep),
                test_id: format!("numbers{id_suffix}"),
            }) }
        </figure>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(scale: Scale, value: f64, expected: f64) {
        let mapped = scale.map(value);
        assert!(
            (mapped - expected).abs() < 1e-9,
            "{value} maps to {mapped}, expected {expected}"
        );
    }

    #[test]
    fn a_linear_scale_maps_the_ends_and_the_middle() {
        let scale = Scale::linear((0.0, 100.0), (140.0, 12.0));
        check(scale, 0.0, 140.0);
        check(scale, 100.0, 12.0);
        check(scale, 50.0, 76.0);
    }

    #[test]
    fn a_log_scale_puts_each_doubling_an_equal_step_apart() {
        let scale = Scale::log((1.0 / 16.0, 1024.0), (0.0, 140.0));
        check(scale, 1.0 / 16.0, 0.0);
        check(scale, 1.0, 40.0);
        check(scale, 2.0, 50.0);
        check(scale, 1024.0, 140.0);
    }

    #[test]
    fn tick_labels_read_like_the_lectures() {
        assert_eq!(power_of_two_label(-4), "1/16");
        assert_eq!(power_of_two_label(0), "1");
        assert_eq!(power_of_two_label(10), "1024");
        assert_eq!(power_of_ten_label(4), "10,000");
        assert_eq!(bytes_label(49152), "48K");
        assert_eq!(x_ticks(1024), vec![0, 256, 512, 768, 1024]);
        assert_eq!(x_ticks(255), vec![0, 64, 128, 192]);
        assert_eq!(x_ticks(124), vec![0, 32, 64, 96]);
        assert_eq!(x_ticks(49152), vec![0, 16384, 32768, 49152]);
    }

    fn sweep_of(kind: SweepKind, points: &[(u32, f64)], current: u32) -> Sweep {
        Sweep {
            kind,
            points: points
                .iter()
                .map(|&(x, occupancy_pct)| SweepPoint { x, occupancy_pct })
                .collect(),
            current,
        }
    }

    #[test]
    fn a_step_line_has_a_corner_only_where_the_height_changes() {
        let heights = [50.0, 50.0, 75.0, 75.0, 75.0, 25.0];
        let line = step_line((1..=6).map(f64::from).zip(heights));
        // Each height held to the next point's x, as a line through every point draws it.
        assert_eq!(
            line,
            vec![
                (1.0, 50.0),
                (3.0, 50.0),
                (3.0, 75.0),
                (6.0, 75.0),
                (6.0, 25.0),
                (6.0, 25.0)
            ]
        );
        assert_eq!(
            step_line([(4.0, 10.0)].into_iter()),
            vec![(4.0, 10.0), (4.0, 10.0)]
        );
        assert!(step_line(std::iter::empty()).is_empty());
    }

    #[test]
    fn occupancies_print_alike_where_they_round_alike() {
        for (a, b) in [(93.75, 94.0), (100.0, 99.5), (12.5, 12.0), (0.4, 0.0)] {
            assert!(same_pct_text(a, b), "{a} and {b}");
            assert_eq!(pct_text(a), pct_text(b));
        }
        for (a, b) in [(93.4, 93.5), (12.5, 13.0), (-0.4, 0.0), (50.0, 51.0)] {
            assert!(!same_pct_text(a, b), "{a} and {b}");
            assert_ne!(pct_text(a), pct_text(b));
        }
    }

    #[test]
    fn a_step_chart_is_described_by_its_runs_of_equal_occupancy() {
        // 93.75% and 94% print alike, so they are one run, as the chart's label would say.
        let sweep = sweep_of(
            SweepKind::Registers,
            &[
                (30, 100.0),
                (31, 100.0),
                (32, 100.0),
                (33, 93.75),
                (34, 94.0),
                (35, 50.0),
            ],
            33,
        );
        assert_eq!(
            occupancy_runs(&sweep.points),
            vec![(30, 32, 100.0), (33, 34, 93.75), (35, 35, 50.0)]
        );
        assert_eq!(
            describe_sweep(&sweep),
            "Occupancy against registers per thread: 100% from 30 to 32; 94% from 33 to 34; \
             50% at 35."
        );
        let rows = sweep_rows(&sweep);
        assert_eq!(
            rows.iter().map(NumberRow::value_text).collect::<Vec<_>>(),
            vec!["100%", "94% (now)", "50%"]
        );
        assert_eq!(rows[1].label, "33 to 34");
    }

    #[test]
    fn shared_memory_is_described_in_exact_bytes() {
        let sweep = sweep_of(
            SweepKind::SharedMemory,
            &[(0, 100.0), (12288, 100.0), (12544, 75.0)],
            0,
        );
        assert_eq!(
            describe_sweep(&sweep),
            "Occupancy against shared memory per block (B): 100% from 0 to 12,288; 75% at 12,544."
        );
        assert_eq!(
            capitalized("shared memory per block (B)"),
            "Shared memory per block (B)"
        );
    }
}
