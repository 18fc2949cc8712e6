//! The roofline of seed 004 on a log-log chart: the device's FP32 roof and DRAM slope (datasheet,
//! and dashed the measured ones where known), the ridge point, and the naive and tiled matmuls
//! at their arithmetic intensities with the performance they can attain.
//!
//! The chart carries short labels only; the numbers are spelled out in the text beside it, which
//! stays readable on a phone where the SVG's text shrinks, and which is also the chart's
//! description for screen readers (`aria-describedby`).

use crate::components::chart::{points, power_of_ten_label, power_of_two_label, px, Scale};
use crate::components::export::{chart_export, ChartExportProps};
use crate::format::{format_intensity, format_number};
pub use crate::model::SimulatedPoint;
use crate::model::{tiled_matmul_intensity, NAIVE_MATMUL_INTENSITY};
use crate::statements::{Claim, Statement};
use memplay_sim::roofline::{Ceilings, Roofline};
use memplay_sim::Device;
use yew::prelude::*;

#[derive(Debug)]
pub struct RooflineViewProps {
    pub device: Device,
    pub ceilings: Ceilings,
    pub tile: u32,
    /// The simulated kernel's point, when it does arithmetic and moves DRAM bytes.
    pub simulated: Option<SimulatedPoint>,
}

/// The chart's canvas and margins, shared with the hierarchical roofline (`roofline_levels`).
pub(crate) const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 380.0;
pub(crate) const LEFT: f64 = 90.0;
pub(crate) const RIGHT: f64 = 26.0;
const TOP: f64 = 36.0;
pub(crate) const BOTTOM: f64 = 58.0;
/// The intensity axis runs from 1/16 to 1024 FLOP/B, in powers of two.
const X_MIN_EXPONENT: i32 = -4;
const X_MAX_EXPONENT: i32 = 10;

/// The decades the GFLOP/s axis spans: from below the slope's left end to above the roof.
fn y_decades(ceilings: &Ceilings) -> (i32, i32) {
    let rooflines = [Some(ceilings.theoretical), ceilings.achievable];
    let lowest = rooflines
        .iter()
        .flatten()
        .map(|r| r.attainable_gflops(2f64.powi(X_MIN_EXPONENT)))
        .fold(f64::INFINITY, f64::min);
    let highest = rooflines
        .iter()
        .flatten()
        .map(|r| r.peak_gflops)
        .fold(0.0, f64::max);
    let low = lowest.max(1e-3).log10().floor() as i32;
    let high = (highest.max(1e-3) * 1.3).log10().ceil() as i32;
    (low, high.max(low + 1))
}

/// The roof as a polyline: up the slope to the ridge, then flat.
fn roof_points(roofline: &Roofline, x: &Scale, y: &Scale) -> String {
    let x_min = 2f64.powi(X_MIN_EXPONENT);
    let x_max = 2f64.powi(X_MAX_EXPONENT);
    let ridge = roofline.ridge_intensity();
    let mut corners = vec![x_min];
    if ridge > x_min && ridge < x_max {
        corners.push(ridge);
    }
    corners.push(x_max);
    let coordinates: Vec<(f64, f64)> = corners
        .into_iter()
        .map(|i| (x.map(i), y.map(roofline.attainable_gflops(i))))
        .collect();
    points(&coordinates)
}

/// Whether a kernel at this intensity is held back by memory or by arithmetic.
fn bound(roofline: &Roofline, intensity: f64) -> &'static str {
    if intensity < roofline.ridge_intensity() {
        "memory-bound"
    } else {
        "compute-bound"
    }
}

/// The plain-English caption about the tiled matmul, at the lecture's count: every load from
/// DRAM. It is a bound only under that count, and said so: the caches serve most loads, and the
/// simulated launch may well beat it.
fn caption(roofline: &Roofline, tile: u32) -> String {
    let intensity = tiled_matmul_intensity(tile);
    let ridge = format_intensity(roofline.ridge_intensity());
    let attainable = format_number(roofline.attainable_gflops(intensity));
    let reuse = if tile == 1 {
        "With TILE = 1 there is no reuse: the tiled matmul loads as much as the naive one and \
         does 0.25 FLOP per byte its loads ask for"
            .to_string()
    } else {
        format!(
            "Tiling with TILE = {tile} cuts global loads {tile}-fold, so the tiled matmul does {} \
             FLOP per byte its loads ask for",
            format_intensity(intensity)
        )
    };
    if intensity < roofline.ridge_intensity() {
        format!(
            "{reuse}. If every one of those bytes came from DRAM, that would sit below the ridge \
             at {ridge} FLOP/B: memory-bound, held by DRAM's bandwidth to {attainable} GFLOP/s. \
             The simulated launch's own point is counted per DRAM byte instead: where the caches \
             serve the loads, it lies further right."
        )
    } else {
        format!(
            "{reuse}. Even if every one of those bytes came from DRAM, that is at or above the \
             ridge at {ridge} FLOP/B: compute-bound, held by the FP32 units to {attainable} \
             GFLOP/s, and more reuse would not help."
        )
    }
}

/// One line of the chart's facts: the key drawn before it, its test id, and what it says.
#[derive(Clone, Debug, PartialEq)]
pub struct FactLine {
    pub key: Option<&'static str>,
    pub testid: Option<&'static str>,
    pub statement: Statement,
}

/// Everything the roofline's text says, as statements. The lecture's two points are counted
/// per byte the loads ask of global memory, as the lecture counts them; their GFLOP/s are what
/// DRAM alone would allow if it served all those bytes, said as a condition, not as a bound.
/// The simulated launch is counted per DRAM byte, and the roof at its intensity is a true
/// bound on its prediction (`Claim::AtMost`).
pub fn roofline_statements(
    device: &Device,
    ceilings: &Ceilings,
    tile: u32,
    simulated: Option<&SimulatedPoint>,
) -> Vec<FactLine> {
    let theoretical = ceilings.theoretical;
    let best = ceilings.achievable.unwrap_or(theoretical);
    let best_source = if ceilings.achievable.is_some() {
        "measured"
    } else {
        "datasheet"
    };
    let line = |key, testid, statement| FactLine {
        key,
        testid,
        statement,
    };
    let words = |text: String| Statement::words("roofline", text);
    let mut lines = vec![line(
        Some("key line-solid"),
        None,
        words(format!(
            "Datasheet of the {}: FP32 peak {} GFLOP/s, DRAM {} GB/s.",
            device.id.label(),
            format_number(theoretical.peak_gflops),
            format_number(theoretical.bandwidth_gbps)
        )),
    )];
    if let Some(achievable) = ceilings.achievable {
        lines.push(line(
            Some("key line-dashed"),
            None,
            words(format!(
                "Measured (dashed): {} GFLOP/s, {} GB/s.",
                format_number(achievable.peak_gflops),
                format_number(achievable.bandwidth_gbps)
            )),
        ));
    }
    lines.push(line(
        None,
        None,
        words(format!(
            "Ridge point ({best_source}): {} FLOP per DRAM byte. Left of it a kernel is \
             memory-bound, right of it compute-bound.",
            format_intensity(best.ridge_intensity())
        )),
    ));
    let lecture = |name: String, intensity: f64| {
        format!(
            "{name} by the lecture's count: {} FLOP per byte its loads ask of global memory; if \
             DRAM served every one of those bytes it would allow {} GFLOP/s ({}).",
            format_intensity(intensity),
            format_number(best.attainable_gflops(intensity)),
            bound(&best, intensity)
        )
    };
    lines.push(line(
        Some("key dot"),
        None,
        words(lecture("Naive matmul".to_string(), NAIVE_MATMUL_INTENSITY)),
    ));
    lines.push(line(
        Some("key diamond"),
        None,
        words(lecture(
            format!("Tiled matmul, TILE = {tile},"),
            tiled_matmul_intensity(tile),
        )),
    ));
    if let Some(point) = simulated {
        let allowed = best.attainable_gflops(point.intensity);
        lines.push(line(
            Some("key square"),
            Some("roofline-simulated"),
            Statement {
                view: "roofline",
                text: format!(
                    "Simulated {}: {} FLOP per {}, {} GFLOP/s predicted ({:.0}% of the at most \
                     {} GFLOP/s the roof allows at that intensity).",
                    point.kernel,
                    format_intensity(point.intensity),
                    if point.from_l2 {
                        "byte, each counted once (between runs the data stays in L2)"
                    } else {
                        "DRAM byte"
                    },
                    format_number(point.gflops.round()),
                    100.0 * point.gflops / allowed.max(f64::MIN_POSITIVE),
                    format_number(allowed.round())
                ),
                claim: Claim::AtMost {
                    bound: allowed,
                    predicted: point.gflops,
                },
            },
        ));
    }
    lines.push(line(None, None, words(caption(&best, tile))));
    lines
}

pub fn roofline_view(props: &RooflineViewProps) -> Html {
    let ceilings = &props.ceilings;
    let theoretical = ceilings.theoretical;
    // The kernels are placed under the best-known ceilings: measured where they exist.
    let best = ceilings.achievable.unwrap_or(theoretical);
    let (low, high) = y_decades(ceilings);
    let x = Scale::log(
        (2f64.powi(X_MIN_EXPONENT), 2f64.powi(X_MAX_EXPONENT)),
        (LEFT, WIDTH - RIGHT),
    );
    let y = Scale::log((10f64.powi(low), 10f64.powi(high)), (HEIGHT - BOTTOM, TOP));
    let plot_bottom = HEIGHT - BOTTOM;

    let naive = NAIVE_MATMUL_INTENSITY;
    let tiled = tiled_matmul_intensity(props.tile);
    let naive_gflops = best.attainable_gflops(naive);
    let tiled_gflops = best.attainable_gflops(tiled);
    let ridge = best.ridge_intensity();
    let ridge_x = x.map(ridge);

    // The slope's label runs along the slope, starting at 1/8 FLOP/B, left of both kernels.
    let slope_at = 2f64.powi(X_MIN_EXPONENT + 1);
    let (sx1, sy1) = (
        x.map(slope_at),
        y.map(theoretical.attainable_gflops(slope_at)),
    );
    let (sx2, sy2) = (
        x.map(slope_at * 2.0),
        y.map(theoretical.attainable_gflops(slope_at * 2.0)),
    );
    let slope_angle = (sy2 - sy1).atan2(sx2 - sx1).to_degrees();

    let summary = format!(
        "Roofline of the {}: naive matmul at {} GFLOP/s, tiled matmul (TILE = {}) at {} GFLOP/s, \
         ridge at {} FLOP/B.",
        props.device.name,
        format_number(naive_gflops),
        props.tile,
        format_number(tiled_gflops),
        format_intensity(ridge)
    );

    let naive_point = html! {
        <g class="kernel naive">
            <circle cx={px(x.map(naive))} cy={px(y.map(naive_gflops))} r="6" />
            <text x={px(x.map(naive) + 9.0)} y={px(y.map(naive_gflops) + 20.0)}>
                { if props.tile == 1 {
                    format!("naive = tiled {}", format_number(naive_gflops))
                } else {
                    format!("naive {}", format_number(naive_gflops))
                } }
            </text>
        </g>
    };
    let tiled_point = if props.tile == 1 {
        Html::default()
    } else {
        let (cx, cy) = (x.map(tiled), y.map(tiled_gflops));
        let diamond = points(&[
            (cx, cy - 8.0),
            (cx + 8.0, cy),
            (cx, cy + 8.0),
            (cx - 8.0, cy),
        ]);
        html! {
            <g class="kernel tiled">
                <polygon points={diamond} />
                <text x={px(cx - 10.0)} y={px(cy - 12.0)} text-anchor="end">
                    { format!("tiled {}", format_number(tiled_gflops)) }
                </text>
            </g>
        }
    };

    let facts = roofline_statements(
        &props.device,
        ceilings,
        props.tile,
        props.simulated.as_ref(),
    );
    // A new reference each render: Yew binds it to the element as this render is drawn, and the
    // export buttons made in this render read it.
    let chart = NodeRef::default();
    html! {
        <section class="card" data-testid="roofline" aria-labelledby="roofline-title">
            <h2 id="roofline-title">{ "Roofline: memory-bound or compute-bound?" }</h2>
            <div class="roofline-layout">
                <div class="roofline-chart" ref={chart.clone()}>
                <svg class="roofline" viewBox={format!("0 0 {WIDTH} {HEIGHT}")} role="img"
                     aria-label={summary} aria-describedby="roofline-facts">
                    { for (low..=high).map(|exponent| {
                        let at = y.map(10f64.powi(exponent));
                        html! {
                            <g class="tick">
                                <line class="grid" x1={px(LEFT)} x2={px(WIDTH - RIGHT)}
                                      y1={px(at)} y2={px(at)} />
                                <text x={px(LEFT - 8.0)} y={px(at + 5.0)} text-anchor="end">
                                    { power_of_ten_label(exponent) }
                                </text>
                            </g>
                        }
                    }) }
                    { for (X_MIN_EXPONENT..=X_MAX_EXPONENT).map(|exponent| {
                        let at = x.map(2f64.powi(exponent));
                        let labelled = exponent % 2 == 0;
                        html! {
                            <g class="tick">
                                <line class={if labelled { "grid" } else { "grid minor" }}
                                      x1={px(at)} x2={px(at)} y1={px(TOP)} y2={px(plot_bottom)} />
                                if labelled {
                                    <text x={px(at)} y={px(plot_bottom + 20.0)} text-anchor="middle">
                                        { power_of_two_label(exponent) }
                                    </text>
                                }
                            </g>
                        }
                    }) }
                    <line class="axis" x1={px(LEFT)} x2={px(WIDTH - RIGHT)}
                          y1={px(plot_bottom)} y2={px(plot_bottom)} />
                    <line class="axis" x1={px(LEFT)} x2={px(LEFT)} y1={px(TOP)} y2={px(plot_bottom)} />
                    <text class="axis-title" x={px((LEFT + WIDTH - RIGHT) / 2.0)} y={px(HEIGHT - 10.0)}
                          text-anchor="middle">
                        { "arithmetic intensity, FLOP per byte (log)" }
                    </text>
                    // The y title sits above the axis, not along it, so it never meets the ticks.
                    <text class="axis-title" x="6" y={px(TOP - 14.0)}>
                        { "GFLOP/s (log)" }
                    </text>

                    <line class="ridge" x1={px(ridge_x)} x2={px(ridge_x)}
                          y1={px(y.map(best.peak_gflops))} y2={px(plot_bottom)} />
                    <text class="ridge-label" x={px(ridge_x + 6.0)} y={px(plot_bottom - 10.0)}>
                        { format!("ridge {}", format_intensity(ridge)) }
                    </text>

                    <polyline class="roof theoretical" points={roof_points(&theoretical, &x, &y)} />
                    if let Some(achievable) = ceilings.achievable {
                        <polyline class="roof achievable" points={roof_points(&achievable, &x, &y)} />
                        <text class="roof-label" x={px(WIDTH - RIGHT - 4.0)}
                              y={px(y.map(achievable.peak_gflops) + 18.0)} text-anchor="end">
                            { format!("measured {}", format_number(achievable.peak_gflops)) }
                        </text>
                    }
                    <text class="roof-label" x={px(WIDTH - RIGHT - 4.0)}
                          y={px(y.map(theoretical.peak_gflops) - 8.0)} text-anchor="end">
                        { format!("peak {}", format_number(theoretical.peak_gflops)) }
                    </text>
                    <text class="roof-label" x={px(sx1)} y={px(sy1 - 14.0)}
                          transform={format!("rotate({:.1} {} {})", slope_angle, px(sx1), px(sy1))}>
                        { format!("{} GB/s", format_number(theoretical.bandwidth_gbps)) }
                    </text>

                    { naive_point }
                    { tiled_point }
                    if let Some(point) = &props.simulated {
                        { simulated_marker(point, &x, &y) }
                    }
                </svg>
                { chart_export(&ChartExportProps {
                    chart,
                    name: format!("roofline-{}", props.device.id.as_str()),
                    id_suffix: "-roofline",
                    title: format!("the roofline of the {}", props.device.name).into(),
                }) }
                </div>
                <div class="roofline-text" id="roofline-facts">
                    <ul class="facts">
                        { for facts.iter().take(facts.len().saturating_sub(1)).map(|fact| html! {
                            <li data-testid={fact.testid}>
                                if let Some(key) = fact.key {
                                    <span class={key} aria-hidden="true"></span>
                                }
                                { fact.statement.text.clone() }
                            </li>
                        }) }
                    </ul>
                    if let Some(caption) = facts.last() {
                        <p class="caption">{ caption.statement.text.clone() }</p>
                    }
                </div>
            </div>
        </section>
    }
}

/// A square at the simulated kernel's point, clamped into the plot so an extreme intensity still
/// shows at the edge.
fn simulated_marker(point: &SimulatedPoint, x: &Scale, y: &Scale) -> Html {
    let intensity = point
        .intensity
        .clamp(2f64.powi(X_MIN_EXPONENT), 2f64.powi(X_MAX_EXPONENT));
    let (cx, cy) = (x.map(intensity), y.map(point.gflops.max(1e-3)));
    let cy = cy.clamp(TOP, HEIGHT - BOTTOM);
    html! {
        <g class="kernel simulated">
            <rect x={px(cx - 6.0)} y={px(cy - 6.0)} width="12" height="12" />
            <text x={px(cx + 10.0)} y={px(cy + 4.0)}>
                { format!("{} {}", point.kernel, format_number(point.gflops.round())) }
            </text>
        </g>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(peak_gflops: f64, bandwidth_gbps: f64, tile: u32, expected: &str) {
        let roofline = Roofline {
            peak_gflops,
            bandwidth_gbps,
        };
        assert_eq!(caption(&roofline, tile), expected);
    }

    #[test]
    fn h100_tiled_matmul_at_16_is_still_memory_bound() {
        check(
            55_637.0,
            3011.0,
            16,
            "Tiling with TILE = 16 cuts global loads 16-fold, so the tiled matmul does 4 FLOP \
             per byte its loads ask for. If every one of those bytes came from DRAM, that would \
             sit below the ridge at 18.5 FLOP/B: memory-bound, held by DRAM's bandwidth to \
             12,044 GFLOP/s. The simulated launch's own point is counted per DRAM byte instead: \
             where the caches serve the loads, it lies further right.",
        );
    }

    #[test]
    fn g80_tiled_matmul_at_16_sits_just_below_the_ridge() {
        // Seed 003: 346.5 GFLOPS over 86.4 GB/s puts the ridge at 4.01 FLOP/B, just above 4.
        check(
            346.5,
            86.4,
            16,
            "Tiling with TILE = 16 cuts global loads 16-fold, so the tiled matmul does 4 FLOP \
             per byte its loads ask for. If every one of those bytes came from DRAM, that would \
             sit below the ridge at 4.01 FLOP/B: memory-bound, held by DRAM's bandwidth to \
             345.6 GFLOP/s. The simulated launch's own point is counted per DRAM byte instead: \
             where the caches serve the loads, it lies further right.",
        );
    }

    #[test]
    fn a_tile_of_one_reuses_nothing() {
        check(
            346.5,
            86.4,
            1,
            "With TILE = 1 there is no reuse: the tiled matmul loads as much as the naive one \
             and does 0.25 FLOP per byte its loads ask for. If every one of those bytes came \
             from DRAM, that would sit below the ridge at 4.01 FLOP/B: memory-bound, held by \
             DRAM's bandwidth to 21.6 GFLOP/s. The simulated launch's own point is counted per \
             DRAM byte instead: where the caches serve the loads, it lies further right.",
        );
    }
}
