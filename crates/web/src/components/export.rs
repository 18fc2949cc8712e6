//! Exports for course pages and instructors: a chart as SVG or PNG, the counters table as CSV,
//! the kernel as a `.cu` file and the whole launch as a launch file (`memplay_sim::replay`'s
//! envelope, which `memplay replay FILE.json --check` reruns on the command line).
//!
//! What a file holds is made by plain functions, tested on the host. Handing a file to the
//! browser is a side effect, and this module's `download_*` functions are the only code of the
//! page that touches `Blob`, object URLs, the serializer and the canvas: the components call
//! them from their buttons' click handlers and hold no state for them.
//!
//! A chart on the page takes its colours and fonts from the stylesheet's classes, which do not
//! apply to an SVG file on its own or to the image the PNG is drawn from. The exported SVG
//! therefore carries a small `<style>` (`CHART_STYLE`, the stylesheet's chart rules with its
//! colours written out) and a width and height from its `viewBox`; it keeps its text alternative,
//! the `aria-label` as it is and, as SVG's `<desc>`, the description that the page keeps outside
//! the chart (`aria-describedby`). The PNG draws that SVG, loaded
//! from a `blob:` URL (allowed by the page's `img-src`), onto a canvas at twice its size.

use crate::run::SimulationRun;
use memplay_sim::replay::LaunchFile;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{
    Blob, BlobPropertyBag, CanvasRenderingContext2d, Element, HtmlAnchorElement, HtmlCanvasElement,
    HtmlElement, HtmlImageElement, Url, XmlSerializer,
};
use yew::prelude::*;

const SVG_NAMESPACE: &str = "http://www.w3.org/2000/svg";

/// How many canvas pixels a PNG has per SVG unit: twice, so a chart stays sharp on a slide.
const PNG_SCALE: f64 = 2.0;

/// How long an object URL lives after its download began. Chromium reads the blob when the click
/// is handled, but revoking at once can still cancel the download in some browsers.
const REVOKE_AFTER_MS: u32 = 10_000;

/// The stylesheet's chart rules (`www/style.css`, "Charts" and "the sweep chart"), with its colour
/// variables written out, for an SVG shown on its own.
pub const CHART_STYLE: &str = "\
svg{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,Arial,sans-serif;background:#fff}\
text{font-size:13px;fill:#2b2f38}\
.current-label,.roof-label,.ridge-label,.kernel text{paint-order:stroke;stroke:#fff;stroke-width:4px;stroke-linejoin:round}\
.axis-title{font-size:13px;fill:#474d5a}\
.grid{stroke:#e2e5ea;stroke-width:1}\
.grid.minor{stroke:#f0f2f5}\
.axis{stroke:#5b6170;stroke-width:1.2}\
.sweep-line{fill:none;stroke:#1d4ed8;stroke-width:2.2}\
.current{stroke:#92400e;stroke-width:1.5;stroke-dasharray:4 3}\
.current-dot{fill:#92400e;stroke:#fff;stroke-width:1.5}\
.current-label{font-weight:700;fill:#92400e}\
.roof{fill:none;stroke:#15171c;stroke-width:2.5;stroke-linejoin:round}\
.roof.achievable{stroke:#1d4ed8;stroke-dasharray:9 6}\
.roof-label{font-size:14px;font-weight:600}\
.ridge{stroke:#6b7280;stroke-width:1.5;stroke-dasharray:3 4}\
.ridge-label{fill:#474d5a;font-size:14px}\
.kernel text{font-size:15px;font-weight:700}\
.kernel.naive circle{fill:#b91c1c;stroke:#fff;stroke-width:2}\
.kernel.naive text{fill:#7f1d1d}\
.kernel.tiled polygon{fill:#166534;stroke:#fff;stroke-width:2}\
.kernel.tiled text{fill:#166534}\
.kernel.simulated rect{fill:#92400e;stroke:#fff;stroke-width:2}\
.kernel.simulated text{fill:#92400e}\
.time-point circle{fill:#1d4ed8;stroke:#fff;stroke-width:1.5}\
.time-point.current circle{fill:#92400e}\
.time-point.failed text{fill:#b91c1c;font-weight:700}\
.time-point.pending text{fill:#474d5a}\
.tick-label.current-label{fill:#92400e}";

/// One CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The counters table as CSV: a header, then one row per counter (its label on the page,
/// Nsight Compute's metric name, the value).
pub fn counters_csv(rows: &[(&str, &str, String)]) -> String {
    let mut csv = String::from("counter,metric,value\r\n");
    for (label, metric, value) in rows {
        csv.push_str(&format!(
            "{},{},{}\r\n",
            csv_field(label),
            csv_field(metric),
            csv_field(value)
        ));
    }
    csv
}

/// The launch file of a run that succeeded: the input it simulated, its counters and its
/// predicted time, as pretty JSON. `None` for a run that failed.
pub fn launch_json(run: &SimulationRun) -> Option<String> {
    let report = run.result.as_ref().ok()?;
    let prediction = run.prediction.as_ref()?;
    let file = LaunchFile::new(run.input.clone(), report.counters, prediction.time_ms);
    serde_json::to_string_pretty(&file).ok()
}

/// The width and height of a `viewBox="minX minY width height"`.
pub fn view_box_size(view_box: &str) -> Option<(f64, f64)> {
    let numbers: Vec<f64> = view_box
        .split([' ', ','])
        .filter(|part| !part.is_empty())
        .map(memplay_sim::decimal::parse_f64)
        .collect::<Option<_>>()?;
    match numbers[..] {
        [_, _, width, height] if width > 0.0 && height > 0.0 => Some((width, height)),
        _ => None,
    }
}

/// Hands `blob` to the browser as a download named `file_name`.
fn download_blob(blob: &Blob, file_name: &str) -> Result<(), JsValue> {
    let url = Url::create_object_url_with_blob(blob)?;
    let anchor: HtmlAnchorElement = gloo::utils::document().create_element("a")?.dyn_into()?;
    anchor.set_href(&url);
    anchor.set_download(file_name);
    anchor.click();
    gloo::timers::callback::Timeout::new(REVOKE_AFTER_MS, move || {
        let _ = Url::revoke_object_url(&url);
    })
    .forget();
    Ok(())
}

fn text_blob(text: &str, mime: &str) -> Result<Blob, JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    Blob::new_with_str_sequence_and_options(&parts, &options)
}

/// Downloads `text` as a file of the given MIME type.
pub fn download_text(file_name: &str, mime: &str, text: &str) {
    if let Err(error) = text_blob(text, mime).and_then(|blob| download_blob(&blob, file_name)) {
        web_sys::console::error_2(&"memplay: the download failed".into(), &error);
    }
}

/// The first `<svg>` in `container` (the element itself, if it is one).
fn find_svg(container: &Element) -> Option<Element> {
    if container.tag_name().eq_ignore_ascii_case("svg") {
        return Some(container.clone());
    }
    container.query_selector("svg").ok().flatten()
}

/// The text of the elements an `aria-describedby` names, one line of each: the visible text of a
/// shown element (its lines and list items joined with spaces), the text of a hidden one.
fn description_text(document: &web_sys::Document, ids: &str) -> String {
    ids.split_whitespace()
        .filter_map(|id| document.get_element_by_id(id))
        .map(|element| match element.dyn_ref::<HtmlElement>() {
            Some(shown) if !shown.hidden() => shown.inner_text(),
            _ => element.text_content().unwrap_or_default(),
        })
        .flat_map(|text| {
            text.lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A chart as a standalone SVG document with its style, and its size in SVG units.
fn standalone_svg(svg: &Element) -> Result<(String, f64, f64), JsValue> {
    let (width, height) = svg
        .get_attribute("viewBox")
        .and_then(|view_box| view_box_size(&view_box))
        .unwrap_or((640.0, 400.0));
    let copy: Element = svg.clone_node_with_deep(true)?.dyn_into()?;
    copy.set_attribute("width", &width.to_string())?;
    copy.set_attribute("height", &height.to_string())?;
    copy.remove_attribute("class")?;
    let document = gloo::utils::document();
    // On the page the chart's description is an element outside the SVG; a file on its own
    // carries it inside, as SVG's own <desc>, and keeps its aria-label as the name.
    if let Some(ids) = copy.get_attribute("aria-describedby") {
        copy.remove_attribute("aria-describedby")?;
        let description = description_text(&document, &ids);
        if !description.is_empty() {
            let desc = document.create_element_ns(Some(SVG_NAMESPACE), "desc")?;
            desc.set_text_content(Some(&description));
            copy.insert_before(&desc, copy.first_child().as_ref())?;
        }
    }
    let style = document.create_element_ns(Some(SVG_NAMESPACE), "style")?;
    style.set_text_content(Some(CHART_STYLE));
    copy.insert_before(&style, copy.first_child().as_ref())?;
    // The serializer writes the SVG namespace as `xmlns`, since the element was made in it.
    let markup = XmlSerializer::new()?.serialize_to_string(&copy)?;
    Ok((markup, width, height))
}

/// Downloads the chart in `container` as `<name>.svg`.
pub fn download_svg(container: &Element, name: &str) {
    let result = find_svg(container)
        .ok_or_else(|| JsValue::from_str("no chart to export"))
        .and_then(|svg| standalone_svg(&svg))
        .and_then(|(markup, _, _)| text_blob(&markup, "image/svg+xml"))
        .and_then(|blob| download_blob(&blob, &format!("{name}.svg")));
    if let Err(error) = result {
        web_sys::console::error_2(&"memplay: the SVG export failed".into(), &error);
    }
}

/// Downloads the chart in `container` as `<name>.png`: the standalone SVG drawn on a white canvas.
pub fn download_png(container: &Element, name: &str) {
    if let Err(error) = start_png(container, name) {
        web_sys::console::error_2(&"memplay: the PNG export failed".into(), &error);
    }
}

fn start_png(container: &Element, name: &str) -> Result<(), JsValue> {
    let svg = find_svg(container).ok_or_else(|| JsValue::from_str("no chart to export"))?;
    let (markup, width, height) = standalone_svg(&svg)?;
    let url = Url::create_object_url_with_blob(&text_blob(&markup, "image/svg+xml")?)?;
    let image = HtmlImageElement::new()?;
    let file_name = format!("{name}.png");
    let loaded = {
        let image = image.clone();
        let url = url.clone();
        // Called once by the browser, which then frees it.
        wasm_bindgen::closure::Closure::once_into_js(move || {
            let _ = Url::revoke_object_url(&url);
            if let Err(error) = draw_png(&image, width, height, file_name) {
                web_sys::console::error_2(&"memplay: the PNG export failed".into(), &error);
            }
        })
    };
    image.set_onload(Some(loaded.unchecked_ref()));
    image.set_src(&url);
    Ok(())
}

fn draw_png(
    image: &HtmlImageElement,
    width: f64,
    height: f64,
    file_name: String,
) -> Result<(), JsValue> {
    let canvas: HtmlCanvasElement = gloo::utils::document()
        .create_element("canvas")?
        .dyn_into()?;
    let (pixels_wide, pixels_high) = ((width * PNG_SCALE).ceil(), (height * PNG_SCALE).ceil());
    canvas.set_width(pixels_wide as u32);
    canvas.set_height(pixels_high as u32);
    let context: CanvasRenderingContext2d = canvas
        .get_context("2d")?
        .ok_or_else(|| JsValue::from_str("no 2d canvas"))?
        .dyn_into()?;
    context.set_fill_style_str("#ffffff");
    context.fill_rect(0.0, 0.0, pixels_wide, pixels_high);
    context.draw_image_with_html_image_element_and_dw_and_dh(
        image,
        0.0,
        0.0,
        pixels_wide,
        pixels_high,
    )?;
    let saved = wasm_bindgen::closure::Closure::once_into_js(move |blob: Option<Blob>| {
        let result = blob
            .ok_or_else(|| JsValue::from_str("the canvas gave no PNG"))
            .and_then(|blob| download_blob(&blob, &file_name));
        if let Err(error) = result {
            web_sys::console::error_2(&"memplay: the PNG export failed".into(), &error);
        }
    });
    canvas.to_blob_with_type(saved.unchecked_ref(), "image/png")
}

#[derive(Debug)]
pub struct ChartExportProps {
    /// The element that holds the chart's `<svg>`.
    pub chart: NodeRef,
    /// The files' name without extension, such as `mm_tiled-time-sweep`.
    pub name: String,
    /// Appended to the buttons' test ids (`export-svg`, `export-png`), so that several charts'
    /// buttons can be told apart: empty for the lesson's sweep chart, `-roofline` and so on.
    pub id_suffix: &'static str,
    /// The chart's title as a sentence says it ("occupancy vs block size"). Each button's name
    /// says which chart it saves, so that a screen reader tells the page's many "SVG" and "PNG"
    /// buttons apart too.
    pub title: AttrValue,
}

/// "SVG" and "PNG" buttons that download the chart in `chart`.
pub fn chart_export(props: &ChartExportProps) -> Html {
    let on_svg = {
        let chart = props.chart.clone();
        let name = props.name.clone();
        Callback::from(move |_: MouseEvent| {
            if let Some(container) = chart.cast::<Element>() {
                download_svg(&container, &name);
            }
        })
    };
    let on_png = {
        let chart = props.chart.clone();
        let name = props.name.clone();
        Callback::from(move |_: MouseEvent| {
            if let Some(container) = chart.cast::<Element>() {
                download_png(&container, &name);
            }
        })
    };
    let of_chart = format!(" of {}", props.title);
    html! {
        <div class="export-bar" role="group" aria-label={format!("Download {}", props.title)}>
            <span class="export-label">{ "Download:" }</span>
            <button type="button" data-testid={format!("export-svg{}", props.id_suffix)}
                    onclick={on_svg}>
                { "SVG" }<span class="sr-only">{ of_chart.clone() }</span>
            </button>
            <button type="button" data-testid={format!("export-png{}", props.id_suffix)}
                    onclick={on_png}>
                { "PNG" }<span class="sr-only">{ of_chart }</span>
            </button>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::State;
    use memplay_sim::simulate::simulate;
    use memplay_sim::timing::predict;

    #[test]
    fn csv_fields_with_commas_or_quotes_are_quoted() {
        let rows = [
            (
                "shared loads",
                "smsp__inst_executed_op_shared_ld.sum",
                "4096".to_string(),
            ),
            ("a, b", "say \"hi\"", "1 / 2".to_string()),
        ];
        assert_eq!(
            counters_csv(&rows),
            "counter,metric,value\r\n\
             shared loads,smsp__inst_executed_op_shared_ld.sum,4096\r\n\
             \"a, b\",\"say \"\"hi\"\"\",1 / 2\r\n"
        );
    }

    #[test]
    fn a_view_box_gives_the_exported_size() {
        assert_eq!(view_box_size("0 0 420 210"), Some((420.0, 210.0)));
        assert_eq!(view_box_size("0,0,320.5,190"), Some((320.5, 190.0)));
        assert_eq!(view_box_size("0 0 0 10"), None);
        assert_eq!(view_box_size("nonsense"), None);
    }

    /// The page's launch file of a lesson reads back as `memplay replay` reads it, and a rerun of
    /// its input reproduces its counters and time exactly.
    fn check_round_trip(state: State) {
        let input = state.launch();
        let result = simulate(&input);
        let prediction = result.as_ref().ok().map(predict);
        let run = SimulationRun {
            input: input.clone(),
            result,
            prediction,
            elapsed_ms: 1.0,
            declarations: Ok(Vec::new()),
        };
        let json = launch_json(&run).expect("a launch that ran has a launch file");
        assert!(json.starts_with("{\n  \"memplay_launch\": 1,"), "{json}");
        let file: LaunchFile = serde_json::from_str(&json).expect("the launch file reads back");
        assert_eq!(file.check_version(), Ok(()));
        assert_eq!(file.input, input);
        let report = run.result.as_ref().expect("ran");
        assert_eq!(file.expected.counters, report.counters);
        let rerun = simulate(&file.input).expect("the file's launch runs");
        let time_ms = predict(&rerun).time_ms;
        assert_eq!(
            file.differences(&rerun.counters, time_ms),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_lesson_s_launch_file_round_trips_through_the_envelope() {
        check_round_trip(State::default());
        check_round_trip(State {
            variant: crate::lessons::variant("adjacent-difference", "shared"),
            ..State::default()
        });
    }

    #[test]
    fn a_failed_run_has_no_launch_file() {
        let state = State {
            edited_source: Some("__global__ void mm_tiled() { m; }".to_string()),
            ..State::default()
        };
        let input = state.launch();
        let run = SimulationRun {
            input: input.clone(),
            result: simulate(&input),
            prediction: None,
            elapsed_ms: 1.0,
            declarations: Ok(Vec::new()),
        };
        assert_eq!(launch_json(&run), None);
    }
}
