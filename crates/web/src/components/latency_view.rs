//! Latency hiding (seed 003: "a minimal of 13 warps are needed to fully tolerate 200-cycle
//! memory latency"): the warps an SM holds against the warps its wait for memory needs, read
//! off the timing model (`memplay_sim::timing::LatencyHiding`), with the count spelt out.

use crate::components::kernel_view::{Shared, SimulationRun};
use crate::model::format_number;
use memplay_sim::timing::{LatencyHiding, Prediction};
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct LatencyViewProps {
    /// The run the page shows; `None` before the first answer.
    pub run: Option<Shared<SimulationRun>>,
}

/// What the view says about one launch: plain numbers, so they are tested on the host.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyFacts {
    pub hiding: LatencyHiding,
    /// Warps an SM can hold at most (its warp slots).
    pub max_warps: u32,
    pub warps_per_block: u32,
    /// A block's wait per trip to memory, in nanoseconds and in SM clocks.
    pub wait_ns: f64,
    pub wait_clocks: f64,
}

impl LatencyFacts {
    pub fn new(run: &SimulationRun, prediction: &Prediction) -> Option<LatencyFacts> {
        let report = run.result.as_ref().ok()?;
        Some(LatencyFacts {
            hiding: prediction.latency_hiding,
            max_warps: report.device.max_warps_per_sm,
            warps_per_block: report.occupancy.warps_per_block.max(1),
            wait_ns: prediction.block_latency_ns,
            wait_clocks: prediction.block_latency_ns * f64::from(report.device.sm_clock_mhz) / 1e3,
        })
    }

    /// Blocks an SM needs for the busiest unit to stay busy.
    pub fn blocks_to_cover(&self) -> f64 {
        self.hiding.warps_to_cover / f64::from(self.warps_per_block)
    }

    pub fn is_covered(&self) -> bool {
        self.hiding.covered() >= 1.0
    }

    /// The count in words: wait, work, blocks and warps needed, and what the SM holds.
    pub fn explanation(&self) -> String {
        let hiding = &self.hiding;
        let verdict = if self.is_covered() {
            format!(
                "it holds {}, enough: {} sets the pace and the wait is hidden.",
                hiding.resident_warps,
                hiding.busiest.describe()
            )
        } else {
            format!(
                "it holds {}, which cover {:.0}% of the wait: {} idles while they all wait.",
                hiding.resident_warps,
                100.0 * hiding.covered(),
                hiding.busiest.describe()
            )
        };
        format!(
            "A block waits {} ns ({} clocks) for memory and then works {} ns at the busiest \
             unit, {}. For that unit never to idle an SM needs (wait + work) / work ≈ {} blocks \
             of {} warps, {} warps; {verdict}",
            format_number(self.wait_ns),
            format_number(self.wait_clocks.round()),
            format_number(hiding.busiest_work_ns),
            hiding.busiest.describe(),
            format_number((self.blocks_to_cover() * 10.0).round() / 10.0),
            self.warps_per_block,
            format_number(hiding.warps_to_cover.round()),
        )
    }
}

/// Warp slots of one SM as a row of cells: resident warps filled, the warps needed marked by a
/// line. Every number is also in the text beside it.
fn warp_slots(facts: &LatencyFacts) -> Html {
    let slots = facts.max_warps.max(1);
    let width = 640.0;
    let cell = width / f64::from(slots);
    let needed = facts.hiding.warps_to_cover.min(f64::from(slots));
    let label = format!(
        "{} of {} warp slots resident; {} warps needed to cover the wait",
        facts.hiding.resident_warps,
        slots,
        format_number(facts.hiding.warps_to_cover.round())
    );
    html! {
        <svg class="warp-slots" viewBox={format!("0 0 {width} 56")} role="img" aria-label={label}>
            { for (0..slots).map(|slot| {
                let resident = slot < facts.hiding.resident_warps;
                html! {
                    <rect class={if resident { "slot resident" } else { "slot" }}
                          x={format!("{:.2}", f64::from(slot) * cell + 0.5)} y="8"
                          width={format!("{:.2}", (cell - 1.0).max(0.5))} height="28" />
                }
            }) }
            <line class="needed" x1={format!("{:.2}", needed * cell)} y1="2"
                  x2={format!("{:.2}", needed * cell)} y2="42" />
            <text class="needed-label" x={format!("{:.2}", (needed * cell).clamp(40.0, width - 40.0))}
                  y="54" text-anchor="middle">
                { format!("needed: {}", format_number(facts.hiding.warps_to_cover.round())) }
            </text>
        </svg>
    }
}

#[function_component(LatencyView)]
pub fn latency_view(props: &LatencyViewProps) -> Html {
    let facts = props.run.as_ref().and_then(|run| {
        let prediction = run.prediction.as_ref()?;
        LatencyFacts::new(run, prediction)
    });
    let body = match facts {
        Some(facts) => html! {
            <>
                <dl class="stats">
                    <div>
                        <dt>{ "Warps resident per SM" }</dt>
                        <dd data-testid="latency-resident">
                            { format!("{} of {}", facts.hiding.resident_warps, facts.max_warps) }
                        </dd>
                    </div>
                    <div>
                        <dt>{ "Warps needed to cover the wait" }</dt>
                        <dd data-testid="latency-needed">
                            { format_number(facts.hiding.warps_to_cover.round()) }
                        </dd>
                    </div>
                    <div>
                        <dt>{ "Wait covered" }</dt>
                        <dd data-testid="latency-covered">
                            { format!("{:.0}%", 100.0 * facts.hiding.covered()) }
                        </dd>
                    </div>
                </dl>
                { warp_slots(&facts) }
                <p data-testid="latency-explanation">{ facts.explanation() }</p>
            </>
        },
        None => html! {
            <p>{ "The count appears once the launch has run." }</p>
        },
    };
    html! {
        <section class="card" data-testid="latency-hiding" aria-labelledby="latency-title">
            <h2 id="latency-title">{ "Latency hiding: warps in flight against the wait" }</h2>
            { body }
        </section>
    }
}
