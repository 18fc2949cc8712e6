//! The page: one reducer holds the state, the views get plain data derived from it.
//!
//! The only side effects of the page live here, in `deflate` and in `bridge`: the URL is read
//! once when the page starts, and written back with `history.replaceState` from an effect once
//! the settings have rested for a moment (so the back button is not flooded with one entry per
//! slider step, and a dragged slider does not rewrite the link at every value); an edited
//! kernel is compressed into the URL's fragment, and a kernel in the fragment the page was opened
//! with is unpacked, by the browser's compression streams, whose answers come back as actions;
//! the launch and its sweep go to the simulation worker through `bridge::use_simulations`, which
//! hands back the newest run to show. The bank map, the occupancy and the roofline are cheap and
//! computed here, on the page.
//! With `embed=1` the page drops its header and footer and shows the lesson compactly under a bar
//! linking to the full page; the full page offers the `<iframe>` code of its view, and copies it
//! with the async Clipboard API where the browser allows (README, "Embedding in a course page").
//! In a frame, the page tells its course page what happens and takes its settings through
//! `embed_api` (README, "The embed API").

use crate::bridge::use_simulations;
use crate::components::bank_map::BankMap;
use crate::components::compare_view::CompareView;
use crate::components::controls::Controls;
use crate::components::divergence_view::DivergenceView;
use crate::components::embed_bar::{EmbedBar, EmbedCodePanel};
use crate::components::kernel_view::{launch_text, KernelView};
use crate::components::latency_view::LatencyView;
use crate::components::launch_form::LaunchForm;
use crate::components::lesson_guide::LessonGuide;
use crate::components::line_view::LineView;
use crate::components::memory_spaces::MemorySpaces;
use crate::components::notes::Notes;
use crate::components::occupancy_view::OccupancyView;
use crate::components::pitched::PitchedAllocation;
use crate::components::roofline_levels::RooflineLevels;
use crate::components::roofline_view::RooflineView;
use crate::components::time_sweep::TimeSweep;
use crate::components::transfer_view::TransferView;
use crate::deflate;
use crate::embed_api::{self, Incoming, Outgoing, ParentOrigin, PARENT_ORIGIN_KEY};
use crate::lessons::View;
use crate::line_model;
use crate::model;
use crate::source_link::SourceLink;
use crate::state::{Action, State};
use crate::url;
use gloo::timers::callback::Timeout;
use memplay_sim::{banks, patterns, roofline};
use std::rc::Rc;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use yew::prelude::*;

/// The query of the address the page was opened with, `?` included.
fn initial_query() -> String {
    web_sys::window()
        .and_then(|window| window.location().search().ok())
        .unwrap_or_default()
}

/// The fragment of the address the page was opened with, `#` included (empty without one).
fn initial_fragment() -> String {
    web_sys::window()
        .and_then(|window| window.location().hash().ok())
        .unwrap_or_default()
}

/// `?query`, and `#fragment` when there is one: the page's link relative to its path.
fn link(query: &str, fragment: Option<&str>) -> String {
    match fragment {
        Some(fragment) => format!("?{query}#{fragment}"),
        None => format!("?{query}"),
    }
}

/// How long the settings rest before the page's link is written. Each `history.replaceState`
/// costs the page's thread some 2 ms and the browser's own process some 10 ms (Chromium 156,
/// traced), which on a machine of two cores ran beside the simulation of every slider step; a
/// slider dragged across its values writes the link once, when it stops.
const LINK_SETTLE_MS: u32 = 250;

/// Replaces the current history entry's query and fragment, keeping the path.
fn write_link(query: &str, fragment: Option<&str>) {
    let Some(history) = web_sys::window().and_then(|window| window.history().ok()) else {
        return;
    };
    // A failure here (say, inside a sandboxed iframe) only costs the shareable link.
    let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&link(query, fragment)));
}

/// The address of the page without its query or fragment: where an embed of this view points.
fn page_address() -> String {
    let href = web_sys::window()
        .and_then(|window| window.location().href().ok())
        .unwrap_or_default();
    let end = href.find(['?', '#']).unwrap_or(href.len());
    href[..end].to_string()
}

/// `index.html` shows a line saying memplay is starting (and what it needs, should it never
/// start); the app is running, so the line goes.
fn remove_boot_status() {
    if let Some(status) = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.get_element_by_id("boot-status"))
    {
        status.remove();
    }
}

/// Writes `text` to the clipboard and tells `answer` whether it worked. Browsers without the
/// async Clipboard API (or outside a secure context) have no `navigator.clipboard`: that is
/// answered as a refusal, and the page asks the student to copy the selected code.
fn copy_to_clipboard(text: String, answer: impl FnOnce(bool) + 'static) {
    let Some(navigator) = web_sys::window().map(|window| window.navigator()) else {
        answer(false);
        return;
    };
    let has_clipboard = js_sys::Reflect::get(&navigator, &JsValue::from_str("clipboard"))
        .is_ok_and(|clipboard| !clipboard.is_undefined() && !clipboard.is_null());
    if !has_clipboard {
        answer(false);
        return;
    }
    let promise = navigator.clipboard().write_text(&text);
    yew::platform::spawn_local(async move {
        answer(JsFuture::from(promise).await.is_ok());
    });
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

#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(|| State::from_link(&initial_query(), &initial_fragment()));
    // The course page around an embed, as the link's `parent-origin=` names it (embed_api).
    let parent_origin = use_memo((), |_| {
        ParentOrigin::from_value(url::query_value(&initial_query(), PARENT_ORIGIN_KEY).as_deref())
    });
    // The link is written once the settings have rested for LINK_SETTLE_MS: a newer change
    // cancels the write of the one before (the effect's cleanup drops its timer). It keeps the
    // course page's origin, and the course page hears of the settings it now holds.
    {
        let state = state.clone();
        let parent_origin = parent_origin.clone();
        use_effect_with(
            (
                state.to_query(),
                state.source_link.fragment().map(str::to_string),
            ),
            move |(query, fragment)| {
                let query = url::with_pair(query.clone(), PARENT_ORIGIN_KEY, parent_origin.value());
                let fragment = fragment.clone();
                let write = Timeout::new(LINK_SETTLE_MS, move || {
                    write_link(&query, fragment.as_deref());
                    // The query alone: an edited kernel in the fragment is the student's
                    // text, which a course page of any origin could otherwise read.
                    let shared = link(&query, None);
                    embed_api::post(&Outgoing::settings(&state, shared), &parent_origin);
                });
                move || drop(write)
            },
        );
    }
    // The embed API: the page listens to its course page, then tells it that it runs. A `set`
    // message becomes the actions its settings would in a link, taken against the newest state.
    {
        let latest = use_mut_ref(|| state.clone());
        *latest.borrow_mut() = state.clone();
        let parent_origin = parent_origin.clone();
        use_effect_with((), move |_| {
            let listener = embed_api::listen(&parent_origin, move |message| match message {
                Incoming::Set(pairs) => {
                    let state = latest.borrow().clone();
                    for action in state.link_actions(&pairs) {
                        state.dispatch(action);
                    }
                }
            });
            embed_api::post(&Outgoing::Ready, &parent_origin);
            move || drop(listener)
        });
    }
    // Once the page runs: the boot line goes, and a kernel in the opening link is unpacked (the
    // lesson's own kernel shows meanwhile).
    {
        let opening = match &state.source_link {
            SourceLink::Opening { compressed, .. } => Some(compressed.clone()),
            _ => None,
        };
        let state = state.clone();
        use_effect_with((), move |_| {
            remove_boot_status();
            if let Some(compressed) = opening {
                wasm_bindgen_futures::spawn_local(async move {
                    let inflated = deflate::inflate(&compressed).await;
                    state.dispatch(Action::SharedSourceOpened { inflated });
                });
            }
        });
    }
    // Every new edit is compressed for the link; the reducer drops an answer about an older one.
    {
        let state = state.clone();
        use_effect_with(
            state.source_to_compress().map(str::to_string),
            move |source| {
                if let Some(source) = source.clone() {
                    wasm_bindgen_futures::spawn_local(async move {
                        let compressed = deflate::compress(&source).await;
                        state.dispatch(Action::SourceCompressed { source, compressed });
                    });
                }
            },
        );
    }
    let on_copy_embed = {
        let state = state.clone();
        Callback::from(move |_: ()| {
            state.dispatch(Action::ShowEmbedCode);
            let query = state.to_query();
            let state = state.clone();
            copy_to_clipboard(state.embed_code(&page_address()), move |copied| {
                state.dispatch(Action::EmbedCodeCopied { query, copied })
            });
        })
    };
    let on_action = {
        let state = state.clone();
        Callback::from(move |action: Action| state.dispatch(action))
    };

    let device = state.device.device();
    let pattern = patterns::build(state.pattern, model::pattern_params(&state));
    let bank_report = banks::analyze(&pattern.access, &device);
    let ceilings = roofline::ceilings(&device);
    // The launch and its sweep go to the worker; only a change of them makes a new request.
    let (mut input, launch_errors) = state.launch_and_errors();
    let sweep_launches = state.sweep_launches(&input);
    // The launch the page shows traces one warp for the per-line view; its sweep traces none.
    input.trace = Some(line_model::trace_request(
        state.trace_block,
        state.trace_warp,
        &input,
    ));
    let launch = launch_text(&input);
    let kernel = input.kernel.clone();
    let compared = state.compare_launch();
    let shown = use_simulations(
        input.clone(),
        compared.as_ref().map(|(_, input)| input.clone()),
        sweep_launches,
    );
    // Each new run the page shows is told to the course page: its time and counters.
    {
        let parent_origin = parent_origin.clone();
        let lesson = state.variant.lesson().key();
        use_effect_with(shown.run.clone(), move |run| {
            if let Some(run) = run {
                if let Ok(report) = &run.result {
                    let time_ms = run.prediction.as_ref().map(|prediction| prediction.time_ms);
                    let results = Outgoing::results(lesson, report, time_ms);
                    embed_api::post(&results, &parent_origin);
                }
            }
        });
    }
    // The occupancy view shows the launch of the run on the page (its shared memory is the
    // kernel's as the simulation laid it out), on that run's device; before the first run comes
    // back, the launch asked for, with only its dynamic shared memory known.
    let (resources, launch_occupancy, occupancy_device) = match &shown.run {
        Some(run) => {
            let (resources, launch) = model::lesson_occupancy(&run.input, &run.result);
            (resources, launch, run.input.device.clone())
        }
        None => {
            let (resources, launch) = model::launch_occupancy(&input);
            (resources, launch, device.clone())
        }
    };
    let occupancy_kernel = shown
        .run
        .as_ref()
        .map_or(kernel, |run| run.input.kernel.clone());
    // The kernel's point on the roofline: FLOP per simulated DRAM byte. When a launch writes
    // nothing and what it reads stays in L2 between timed runs, no byte reaches DRAM; the point
    // then counts each byte once, as a cold run would fetch it.
    let simulated_point = shown
        .run
        .as_ref()
        .and_then(|run| match (&run.result, &run.prediction) {
            (Ok(report), Some(prediction)) => {
                model::simulated_point(&run.input.kernel, report, prediction)
            }
            _ => None,
        });
    // The hierarchical roofline of the run on the page: its FLOPs against each level's bytes.
    let levels = shown
        .run
        .as_ref()
        .and_then(|run| match (&run.result, &run.prediction) {
            (Ok(report), Some(prediction)) => Some(roofline::hierarchical(report, prediction)),
            _ => None,
        });
    let levels_kernel = shown
        .run
        .as_ref()
        .map_or(input.kernel.clone(), |run| run.input.kernel.clone());
    let sweeps = model::occupancy_sweeps(&occupancy_device, resources);
    // The memory spaces of the kernel that ran, with its launch's threads; before the first
    // answer, the kernel asked for and nothing listed yet.
    let (spaces_kernel, spaces_input, declarations) = match &shown.run {
        Some(run) => (
            run.input.kernel.clone(),
            &run.input,
            Some(run.declarations.clone()),
        ),
        None => (input.kernel.clone(), &input, None),
    };
    let threads_per_block = spaces_input.block.count();
    let blocks = spaces_input.grid.count();
    let line_view = shown.run.as_ref().and_then(|run| match &run.result {
        Ok(report) => Some(line_model::line_view(
            &run.input,
            report,
            state.line_site,
            state.line_step,
        )),
        Err(_) => None,
    });

    let embedded = state.embed;
    // The lesson decides which settings and views the page shows.
    let lesson = state.variant.lesson();
    let views = lesson.views();
    // The lesson's words, parsed once per lesson; a file that does not parse (the tests make sure
    // none ships) leaves the page without them rather than without the simulator.
    let lesson_text = use_memo(state.variant.lesson(), |lesson| {
        crate::lesson_text::parse(lesson.text()).ok().map(Rc::new)
    });
    // A revealed answer is told to the course page: the choice, and whether the lesson marks it
    // as right.
    {
        let parent_origin = parent_origin.clone();
        let lesson_text = (*lesson_text).clone();
        use_effect_with((state.prediction, lesson), move |(prediction, lesson)| {
            let choice = lesson_text.as_ref().and_then(|text| {
                let index = prediction.chosen.filter(|_| prediction.revealed)?;
                text.question.choices.get(index)
            });
            if let Some(choice) = choice {
                let answered = Outgoing::Answered {
                    lesson: lesson.key().to_string(),
                    choice: choice.text.clone(),
                    correct: choice.correct,
                };
                embed_api::post(&answered, &parent_origin);
            }
        });
    }
    // The sweep's launches, for a lesson's words about another value of the swept setting.
    let sweep_runs = shown.sweep.as_ref().map(|sweep| Rc::clone(&sweep.runs));
    let guide = (*lesson_text).clone().map(|text| {
        let next = text.next;
        let next_href = if embedded {
            format!("?lesson={}&embed=1", next.key())
        } else {
            format!("?lesson={}", next.key())
        };
        let next_title = next.title().to_string();
        let question_launch = Rc::new(
            State {
                variant: text.question.variant,
                ..(*state).clone()
            }
            .launch(),
        );
        let lesson_href = if embedded {
            format!("?lesson={}&embed=1", lesson.key())
        } else {
            format!("?lesson={}", lesson.key())
        };
        html! {
            <LessonGuide
                text={text}
                run={shown.run.clone()}
                sweep={sweep_runs.clone()}
                question_launch={question_launch}
                lesson_href={lesson_href}
                next_href={next_href}
                next_title={next_title}
                prediction={state.prediction}
                compact={embedded}
                on_action={on_action.clone()}
            />
        }
    });
    html! {
        <>
            if !embedded {
            <header class="site-header">
                <h1>{ "memplay" }</h1>
                <p class="tagline">
                    { "How one warp uses GPU memory: shared-memory banks, occupancy and the \
                       roofline, on devices from G80 to H100. Change a setting and watch." }
                </p>
            </header>
            }
            <main class={classes!(embedded.then_some("embedded"))}>
                if embedded {
                    <EmbedBar title={state.variant.title()}
                              full_page_href={link(&state.full_page_query(),
                                                   state.source_link.fragment())} />
                }
                { for guide }
                <Controls
                    device={state.device}
                    pattern={state.pattern}
                    element={state.element}
                    host_memory={state.host_memory}
                    tile={state.tile}
                    block={state.block}
                    pad={state.pad}
                    stride={state.stride}
                    regs={state.regs}
                    shown={state.controls()}
                    on_action={on_action.clone()}
                />
                <Notes notes={state.notes.clone()} />
                <KernelView
                    variant={state.variant}
                    source={state.source().to_string()}
                    edited={state.edited_source.is_some()}
                    link_status={state.source_link.status()}
                    compile={state.compile}
                    launch={launch}
                    run={shown.run.clone()}
                    progress={shown.progress}
                    worker_failure={shown.worker_failure.clone()}
                    cancelled={shown.cancelled}
                    on_action={on_action.clone()}
                >
                    if let Some(sweep) = shown.sweep {
                        <TimeSweep
                            setting={sweep.setting.label()}
                            points={sweep.points}
                            current={sweep.current}
                        />
                    }
                </KernelView>
                <CompareView
                    compare={state.compare}
                    own_label={state.compare_own_label()}
                    other_label={compared.map(|(label, _)| label)}
                    own={shown.run.clone()}
                    other={shown.compare.clone()}
                    on_action={on_action.clone()}
                />
                if views.contains(&View::LaunchForm) {
                    <LaunchForm source={state.source().to_string()} launch={state.my_launch.clone()}
                                errors={launch_errors} on_action={on_action.clone()} />
                }
                if views.contains(&View::Lines) {
                    <LineView view={line_view} on_action={on_action.clone()} />
                }
                <div class="views">
                    if views.contains(&View::BankMap) {
                        <BankMap
                            device={device.clone()}
                            pattern={pattern}
                            report={bank_report}
                            tile={state.tile}
                            pad={state.pad}
                            stride={state.stride}
                        />
                    }
                    if views.contains(&View::LatencyHiding) {
                        <LatencyView run={shown.run.clone()} />
                    }
                    if views.contains(&View::Divergence) {
                        <DivergenceView run={shown.run.clone()} />
                    }
                    if views.contains(&View::Transfers) {
                        <TransferView run={shown.run.clone()} host_memory={state.host_memory}
                                      layout={state.variant.transfer_layout()} />
                    }
                    if views.contains(&View::Occupancy) {
                        <OccupancyView
                            device={occupancy_device}
                            resources={resources}
                            kernel={occupancy_kernel}
                            launch={launch_occupancy}
                            sweeps={sweeps}
                        />
                    }
                    if views.contains(&View::Roofline) {
                        <RooflineView device={device.clone()} ceilings={ceilings} tile={state.tile}
                                      simulated={simulated_point} />
                        <RooflineLevels kernel={levels_kernel} device_name={device.name.to_string()}
                                        levels={levels} />
                    }
                </div>
                if views.contains(&View::MemorySpaces) || views.contains(&View::Pitched) {
                    <div class="views lesson-views">
                        if views.contains(&View::MemorySpaces) {
                            <MemorySpaces kernel={spaces_kernel} declarations={declarations}
                                          threads_per_block={threads_per_block} blocks={blocks} />
                        }
                        if views.contains(&View::Pitched) {
                            <PitchedAllocation device={state.device} />
                        }
                    </div>
                }
                if !embedded {
                    <EmbedCodePanel code={state.embed_code(&page_address())}
                                    status={state.embed_code} on_copy={on_copy_embed} />
                }
            </main>
            if !embedded {
            <footer class="site-footer">
                <p>
                    { "The numbers come from memplay-sim, a model of the CUDA lectures' rules: \
                       device figures from datasheets and the CUDA Programming Guide, H100 \
                       ceilings measured on a real H100. Every setting, and an edited kernel \
                       that fits, is in the address bar: copy it to share this view." }
                </p>
            </footer>
            }
        </>
    }
}
