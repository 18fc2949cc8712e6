//! Warp divergence (seed 001, "Considering Control-Flow Divergence"): how many lanes of a warp
//! the average instruction keeps busy, how many warp instructions the launch issues, and how
//! much of the FP32 pipe's work is useful, from the simulated counters
//! (`smsp__thread_inst_executed` over `smsp__inst_executed`, as Nsight Compute reports it).

use crate::format::format_number;
use crate::run::{Shared, SimulationRun};
use yew::prelude::*;

#[derive(Debug)]
pub struct DivergenceViewProps {
    /// The run the page shows; `None` before the first answer.
    pub run: Option<Shared<SimulationRun>>,
}

/// What the view says about one launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DivergenceFacts {
    /// Warp-level instructions issued (`smsp__inst_executed`).
    pub warp_instructions: f64,
    /// Lanes active in the average one.
    pub active_lanes: f64,
    /// Useful FP32 operations over those the pipe performs for whole warps; `None` without FP32.
    pub fp32_useful: Option<f64>,
    pub warp_size: u32,
}

impl DivergenceFacts {
    pub fn new(run: &SimulationRun) -> Option<DivergenceFacts> {
        let report = run.result.as_ref().ok()?;
        let counters = &report.counters;
        (counters.inst_executed > 0.0).then(|| DivergenceFacts {
            warp_instructions: counters.inst_executed,
            active_lanes: counters.thread_inst_executed / counters.inst_executed,
            fp32_useful: (counters.fp32_issued_flops > 0.0)
                .then(|| counters.fp32_flops / counters.fp32_issued_flops),
            warp_size: report.device.warp_size,
        })
    }
}

/// The lanes of one warp: as many filled as the average instruction has active.
fn lane_row(facts: &DivergenceFacts) -> Html {
    let lanes = facts.warp_size.max(1);
    let active = facts.active_lanes.round() as u32;
    let label = format!(
        "{} of {} lanes active in the average warp instruction",
        format_number(facts.active_lanes),
        lanes
    );
    html! {
        <svg class="lane-row" viewBox={format!("0 0 {} 30", lanes * 20)} role="img" aria-label={label}>
            { for (0..lanes).map(|lane| html! {
                <rect class={if lane < active { "lane active" } else { "lane" }}
                      x={(lane * 20 + 1).to_string()} y="2" width="18" height="26" />
            }) }
        </svg>
    }
}

pub fn divergence_view(props: &DivergenceViewProps) -> Html {
    let body = match props.run.as_deref().and_then(DivergenceFacts::new) {
        Some(facts) => html! {
            <>
                <dl class="stats">
                    <div>
                        <dt>{ "Active lanes per warp instruction" }</dt>
                        <dd data-testid="divergence-lanes">
                            { format!("{:.1} of {}", facts.active_lanes, facts.warp_size) }
                        </dd>
                    </div>
                    <div>
                        <dt>{ "Warp instructions issued" }</dt>
                        <dd data-testid="divergence-instructions">
                            { format_number(facts.warp_instructions) }
                        </dd>
                    </div>
                    if let Some(useful) = facts.fp32_useful {
                        <div>
                            <dt>{ "FP32 lane work that is useful" }</dt>
                            <dd data-testid="divergence-fp32-useful">
                                { format!("{:.0}%", 100.0 * useful) }
                            </dd>
                        </div>
                    }
                </dl>
                { lane_row(&facts) }
                <p>
                    { "A warp whose lanes disagree at a branch issues both paths, each with the \
                       lanes that took it, the others idle; the FP32 pipe works for the whole \
                       warp either way. Compare the two variants: the same work, issued once or \
                       twice." }
                </p>
            </>
        },
        None => html! { <p>{ "The counts appear once the launch has run." }</p> },
    };
    html! {
        <section class="card" data-testid="divergence" aria-labelledby="divergence-title">
            <h2 id="divergence-title">{ "Divergence: lanes at work in each instruction" }</h2>
            { body }
        </section>
    }
}
