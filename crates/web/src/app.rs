//! The page: one reducer holds the state, the views get plain data derived from it.
//!
//! The only side effects of the page live here: the URL query is read once when the page starts,
//! and written back with `history.replaceState` from an effect after every change (so the back
//! button is not flooded with one entry per slider step).

use crate::components::bank_map::BankMap;
use crate::components::controls::Controls;
use crate::components::kernel_view::{KernelView, SimulationRun};
use crate::components::notes::Notes;
use crate::components::occupancy_view::OccupancyView;
use crate::components::roofline_view::{RooflineView, SimulatedPoint};
use crate::components::time_sweep::{TimePoint, TimeSweep};
use crate::model;
use crate::state::{Action, State};
use memplay_sim::simulate::{simulate, SimulationInput};
use memplay_sim::timing::predict;
use memplay_sim::{banks, patterns, roofline};
use std::rc::Rc;
use wasm_bindgen::JsValue;
use yew::prelude::*;

/// The query of the address the page was opened with, `?` included.
fn initial_query() -> String {
    web_sys::window()
        .and_then(|window| window.location().search().ok())
        .unwrap_or_default()
}

/// Replaces the current history entry's query, keeping the path.
fn write_query(query: &str) {
    let Some(history) = web_sys::window().and_then(|window| window.history().ok()) else {
        return;
    };
    // A failure here (say, inside a sandboxed iframe) only costs the shareable link.
    let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&format!("?{query}")));
}

/// On a panic the wasm module stops; tell the student on the page rather than freezing silently.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = format!("memplay stopped because of a bug: {info}");
        web_sys::console::error_1(&JsValue::from_str(&message));
        let Some(document) = web_sys::window().and_then(|window| window.document()) else {
            return;
        };
        if let (Ok(paragraph), Some(body)) = (document.create_element("p"), document.body()) {
            paragraph.set_class_name("crash");
            let _ = paragraph.set_attribute("role", "alert");
            paragraph.set_text_content(Some(&format!("{message}. Reload the page to go on.")));
            let _ = body.prepend_with_node_1(&paragraph);
        }
    }));
}

/// Milliseconds from the page's clock; 0 where there is none (the host build).
fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|window| window.performance())
        .map_or(0.0, |performance| performance.now())
}

/// The predicted time of each launch of a sweep, or why it does not run.
fn sweep_times(inputs: &[(u32, SimulationInput)]) -> Vec<TimePoint> {
    inputs
        .iter()
        .map(|(value, input)| TimePoint {
            value: *value,
            time_ms: simulate(input)
                .map(|report| predict(&report, &input.device).time_ms)
                .map_err(|error| error.to_string()),
        })
        .collect()
}

/// Runs one simulation and measures what it cost in the browser.
fn run_simulation(input: &SimulationInput) -> SimulationRun {
    let started = now_ms();
    let result = simulate(input);
    let prediction = result
        .as_ref()
        .ok()
        .map(|report| predict(report, &input.device));
    SimulationRun {
        input: input.clone(),
        result,
        prediction,
        elapsed_ms: now_ms() - started,
    }
}

#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(|| State::from_query(&initial_query()));
    use_effect_with(state.to_query(), |query| write_query(query));
    let on_action = {
        let state = state.clone();
        Callback::from(move |action: Action| state.dispatch(action))
    };

    let device = state.device.device();
    let pattern = patterns::build(state.pattern, model::pattern_params(&state));
    let bank_report = banks::analyze(&pattern.access, &device);
    let ceilings = roofline::ceilings(&device);
    // The simulation reruns only when its input changes, not on every render.
    let input = state.lesson.launch(&state, state.source());
    let run: Rc<SimulationRun> = use_memo(input, run_simulation);
    let (resources, launch) = model::lesson_occupancy(&run.input, &run.result);
    // The sweep reruns only when a launch of it changes: moving along the swept setting itself
    // changes none of them.
    let sweep = state.lesson.sweep();
    // A kernel that fails (a typo, or a loop that runs into the step budget) is not swept: its
    // sweep would fail the same way, several times over, while the page waits.
    let sweep_inputs: Vec<(u32, SimulationInput)> = if run.result.is_ok() {
        sweep
            .values()
            .iter()
            .map(|&value| {
                let at = sweep.with(&state, value);
                (value, state.lesson.launch(&at, state.source()))
            })
            .collect()
    } else {
        Vec::new()
    };
    let sweep_points = use_memo(sweep_inputs, |inputs| sweep_times(inputs));
    // The kernel's point on the roofline: FLOP per simulated DRAM byte. When the whole footprint
    // stays in L2 between timed runs no byte reaches DRAM; the point then counts each byte once,
    // as a cold run would fetch it.
    let simulated_point = match (&run.result, &run.prediction) {
        (Ok(report), Some(prediction)) => {
            let flops = report.counters.fp32_flops;
            prediction
                .arithmetic_intensity
                .or_else(|| {
                    (prediction.useful_bytes > 0.0).then(|| flops / prediction.useful_bytes)
                })
                .filter(|&intensity| flops > 0.0 && intensity > 0.0)
                .map(|intensity| SimulatedPoint {
                    kernel: run.input.kernel.clone(),
                    intensity,
                    gflops: prediction.gflops,
                    from_l2: prediction.l2_warm,
                })
        }
        _ => None,
    };
    let sweeps = model::occupancy_sweeps(&device, resources);

    html! {
        <>
            <header class="site-header">
                <h1>{ "memplay" }</h1>
                <p class="tagline">
                    { "How one warp uses GPU memory: shared-memory banks, occupancy and the \
                       roofline, on devices from G80 to H100. Change a setting and watch." }
                </p>
            </header>
            <main>
                <Controls
                    device={state.device}
                    pattern={state.pattern}
                    tile={state.tile}
                    block={state.block}
                    pad={state.pad}
                    stride={state.stride}
                    regs={state.regs}
                    on_action={on_action.clone()}
                />
                <Notes notes={state.notes.clone()} />
                <KernelView
                    lesson={state.lesson}
                    source={state.source().to_string()}
                    edited={state.edited_source.is_some()}
                    compile={state.compile}
                    run={run.clone()}
                    on_action={on_action.clone()}
                >
                    <TimeSweep
                        setting={sweep.label()}
                        points={(*sweep_points).clone()}
                        current={sweep.current(&state)}
                    />
                </KernelView>
                <div class="views">
                    <BankMap
                        device={device.clone()}
                        pattern={pattern}
                        report={bank_report}
                        tile={state.tile}
                        pad={state.pad}
                        stride={state.stride}
                    />
                    <OccupancyView
                        device={device.clone()}
                        resources={resources}
                        kernel={run.input.kernel.clone()}
                        launch={launch}
                        sweeps={sweeps}
                    />
                    <RooflineView device={device} ceilings={ceilings} tile={state.tile}
                                  simulated={simulated_point} />
                </div>
            </main>
            <footer class="site-footer">
                <p>
                    { "The numbers come from memplay-sim, a model of the CUDA lectures' rules: \
                       device figures from datasheets and the CUDA Programming Guide, H100 \
                       ceilings measured on a real H100. Every setting is in the address bar: \
                       copy it to share this view." }
                </p>
            </footer>
        </>
    }
}
