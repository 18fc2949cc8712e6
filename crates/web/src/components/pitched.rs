//! Pitched allocation: the rows `cudaMallocPitch` pads, and how a kernel finds an element in them.
//!
//! The lecture Performance Considerations 2, "Malloc for 2D data": a 2-D array of `height` rows of `width` elements, allocated
//! with `cudaMallocPitch`, gets rows of `pitch` bytes, the width rounded up to the device's
//! alignment (`memplay_sim::pitch`), and element (row, col) is at `base + row*pitch + col*size`.
//! The view shows, for the page's device, the pitch, the padding of every row, what the padding
//! costs against packed rows, the address of one element worked out, a picture of the first rows
//! with their padding (an SVG drawn with classes, as the page's Content-Security-Policy allows no
//! style attributes), why the rows are padded, and the same allocation on every preset.
//!
//! Its inputs are this view's own state: a worked example, not a setting of the launch and not
//! part of the page's link, so a lesson places this view with the device alone. They start at
//! the lecture's example, 64 rows of 100 floats.
//!
//! `pitched_statements` is every sentence and figure the view shows for a device and inputs; the
//! view writes its words with the same functions.

use crate::components::controls::typed_number;
use crate::format::format_number;
#[cfg(test)]
use crate::statements::Statement;
use memplay_sim::pitch::PitchedLayout;
use memplay_sim::DeviceId;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[derive(Properties, PartialEq, Debug)]
pub struct PitchedAllocationProps {
    /// The page's device: its numbers lead, and its row is marked in the table of every preset.
    pub device: DeviceId,
}

/// The element types offered, with their sizes in bytes.
pub const ELEMENT_TYPES: [(&str, u32); 5] = [
    ("char", 1),
    ("short", 2),
    ("float", 4),
    ("double", 8),
    ("float4", 16),
];

/// The widths (elements) and heights (rows) the view takes: enough for any lesson's example,
/// small enough for the numbers to stay readable.
pub const MAX_WIDTH: u32 = 65_536;
pub const MAX_HEIGHT: u32 = 65_536;

/// The rows the picture draws; the others are counted below it.
pub const DRAWN_ROWS: u32 = 6;

/// The segment a warp's global access is served in from cc 1.2 on (the lecture Overview of
/// Memory Spaces, "Global Memory: Coalescing": "chunks of size 32 B, 64 B, 128 B, aligned to multiples of" their size).
pub const SEGMENT_BYTES: u64 = 128;

/// What the student has set: the array and the element whose address is worked out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PitchedInputs {
    pub width: u32,
    pub element_bytes: u32,
    pub height: u32,
    pub row: u32,
    pub col: u32,
}

impl Default for PitchedInputs {
    /// The lecture's example (Performance Considerations 2): `int width = 100, height = 64;` floats; element (1, 0) is the first of
    /// the second row, the first address the padding moves.
    fn default() -> PitchedInputs {
        PitchedInputs {
            width: 100,
            element_bytes: 4,
            height: 64,
            row: 1,
            col: 0,
        }
    }
}

impl PitchedInputs {
    /// The inputs with every value in its range: the element inside the array, the element size
    /// one of `ELEMENT_TYPES`.
    pub fn clamped(self) -> PitchedInputs {
        let width = self.width.clamp(1, MAX_WIDTH);
        let height = self.height.clamp(1, MAX_HEIGHT);
        let element_bytes = if ELEMENT_TYPES.iter().any(|&(_, b)| b == self.element_bytes) {
            self.element_bytes
        } else {
            PitchedInputs::default().element_bytes
        };
        PitchedInputs {
            width,
            element_bytes,
            height,
            row: self.row.min(height - 1),
            col: self.col.min(width - 1),
        }
    }

    /// The layout on `device`. The clamped inputs are always within `PitchedLayout`'s ranges.
    pub fn layout(self, device: DeviceId) -> Option<PitchedLayout> {
        let inputs = self.clamped();
        PitchedLayout::new(
            &device.device(),
            inputs.width,
            inputs.element_bytes,
            inputs.height,
        )
        .ok()
    }
}

/// A byte count as the page writes it: `32,768 B`.
pub fn bytes(n: u64) -> String {
    format!("{} B", format_number(n as f64))
}

/// The 128-byte segments that `bytes` bytes starting at byte `start` touch.
pub fn segments_touched(start: u64, bytes: u64) -> u64 {
    if bytes == 0 {
        return 0;
    }
    (start + bytes - 1) / SEGMENT_BYTES - start / SEGMENT_BYTES + 1
}

/// Why the rows are padded, with this layout's numbers: where row 1 starts packed and pitched, and
/// the segments a warp reading its first elements touches in each case.
pub fn why_padded(layout: &PitchedLayout) -> String {
    let alignment = layout.alignment_bytes;
    let lead = format!(
        "cudaMallocPitch starts every row at a multiple of {} (the texture hardware's alignment), \
         as the first row starts: so row r begins on a 128-byte segment boundary for every r, and \
         a warp reading a row is served in as few segments as a warp reading row 0 (the lecture \
         Performance Considerations 2, \"What cudaMallocPitch does?\").",
        bytes(alignment)
    );
    if layout.height < 2 {
        return lead;
    }
    // A warp of 32 threads reads one element each from the start of row 1.
    let lanes = u64::from(layout.width_elements.min(32));
    let read = lanes * u64::from(layout.element_bytes);
    let packed = layout.unpitched_row_start(1);
    let packed_segments = segments_touched(packed, read);
    let pitched_segments = segments_touched(layout.pitch_bytes, read);
    let example = if packed % SEGMENT_BYTES == 0 {
        format!(
            " Here a row is {} wide, a whole number of segments, so even packed rows would \
             start aligned: the padding buys only the texture alignment.",
            bytes(layout.width_bytes)
        )
    } else {
        format!(
            " Packed without padding, row 1 would start at byte {} ({} past a segment \
             boundary), and a warp reading its first {lanes} elements would touch {packed_segments} \
             segments of 128 bytes; pitched, row 1 starts at byte {} and the same read touches \
             {pitched_segments}.",
            format_number(packed as f64),
            bytes(packed % SEGMENT_BYTES),
            format_number(layout.pitch_bytes as f64)
        )
    };
    lead + &example
}

/// The address of the chosen element, worked out: `base + 1 × 512 + 0 × 4 = base + 512`.
pub fn address_text(layout: &PitchedLayout, row: u32, col: u32) -> String {
    let offset = layout.element_offset(row, col).unwrap_or_default();
    format!(
        "base + {row} × {} + {col} × {} = base + {}",
        format_number(layout.pitch_bytes as f64),
        layout.element_bytes,
        format_number(offset as f64)
    )
}

/// The picture's description, read by screen readers.
pub fn picture_description(layout: &PitchedLayout) -> String {
    let drawn = layout.height.min(DRAWN_ROWS);
    format!(
        "{} rows of {} of elements and {} of padding each, a pitch of {}{}.",
        format_number(f64::from(layout.height)),
        bytes(layout.width_bytes),
        bytes(layout.padding_bytes_per_row()),
        bytes(layout.pitch_bytes),
        if layout.height > drawn {
            format!("; the first {drawn} are drawn")
        } else {
            String::new()
        }
    )
}

/// The line under the picture for the rows it leaves out.
fn more_rows(more: u32) -> String {
    format!("… and {} more rows", format_number(f64::from(more)))
}

/// The C name of the element type of `element_bytes` bytes.
fn type_name(element_bytes: u32) -> &'static str {
    ELEMENT_TYPES
        .iter()
        .find(|&&(_, b)| b == element_bytes)
        .map_or("T", |&(name, _)| name)
}

/// The call that makes the allocation, with the pitch it returns.
pub fn call_text(inputs: PitchedInputs, layout: &PitchedLayout) -> String {
    format!(
        "cudaMallocPitch(&base, &pitch, {} * sizeof({}), {}) → pitch = {}",
        inputs.width,
        type_name(inputs.element_bytes),
        inputs.height,
        layout.pitch_bytes
    )
}

/// How a kernel reads the element: the row's start in bytes, cast to the element's type, then
/// indexed. The cast is parenthesised before `[col]`, which binds tighter than a cast: without
/// the parentheses the index would pick a byte of the row, not an element.
pub fn element_expression(element_bytes: u32) -> String {
    format!(
        "(({}*)((char*)base + row * pitch))[col]",
        type_name(element_bytes)
    )
}

/// The lead and the hint around the worked-out address: "Element (1, 0): " and " — in a kernel,
/// ((float*)((char*)base + row * pitch))[col]".
fn address_parts(inputs: PitchedInputs) -> (String, String) {
    (
        format!("Element ({}, {}): ", inputs.row, inputs.col),
        format!(
            " — in a kernel, {}",
            element_expression(inputs.element_bytes)
        ),
    )
}

/// The card's heading.
const TITLE: &str = "Pitched allocation: cudaMallocPitch pads every row";

/// The caption and the column headings of the table of every preset.
const TABLE_CAPTION: &str = "The same allocation on every device";
const TABLE_COLUMNS: [&str; 5] = ["device", "alignment", "pitch", "padding per row", "total"];

/// The figures above the picture: label, test id, value as shown, value in bytes.
fn stats(layout: &PitchedLayout, device: DeviceId) -> [(String, &'static str, String, u64); 3] {
    [
        (
            format!("pitch on the {}", device.label()),
            "pitch-bytes",
            bytes(layout.pitch_bytes),
            layout.pitch_bytes,
        ),
        (
            "padding per row".to_string(),
            "pitch-padding",
            bytes(layout.padding_bytes_per_row()),
            layout.padding_bytes_per_row(),
        ),
        (
            "total".to_string(),
            "pitch-total",
            format!(
                "{} (packed: {})",
                bytes(layout.total_bytes()),
                bytes(layout.unpitched_bytes())
            ),
            layout.total_bytes(),
        ),
    ]
}

/// The cells of one preset's row in the table of every preset.
fn device_cells(id: DeviceId, layout: &PitchedLayout) -> [String; 5] {
    [
        id.label().to_string(),
        bytes(layout.alignment_bytes),
        bytes(layout.pitch_bytes),
        bytes(layout.padding_bytes_per_row()),
        bytes(layout.total_bytes()),
    ]
}

/// The part of the page these statements belong to.
#[cfg(test)]
const VIEW: &str = "pitched";

/// Every sentence and figure the card shows on `device` for `inputs` (clamped first, as the view
/// keeps them): heading, figures, the call, the worked-out address and how a kernel reads the
/// element, the picture's description, why the rows are padded, and the table of every preset
/// (each row as its cells joined by " | ").
#[cfg(test)]
pub fn pitched_statements(device: DeviceId, inputs: PitchedInputs) -> Vec<Statement> {
    let inputs = inputs.clamped();
    let mut statements = vec![Statement::words(VIEW, TITLE)];
    if let Some(layout) = inputs.layout(device) {
        for (label, _, shown, value) in stats(&layout, device) {
            statements.push(Statement::figure(
                VIEW,
                format!("{label} (B)"),
                value as f64,
                format!("{label}: {shown}"),
            ));
        }
        statements.push(Statement::words(VIEW, call_text(inputs, &layout)));
        let (lead, hint) = address_parts(inputs);
        statements.push(Statement::words(
            VIEW,
            format!(
                "{lead}{}{hint}",
                address_text(&layout, inputs.row, inputs.col)
            ),
        ));
        statements.push(Statement::words(VIEW, picture_description(&layout)));
        let drawn = layout.height.min(DRAWN_ROWS);
        if layout.height > drawn {
            statements.push(Statement::words(VIEW, more_rows(layout.height - drawn)));
        }
        statements.push(Statement::words(VIEW, why_padded(&layout)));
    }
    statements.push(Statement::words(VIEW, TABLE_CAPTION));
    statements.push(Statement::words(VIEW, TABLE_COLUMNS.join(" | ")));
    for id in DeviceId::ALL {
        if let Some(layout) = inputs.layout(id) {
            statements.push(Statement::words(
                VIEW,
                device_cells(id, &layout).join(" | "),
            ));
        }
    }
    statements
}

/// The picture's width, and where the rows start (after their labels).
const PICTURE_WIDTH: f64 = 640.0;
const LABEL_WIDTH: f64 = 56.0;
const ROW_HEIGHT: f64 = 22.0;
const ROW_GAP: f64 = 6.0;

/// A number for an SVG attribute, with at most two decimals.
fn coordinate(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The first rows of the allocation: each row's elements, then its padding, to one scale; a line
/// at every 128-byte segment boundary where there are few enough to see, so that every row is
/// seen to start on one; the chosen element marked where it is among the rows drawn.
fn picture(layout: &PitchedLayout, row: u32, col: u32) -> Html {
    let drawn = layout.height.min(DRAWN_ROWS);
    let scale = (PICTURE_WIDTH - LABEL_WIDTH) / layout.pitch_bytes as f64;
    let data_width = layout.width_bytes as f64 * scale;
    let padding_width = layout.padding_bytes_per_row() as f64 * scale;
    let more = layout.height - drawn;
    let height = f64::from(drawn) * (ROW_HEIGHT + ROW_GAP) + if more > 0 { 20.0 } else { 0.0 };
    let boundaries = layout.pitch_bytes / SEGMENT_BYTES;
    let description = picture_description(layout);
    html! {
        <svg class="pitch-picture" role="img" aria-label={description}
             viewBox={format!("0 0 {PICTURE_WIDTH} {}", coordinate(height))}
             width={PICTURE_WIDTH.to_string()} height={coordinate(height)}>
            { for (0..drawn).map(|r| {
                let y = f64::from(r) * (ROW_HEIGHT + ROW_GAP);
                let element = (r == row).then(|| {
                    let x = LABEL_WIDTH + f64::from(col) * f64::from(layout.element_bytes) * scale;
                    let width = (f64::from(layout.element_bytes) * scale).max(2.0);
                    html! {
                        <rect class="pitch-element" x={coordinate(x)} y={coordinate(y)}
                              width={coordinate(width)} height={ROW_HEIGHT.to_string()} />
                    }
                });
                html! {
                    <g class="pitch-row">
                        <text class="pitch-row-label" x="0" y={coordinate(y + 15.0)}>
                            { format!("row {r}") }
                        </text>
                        <rect class="pitch-data" x={LABEL_WIDTH.to_string()} y={coordinate(y)}
                              width={coordinate(data_width)} height={ROW_HEIGHT.to_string()} />
                        if padding_width > 0.0 {
                            <rect class="pitch-padding" x={coordinate(LABEL_WIDTH + data_width)}
                                  y={coordinate(y)} width={coordinate(padding_width)}
                                  height={ROW_HEIGHT.to_string()} />
                        }
                        { element.unwrap_or_default() }
                    </g>
                }
            }) }
            if boundaries <= 32 {
                { for (1..boundaries).map(|k| {
                    let x = LABEL_WIDTH + (k * SEGMENT_BYTES) as f64 * scale;
                    html! {
                        <line class="pitch-segment" x1={coordinate(x)} x2={coordinate(x)}
                              y1="0" y2={coordinate(f64::from(drawn) * (ROW_HEIGHT + ROW_GAP))} />
                    }
                }) }
            }
            if more > 0 {
                <text class="pitch-more" x={LABEL_WIDTH.to_string()} y={coordinate(height - 4.0)}>
                    { more_rows(more) }
                </text>
            }
        </svg>
    }
}

/// The same allocation on every preset, the page's device marked.
fn devices_table(inputs: PitchedInputs, current: DeviceId) -> Html {
    html! {
        // A phone is narrower than the five columns: the table scrolls in its own box, a named
        // region with a tab stop, and the page does not pan sideways.
        <div class="table-scroll scroll-edge" tabindex="0" role="region"
             aria-label="Every device's pitch">
            <table class="limits pitch-table" data-testid="pitch-table">
                <caption>{ TABLE_CAPTION }</caption>
                <thead>
                    <tr>
                        { for TABLE_COLUMNS.iter().map(|column| html! {
                            <th scope="col">{ *column }</th>
                        }) }
                    </tr>
                </thead>
                <tbody>
                    { for DeviceId::ALL.into_iter().filter_map(|id| {
                        let layout = inputs.layout(id)?;
                        let is_current = id == current;
                        let [name, alignment, pitch, padding, total] = device_cells(id, &layout);
                        Some(html! {
                            <tr class={classes!(is_current.then_some("current"))}
                                data-device={id.as_str()}>
                                <th scope="row">
                                    { name }
                                    if is_current {
                                        <span class="badge">{ "this page" }</span>
                                    }
                                </th>
                                <td>{ alignment }</td>
                                <td data-testid={format!("pitch-{}", id.as_str())}>{ pitch }</td>
                                <td>{ padding }</td>
                                <td>{ total }</td>
                            </tr>
                        })
                    }) }
                </tbody>
            </table>
        </div>
    }
}

/// One number field of the view: its id (which is its test id too), its label, its range, and how
/// it reads from and writes into the inputs.
struct NumberField {
    id: &'static str,
    label: &'static str,
    min: u32,
    max: fn(PitchedInputs) -> u32,
    kept: fn(PitchedInputs) -> u32,
    set: fn(PitchedInputs, u32) -> PitchedInputs,
}

/// The view's number fields, after its element menu: the array's height, then the element whose
/// address is worked out, which must lie inside the array.
const MORE_FIELDS: [NumberField; 3] = [
    NumberField {
        id: "pitched-height",
        label: "Height (rows)",
        min: 1,
        max: |_| MAX_HEIGHT,
        kept: |inputs| inputs.height,
        set: |inputs, height| PitchedInputs { height, ..inputs },
    },
    NumberField {
        id: "pitched-row",
        label: "Element row",
        min: 0,
        max: |inputs| inputs.height - 1,
        kept: |inputs| inputs.row,
        set: |inputs, row| PitchedInputs { row, ..inputs },
    },
    NumberField {
        id: "pitched-col",
        label: "Element column",
        min: 0,
        max: |inputs| inputs.width - 1,
        kept: |inputs| inputs.col,
        set: |inputs, col| PitchedInputs { col, ..inputs },
    },
];

/// The width field, before the element menu.
const WIDTH_FIELD: NumberField = NumberField {
    id: "pitched-width",
    label: "Width (elements)",
    min: 1,
    max: |_| MAX_WIDTH,
    kept: |inputs| inputs.width,
    set: |inputs, width| PitchedInputs { width, ..inputs },
};

/// A labelled number field, read as the settings panel reads its own: each keystroke puts the
/// typed value into the inputs, which are then clamped; on `change` the field shows the value
/// kept, so a typed 100,000 visibly becomes the largest allowed and an emptied field its old value.
/// One function for every field keeps one copy of the markup's code in the bundle.
fn number_field(inputs: &UseStateHandle<PitchedInputs>, field: &NumberField) -> Html {
    let (set, kept) = (field.set, field.kept);
    let on_input = {
        let inputs = inputs.clone();
        Callback::from(move |event: InputEvent| {
            let input: Option<HtmlInputElement> = event.target_dyn_into();
            if let Some(value) = input.and_then(|input| typed_number(&input.value())) {
                inputs.set(set(*inputs, value).clamped());
            }
        })
    };
    let on_change = {
        let inputs = inputs.clone();
        Callback::from(move |event: Event| {
            let Some(input) = event.target_dyn_into::<HtmlInputElement>() else {
                return;
            };
            let next = match typed_number(&input.value()) {
                Some(value) => set(*inputs, value).clamped(),
                None => *inputs,
            };
            inputs.set(next);
            input.set_value(&kept(next).to_string());
        })
    };
    html! {
        <div class="control">
            <label for={field.id}>{ field.label }</label>
            <input type="number" id={field.id} data-testid={field.id} class="narrow"
                   inputmode="numeric" min={field.min.to_string()}
                   max={(field.max)(**inputs).to_string()} step="1"
                   value={kept(**inputs).to_string()}
                   oninput={on_input} onchange={on_change} />
        </div>
    }
}

#[function_component(PitchedAllocation)]
pub fn pitched_allocation(props: &PitchedAllocationProps) -> Html {
    let inputs = use_state(PitchedInputs::default);
    let current = *inputs;
    let on_element = {
        let inputs = inputs.clone();
        Callback::from(move |event: Event| {
            let select: Option<HtmlSelectElement> = event.target_dyn_into();
            if let Some(element_bytes) = select.and_then(|s| s.value().parse::<u32>().ok()) {
                inputs.set(
                    PitchedInputs {
                        element_bytes,
                        ..*inputs
                    }
                    .clamped(),
                );
            }
        })
    };
    let summary = match current.layout(props.device) {
        // The clamped inputs always make a layout; nothing to show otherwise.
        None => Html::default(),
        Some(layout) => {
            let stats = stats(&layout, props.device);
            let (lead, hint) = address_parts(current);
            let legend = [
                ("pitch-data-swatch", "the row's elements"),
                ("pitch-padding-swatch", "padding (dashed edge)"),
                ("pitch-element-swatch", "the element worked out"),
                ("pitch-segment-swatch", "a 128-byte segment boundary"),
            ];
            html! {
                <>
                    <dl class="stats pitch-stats">
                        { for stats.into_iter().map(|(term, test_id, value, _)| html! {
                            <div>
                                <dt>{ term }</dt>
                                <dd data-testid={test_id}>{ value }</dd>
                            </div>
                        }) }
                    </dl>
                    <p class="pitch-call">
                        <code>{ call_text(current, &layout) }</code>
                    </p>
                    <p class="pitch-address">
                        { lead }
                        <code data-testid="pitch-address">
                            { address_text(&layout, current.row, current.col) }
                        </code>
                        <span class="hint">{ hint }</span>
                    </p>
                    { picture(&layout, current.row, current.col) }
                    <ul class="legend" aria-label="Legend">
                        { for legend.into_iter().map(|(swatch, meaning)| html! {
                            <li><span class={classes!("swatch", swatch)}></span>{ meaning }</li>
                        }) }
                    </ul>
                    <p class="explain">{ why_padded(&layout) }</p>
                </>
            }
        }
    };
    html! {
        <section class="card pitched-card" data-testid="pitched-allocation"
                 aria-labelledby="pitched-title">
            <h2 id="pitched-title">{ TITLE }</h2>
            <div class="pitch-controls">
                { number_field(&inputs, &WIDTH_FIELD) }
                <div class="control">
                    <label for="pitched-element">{ "Element" }</label>
                    <select id="pitched-element" data-testid="pitched-element"
                            onchange={on_element}>
                        { for ELEMENT_TYPES.iter().map(|&(name, size)| html! {
                            <option value={size.to_string()}
                                    selected={size == current.element_bytes}>
                                { format!("{name} ({size} B)") }
                            </option>
                        }) }
                    </select>
                </div>
                { for MORE_FIELDS.iter().map(|field| number_field(&inputs, field)) }
            </div>
            { summary }
            { devices_table(current, props.device) }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100_layout(inputs: PitchedInputs) -> PitchedLayout {
        inputs
            .layout(DeviceId::H100)
            .expect("clamped inputs make a layout")
    }

    #[test]
    fn the_lecture_s_example_has_a_512_byte_pitch_on_the_h100_and_the_gt200() {
        let inputs = PitchedInputs::default();
        for device in [DeviceId::H100, DeviceId::Gt200] {
            let layout = inputs.layout(device).expect("a layout");
            assert_eq!(layout.pitch_bytes, 512, "{device}");
            assert_eq!(bytes(layout.total_bytes()), "32,768 B");
        }
        assert_eq!(
            address_text(&h100_layout(inputs), 1, 0),
            "base + 1 × 512 + 0 × 4 = base + 512"
        );
    }

    #[test]
    fn a_60_float_row_is_padded_to_256_bytes_on_the_gt200_and_512_on_the_h100() {
        let inputs = PitchedInputs {
            width: 60,
            ..PitchedInputs::default()
        };
        let pitch = |device| inputs.layout(device).map(|layout| layout.pitch_bytes);
        assert_eq!(pitch(DeviceId::Gt200), Some(256));
        assert_eq!(pitch(DeviceId::H100), Some(512));
    }

    #[test]
    fn inputs_out_of_range_are_clamped_and_the_element_stays_inside_the_array() {
        let wild = PitchedInputs {
            width: 0,
            element_bytes: 3,
            height: 1_000_000,
            row: 5_000_000,
            col: 7,
        };
        assert_eq!(
            wild.clamped(),
            PitchedInputs {
                width: 1,
                element_bytes: 4,
                height: MAX_HEIGHT,
                row: MAX_HEIGHT - 1,
                col: 0,
            }
        );
    }

    #[test]
    fn a_warp_reading_a_misaligned_packed_row_touches_one_segment_more() {
        assert_eq!(segments_touched(0, 128), 1);
        assert_eq!(segments_touched(400, 128), 2);
        assert_eq!(segments_touched(512, 128), 1);
        assert_eq!(segments_touched(5, 0), 0);
        let text = why_padded(&h100_layout(PitchedInputs::default()));
        assert!(
            text.ends_with(
                "Packed without padding, row 1 would start at byte 400 (16 B past a segment \
                 boundary), and a warp reading its first 32 elements would touch 2 segments of \
                 128 bytes; pitched, row 1 starts at byte 512 and the same read touches 1."
            ),
            "{text}"
        );
    }

    #[test]
    fn rows_a_whole_number_of_segments_wide_start_aligned_even_packed() {
        let text = why_padded(&h100_layout(PitchedInputs {
            width: 96,
            ..PitchedInputs::default()
        }));
        assert!(
            text.ends_with(
                "Here a row is 384 B wide, a whole number of segments, so even packed rows \
                 would start aligned: the padding buys only the texture alignment."
            ),
            "{text}"
        );
    }

    #[test]
    fn a_kernel_reads_the_element_through_a_cast_row_pointer_indexed_by_the_column() {
        // `[col]` binds tighter than the cast, so the cast row pointer is parenthesised first.
        assert_eq!(
            element_expression(4),
            "((float*)((char*)base + row * pitch))[col]"
        );
        let statements = pitched_statements(DeviceId::H100, PitchedInputs::default());
        let address = statements
            .iter()
            .find(|s| s.text.starts_with("Element (1, 0): "))
            .expect("the worked-out address");
        assert_eq!(
            address.text,
            "Element (1, 0): base + 1 × 512 + 0 × 4 = base + 512 — in a kernel, \
             ((float*)((char*)base + row * pitch))[col]"
        );
    }

    #[test]
    fn no_sentence_of_the_card_names_a_lecture_by_a_file_number_or_a_probe() {
        for device in DeviceId::ALL {
            for inputs in [
                PitchedInputs::default(),
                PitchedInputs {
                    width: 96,
                    height: 1,
                    ..PitchedInputs::default()
                },
            ] {
                for statement in pitched_statements(device, inputs) {
                    let text = statement.text.to_lowercase();
                    assert!(
                        !text.contains("seed") && !text.contains("probe"),
                        "{}",
                        statement.text
                    );
                }
            }
        }
    }

    #[test]
    fn the_card_s_figures_are_the_layout_s_bytes() {
        let statements = pitched_statements(DeviceId::H100, PitchedInputs::default());
        let figures: Vec<(String, f64)> = statements
            .iter()
            .filter_map(|s| match &s.claim {
                crate::statements::Claim::Figure { label, value } => Some((label.clone(), *value)),
                _ => None,
            })
            .collect();
        assert_eq!(
            figures,
            [
                ("pitch on the H100 (B)".to_string(), 512.0),
                ("padding per row (B)".to_string(), 112.0),
                ("total (B)".to_string(), 32_768.0),
            ]
        );
        assert!(statements
            .iter()
            .any(|s| s.text == "total: 32,768 B (packed: 25,600 B)"));
    }

    #[test]
    fn svg_coordinates_have_at_most_two_decimals() {
        assert_eq!(coordinate(56.0), "56");
        assert_eq!(coordinate(1.0 / 3.0), "0.33");
        assert_eq!(coordinate(12.5), "12.5");
    }
}
