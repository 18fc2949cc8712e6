//! The bank map of seed 001: banks as columns, one row per wavefront, every lane drawn in the
//! column of the bank that serves it and the row of the wavefront that serves it.
//!
//! A bank that needs more than one wavefront is a conflict: its cells are striped and coloured,
//! its header says how many cycles it is busy, and each of its cells says "conflict" to a screen
//! reader, so colour is never the only cue. Cells where several lanes share one word (broadcast,
//! multicast) list all those lanes.
//!
//! A map of 32 banks is drawn as two blocks of 16 banks, side by side where the box has room for
//! all 32 columns and one above the other where it has not (a phone, a course page's frame), so
//! no bank is ever out of sight. The map's box is still a named region with a tab stop that
//! scrolls sideways, for a frame too narrow even for 16 columns.

use crate::line_model::bank_words;
use crate::model::{bank_blocks, bank_grid, lane_list, phase_name, BankCell, PhaseGrid};
use memplay_sim::banks::BankReport;
use memplay_sim::device::{SharedPhase, SharedWordDelivery};
use memplay_sim::patterns::{Element, Pattern, PatternId};
use memplay_sim::Device;
use yew::prelude::*;

#[derive(Debug)]
pub struct BankMapProps {
    pub device: Device,
    pub pattern: Pattern,
    pub report: BankReport,
    pub tile: u32,
    pub pad: u32,
    pub stride: u32,
}

/// The settings the pattern's source line depends on, with their values, and the array's element
/// where it is not a float.
fn parameters(props: &BankMapProps) -> String {
    let settings = match props.pattern.id {
        PatternId::Stride => format!("s = {}", props.stride),
        PatternId::TileRow | PatternId::TileColumn => {
            format!("TILE = {}, PAD = {}", props.tile, props.pad)
        }
        PatternId::RowPerThread => format!("PAD = {}", props.pad),
        PatternId::Broadcast | PatternId::Multicast => String::new(),
    };
    let bytes = props.pattern.access.width.bytes();
    let element = Element::ALL
        .into_iter()
        .find(|e| e.bytes() == bytes)
        .unwrap_or_default();
    match (element, settings.is_empty()) {
        (Element::Float, _) => settings,
        (_, true) => format!("{} elements of {bytes} bytes", element.as_str()),
        (_, false) => format!("{settings}, {} elements of {bytes} bytes", element.as_str()),
    }
}

/// How this device's shared memory works, in one line.
fn device_rules(device: &Device) -> String {
    let served = match device.shared_phase {
        SharedPhase::HalfWarp => "each half-warp is served on its own",
        SharedPhase::FullWarp => "the whole warp is served together",
    };
    let sharing = match device.shared_word_delivery {
        SharedWordDelivery::Broadcast => "one word per cycle can be broadcast to many lanes",
        SharedWordDelivery::Multicast => "any word read by several lanes is multicast to them",
    };
    format!(
        "{}: {} banks of {} bytes; {served}; {sharing}.",
        device.name, device.n_banks, device.bank_width_bytes
    )
}

/// The text of one cell: its lanes, or their count when the list is too long for a cell.
fn cell_text(cell: &BankCell) -> String {
    cell.words
        .iter()
        .map(|word| {
            let list = lane_list(&word.lanes);
            if list.split(", ").count() > 2 {
                format!("{} lanes", word.lanes.len())
            } else {
                // A zero-width space after the comma lets a narrow cell wrap the list.
                list.replace(", ", ",\u{200b}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn cell_title(cell: &BankCell, bank: usize, wavefront: u32) -> String {
    cell.words
        .iter()
        .map(|word| {
            let who = if word.lanes.len() == 1 {
                format!("lane {}", word.lanes[0])
            } else {
                format!("lanes {}", lane_list(&word.lanes))
            };
            format!(
                "{who} read word {} (bank {bank}) in wavefront {}",
                word.word,
                wavefront + 1
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// One block of a phase's map: the banks of `banks` as columns, every wavefront of the phase as a
/// row, so the blocks of one phase line up row by row when they stand side by side.
fn block_table(grid: &PhaseGrid, banks: std::ops::Range<usize>, whole: bool) -> Html {
    let caption = if whole {
        "Banks as columns, wavefronts as rows; each cell lists the lanes it serves.".to_string()
    } else {
        format!(
            "Banks {} to {} as columns, wavefronts as rows; each cell lists the lanes it serves.",
            banks.start,
            banks.end - 1
        )
    };
    html! {
        // A class, not a style attribute: the page's Content-Security-Policy allows no inline
        // styles. The stylesheet sizes a block of 16 banks.
        <table class={format!("bank-table banks-{}", banks.len())}>
            <caption class="sr-only">{ caption }</caption>
            <thead>
                <tr>
                    <th scope="col" class="corner">{ "bank" }</th>
                    { for banks.clone().map(|bank| html! {
                        <th scope="col">{ bank }</th>
                    }) }
                </tr>
                <tr class="cycles">
                    <th scope="row" class="corner">{ "cycles" }</th>
                    { for grid.cycles_per_bank[banks.clone()].iter().map(|&cycles| html! {
                        <td class={classes!((cycles > 1).then_some("conflict"))}>
                            { if cycles > 1 { format!("{cycles}×") } else { cycles.to_string() } }
                        </td>
                    }) }
                </tr>
            </thead>
            <tbody>
                { for grid.rows.iter().enumerate().map(|(row, cells)| {
                    let wavefront = grid.first_wavefront + row as u32;
                    html! {
                        <tr>
                            <th scope="row" title={format!("wavefront {}", wavefront + 1)}>
                                { format!("w{}", wavefront + 1) }
                            </th>
                            { for banks.clone().map(|bank| {
                                let cell = &cells[bank];
                                if cell.words.is_empty() {
                                    return html! { <td class="empty"></td> };
                                }
                                let shared = cell.words.iter().any(|w| w.is_shared());
                                let class = classes!(
                                    "lane",
                                    cell.conflict.then_some("conflict"),
                                    shared.then_some("shared"),
                                );
                                html! {
                                    <td class={class} title={cell_title(cell, bank, wavefront)}>
                                        { cell_text(cell) }
                                        if cell.conflict {
                                            <span class="sr-only">{ " conflict" }</span>
                                        }
                                    </td>
                                }
                            }) }
                        </tr>
                    }
                }) }
            </tbody>
        </table>
    }
}

/// One phase's map. `map_name` names its scrolling region ("Bank map"), so that the per-line
/// view's map (`line_view`) is a region of its own name.
///
/// The banks come in blocks of 16 (`bank_blocks`): the stylesheet sets a 32-bank map's two
/// blocks side by side where the box has room for 32 columns and one above the other where it
/// has not, so all 32 banks are on the screen of a phone.
pub(crate) fn phase_table(grid: &PhaseGrid, n_phases: usize, map_name: &str) -> Html {
    let blocks = bank_blocks(grid.cycles_per_bank.len());
    let whole = blocks.len() == 1;
    let (heading, region) = if n_phases > 1 {
        let name = phase_name(n_phases);
        let mut name = name.to_string();
        if let Some(first) = name.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        let heading = html! {
            <h3 class="phase-title">
                { format!("{name} {}: lanes {}", grid.phase + 1, lane_list(&grid.lanes)) }
            </h3>
        };
        (
            heading,
            format!("{map_name}, {} {}", phase_name(n_phases), grid.phase + 1),
        )
    } else {
        (Html::default(), map_name.to_string())
    };
    html! {
        <div class="phase">
            { heading }
            // A region with a tab stop: where even one block is wider than the box, the keyboard
            // scrolls it with the arrow keys once it has the focus.
            <div class="bank-scroll scroll-edge" tabindex="0" role="region" aria-label={region}>
                <div class="bank-blocks">
                    { for blocks.into_iter().map(|banks| block_table(grid, banks, whole)) }
                </div>
            </div>
        </div>
    }
}

pub fn bank_map(props: &BankMapProps) -> Html {
    let report = &props.report;
    let grids = bank_grid(report);
    let words = bank_words(report);
    let parameters = parameters(props);
    html! {
        <section class="card bank-card" data-testid="bank-map" aria-labelledby="bank-map-title">
            <h2 id="bank-map-title">{ "Shared-memory banks: one warp's load" }</h2>
            <p class="source">
                <code>{ props.pattern.source.clone() }</code>
                if !parameters.is_empty() {
                    <span class="parameters">{ format!(" with {parameters}") }</span>
                }
            </p>
            <p class="device-rules">{ device_rules(&props.device) }</p>
            <div class={classes!("verdict", words.bad.then_some("bad"))}>
                <p class="degree">
                    <span class="degree-label">{ "Bank conflict: " }</span>
                    <strong data-testid="conflict-degree">{ words.degree.clone() }</strong>
                </p>
                <p class="wavefronts" data-testid="bank-wavefronts">
                    { format!("{}, {} extra", words.wavefronts, report.bank_conflicts) }
                </p>
            </div>
            <p class="explain">{ words.explain.clone() }</p>
            <ul class="legend" aria-label="Legend">
                <li><span class="swatch lane">{ "5" }</span>{ "lane 5's word, in its bank's column" }</li>
                <li><span class="swatch lane shared">{ "0,1" }</span>{ "one word sent to several lanes" }</li>
                <li><span class="swatch lane conflict">{ "7" }</span>{ "bank busy for more than one wavefront (striped; cycles row says ×n)" }</li>
            </ul>
            <p class="grid-help">
                { "Columns are the banks; each row w1, w2, … is one wavefront, one shared-memory \
                   cycle. A lane sits in the column of the bank that holds its word." }
            </p>
            { for grids.iter().map(|grid| phase_table(grid, grids.len(), "Bank map")) }
        </section>
    }
}
