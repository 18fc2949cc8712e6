//! The copies to and from the host beside the kernel (seed 000's `cudaMemcpy`s, seed 001's
//! `cudaMemcpy2D`): each buffer's copy with its bytes and time, the kernel's predicted time, their
//! ratio as a bar of three parts, and the same copies on every preset's bus
//! (`memplay_sim::transfer`). The transfer model is a few divisions, so it runs on the page from
//! the worker's report and prediction; nothing here simulates.

use crate::format::format_number;
use crate::run::{Shared, SimulationRun};
use memplay_sim::transfer::{
    copy_time, launch_transfers, Direction, HostMemory, LaunchTransfers, Layout,
};
use memplay_sim::DeviceId;
use yew::prelude::*;

#[derive(Debug)]
pub struct TransferViewProps {
    pub run: Option<Shared<SimulationRun>>,
    pub host_memory: HostMemory,
    pub layout: Layout,
}

/// A time in the unit that reads best: microseconds below a millisecond.
pub fn time_text(seconds: f64) -> String {
    if seconds < 1e-3 {
        format!(
            "{} us",
            format_number((seconds * 1e6 * 10.0).round() / 10.0)
        )
    } else {
        format!(
            "{} ms",
            format_number((seconds * 1e3 * 100.0).round() / 100.0)
        )
    }
}

/// The sentence that says which side costs more.
pub fn verdict(transfers: &LaunchTransfers) -> String {
    let ratio = transfers.ratio();
    if ratio >= 1.0 {
        format!(
            "The copies take {} times the kernel's time: the bus, not the GPU, sets the pace.",
            format_number((ratio * 10.0).round() / 10.0)
        )
    } else {
        format!(
            "The copies take {:.0}% of the kernel's time: the kernel's work pays for them.",
            100.0 * ratio
        )
    }
}

fn bar(transfers: &LaunchTransfers) -> Html {
    let copy_in: f64 = transfers
        .copies
        .iter()
        .filter(|c| c.direction == Direction::ToDevice)
        .map(|c| c.time.seconds)
        .sum();
    let copy_out = transfers.copy_seconds() - copy_in;
    let total = (copy_in + copy_out + transfers.kernel_seconds).max(1e-12);
    let width = 600.0;
    let parts = [
        ("copy-in", "copy in", copy_in),
        ("kernel", "kernel", transfers.kernel_seconds),
        ("copy-out", "copy out", copy_out),
    ];
    let mut x = 0.0;
    let label = format!(
        "Copy in {}, kernel {}, copy out {}",
        time_text(copy_in),
        time_text(transfers.kernel_seconds),
        time_text(copy_out)
    );
    html! {
        <svg class="transfer-bar" viewBox={format!("0 0 {width} 54")} role="img" aria-label={label}>
            { for parts.iter().map(|&(class, name, seconds)| {
                let w = width * seconds / total;
                let start = x;
                x += w;
                html! {
                    <g class={classes!("part", class)}>
                        <rect x={format!("{start:.2}")} y="4" width={format!("{:.2}", w.max(0.5))} height="26" />
                        if w > 70.0 {
                            <text x={format!("{:.2}", start + 6.0)} y="48">{ name }</text>
                        }
                    </g>
                }
            }) }
        </svg>
    }
}

pub fn transfer_view(props: &TransferViewProps) -> Html {
    let ran = props
        .run
        .as_ref()
        .and_then(|run| match (&run.result, &run.prediction) {
            (Ok(report), Some(prediction)) => Some((report, prediction)),
            _ => None,
        });
    let body = match ran {
        Some((report, prediction)) => {
            let transfers = launch_transfers(report, prediction, props.host_memory, props.layout);
            let device = &report.device;
            let rows = transfers.copies.iter().map(|copy| {
                let call = match (copy.direction, props.layout) {
                    (_, Layout::Pitched { .. }) => "cudaMemcpy2D",
                    _ => "cudaMemcpy",
                };
                let direction = match copy.direction {
                    Direction::ToDevice => "to the GPU",
                    Direction::ToHost => "to the host",
                };
                html! {
                    <tr>
                        <th scope="row">{ format!("{call} {} {direction}", copy.buffer) }</th>
                        <td>{ format_number(copy.time.bytes as f64) }</td>
                        <td>{ time_text(copy.time.seconds) }</td>
                        <td>{ format_number((copy.time.gbps() * 10.0).round() / 10.0) }</td>
                    </tr>
                }
            });
            let copies: Vec<_> = transfers.copies.iter().map(|c| c.copy).collect();
            let per_device = DeviceId::ALL.into_iter().map(|id| {
                let other = id.device();
                let seconds = |memory: HostMemory| -> f64 {
                    copies
                        .iter()
                        .map(|&copy| copy_time(&other, memory, copy).seconds)
                        .sum()
                };
                html! {
                    <tr class={classes!((id == device.id).then_some("current"))}>
                        <th scope="row">{ id.label() }</th>
                        <td>{ other.host_link.name.to_string() }</td>
                        <td>{ time_text(seconds(HostMemory::Pinned)) }</td>
                        <td>{ time_text(seconds(HostMemory::Pageable)) }</td>
                    </tr>
                }
            });
            html! {
                <>
                    <dl class="stats">
                        <div>
                            <dt>{ "Copies, both ways" }</dt>
                            <dd data-testid="transfer-copies">{ time_text(transfers.copy_seconds()) }</dd>
                        </div>
                        <div>
                            <dt>{ "Kernel (predicted)" }</dt>
                            <dd data-testid="transfer-kernel">{ time_text(transfers.kernel_seconds) }</dd>
                        </div>
                        <div>
                            <dt>{ "Copies over kernel" }</dt>
                            <dd data-testid="transfer-ratio">
                                { format!("{}x", format_number((transfers.ratio() * 100.0).round() / 100.0)) }
                            </dd>
                        </div>
                    </dl>
                    { bar(&transfers) }
                    <p data-testid="transfer-verdict">{ verdict(&transfers) }</p>
                    // Wider than a narrow frame's column: each table scrolls in its own box.
                    <div class="table-scroll scroll-edge" tabindex="0" role="region"
                         aria-label="The copies and their times">
                    <table class="numbers">
                        <caption>{ format!(
                            "Each copy over the {}'s {} from {} host memory",
                            device.name,
                            device.host_link.name,
                            props.host_memory.as_str()
                        ) }</caption>
                        <thead>
                            <tr>
                                <th scope="col">{ "Copy" }</th>
                                <th scope="col">{ "Bytes" }</th>
                                <th scope="col">{ "Time" }</th>
                                <th scope="col">{ "GB/s" }</th>
                            </tr>
                        </thead>
                        <tbody>{ for rows }</tbody>
                    </table>
                    </div>
                    <div class="table-scroll scroll-edge" tabindex="0" role="region"
                         aria-label="The copies on every preset's bus">
                    <table class="numbers" data-testid="transfer-devices">
                        <caption>{ "The same copies on every preset's bus" }</caption>
                        <thead>
                            <tr>
                                <th scope="col">{ "Device" }</th>
                                <th scope="col">{ "Bus" }</th>
                                <th scope="col">{ "Pinned" }</th>
                                <th scope="col">{ "Pageable" }</th>
                            </tr>
                        </thead>
                        <tbody>{ for per_device }</tbody>
                    </table>
                    </div>
                </>
            }
        }
        None => html! { <p>{ "The copies appear once the launch has run." }</p> },
    };
    html! {
        <section class="card" data-testid="transfers" aria-labelledby="transfers-title">
            <h2 id="transfers-title">{ "Copies to and from the host, beside the kernel" }</h2>
            { body }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(seconds: f64, expected: &str) {
        assert_eq!(time_text(seconds), expected);
    }

    #[test]
    fn short_times_read_in_microseconds_and_long_ones_in_milliseconds() {
        check(15.55e-6, "15.6 us");
        check(0.000_596, "596 us");
        check(0.012_345, "12.3 ms");
    }
}
