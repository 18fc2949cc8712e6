//! Latency hiding (seed 003: "a minimal of 13 warps are needed to fully tolerate 200-cycle
//! memory latency"): the warps an SM holds against the warps its wait for memory needs, read
//! off the timing model (`memplay_sim::timing::LatencyHiding`), with the count spelt out.

use crate::format::format_number;
use crate::run::{Shared, SimulationRun};
use crate::statements::{printed_number, Claim, Statement};
use memplay_sim::timing::{LatencyHiding, Prediction};
use yew::prelude::*;

#[derive(Debug)]
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

    /// The count in words: the wait, the work at every unit and at the busiest, the formula
    /// the timing model computes with those very terms, and what the SM holds.
    pub fn explanation(&self) -> String {
        self.formula().0
    }

    /// The explanation, and the statements it makes: the formula's result recomputed from its
    /// terms as printed, and the warps from the blocks as printed.
    fn formula(&self) -> (String, Vec<Statement>) {
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
        let wait = format_number(hiding.wait_ns);
        let work = format_number(hiding.work_ns);
        let busiest = format_number(hiding.busiest_work_ns);
        let blocks = format!("{:.2}", self.blocks_to_cover());
        let warps = format_number(hiding.warps_to_cover.round());
        let text = format!(
            "A block waits {wait} ns ({} clocks) for memory, and works {work} ns at all the units \
             together, {busiest} ns of it at the busiest, {}. For that unit never to idle an SM \
             needs (wait + work) / busiest work = ({wait} + {work}) / {busiest} ≈ {blocks} blocks \
             of {} warps, {warps} warps; {verdict}",
            format_number(self.wait_clocks.round()),
            hiding.busiest.describe(),
            self.warps_per_block,
        );
        let read = |printed: &str| printed_number(printed).unwrap_or(f64::NAN);
        let shown_blocks = read(&blocks);
        let mut statements = Vec::new();
        if read(&busiest) > 0.0 {
            let recomputed = (read(&wait) + read(&work)) / read(&busiest);
            statements.push(Statement {
                view: "latency-hiding",
                text: text.clone(),
                claim: Claim::Formula {
                    shown: shown_blocks,
                    recomputed,
                    // The blocks are printed to two decimals, each term to one.
                    tolerance: (0.005 + 0.05 * (1.0 + recomputed) / read(&busiest))
                        / shown_blocks.max(0.01)
                        + 0.001,
                },
            });
            let warps_recomputed = shown_blocks * f64::from(self.warps_per_block);
            statements.push(Statement {
                view: "latency-hiding",
                text: format!(
                    "{blocks} blocks of {} warps, {warps} warps",
                    self.warps_per_block
                ),
                claim: Claim::Formula {
                    shown: read(&warps),
                    recomputed: warps_recomputed,
                    tolerance: (0.5 + 0.005 * f64::from(self.warps_per_block))
                        / warps_recomputed.max(0.5),
                },
            });
        } else {
            statements.push(Statement::words("latency-hiding", text.clone()));
        }
        (text, statements)
    }

    /// Everything the view shows, as statements: its three figures and the count.
    #[cfg(test)]
    pub fn statements(&self) -> Vec<Statement> {
        let hiding = &self.hiding;
        let mut statements = vec![
            Statement::figure(
                "latency-hiding",
                "warps resident per SM",
                f64::from(hiding.resident_warps),
                format!(
                    "Warps resident per SM: {} of {}",
                    hiding.resident_warps, self.max_warps
                ),
            ),
            Statement::figure(
                "latency-hiding",
                "warps needed to cover the wait",
                hiding.warps_to_cover.round(),
                format!(
                    "Warps needed to cover the wait: {}",
                    format_number(hiding.warps_to_cover.round())
                ),
            ),
            Statement::figure(
                "latency-hiding",
                "wait covered",
                (100.0 * hiding.covered()).round(),
                format!("Wait covered: {:.0}%", 100.0 * hiding.covered()),
            ),
        ];
        statements.extend(self.formula().1);
        statements
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::State;
    use memplay_sim::simulate::simulate;
    use memplay_sim::timing::predict;
    use memplay_sim::DeviceId;

    fn facts(state: State) -> LatencyFacts {
        let input = state.launch();
        let result = simulate(&input);
        let prediction = result.as_ref().ok().map(predict);
        let run = SimulationRun {
            input,
            result,
            prediction: prediction.clone(),
            elapsed_ms: 0.0,
            declarations: Ok(Vec::new()),
        };
        LatencyFacts::new(&run, prediction.as_ref().expect("a prediction")).expect("facts")
    }

    #[test]
    fn the_count_printed_recomputes_from_the_terms_printed_beside_it() {
        // The page printed "(wait + work) / work ≈ 6.3 blocks" with the busiest unit's work
        // alone as the work, where (347.3 + 89.8) / 89.8 is 4.9: the model adds every unit's
        // work to the wait.
        for (variant, device, regs) in [
            (
                crate::lessons::variant("latency-hiding", "adjacent-difference"),
                DeviceId::H100,
                32,
            ),
            (
                crate::lessons::variant("latency-hiding", "adjacent-difference"),
                DeviceId::H100,
                64,
            ),
            (
                crate::lessons::variant("latency-hiding", "adjacent-difference"),
                DeviceId::H100,
                255,
            ),
            (
                crate::lessons::variant("latency-hiding", "adjacent-difference"),
                DeviceId::G80,
                16,
            ),
            (
                crate::lessons::variant("tiled-matmul", "tiled"),
                DeviceId::H100,
                32,
            ),
            (
                crate::lessons::variant("tiled-matmul", "naive"),
                DeviceId::Gt200,
                16,
            ),
        ] {
            let facts = facts(State {
                variant,
                device,
                regs,
                ..State::default()
            });
            let formulas: Vec<Statement> = facts
                .statements()
                .into_iter()
                .filter(|s| matches!(s.claim, Claim::Formula { .. }))
                .collect();
            assert_eq!(formulas.len(), 2, "{variant:?} on {device}");
            for statement in formulas {
                let Claim::Formula {
                    shown,
                    recomputed,
                    tolerance,
                } = statement.claim
                else {
                    continue;
                };
                assert!(
                    (shown - recomputed).abs() <= tolerance * recomputed.abs(),
                    "{variant:?} on {device} at {regs} registers: {shown} printed, {recomputed} \
                     from the printed terms: {}",
                    statement.text
                );
            }
        }
    }
}
