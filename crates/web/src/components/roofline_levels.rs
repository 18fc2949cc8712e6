//! The hierarchical roofline, as Nsight Compute draws it: one slope per level of the memory
//! hierarchy (L1 and shared memory, L2, DRAM) under the FP32 roof, and the kernel at its
//! intensity against each level (`memplay_sim::roofline::hierarchical`). The level whose slope
//! lies lowest binds. Its table is the chart's text alternative; the lecture's counts are
//! explained under it, since they are the intensities of the requests, before any cache.

use crate::components::chart::{points, power_of_ten_label, power_of_two_label, px, Scale};
use crate::format::{format_intensity, format_number};
use crate::statements::{Claim, Statement};
use memplay_sim::roofline::{Hierarchical, Level, LevelPoint};
use yew::prelude::*;

#[derive(Debug)]
pub struct RooflineLevelsProps {
    /// The kernel the levels are of.
    pub kernel: String,
    pub device_name: String,
    /// `None` until a launch has run.
    pub levels: Option<Hierarchical>,
}

use crate::components::roofline_view::{BOTTOM, LEFT, RIGHT, WIDTH};

/// A little lower than the roofline's canvas: the levels' chart has no ridge labels above.
const HEIGHT: f64 = 360.0;
const TOP: f64 = 30.0;

/// The level's key in CSS classes and test ids.
fn key(level: Level) -> &'static str {
    match level {
        Level::L1Shared => "l1-shared",
        Level::L2 => "l2",
        Level::Dram => "dram",
    }
}

/// The marker of a level's point: a triangle, a square or a circle, so shape and label, not
/// colour, tell them apart.
fn marker(level: Level, cx: f64, cy: f64) -> Html {
    match level {
        Level::L1Shared => html! {
            <polygon points={points(&[(cx, cy - 8.0), (cx + 8.0, cy + 6.0), (cx - 8.0, cy + 6.0)])} />
        },
        Level::L2 => html! {
            <rect x={px(cx - 6.0)} y={px(cy - 6.0)} width="12" height="12" />
        },
        Level::Dram => html! { <circle cx={px(cx)} cy={px(cy)} r="6" /> },
    }
}

/// The view's name in its statements.
const VIEW: &str = "roofline-levels";

/// What binds, in a sentence, with the bound it sets beside the launch's predicted rate: the level whose bandwidth allows the least (or
/// the FP32 roof), which the predicted rate must not exceed.
fn binding_statement(levels: &Hierarchical) -> Statement {
    let predicted = format_number(levels.gflops.round());
    let (text, bound) = match levels.binding {
        Some(level) => {
            let point = levels.levels.iter().find(|p| p.level == level);
            let bound = point.map_or(0.0, |p| p.bound_gflops);
            (
                format!(
                    "{} binds: at {} FLOP per byte it moved, its {} GB/s allow at most {} \
                     GFLOP/s, less than any other level or the FP32 roof ({} GFLOP/s); the \
                     launch is predicted at {predicted} GFLOP/s.",
                    level.label(),
                    point
                        .and_then(|p| p.intensity)
                        .map_or("–".to_string(), format_intensity),
                    format_number(point.map_or(0.0, |p| p.bandwidth_gbps).round()),
                    format_number(bound.round()),
                    format_number(levels.peak_gflops.round())
                ),
                bound,
            )
        }
        None => (
            format!(
                "The FP32 roof binds: every level's bandwidth would allow more than its {} \
                 GFLOP/s, and the launch is predicted at {predicted} GFLOP/s.",
                format_number(levels.peak_gflops.round())
            ),
            levels.peak_gflops,
        ),
    };
    Statement {
        view: VIEW,
        text,
        claim: Claim::AtMost {
            bound,
            predicted: levels.gflops,
        },
    }
}

/// What the hierarchical roofline says: the binding level with its bound, each level's
/// bandwidth, bytes, intensity and allowance as figures, and where the lectures count.
pub fn roofline_levels_statements(levels: &Hierarchical) -> Vec<Statement> {
    let mut statements = vec![binding_statement(levels)];
    if levels
        .levels
        .iter()
        .any(|p| p.level == Level::Dram && p.bytes == 0.0)
    {
        statements.push(Statement::words(VIEW, DRAM_MOVED_NOTHING));
    }
    for point in &levels.levels {
        let label = point.level.label();
        statements.push(Statement::figure(
            VIEW,
            format!("{label} bytes moved"),
            point.bytes,
            format!("{label}: {} bytes moved", format_number(point.bytes)),
        ));
        if let Some(intensity) = point.intensity {
            statements.push(Statement::figure(
                VIEW,
                format!("{label} FLOP per byte"),
                intensity,
                format!("{label}: {} FLOP/B", format_intensity(intensity)),
            ));
        }
    }
    statements.push(Statement::words(VIEW, LECTURE_COUNT));
    statements
}

/// Why DRAM can move nothing.
const DRAM_MOVED_NOTHING: &str = "DRAM moved no byte: the launch writes nothing, and what it \
                                  reads fits the L2, where timed runs one after another find it.";

/// Which level the lectures' intensities are counted at.
const LECTURE_COUNT: &str = "The lectures count a kernel's intensity at its load instructions: \
     0.25 FLOP per byte for the naive matmul, TILE / 4 for the tiled one. Those are the bytes \
     the kernel asks of global memory, which the L1 and L2 see (the L1 moves whole 32-byte \
     sectors, so a little more); the L2 keeps the matrices between blocks, so DRAM sees far \
     fewer bytes and the same FLOPs sit far to the right there. The point on the roofline \
     above counts DRAM bytes only; here every level has its own.";

/// The range of intensities to draw, in powers of two, covering every point.
fn x_exponents(levels: &Hierarchical) -> (i32, i32) {
    let finite: Vec<f64> = levels.levels.iter().filter_map(|p| p.intensity).collect();
    let low = finite.iter().copied().fold(1.0, f64::min).log2().floor() as i32 - 1;
    let high = finite.iter().copied().fold(4.0, f64::max).log2().ceil() as i32 + 1;
    (low.clamp(-8, 0), high.clamp(4, 16))
}

fn chart(levels: &Hierarchical, kernel: &str) -> Html {
    let (x_low, x_high) = x_exponents(levels);
    let (x_min, x_max) = (2f64.powi(x_low), 2f64.powi(x_high));
    let slowest = levels
        .levels
        .iter()
        .map(|p| p.bandwidth_gbps * x_min)
        .fold(levels.peak_gflops, f64::min);
    let y_low = slowest.max(1e-3).log10().floor() as i32;
    let y_high = (levels.peak_gflops * 1.5).max(1e-3).log10().ceil() as i32;
    let x = Scale::log((x_min, x_max), (LEFT, WIDTH - RIGHT));
    let y = Scale::log(
        (10f64.powi(y_low), 10f64.powi(y_high.max(y_low + 1))),
        (HEIGHT - BOTTOM, TOP),
    );
    let plot_bottom = HEIGHT - BOTTOM;
    let slope = |point: &LevelPoint| {
        let ridge = levels.peak_gflops / point.bandwidth_gbps;
        let mut corners = vec![x_min];
        if ridge > x_min && ridge < x_max {
            corners.push(ridge);
        }
        corners.push(x_max);
        let coordinates: Vec<(f64, f64)> = corners
            .into_iter()
            .map(|i| {
                (
                    x.map(i),
                    y.map((point.bandwidth_gbps * i).min(levels.peak_gflops)),
                )
            })
            .collect();
        points(&coordinates)
    };
    let label = format!(
        "Hierarchical roofline of {kernel}: {}",
        levels
            .levels
            .iter()
            .map(|p| format!(
                "{} {} FLOP/B",
                p.level.label(),
                p.intensity.map_or("no bytes".to_string(), format_intensity)
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let achieved_y = y.map(levels.gflops.max(1e-3)).clamp(TOP, plot_bottom);
    html! {
        <svg class="roofline levels" viewBox={format!("0 0 {WIDTH} {HEIGHT}")} role="img"
             aria-label={label} aria-describedby="roofline-levels-table">
            { for (y_low..=y_high).map(|exponent| {
                let at = y.map(10f64.powi(exponent));
                html! {
                    <g class="tick">
                        <line class="grid" x1={px(LEFT)} x2={px(WIDTH - RIGHT)} y1={px(at)} y2={px(at)} />
                        <text x={px(LEFT - 8.0)} y={px(at + 5.0)} text-anchor="end">
                            { power_of_ten_label(exponent) }
                        </text>
                    </g>
                }
            }) }
            { for (x_low..=x_high).filter(|e| e % 2 == 0).map(|exponent| {
                let at = x.map(2f64.powi(exponent));
                html! {
                    <g class="tick">
                        <line class="grid" x1={px(at)} x2={px(at)} y1={px(TOP)} y2={px(plot_bottom)} />
                        <text x={px(at)} y={px(plot_bottom + 20.0)} text-anchor="middle">
                            { power_of_two_label(exponent) }
                        </text>
                    </g>
                }
            }) }
            <line class="axis" x1={px(LEFT)} x2={px(WIDTH - RIGHT)} y1={px(plot_bottom)} y2={px(plot_bottom)} />
            <line class="axis" x1={px(LEFT)} x2={px(LEFT)} y1={px(TOP)} y2={px(plot_bottom)} />
            <text class="axis-title" x={px((LEFT + WIDTH - RIGHT) / 2.0)} y={px(HEIGHT - 10.0)}
                  text-anchor="middle">
                { "FLOP per byte moved at each level (log)" }
            </text>
            <text class="axis-title" x="6" y={px(TOP - 12.0)}>{ "GFLOP/s (log)" }</text>
            { for levels.levels.iter().map(|point| html! {
                <polyline class={classes!("level-roof", key(point.level))} points={slope(point)} />
            }) }
            { for levels.levels.iter().filter_map(|point| {
                let intensity = point.intensity?.clamp(x_min, x_max);
                let cx = x.map(intensity);
                Some(html! {
                    <g class={classes!("level-point", key(point.level))}>
                        { marker(point.level, cx, achieved_y) }
                        <text x={px(cx + 9.0)} y={px(achieved_y - 10.0)}>{ point.level.label() }</text>
                    </g>
                })
            }) }
        </svg>
    }
}

/// The slopes' legend, as text under the chart rather than inside it: the chart's canvas shrinks
/// with the page, and labels drawn in it would be a few pixels high on a phone, while the page's
/// own text stays readable at any width. Each entry draws its slope's dash pattern and its
/// point's marker, so on a phone, where the points' own labels would crowd each other, the
/// legend names the points too.
fn legend(levels: &Hierarchical) -> Html {
    html! {
        <ul class="legend level-legend" aria-label="Slopes and points of the chart">
            { for levels.levels.iter().map(|point| html! {
                <li>
                    <svg class="legend-line" viewBox="0 0 64 18" aria-hidden="true">
                        <line class={classes!("level-roof", key(point.level))}
                              x1="0" x2="64" y1="9" y2="9" />
                        <g class={classes!("level-point", key(point.level))}>
                            { marker(point.level, 32.0, 10.0) }
                        </g>
                    </svg>
                    <span class={classes!("level-label", key(point.level))}>
                        { format!("{} {} GB/s", point.level.label(), format_number(point.bandwidth_gbps.round())) }
                    </span>
                </li>
            }) }
        </ul>
    }
}

fn table(levels: &Hierarchical) -> Html {
    html! {
        // A phone is narrower than the five columns: the table scrolls in its own box, a named
        // region with a tab stop, and the page does not pan sideways.
        <div class="table-scroll scroll-edge" tabindex="0" role="region"
             aria-label="Each level's numbers">
            <table class="numbers" id="roofline-levels-table">
                <caption>{ "Each level: its bandwidth, the bytes it moved, the kernel's FLOP per byte there, and what that allows" }</caption>
                <thead>
                    <tr>
                        <th scope="col">{ "Level" }</th>
                        <th scope="col">{ "GB/s" }</th>
                        <th scope="col">{ "Bytes moved" }</th>
                        <th scope="col">{ "FLOP/B" }</th>
                        <th scope="col">{ "Allows GFLOP/s" }</th>
                    </tr>
                </thead>
                <tbody>
                    { for levels.levels.iter().map(|point| {
                        let binds = levels.binding == Some(point.level);
                        html! {
                            <tr class={classes!(binds.then_some("limiter"))}
                                data-testid={format!("roofline-level-{}", key(point.level))}>
                                <th scope="row">
                                    { point.level.label() }
                                    if binds { <span class="badge">{ "binds" }</span> }
                                </th>
                                <td>{ format_number(point.bandwidth_gbps.round()) }</td>
                                <td>{ format_number(point.bytes) }</td>
                                <td>{ point.intensity.map_or("–".to_string(), format_intensity) }</td>
                                <td>{ if point.bound_gflops.is_finite() {
                                    format_number(point.bound_gflops.round())
                                } else {
                                    "no limit".to_string()
                                } }</td>
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
        </div>
    }
}

pub fn roofline_levels(props: &RooflineLevelsProps) -> Html {
    let body = match &props.levels {
        Some(levels) => html! {
            <>
                <div class="roofline-layout">
                    <div class="roofline-chart">
                        { chart(levels, &props.kernel) }
                        { legend(levels) }
                    </div>
                    <div class="roofline-text">
                        <p data-testid="roofline-binding">{ roofline_levels_statements(levels).swap_remove(0).text }</p>
                        if levels.levels.iter().any(|p| p.level == Level::Dram && p.bytes == 0.0) {
                            <p>{ DRAM_MOVED_NOTHING }</p>
                        }
                    </div>
                </div>
                // Under the chart, full width: five columns do not fit beside it in a frame.
                { table(levels) }
                <p class="caption">{ LECTURE_COUNT }</p>
            </>
        },
        None => html! { <p>{ "The levels appear once the launch has run." }</p> },
    };
    html! {
        <section class="card" data-testid="roofline-levels" aria-labelledby="roofline-levels-title">
            <h2 id="roofline-levels-title">
                { format!("Which level binds: the hierarchical roofline of {} on the {}", props.kernel, props.device_name) }
            </h2>
            { body }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(binding: Option<Level>, expected: &str) {
        let levels = Hierarchical {
            levels: vec![
                LevelPoint {
                    level: Level::L1Shared,
                    bandwidth_gbps: 33_000.0,
                    bytes: 1e9,
                    intensity: Some(2.0),
                    bound_gflops: 66_000.0,
                },
                LevelPoint {
                    level: Level::L2,
                    bandwidth_gbps: 10_000.0,
                    bytes: 5e8,
                    intensity: Some(4.0),
                    bound_gflops: 40_000.0,
                },
            ],
            peak_gflops: 60_000.0,
            binding,
            gflops: 30_000.0,
        };
        assert_eq!(binding_statement(&levels).text, expected);
    }

    #[test]
    fn the_binding_level_is_named_with_its_numbers() {
        check(
            Some(Level::L2),
            "L2 binds: at 4 FLOP per byte it moved, its 10,000 GB/s allow at most 40,000 \
             GFLOP/s, less than any other level or the FP32 roof (60,000 GFLOP/s); the launch is \
             predicted at 30,000 GFLOP/s.",
        );
        check(
            None,
            "The FP32 roof binds: every level's bandwidth would allow more than its 60,000 \
             GFLOP/s, and the launch is predicted at 30,000 GFLOP/s.",
        );
    }
}
