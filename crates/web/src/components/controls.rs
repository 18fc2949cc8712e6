//! The settings panel: native, labelled form controls, so keyboard and screen readers work.
//!
//! Every number control reports on `input` (each keystroke or slider step) and on `change` (when
//! the value is committed). On `change` it also rewrites its own text to the value the state
//! kept, so a typed 100 in a 1..64 field visibly becomes 64 and an emptied field its old value.

use crate::lessons::Control;
use crate::state::{Action, NumberSetting, BLOCK, PAD, REGS, STRIDE, TILE};
use crate::url::{pattern_key, PATTERNS};
use memplay_sim::patterns::{Element, PatternId};
use memplay_sim::transfer::HostMemory;
use memplay_sim::DeviceId;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[derive(Debug)]
pub struct ControlsProps {
    pub device: DeviceId,
    pub pattern: PatternId,
    pub element: Element,
    pub host_memory: HostMemory,
    pub tile: u32,
    pub block: u32,
    pub pad: u32,
    pub stride: u32,
    pub regs: u32,
    /// The settings the lesson turns.
    pub shown: Vec<Control>,
    /// Whether the device is among them: in the lesson's first screen it is; above the pattern
    /// explorer in its tab, only the pattern is.
    pub with_device: bool,
    /// The names the lesson gives its controls, where it gives one.
    pub labels: Vec<(Control, String)>,
    /// The ranges the lesson gives its numeric controls, where it narrows the page's.
    pub ranges: Vec<(Control, NumberSetting)>,
    pub on_action: Callback<Action>,
}

/// The short name of a device in the menu; its full name is in the bank map.
fn device_label(id: DeviceId) -> String {
    format!("{} (cc {})", id.label(), id.device().compute_capability)
}

/// What the pattern menu says for each pattern.
fn pattern_label(pattern: PatternId) -> &'static str {
    match pattern {
        PatternId::Stride => "Stride: shared[s*tid]",
        PatternId::TileRow => "Tile row: tile[ty][k]",
        PatternId::TileColumn => "Tile column: tile[k][tx]",
        PatternId::RowPerThread => "Row per thread: s[t][j]",
        PatternId::Broadcast => "Broadcast: all read a[32]",
        PatternId::Multicast => "Multicast: pairs read a[i]",
    }
}

/// Which settings the pattern's addresses depend on, so a student knows what to try.
fn pattern_hint(pattern: PatternId) -> &'static str {
    match pattern {
        PatternId::Stride => "Lane t reads shared[base + s*t]: the stride s spreads the words.",
        PatternId::TileRow | PatternId::TileColumn => {
            "Tile width and padding shape the tile[TILE][TILE + PAD] array."
        }
        PatternId::RowPerThread => {
            "Thread t walks row t of s[32][32 + PAD]; padding changes the row length."
        }
        PatternId::Broadcast => "All 32 lanes read the same word; no setting changes it.",
        PatternId::Multicast => "Lanes 2i and 2i+1 read a[i]; no setting changes it.",
    }
}

/// A committed number: decimals are rounded and signs dropped, so any typed text that the
/// browser accepts as a number means something.
pub(crate) fn typed_number(text: &str) -> Option<u32> {
    let value = memplay_sim::decimal::parse_f64(text.trim()).filter(|v| v.is_finite())?;
    Some(value.round().clamp(0.0, f64::from(u32::MAX)) as u32)
}

/// The `input` and `change` handlers of one number setting.
struct NumberHandlers {
    on_input: Callback<InputEvent>,
    on_change: Callback<Event>,
}

fn number_handlers(
    setting: NumberSetting,
    current: u32,
    on_action: &Callback<Action>,
    action: fn(u32) -> Action,
) -> NumberHandlers {
    let on_input = {
        let on_action = on_action.clone();
        Callback::from(move |event: InputEvent| {
            let input: Option<HtmlInputElement> = event.target_dyn_into();
            if let Some(value) = input.and_then(|input| typed_number(&input.value())) {
                on_action.emit(action(value));
            }
        })
    };
    let on_change = {
        let on_action = on_action.clone();
        Callback::from(move |event: Event| {
            let Some(input) = event.target_dyn_into::<HtmlInputElement>() else {
                return;
            };
            let kept = match typed_number(&input.value()) {
                Some(value) => {
                    on_action.emit(action(value));
                    setting.clamp(value)
                }
                None => current,
            };
            input.set_value(&kept.to_string());
        })
    };
    NumberHandlers {
        on_input,
        on_change,
    }
}

/// One labelled number field of a setting, with its hint: the block, stride and registers
/// controls differ only in these words.
fn number_field(
    setting: NumberSetting,
    label: &str,
    hint: &'static str,
    value: u32,
    handlers: NumberHandlers,
) -> Html {
    let id = setting.key;
    let hint_id = format!("{id}-hint");
    html! {
        <div class="control">
            <label for={id}>{ label }</label>
            <input type="number" id={id} data-testid={format!("control-{id}")} class="narrow"
                   inputmode="numeric" aria-describedby={hint_id.clone()}
                   min={setting.min.to_string()} max={setting.max.to_string()} step="1"
                   value={value.to_string()}
                   oninput={handlers.on_input} onchange={handlers.on_change} />
            <p class="hint" id={hint_id}>{ hint }</p>
        </div>
    }
}

/// What the stride moves, in the lesson's own memory: the shared-memory words of the bank
/// lessons' pattern and kernel, or the global floats of the strided copy.
pub fn stride_hint(shown: &[Control]) -> &'static str {
    if shown.contains(&Control::Pattern) {
        "Words between lanes' shared-memory reads, shared[base + s*tid], in the stride pattern \
         and the strided kernel."
    } else {
        "Floats between neighbouring lanes' global loads: lane i reads in[i * stride]."
    }
}

pub fn controls_view(props: &ControlsProps) -> Html {
    let on_device = {
        let on_action = props.on_action.clone();
        Callback::from(move |event: Event| {
            let select: Option<HtmlSelectElement> = event.target_dyn_into();
            if let Some(device) = select.and_then(|s| s.value().parse::<DeviceId>().ok()) {
                on_action.emit(Action::SetDevice { device });
            }
        })
    };
    let on_pattern = {
        let on_action = props.on_action.clone();
        Callback::from(move |event: Event| {
            let select: Option<HtmlSelectElement> = event.target_dyn_into();
            let pattern =
                select.and_then(|s| PATTERNS.into_iter().find(|p| pattern_key(*p) == s.value()));
            if let Some(pattern) = pattern {
                on_action.emit(Action::SetPattern { pattern });
            }
        })
    };
    let on_element = {
        let on_action = props.on_action.clone();
        Callback::from(move |event: Event| {
            let select: Option<HtmlSelectElement> = event.target_dyn_into();
            let element =
                select.and_then(|s| Element::ALL.into_iter().find(|e| e.as_str() == s.value()));
            if let Some(element) = element {
                on_action.emit(Action::SetElement { element });
            }
        })
    };
    let on_host_memory = {
        let on_action = props.on_action.clone();
        Callback::from(move |event: Event| {
            let select: Option<HtmlSelectElement> = event.target_dyn_into();
            let host_memory = select.and_then(|s| {
                HostMemory::ALL
                    .into_iter()
                    .find(|m| m.as_str() == s.value())
            });
            if let Some(host_memory) = host_memory {
                on_action.emit(Action::SetHostMemory { host_memory });
            }
        })
    };
    let range = |control: Control, page: NumberSetting| -> NumberSetting {
        props
            .ranges
            .iter()
            .find(|(each, _)| *each == control)
            .map_or(page, |(_, setting)| *setting)
    };
    let (tile_range, block_range, pad_range, stride_range, regs_range) = (
        range(Control::Tile, TILE),
        range(Control::Block, BLOCK),
        range(Control::Pad, PAD),
        range(Control::Stride, STRIDE),
        range(Control::Regs, REGS),
    );
    let tile = number_handlers(tile_range, props.tile, &props.on_action, |tile| {
        Action::SetTile { tile }
    });
    let block = number_handlers(block_range, props.block, &props.on_action, |block| {
        Action::SetBlock { block }
    });
    let pad = number_handlers(pad_range, props.pad, &props.on_action, |pad| {
        Action::SetPad { pad }
    });
    let stride = number_handlers(stride_range, props.stride, &props.on_action, |stride| {
        Action::SetStride { stride }
    });
    let regs = number_handlers(regs_range, props.regs, &props.on_action, |regs| {
        Action::SetRegs { regs }
    });

    let label = |control: Control, own: &'static str| -> String {
        props
            .labels
            .iter()
            .find(|(each, _)| *each == control)
            .map_or(own.to_string(), |(_, label)| label.clone())
    };
    // A control the lesson names means what the lesson says; the page's own hint would not fit.
    let hint = |control: Control, own: &'static str| -> &'static str {
        if props.labels.iter().any(|(each, _)| *each == control) {
            ""
        } else {
            own
        }
    };
    html! {
        <section class="controls" aria-label="Settings">
            if props.with_device {
            <div class="control">
                <label for="device">{ "Device" }</label>
                <select id="device" data-testid="control-device" onchange={on_device}
                        aria-describedby="device-hint">
                    { for DeviceId::ALL.into_iter().map(|id| html! {
                        <option value={id.as_str()} selected={id == props.device}>
                            { device_label(id) }
                        </option>
                    }) }
                </select>
                <p class="hint" id="device-hint">
                    { "cc 1.x: 16 banks, served per half-warp. Later: 32 banks, whole warp." }
                </p>
            </div>
            }

            if props.shown.contains(&Control::Pattern) {
                <div class="control">
                    <label for="pattern">{ "Access pattern" }</label>
                    <select id="pattern" data-testid="control-pattern" onchange={on_pattern}
                            aria-describedby="pattern-hint">
                        { for PATTERNS.into_iter().map(|pattern| html! {
                            <option value={pattern_key(pattern)} selected={pattern == props.pattern}>
                                { pattern_label(pattern) }
                            </option>
                        }) }
                    </select>
                    <p class="hint" id="pattern-hint">{ pattern_hint(props.pattern) }</p>
                </div>
                <div class="control">
                    <label for="element">{ "Element of the array" }</label>
                    <select id="element" data-testid="control-element" onchange={on_element}
                            aria-describedby="element-hint">
                        { for Element::ALL.into_iter().map(|element| html! {
                            <option value={element.as_str()} selected={element == props.element}>
                                { format!("{} ({} bytes)", element.as_str(), element.bytes()) }
                            </option>
                        }) }
                    </select>
                    <p class="hint" id="element-hint">
                        { "Each lane reads one element: half a bank word, one, two or four." }
                    </p>
                </div>
            }

            if props.shown.contains(&Control::HostMemory) {
                <div class="control">
                    <label for="host-memory">{ "Host memory" }</label>
                    <select id="host-memory" data-testid="control-host-memory"
                            onchange={on_host_memory} aria-describedby="host-memory-hint">
                        <option value="pinned" selected={props.host_memory == HostMemory::Pinned}>
                            { "pinned (cudaMallocHost)" }
                        </option>
                        <option value="pageable" selected={props.host_memory == HostMemory::Pageable}>
                            { "pageable (malloc)" }
                        </option>
                    </select>
                    <p class="hint" id="host-memory-hint">
                        { "Pageable memory is staged through a pinned buffer by the driver." }
                    </p>
                </div>
            }

            if props.shown.contains(&Control::Tile) {
                <div class="control">
                    <label for="tile" id="tile-label">{ label(Control::Tile, "Tile width TILE") }</label>
                    <div class="control-row">
                        <input type="range" id="tile-range" data-testid="control-tile-range"
                               aria-labelledby="tile-label"
                               min={tile_range.min.to_string()} max={tile_range.max.to_string()} step="1"
                               value={props.tile.to_string()}
                               oninput={tile.on_input.clone()} onchange={tile.on_change.clone()} />
                        <input type="number" id="tile" data-testid="control-tile" class="narrow"
                               inputmode="numeric" aria-describedby="tile-hint"
                               min={tile_range.min.to_string()} max={tile_range.max.to_string()} step="1"
                               value={props.tile.to_string()}
                               oninput={tile.on_input} onchange={tile.on_change} />
                    </div>
                    <p class="hint" id="tile-hint">{ "TILE × TILE threads share two tiles; the matmul lessons' block is TILE × TILE." }</p>
                </div>
            }

            if props.shown.contains(&Control::Pad) {
                <div class="control">
                    <label for="pad">{ label(Control::Pad, "Padding PAD (words per row)") }</label>
                    <div class="control-row">
                        <input type="range" id="pad" data-testid="control-pad"
                               aria-describedby="pad-hint"
                               min={pad_range.min.to_string()} max={pad_range.max.to_string()} step="1"
                               value={props.pad.to_string()}
                               oninput={pad.on_input} onchange={pad.on_change} />
                        <output for="pad" class="range-value">{ props.pad }</output>
                    </div>
                    <p class="hint" id="pad-hint">{ "Extra floats at the end of each row." }</p>
                </div>
            }

            if props.shown.contains(&Control::Stride) {
                { number_field(
                    stride_range,
                    &label(Control::Stride, "Stride s"),
                    hint(Control::Stride, stride_hint(&props.shown)),
                    props.stride,
                    stride,
                ) }
            }

            if props.shown.contains(&Control::Block) {
                { number_field(
                    block_range,
                    &label(Control::Block, "Threads per block"),
                    hint(
                        Control::Block,
                        "The block of the 1-D lessons; 1 to 1024, old devices take at most 512.",
                    ),
                    props.block,
                    block,
                ) }
            }

            if props.shown.contains(&Control::Regs) {
                { number_field(
                    regs_range,
                    &label(Control::Regs, "Registers per thread"),
                    "As nvcc --resource-usage reports them.",
                    props.regs,
                    regs,
                ) }
            }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{shown_controls, State};

    fn shown(query: &str) -> Vec<Control> {
        shown_controls(&State::from_query(query))
    }

    #[test]
    fn the_bank_lesson_shows_the_stride_only_where_the_kernel_or_the_explorers_pattern_takes_it() {
        // The transpose opens with the explorer on the row-per-thread array: padding moves both.
        assert_eq!(
            shown("lesson=bank-conflicts"),
            [Control::Pattern, Control::Pad]
        );
        assert_eq!(
            shown("lesson=bank-conflicts&pattern=stride"),
            [Control::Pattern, Control::Stride, Control::Pad]
        );
        // The stride kernel takes its stride; its padding moves the explorer's array.
        assert_eq!(
            shown("lesson=bank-conflicts&variant=stride"),
            [
                Control::Pattern,
                Control::Stride,
                Control::Pad,
                Control::Block
            ]
        );
        assert_eq!(
            shown("lesson=bank-conflicts&variant=stride&pattern=stride"),
            [Control::Pattern, Control::Stride, Control::Block]
        );
    }

    #[test]
    fn a_lesson_without_the_explorer_shows_the_controls_its_kernel_takes() {
        assert_eq!(
            shown("lesson=tiled-matmul"),
            [Control::Tile, Control::Pad, Control::Regs]
        );
        assert_eq!(
            shown_controls(&State {
                variant: crate::lessons::variant("tiled-matmul", "naive"),
                ..State::default()
            }),
            [Control::Tile, Control::Regs]
        );
        assert_eq!(
            shown("lesson=coalescing"),
            [Control::Stride, Control::Block]
        );
    }
}
