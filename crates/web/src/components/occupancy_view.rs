//! Occupancy of the tiled matmul's launch: blocks and warps per SM, the four limits with the
//! limiter highlighted, and the CUDA Occupancy Calculator's three sweeps.
//!
//! An impossible launch (say 1024 threads on G80) is shown as the simulator's error message,
//! never as an empty card.

use crate::components::chart::{sweep_chart, SweepChartProps};
use crate::format::format_number;
use crate::model::Sweeps;
use crate::statements::{Claim, Statement};
use memplay_sim::occupancy::{BlockResources, Limiter, OccupancyError, OccupancyReport};
use memplay_sim::Device;
use yew::prelude::*;

#[derive(Debug)]
pub struct OccupancyViewProps {
    pub device: Device,
    pub resources: BlockResources,
    /// The kernel whose blocks these are.
    pub kernel: String,
    pub launch: Result<OccupancyReport, OccupancyError>,
    pub sweeps: Sweeps,
}

/// The limiter as the page names it.
pub fn limiter_label(limiter: Limiter) -> &'static str {
    match limiter {
        Limiter::Registers => "registers",
        Limiter::SharedMem => "shared memory",
        Limiter::Warps => "warps",
        Limiter::Blocks => "blocks",
    }
}

/// A limit as a count of blocks; the simulator may use a huge number for "does not limit".
fn blocks_text(limit: u32) -> String {
    if limit >= 1 << 20 {
        "no limit".to_string()
    } else {
        limit.to_string()
    }
}

/// Why the limiter stops the next block, in the lecture's words.
fn limiter_reason(device: &Device, report: &OccupancyReport) -> String {
    match report.limiter {
        Limiter::Registers => format!(
            "a block takes {} of the SM's {} registers",
            format_number(f64::from(report.regs_per_block_allocated)),
            format_number(f64::from(device.regs_per_sm))
        ),
        Limiter::SharedMem => format!(
            "a block takes {} of the SM's {} bytes of shared memory",
            format_number(f64::from(report.smem_per_block_allocated)),
            format_number(f64::from(device.smem_per_sm))
        ),
        Limiter::Warps => format!(
            "a block has {} warps and an SM holds at most {}",
            report.warps_per_block, device.max_warps_per_sm
        ),
        Limiter::Blocks => format!(
            "an SM holds at most {} blocks, however small they are",
            device.max_blocks_per_sm
        ),
    }
}

/// The view's name in its statements.
const VIEW: &str = "occupancy";

/// The sentence on one block's resources, as the card opens.
fn resources_sentence(kernel: &str, block: &BlockResources) -> String {
    format!(
        "One block of {kernel}: {} threads × {} registers, and {} bytes of shared memory (its \
         __shared__ arrays and the launch's dynamic shared memory).",
        block.threads_per_block,
        block.regs_per_thread,
        format_number(f64::from(block.smem_per_block)),
    )
}

/// Why the table's shared memory per block differs from the bytes the block asks for: the
/// device's reservation per resident block (`Device::reserved_smem_per_block`) and its
/// allocation unit. With the sum it prints, so the sentence recomputes; `None` where the two
/// agree.
fn shared_memory_accounting(
    device: &Device,
    block: &BlockResources,
    report: &OccupancyReport,
) -> Option<Statement> {
    let asked = u64::from(block.smem_per_block);
    let reserved = u64::from(device.reserved_smem_per_block);
    let unit = u64::from(device.smem_alloc_unit.max(1));
    let allocated = u64::from(report.smem_per_block_allocated);
    if allocated == asked {
        return None;
    }
    let bytes = |value: u64| format_number(value as f64);
    let rounded = if (asked + reserved) % unit != 0 {
        format!(
            ", rounded up to the {}-byte unit shared memory is allocated in",
            bytes(unit)
        )
    } else {
        String::new()
    };
    let text = if reserved > 0 {
        format!(
            "The table counts {} B of shared memory per block: the {} bytes the block asks for \
             plus the {} bytes the {} sets aside for each resident block for the system's own \
             use (the CUDA C++ Programming Guide reserves 1 KB per block from compute \
             capability 8.0; earlier GPUs reserve none){rounded}.",
            bytes(allocated),
            bytes(asked),
            bytes(reserved),
            device.name,
        )
    } else {
        format!(
            "The table counts {} B of shared memory per block: the {} bytes the block asks \
             for{rounded}.",
            bytes(allocated),
            bytes(asked),
        )
    };
    Some(Statement {
        view: VIEW,
        text,
        claim: Claim::Formula {
            shown: allocated as f64,
            recomputed: ((asked + reserved).div_ceil(unit) * unit) as f64,
            tolerance: 0.0,
        },
    })
}

/// What the occupancy card shows in words and figures: the block's resources, how its shared
/// memory is counted, the occupancy, blocks and warps per SM, and the limiter with its reason;
/// or the reason the launch is impossible.
pub fn occupancy_statements(
    device: &Device,
    block: &BlockResources,
    kernel: &str,
    launch: &Result<OccupancyReport, OccupancyError>,
) -> Vec<Statement> {
    let mut statements = vec![Statement::words(VIEW, resources_sentence(kernel, block))];
    match launch {
        Ok(report) => {
            statements.extend(shared_memory_accounting(device, block, report));
            statements.push(Statement::figure(
                VIEW,
                "occupancy",
                report.theoretical_occupancy_pct.round(),
                format!("Occupancy: {:.0}%", report.theoretical_occupancy_pct),
            ));
            statements.push(Statement::figure(
                VIEW,
                "blocks per SM",
                f64::from(report.active_blocks_per_sm),
                format!("Blocks per SM: {}", report.active_blocks_per_sm),
            ));
            statements.push(Statement::figure(
                VIEW,
                "warps per SM",
                f64::from(report.active_warps_per_sm),
                format!(
                    "Warps per SM: {} of {}",
                    report.active_warps_per_sm, device.max_warps_per_sm
                ),
            ));
            statements.push(Statement::words(
                VIEW,
                format!(
                    "Limited by {}: {}.",
                    limiter_label(report.limiter),
                    limiter_reason(device, report)
                ),
            ));
        }
        Err(error) => statements.push(Statement::words(VIEW, impossible_sentence(device, error))),
    }
    statements
}

fn impossible_sentence(device: &Device, error: &OccupancyError) -> String {
    format!("This launch is impossible on the {}: {error}.", device.name)
}

fn limits_table(device: &Device, report: &OccupancyReport) -> Html {
    let rows = [
        (
            Limiter::Registers,
            format_number(f64::from(report.regs_per_block_allocated)),
            format_number(f64::from(device.regs_per_sm)),
            report.limit_registers,
        ),
        (
            Limiter::SharedMem,
            format!(
                "{} B",
                format_number(f64::from(report.smem_per_block_allocated))
            ),
            // The driver configures only part of the unified L1/shared array as shared memory,
            // as Nsight Compute reports it; the rest stays L1 cache.
            if report.shared_carveout_bytes < device.smem_per_sm {
                format!(
                    "{} B configured (of {} B)",
                    format_number(f64::from(report.shared_carveout_bytes)),
                    format_number(f64::from(device.smem_per_sm))
                )
            } else {
                format!("{} B", format_number(f64::from(device.smem_per_sm)))
            },
            report.limit_shared_mem,
        ),
        (
            Limiter::Warps,
            report.warps_per_block.to_string(),
            device.max_warps_per_sm.to_string(),
            report.limit_warps,
        ),
        (
            Limiter::Blocks,
            "1".to_string(),
            device.max_blocks_per_sm.to_string(),
            report.limit_blocks,
        ),
    ];
    html! {
        // A phone is narrower than the four columns: the table scrolls in its own box, a named
        // region with a tab stop, and the page does not pan sideways.
        <div class="table-scroll scroll-edge" tabindex="0" role="region"
             aria-label="The four limits">
            <table class="limits">
                <caption>{ "The four limits: blocks of this size that fit on one SM" }</caption>
                <thead>
                    <tr>
                        <th scope="col">{ "Resource" }</th>
                        <th scope="col">{ "One block" }</th>
                        <th scope="col">{ "One SM" }</th>
                        <th scope="col">{ "Blocks that fit" }</th>
                    </tr>
                </thead>
                <tbody>
                    { for rows.into_iter().map(|(limiter, block, sm, fit)| {
                        let is_limiter = limiter == report.limiter;
                        html! {
                            <tr class={classes!(is_limiter.then_some("limiter"))}>
                                <th scope="row">
                                    { limiter_label(limiter) }
                                    if is_limiter { <span class="badge">{ "limiter" }</span> }
                                </th>
                                <td>{ block }</td>
                                <td>{ sm }</td>
                                <td>{ blocks_text(fit) }</td>
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
        </div>
    }
}

pub fn occupancy_view(props: &OccupancyViewProps) -> Html {
    let block = props.resources;
    let device = &props.device;
    // The words come from the card's statements, as the host tests read them.
    let statements = occupancy_statements(device, &block, &props.kernel, &props.launch);
    let resources = statements[0].text.clone();
    let accounting = statements
        .iter()
        .find(|statement| matches!(statement.claim, Claim::Formula { .. }))
        .map(|statement| statement.text.clone());
    let current_pct = props
        .launch
        .as_ref()
        .map(|report| report.theoretical_occupancy_pct)
        .unwrap_or(0.0);
    let summary = match &props.launch {
        Ok(report) => html! {
            <>
                <dl class="stats">
                    <div>
                        <dt>{ "Occupancy" }</dt>
                        <dd>{ format!("{:.0}%", report.theoretical_occupancy_pct) }</dd>
                    </div>
                    <div>
                        <dt>{ "Blocks per SM" }</dt>
                        <dd>{ report.active_blocks_per_sm }</dd>
                    </div>
                    <div>
                        <dt>{ "Warps per SM" }</dt>
                        <dd>{ format!("{} of {}", report.active_warps_per_sm, device.max_warps_per_sm) }</dd>
                    </div>
                </dl>
                <p class="limiter-line">
                    { "Limited by " }
                    <strong data-testid="occupancy-limiter">{ limiter_label(report.limiter) }</strong>
                    { format!(": {}.", limiter_reason(device, report)) }
                </p>
                { limits_table(device, report) }
                if let Some(accounting) = accounting {
                    <p data-testid="occupancy-reserve">{ accounting }</p>
                }
            </>
        },
        Err(error) => html! {
            <p class="error" role="alert" data-testid="occupancy-error">
                { impossible_sentence(device, error) }
            </p>
        },
    };
    html! {
        <section class="card" data-testid="occupancy" aria-labelledby="occupancy-title">
            <h2 id="occupancy-title">{ "Occupancy: how many blocks fit on an SM" }</h2>
            <p>{ resources }</p>
            { summary }
            <div class="sweeps">
                { sweep_chart(&SweepChartProps { sweep: props.sweeps.block_size.clone(), current_pct }) }
                { sweep_chart(&SweepChartProps { sweep: props.sweeps.registers.clone(), current_pct }) }
                { sweep_chart(&SweepChartProps { sweep: props.sweeps.shared_memory.clone(), current_pct }) }
            </div>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::State;
    use memplay_sim::DeviceId;

    /// The occupancy card's statements for the tiled matmul at `tile` on `device`.
    fn statements_at(device: DeviceId, tile: u32) -> Vec<Statement> {
        let state = State {
            variant: crate::lessons::variant("occupancy", "tiled"),
            device,
            tile,
            ..State::default()
        };
        let input = state.launch();
        let result = memplay_sim::simulate::simulate(&input);
        let (block, launch) = crate::model::lesson_occupancy(&input, &result);
        occupancy_statements(&input.device, &block, &input.kernel, &launch)
    }

    #[test]
    fn the_h100s_reserved_kilobyte_is_explained_where_2048_bytes_become_3072() {
        let statements = statements_at(DeviceId::H100, 16);
        let accounting = statements
            .iter()
            .find(|s| matches!(s.claim, Claim::Formula { .. }))
            .unwrap_or_else(|| panic!("no sentence on the reserve: {statements:?}"));
        assert!(
            accounting.text.starts_with(
                "The table counts 3,072 B of shared memory per block: the 2,048 bytes the block \
                 asks for plus the 1,024 bytes the H100"
            ),
            "{}",
            accounting.text
        );
        assert_eq!(
            accounting.claim,
            Claim::Formula {
                shown: 3072.0,
                recomputed: 3072.0,
                tolerance: 0.0
            }
        );
    }

    #[test]
    fn a_device_that_reserves_nothing_says_nothing_of_a_reserve() {
        let statements = statements_at(DeviceId::G80, 16);
        assert!(
            statements.iter().all(|s| !s.text.contains("sets aside")),
            "{statements:?}"
        );
    }
}
