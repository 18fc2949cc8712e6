//! The per-line view: every shared and global access of the kernel with its counters over the
//! whole launch, and for the picked access one warp's executions of it, drawn one at a time.
//!
//! The table is Nsight Compute's Source page in small (memory metrics next to the source line
//! that causes them); the drawing is the lectures' picture of one warp's access: seed 001's bank
//! map for shared memory, seed 002's sectors and 128-byte lines for global memory. The counters
//! and the pictures come from the same analyses (`memplay_sim::banks`, `memplay_sim::coalescing`)
//! over the kernel's real addresses, traced by the simulation worker for the chosen warp
//! (`memplay_sim::trace`); what is derived from them lives in `line_model`.
//!
//! The kernel text that rows quote is only ever text content, never HTML.

use crate::components::bank_map::phase_table;
use crate::components::controls::typed_number;
use crate::format::format_number;
use crate::line_model::{
    bank_words, kind_name, per_request_text, sector_text, space_name, step_text, AccessMap,
    CoalescingMap, LineRow, LineView as LineViewData,
};
use crate::model::bank_grid;
use crate::state::Action;
use memplay_sim::access::AccessKind;
use memplay_sim::banks::BankReport;
use web_sys::HtmlInputElement;
use yew::prelude::*;

#[derive(Debug)]
pub struct LineViewProps {
    /// The view of the last launch that ran; `None` before one has.
    pub view: Option<LineViewData>,
    /// Whether the picked access is drawn under the table; where the lesson's first screen draws
    /// it (`LineFocus`), the table only picks it.
    pub with_detail: bool,
    pub on_action: Callback<Action>,
}

fn table_row(row: &LineRow, picked: bool, on_action: &Callback<Action>) -> Html {
    let site = row.site;
    let on_pick = {
        let on_action = on_action.clone();
        Callback::from(move |_: MouseEvent| on_action.emit(Action::PickLineSite { site }))
    };
    // The column is in the button's name, so two accesses on one line are two distinct buttons.
    let name = format!(
        "Line {}, column {}: {}",
        site.span.line, site.span.col, row.what
    );
    html! {
        <tr class={classes!(picked.then_some("picked"))}
            data-line={site.span.line.to_string()}
            data-space={space_name(site.space)} data-kind={kind_name(site.kind)}>
            <th scope="row">
                <button type="button" aria-pressed={picked.to_string()} aria-label={name}
                        onclick={on_pick}>
                    { site.span.line }
                </button>
            </th>
            <td><code>{ row.access.clone() }</code><span class="what">{ row.what.clone() }</span></td>
            <td>{ row.count.clone() }</td>
            <td>{ row.cost.clone() }</td>
            <td class={classes!("verdict-cell", row.bad.then_some("bad"))}>
                { row.verdict.clone() }
                if let Some(fusion) = &row.fusion {
                    <span class="what">{ fusion.words() }</span>
                }
            </td>
        </tr>
    }
}

/// The block and warp picker: three number boxes that say which warp the simulation traces.
fn warp_picker(view: &LineViewData, on_action: &Callback<Action>) -> Html {
    // Each box reports when its value is committed, with the other two as they are, and shows
    // the value that will be traced (a typed 99 in a grid of 64 blocks becomes 63).
    let commit = |which: usize, max: u32| {
        let on_action = on_action.clone();
        let (block, warp) = (view.block, view.warp);
        Callback::from(move |event: Event| {
            let Some(input) = event.target_dyn_into::<HtmlInputElement>() else {
                return;
            };
            let current = [block[0], block[1], warp][which];
            let value = typed_number(&input.value()).map_or(current, |v| v.min(max));
            input.set_value(&value.to_string());
            let mut picked = [block[0], block[1], warp];
            picked[which] = value;
            on_action.emit(Action::SetTraceWarp {
                block: [picked[0], picked[1]],
                warp: picked[2],
            });
        })
    };
    let boxes = [
        ("trace-block-x", "block x", view.block[0], view.grid[0]),
        ("trace-block-y", "block y", view.block[1], view.grid[1]),
        ("trace-warp", "warp", view.warp, view.warps),
    ];
    html! {
        <div class="trace-picker" role="group" aria-label="The warp whose accesses are drawn">
            { for boxes.into_iter().enumerate().map(|(which, (id, label, value, count))| {
                let max = count.saturating_sub(1);
                html! {
                    <label for={id}>
                        { label }
                        <input type="number" id={id} data-testid={id} class="narrow"
                               inputmode="numeric" min="0" max={max.to_string()}
                               value={value.to_string()} onchange={commit(which, max)} />
                    </label>
                }
            }) }
        </div>
    }
}

fn stepper(view: &LineViewData, on_action: &Callback<Action>) -> Html {
    let go = |step: usize| {
        let on_action = on_action.clone();
        Callback::from(move |_: MouseEvent| on_action.emit(Action::SetLineStep { step }))
    };
    let (step, steps) = (view.step, view.steps);
    html! {
        <div class="stepper" role="group" aria-label="Executions of this access by the warp">
            <button type="button" data-testid="line-step-prev" aria-label="Previous execution"
                    disabled={step == 0} onclick={go(step.saturating_sub(1))}>
                { "‹ previous" }
            </button>
            <span data-testid="line-step-position" role="status">{ step_text(step, steps) }</span>
            <button type="button" data-testid="line-step-next" aria-label="Next execution"
                    disabled={step + 1 >= steps} onclick={go(step + 1)}>
                { "next ›" }
            </button>
        </div>
    }
}

/// The headline over a map: what the lectures count for the access, large, and its detail.
fn verdict(label: &str, test_id: &str, value: String, bad: bool, detail: String) -> Html {
    html! {
        <div class={classes!("verdict", bad.then_some("bad"))}>
            <p class="degree">
                <span class="degree-label">{ label.to_string() }</span>
                <strong data-testid={test_id.to_string()}>{ value }</strong>
            </p>
            <p class="wavefronts">{ detail }</p>
        </div>
    }
}

fn bank_drawing(report: &BankReport, row: &LineRow) -> Html {
    let grids = bank_grid(report);
    let line = row.site.span.line;
    let map_name = format!("Bank map of line {line}");
    let words = bank_words(report);
    html! {
        <div class="line-banks" data-testid="line-bank-map">
            { verdict(
                "Bank conflict: ",
                "line-conflict-degree",
                words.degree,
                words.bad,
                words.wavefronts,
            ) }
            if let Some(fusion) = &row.fusion {
                <p class="hint" data-testid="line-fusion">{ fusion.words() }</p>
            }
            // The explorer's sentence speaks of lanes that read; a store's map stands alone.
            if row.site.kind == AccessKind::Load {
                <p class="explain">{ words.explain }</p>
            }
            { for grids.iter().map(|grid| phase_table(grid, grids.len(), &map_name)) }
        </div>
    }
}

fn sector_drawing(map: &CoalescingMap) -> Html {
    // More than the 4 sectors of a warp reading 32 consecutive floats is the uncoalesced case.
    let bad = map.sectors_per_request > 4.0 + 1e-9;
    html! {
        <div class="coalescing" data-testid="coalescing-map">
            { verdict(
                "Sectors per request: ",
                "sectors-per-request",
                per_request_text(map.sectors_per_request),
                bad,
                format!(
                    "{} request{}, {} sectors of 32 bytes in {} line{} of 128 bytes; {}% of the \
                     moved bytes are used",
                    map.requests,
                    if map.requests == 1 { "" } else { "s" },
                    map.sectors,
                    map.lines.len(),
                    if map.lines.len() == 1 { "" } else { "s" },
                    format_number((map.efficiency * 100.0).round())
                ),
            ) }
            // Lines of four sectors are wider than a phone: the table scrolls in its own box.
            <div class="sector-scroll scroll-edge" tabindex="0" role="region"
                 aria-label="Sectors of the warp's lines">
                <table class="sector-table">
                    <caption class="sr-only">
                        { "The 128-byte lines the warp touches as rows, their four 32-byte sectors as \
                           columns; each cell lists the lanes whose bytes are in it." }
                    </caption>
                    <thead>
                        <tr>
                            <th scope="col">{ "128-byte line" }</th>
                            { for (0..4).map(|i| html! { <th scope="col">{ format!("sector {i}") }</th> }) }
                        </tr>
                    </thead>
                    <tbody>
                        { for map.lines.iter().map(|line| html! {
                            <tr>
                                <th scope="row">{ line.place.clone() }</th>
                                { for line.sectors.iter().map(|cell| {
                                    let (class, text) = match (cell.moved, cell.lanes.is_empty()) {
                                        (true, false) => ("sector used", sector_text(cell)),
                                        (true, true) => ("sector unused", "moved, unused".to_string()),
                                        (false, _) => ("sector idle", String::new()),
                                    };
                                    html! {
                                        <td class={class}>
                                            { text }
                                            if !cell.moved {
                                                <span class="sr-only">{ "not moved" }</span>
                                            }
                                        </td>
                                    }
                                }) }
                            </tr>
                        }) }
                    </tbody>
                </table>
            </div>
            <details class="chart-numbers">
                <summary>{ "Each lane's address, sector and line" }</summary>
                <ol class="lane-bytes">
                    { for map.lanes.iter().map(|lane| html! {
                        <li>{ format!(
                            "lane {}: {}, {}, {}",
                            lane.lane, lane.address, lane.sectors, lane.line
                        ) }</li>
                    }) }
                </ol>
            </details>
        </div>
    }
}

fn detail(view: &LineViewData, on_action: &Callback<Action>) -> Html {
    let Some(row) = view.picked.and_then(|i| view.rows.get(i)) else {
        return Html::default();
    };
    let line = row.site.span.line;
    let drawing = match &view.map {
        Some(AccessMap::Banks(report)) => bank_drawing(report, row),
        Some(AccessMap::Sectors(map)) => sector_drawing(map),
        None => Html::default(),
    };
    html! {
        <div class="line-detail" data-testid="line-detail">
            <h3>
                { format!("Line {line}: ") }
                <code>{ row.access.clone() }</code>
                { format!(", {}", row.what) }
            </h3>
            <div class="line-controls">
                { warp_picker(view, on_action) }
                { stepper(view, on_action) }
            </div>
            if let Some(note) = &view.note {
                <p class="hint">{ note.clone() }</p>
            }
            { drawing }
        </div>
    }
}

pub fn line_table(props: &LineViewProps) -> Html {
    let body = match &props.view {
        None => {
            html! { <p class="hint">{ "The kernel's lines appear once it runs without an error." }</p> }
        }
        Some(view) if view.rows.is_empty() => html! {
            <p class="hint">{ "This kernel makes no shared or global memory access." }</p>
        },
        Some(view) => html! {
            <>
                <div class="line-scroll scroll-edge" tabindex="0" role="region"
                     aria-label="Accesses of the kernel">
                    <table class="line-table" data-testid="line-counters">
                        <caption class="sr-only">
                            { "Each shared or global access of the kernel with its counters over \
                               the whole launch; the line's button draws it." }
                        </caption>
                        <thead>
                            <tr>
                                <th scope="col">{ "line" }</th>
                                <th scope="col">{ "access" }</th>
                                <th scope="col">{ "instructions or requests" }</th>
                                <th scope="col">{ "wavefronts or sectors" }</th>
                                <th scope="col">{ "per instruction" }</th>
                            </tr>
                        </thead>
                        <tbody>
                            { for view.rows.iter().enumerate().map(|(i, row)| {
                                table_row(row, view.picked == Some(i), &props.on_action)
                            }) }
                        </tbody>
                    </table>
                </div>
                if props.with_detail {
                    { detail(view, &props.on_action) }
                } else {
                    <p class="hint">{ "The picked access is drawn at the top of the lesson." }</p>
                }
            </>
        },
    };
    html! {
        <section class="card line-view" data-testid="line-view" aria-labelledby="line-view-title">
            <h2 id="line-view-title">{ "Line by line: each access of the kernel" }</h2>
            <p class="grid-help">
                { "Every shared and global access of the kernel, with what it costs over the whole \
                   launch. Pick a line to see one warp make that access, one loop iteration at a \
                   time, at the kernel's real addresses." }
            </p>
            { body }
        </section>
    }
}

/// The lesson's primary view where it is one access: the drawing of the access the lesson is
/// about (the costliest one until the student picks another, `line_model::focus`), without the
/// table of every access, which is one tab away.
pub fn line_focus(props: &LineViewProps) -> Html {
    match &props.view {
        None => html! {
            <p class="hint">{ "The access appears once the kernel runs without an error." }</p>
        },
        Some(view) if view.rows.is_empty() => html! {
            <p class="hint">{ "This kernel makes no shared or global memory access." }</p>
        },
        Some(view) => detail(view, &props.on_action),
    }
}
