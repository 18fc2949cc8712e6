//! Occupancy of the tiled matmul's launch: blocks and warps per SM, the four limits with the
//! limiter highlighted, and the CUDA Occupancy Calculator's three sweeps.
//!
//! An impossible launch (say 1024 threads on G80) is shown as the simulator's error message,
//! never as an empty card.

use crate::components::chart::SweepChart;
use crate::model::{format_number, Sweeps};
use memplay_sim::occupancy::{BlockResources, Limiter, OccupancyError, OccupancyReport};
use memplay_sim::Device;
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
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
    }
}

#[function_component(OccupancyView)]
pub fn occupancy_view(props: &OccupancyViewProps) -> Html {
    let block = props.resources;
    let device = &props.device;
    let resources = format!(
        "One block of {}: {} threads × {} registers, and {} bytes of shared memory (its \
         __shared__ arrays and the launch's dynamic shared memory).",
        props.kernel,
        block.threads_per_block,
        block.regs_per_thread,
        format_number(f64::from(block.smem_per_block)),
    );
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
            </>
        },
        Err(error) => html! {
            <p class="error" role="alert" data-testid="occupancy-error">
                { format!("This launch is impossible on the {}: {error}.", device.name) }
            </p>
        },
    };
    html! {
        <section class="card" data-testid="occupancy" aria-labelledby="occupancy-title">
            <h2 id="occupancy-title">{ "Occupancy: how many blocks fit on an SM" }</h2>
            <p>{ resources }</p>
            { summary }
            <div class="sweeps">
                <SweepChart sweep={props.sweeps.block_size.clone()} current_pct={current_pct} />
                <SweepChart sweep={props.sweeps.registers.clone()} current_pct={current_pct} />
                <SweepChart sweep={props.sweeps.shared_memory.clone()} current_pct={current_pct} />
            </div>
        </section>
    }
}
