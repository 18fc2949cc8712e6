//! Small SVG chart helpers: linear and logarithmic scales, tick labels, and the Occupancy
//! Calculator's step chart (occupancy against one resource, the current value marked).
//!
//! The scales are plain arithmetic, tested on the host; the charts draw with them.

use crate::components::export::ChartExport;
use crate::model::{format_number, Sweep, SweepKind};
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

#[derive(Properties, PartialEq, Debug)]
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
#[function_component(SweepChart)]
pub fn sweep_chart(props: &SweepChartProps) -> Html {
    let sweep = &props.sweep;
    let (title, x_label) = sweep_texts(sweep.kind);
    let last_x = sweep.points.last().map(|p| p.x).unwrap_or(1);
    let x_max = last_x.max(sweep.current).max(1);
    let x = Scale::linear((0.0, f64::from(x_max)), (LEFT, WIDTH - RIGHT));
    let y = Scale::linear((0.0, 100.0), (HEIGHT - BOTTOM, TOP));

    // A step line: occupancy holds from one point to the next, as in the Calculator's charts.
    let mut line = Vec::with_capacity(sweep.points.len() * 2);
    for (i, point) in sweep.points.iter().enumerate() {
        let height = y.map(point.occupancy_pct);
        line.push((x.map(f64::from(point.x)), height));
        let next_x = sweep.points.get(i + 1).map(|p| p.x).unwrap_or(point.x);
        line.push((x.map(f64::from(next_x)), height));
    }
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

    let figure = use_node_ref();
    let (file_name, id_suffix) = match sweep.kind {
        SweepKind::BlockSize => ("occupancy-vs-block-size", "-occupancy-block-size"),
        SweepKind::Registers => ("occupancy-vs-registers", "-occupancy-registers"),
        SweepKind::SharedMemory => ("occupancy-vs-shared-memory", "-occupancy-shared-memory"),
    };

    html! {
        <figure class="sweep" ref={figure.clone()}>
            <figcaption>{ title }</figcaption>
            <svg viewBox={format!("0 0 {WIDTH} {HEIGHT}")} role="img" aria-label={label}>
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
            <ChartExport chart={figure} name={file_name} id_suffix={id_suffix} />
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
}
