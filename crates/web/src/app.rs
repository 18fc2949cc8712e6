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
use crate::components::bank_map::{bank_map, BankMapProps};
use crate::components::compare_view::{compare_view, CompareViewProps};
use crate::components::controls::{controls_view, ControlsProps};
use crate::components::divergence_view::{divergence_view, DivergenceViewProps};
use crate::components::embed_bar::{embed_bar, EmbedBarProps, EmbedCodePanel};
use crate::components::kernel_view::{launch_text, KernelView};
use crate::components::latency_view::{latency_view, LatencyViewProps};
use crate::components::launch_form::LaunchForm;
use crate::components::lesson_bar::{lesson_bar, LessonBarProps};
use crate::components::lesson_file::LessonFileView;
use crate::components::lesson_guide::{key_number, lesson_guide, LessonGuideProps};
use crate::components::line_view::{line_focus, line_table, LineViewProps};
use crate::components::memory_spaces::MemorySpaces;
use crate::components::notes::{notes, NotesProps};
use crate::components::occupancy_view::{occupancy_view, OccupancyViewProps};
use crate::components::pitched::PitchedAllocation;
use crate::components::roofline_levels::{roofline_levels, RooflineLevelsProps};
use crate::components::roofline_view::{roofline_view, RooflineViewProps};
use crate::components::tabs::{tabs_view, TabsProps, PANEL_ID as TAB_PANEL};
use crate::components::time_sweep::{time_sweep, TimeSweepProps};
use crate::components::transfer_view::{transfer_view, TransferViewProps};
use crate::deflate;
use crate::embed_api::{self, Incoming, Outgoing, ParentOrigin, PARENT_ORIGIN_KEY};
use crate::lesson_fetch;
use crate::lesson_link;
use crate::lessons::{self, Control, Lesson, Tab, View};
use crate::line_model;
use crate::model;
use crate::source_link::Inflated;
use crate::source_link::SourceLink;
use crate::state;
use crate::state::{Action, State};
use crate::url;
use gloo::timers::callback::Timeout;
use memplay_sim::{banks, patterns, roofline};
use std::rc::Rc;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use yew::prelude::*;

/// The query of the page's address, `?` included: at start, the link the page was opened with.
fn initial_query() -> String {
    web_sys::window()
        .and_then(|window| window.location().search().ok())
        .unwrap_or_default()
}

/// The fragment of the page's address, `#` included (empty without one).
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

/// How the page's link is written into the browser's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LinkWrite {
    /// A new history entry: at the top level, for each change that settles, so Back and Forward
    /// step through the student's settings.
    Push,
    /// The current entry: for the page's first write (which only spells the opening link out)
    /// and always inside a frame, where the history is the course page's.
    Replace,
}

/// Whether the page runs inside another page's frame.
fn framed() -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    match window.top() {
        Ok(Some(top)) => !js_sys::Object::is(&top, &window),
        // A top window the page may not read is another page's.
        _ => true,
    }
}

/// Writes the page's query and fragment into its history entry, keeping the path; nothing when
/// the address already says them (after Back or Forward).
fn write_link(query: &str, fragment: Option<&str>, how: LinkWrite) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let target = link(query, fragment);
    let location = window.location();
    let current = format!(
        "{}{}",
        location.search().unwrap_or_default(),
        location.hash().unwrap_or_default()
    );
    if current == target || (current.is_empty() && target == "?") {
        return;
    }
    let Ok(history) = window.history() else {
        return;
    };
    // A failure here (say, inside a sandboxed iframe) only costs the shareable link.
    let _ = match how {
        LinkWrite::Push => history.push_state_with_url(&JsValue::NULL, "", Some(&target)),
        LinkWrite::Replace => history.replace_state_with_url(&JsValue::NULL, "", Some(&target)),
    };
}

/// Calls `on_change` with the page's new query and fragment whenever the student steps through
/// its history (Back, Forward); the returned guard stops listening.
fn listen_to_history(on_change: impl Fn(String, String) + 'static) -> impl FnOnce() {
    let closure = wasm_bindgen::closure::Closure::<dyn Fn()>::new(move || {
        on_change(initial_query(), initial_fragment());
    });
    let window = web_sys::window();
    if let Some(window) = &window {
        let _ =
            window.add_event_listener_with_callback("popstate", closure.as_ref().unchecked_ref());
    }
    move || {
        if let Some(window) = window {
            let _ = window
                .remove_event_listener_with_callback("popstate", closure.as_ref().unchecked_ref());
        }
    }
}

/// The address of the page without its query or fragment: where an embed of this view points.
fn page_address() -> String {
    let href = web_sys::window()
        .and_then(|window| window.location().href().ok())
        .unwrap_or_default();
    let end = href.find(['?', '#']).unwrap_or(href.len());
    href[..end].to_string()
}

/// A lesson the page's link names that the page does not ship: in the fragment, or at an
/// address of the page's own site.
enum LinkedLesson {
    Fragment(String),
    Address(String),
}

impl LinkedLesson {
    fn of(state: &State) -> Option<LinkedLesson> {
        match (&state.lesson_fragment, &state.lesson_url) {
            (Some(part), _) => Some(LinkedLesson::Fragment(part.clone())),
            (None, Some(address)) => Some(LinkedLesson::Address(address.clone())),
            (None, None) => None,
        }
    }

    /// Reads the lesson into the page's menu, or says why it could not.
    async fn load(self) -> Result<Lesson, String> {
        match self {
            LinkedLesson::Fragment(part) => {
                let compressed = lesson_link::payload(&part)?;
                let text = match deflate::inflate(&compressed).await {
                    Inflated::Bytes(bytes) => String::from_utf8(bytes)
                        .map_err(|_| "The lesson in this link is not text".to_string())?,
                    _ => {
                        return Err(
                            "The lesson in this link cannot be unpacked: the link may be \
                                    cut short, or this browser cannot read compressed links"
                                .to_string(),
                        )
                    }
                };
                let named = url::query_value(&initial_query(), "lesson");
                lesson_fetch::fetch_kernels(&text)
                    .await
                    .map_err(|why| format!("The lesson in this link does not read: {why}"))?;
                lessons::load(&lesson_link::lesson_key(named.as_deref()), &text)
                    .map_err(|error| format!("The lesson in this link does not read: {error}"))
            }
            LinkedLesson::Address(address) => {
                let not_loaded = |why: String| {
                    format!(
                        "The lesson {} could not be loaded: {why}",
                        crate::format::quote(&address)
                    )
                };
                let text = lesson_fetch::fetch_text(&address)
                    .await
                    .map_err(not_loaded)?;
                lesson_fetch::fetch_kernels(&text)
                    .await
                    .map_err(not_loaded)?;
                lessons::load(&lesson_link::file_key(&address), &text).map_err(|error| {
                    format!(
                        "The lesson {} does not read: {error}",
                        crate::format::quote(&address)
                    )
                })
            }
        }
    }
}

/// The page at the link `query#hash` once `lesson` is in its menu: the link's settings, on that
/// lesson where the link names no other.
fn opened_with(lesson: Lesson, query: &str, hash: &str) -> State {
    let mut opened = State::from_link(query, hash);
    if opened.variant.lesson() != lesson {
        opened.variant = lesson.first();
        opened.pattern = lesson.pattern();
    }
    opened
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

/// Starts the page once the lessons its link shows have arrived (`lesson_fetch::link_lessons`);
/// until then `index.html`'s line says memplay is starting. Where a lesson cannot arrive, that
/// line says which and why, with a link that tries again.
pub fn start() {
    let keys = lesson_fetch::link_lessons(&initial_query());
    lesson_fetch::fetch_then(
        keys,
        Box::new(|arrived| match arrived {
            Ok(()) => {
                yew::Renderer::<App>::new().render();
            }
            Err(why) => {
                let Some(document) = web_sys::window().and_then(|window| window.document()) else {
                    return;
                };
                if let Some(status) = document.get_element_by_id("boot-status") {
                    let _ = status.set_attribute("role", "alert");
                    status.set_text_content(Some(&format!("{why} ")));
                    if let Ok(again) = document.create_element("a") {
                        let _ = again.set_attribute("href", "");
                        again.set_text_content(Some("Try again"));
                        let _ = status.append_child(&again);
                    }
                }
            }
        }),
    );
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
    // Whether the page has written its link once: the first write replaces the opening entry.
    let written = use_memo((), |_| std::cell::Cell::new(false));
    // The link the page was opened with, where Reset returns; read again against a lesson the
    // link loads, once it is in the menu.
    let opening = use_mut_ref(|| (*state).clone());
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
        let written = written.clone();
        use_effect_with(
            (state.to_query(), state.link_fragment()),
            move |(query, fragment)| {
                let query = url::with_pair(query.clone(), PARENT_ORIGIN_KEY, parent_origin.value());
                let fragment = fragment.clone();
                let write = Timeout::new(LINK_SETTLE_MS, move || {
                    let how = if written.get() && !framed() {
                        LinkWrite::Push
                    } else {
                        LinkWrite::Replace
                    };
                    written.set(true);
                    write_link(&query, fragment.as_deref(), how);
                    // The query alone: an edited kernel in the fragment is the student's
                    // text, which a course page of any origin could otherwise read.
                    let shared = link(&query, None);
                    embed_api::post(&Outgoing::settings(&state, shared), &parent_origin);
                });
                move || drop(write)
            },
        );
    }
    // Back and Forward show the settings of the entry they step to.
    {
        let state = state.clone();
        use_effect_with((), move |_| {
            listen_to_history(move |query, fragment| {
                let state = state.clone();
                // The lesson the entry names is fetched first, where the page lacks it.
                let keys = lesson_fetch::link_lessons(&query);
                lesson_fetch::fetch_then(
                    keys,
                    Box::new(move |arrived| match arrived {
                        Ok(()) => state.dispatch(Action::OpenLink {
                            state: Box::new(State::from_link(&query, &fragment)),
                        }),
                        Err(note) => state.dispatch(Action::LessonNotLoaded { note }),
                    }),
                );
            })
        });
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
                    // A lesson the course page names is fetched first, where the page lacks it;
                    // the settings are then read against the page as it is by then.
                    let lesson = pairs
                        .iter()
                        .rev()
                        .find(|(key, _)| key == "lesson")
                        .map(|(_, value)| value.clone());
                    let latest = latest.clone();
                    lesson_fetch::fetch_then(
                        lesson.into_iter().collect(),
                        Box::new(move |arrived| {
                            let state = latest.borrow().clone();
                            match arrived {
                                Ok(()) => {
                                    for action in state.link_actions(&pairs) {
                                        state.dispatch(action);
                                    }
                                }
                                Err(note) => state.dispatch(Action::LessonNotLoaded { note }),
                            }
                        }),
                    );
                }
            });
            embed_api::post(&Outgoing::Ready, &parent_origin);
            move || drop(listener)
        });
    }
    // Once the page runs: the boot line goes, and a kernel in the opening link is unpacked (the
    // lesson's own kernel shows meanwhile).
    {
        let kernel = match &state.source_link {
            SourceLink::Opening { compressed, .. } => Some(compressed.clone()),
            _ => None,
        };
        let state = state.clone();
        let opening = opening.clone();
        use_effect_with((), move |_| {
            remove_boot_status();
            let linked = LinkedLesson::of(&state);
            wasm_bindgen_futures::spawn_local(async move {
                // A lesson the link names is read first, so that the link's settings, and the
                // kernel it carries, are read against it.
                if let Some(linked) = linked {
                    match linked.load().await {
                        Ok(lesson) => {
                            let opened = opened_with(lesson, &initial_query(), &initial_fragment());
                            *opening.borrow_mut() = opened.clone();
                            state.dispatch(Action::OpenLink {
                                state: Box::new(opened),
                            });
                        }
                        Err(note) => state.dispatch(Action::LessonNotLoaded { note }),
                    }
                }
                if let Some(compressed) = kernel {
                    let inflated = deflate::inflate(&compressed).await;
                    state.dispatch(Action::SharedSourceOpened { inflated });
                }
            });
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
    // The launch and its sweep go to the worker; only a change of them makes a new request.
    let (mut input, launch_errors) = state.launch_and_errors();
    let sweep_launches = state.sweep_launches(&input);
    // The launch the page shows traces one warp for the per-line view; its sweep traces none.
    input.trace = Some(line_model::trace_request(
        state.page.trace_block,
        state.page.trace_warp,
        &input,
    ));
    let launch = launch_text(&input);
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
    // What each view draws is derived only when the view is on the page: the lesson's own view
    // and the open tab. The per-line view's data serves both its first-screen drawing and its
    // tab, so it is derived at most once a render.
    let line_view_data = std::cell::OnceCell::new();
    let line_view = || {
        line_view_data
            .get_or_init(|| {
                shown.run.as_ref().and_then(|run| match &run.result {
                    Ok(report) => Some(line_model::line_view(
                        &run.input,
                        report,
                        state.page.line_site,
                        state.variant.opens_on(),
                        state.page.line_step,
                    )),
                    Err(_) => None,
                })
            })
            .clone()
    };

    let embedded = state.embed;
    // The lesson decides which settings and views the page shows.
    let lesson = state.variant.lesson();
    // A revealed answer is told to the course page: the choice, and whether the lesson marks it
    // as right.
    {
        let parent_origin = parent_origin.clone();
        use_effect_with(
            (state.page.prediction, lesson),
            move |(prediction, lesson)| {
                let choice = prediction
                    .chosen
                    .filter(|_| prediction.revealed)
                    .and_then(|index| lesson.words().question.choices.get(index));
                if let Some(choice) = choice {
                    let answered = Outgoing::Answered {
                        lesson: lesson.key().to_string(),
                        choice: choice.text.clone(),
                        correct: choice.correct,
                    };
                    embed_api::post(&answered, &parent_origin);
                }
            },
        );
    }
    // The sweep's launches, for a lesson's words about another value of the swept setting.
    let sweep_runs = shown.sweep.as_ref().map(|sweep| Rc::clone(&sweep.runs));
    let guide = {
        let (next_key, next_title) = lesson.next().unwrap_or((lesson.key(), lesson.title()));
        let next_href = if embedded {
            format!("?lesson={next_key}&embed=1")
        } else {
            format!("?lesson={next_key}")
        };
        let next_title = next_title.to_string();
        let question_launch = Rc::new(
            State {
                variant: lesson.question_variant(),
                ..(*state).clone()
            }
            .launch(),
        );
        let lesson_href = if embedded {
            format!("?lesson={}&embed=1", lesson.key())
        } else {
            format!("?lesson={}", lesson.key())
        };
        lesson_guide(&LessonGuideProps {
            lesson,
            run: shown.run.clone(),
            sweep: sweep_runs.clone(),
            question_launch,
            lesson_href,
            next_href,
            next_title,
            prediction: state.page.prediction,
            more: state.more,
            on_action: on_action.clone(),
        })
    };
    // The lesson's controls: those of its first screen, or the pattern alone above the explorer.
    let lesson_labels: Vec<(Control, String)> = Control::ALL
        .into_iter()
        .filter_map(|control| Some((control, lesson.label(control)?.to_string())))
        .collect();
    let lesson_ranges: Vec<(Control, state::NumberSetting)> = Control::ALL
        .into_iter()
        .filter(|&control| lesson.range(control).is_some())
        .filter_map(|control| Some((control, state.setting(control)?)))
        .collect();
    let controls = |shown: Vec<Control>, with_device: bool| -> Html {
        controls_view(&ControlsProps {
            device: state.device,
            pattern: state.pattern,
            element: state.element,
            host_memory: state.host_memory,
            tile: state.tile,
            block: state.block,
            pad: state.pad,
            stride: state.stride,
            regs: state.regs,
            shown,
            with_device,
            labels: lesson_labels.clone(),
            ranges: lesson_ranges.clone(),
            on_action: on_action.clone(),
        })
    };
    // One view of the lesson, drawn in the first screen when it is the lesson's own and in its
    // tab otherwise.
    let primary = lesson.view();
    let render_view = |view: View| -> Html {
        match view {
            View::LaunchForm => html! {
                <LaunchForm source={state.source().to_string()} launch={state.my_launch.clone()}
                            errors={launch_errors.clone()} on_action={on_action.clone()} />
            },
            // The access the lesson is about; the table of every access draws it only where the
            // first screen does not.
            View::Access => line_focus(&LineViewProps {
                view: line_view(),
                with_detail: true,
                on_action: on_action.clone(),
            }),
            View::Lines => line_table(&LineViewProps {
                view: line_view(),
                with_detail: primary != View::Access,
                on_action: on_action.clone(),
            }),
            View::BankMap => {
                let pattern = patterns::build(state.pattern, crate::state::pattern_params(&state));
                let report = banks::analyze(&pattern.access, &device);
                html! {
                <>
                    // The explorer's own pattern menu comes with it where it is a tab; in the
                    // first screen the lesson's controls have it.
                    if primary != View::BankMap {
                        { controls(vec![Control::Pattern], false) }
                    }
                    { bank_map(&BankMapProps {
                        device: device.clone(),
                        pattern,
                        report,
                        tile: state.tile,
                        pad: state.pad,
                        stride: state.stride,
                    }) }
                </>
                }
            }
            View::LatencyHiding => latency_view(&LatencyViewProps {
                run: shown.run.clone(),
            }),
            View::Divergence => divergence_view(&DivergenceViewProps {
                run: shown.run.clone(),
            }),
            View::Transfers => transfer_view(&TransferViewProps {
                run: shown.run.clone(),
                host_memory: state.host_memory,
                layout: state.variant.transfer_layout(state.settings()),
            }),
            View::Occupancy => {
                // The launch of the run on the page (its shared memory is the kernel's as the
                // simulation laid it out), on that run's device; before the first run comes back,
                // the launch asked for, with only its dynamic shared memory known.
                let ((resources, launch), device, kernel) = match &shown.run {
                    Some(run) => (
                        model::lesson_occupancy(&run.input, &run.result),
                        run.input.device.clone(),
                        run.input.kernel.clone(),
                    ),
                    None => (
                        model::launch_occupancy(&input),
                        device.clone(),
                        input.kernel.clone(),
                    ),
                };
                let sweeps = model::occupancy_sweeps(&device, resources);
                occupancy_view(&OccupancyViewProps {
                    device,
                    resources,
                    kernel,
                    launch,
                    sweeps,
                })
            }
            View::Roofline => {
                let outcome =
                    shown
                        .run
                        .as_ref()
                        .and_then(|run| match (&run.result, &run.prediction) {
                            (Ok(report), Some(prediction)) => Some((run, report, prediction)),
                            _ => None,
                        });
                // The kernel's point: FLOP per simulated DRAM byte. When a launch writes nothing
                // and what it reads stays in L2 between timed runs, no byte reaches DRAM; the
                // point then counts each byte once, as a cold run would fetch it.
                let simulated = outcome.and_then(|(run, report, prediction)| {
                    model::simulated_point(&run.input.kernel, report, prediction)
                });
                // The hierarchical roofline: the run's FLOPs against each level's bytes.
                let levels = outcome
                    .map(|(_, report, prediction)| roofline::hierarchical(report, prediction));
                let kernel = shown
                    .run
                    .as_ref()
                    .map_or(input.kernel.clone(), |run| run.input.kernel.clone());
                html! {
                    <>
                        { roofline_view(&RooflineViewProps {
                            device: device.clone(),
                            ceilings: roofline::ceilings(&device),
                            tile: state.tile,
                            simulated,
                        }) }
                        { roofline_levels(&RooflineLevelsProps {
                            kernel,
                            device_name: device.name.to_string(),
                            levels,
                        }) }
                    </>
                }
            }
            View::MemorySpaces => {
                // The memory spaces of the kernel that ran, with its launch's threads; before
                // the first answer, the kernel asked for and nothing listed yet.
                let (kernel, spaces_input, declarations) = match &shown.run {
                    Some(run) => (
                        run.input.kernel.clone(),
                        &run.input,
                        Some(run.declarations.clone()),
                    ),
                    None => (input.kernel.clone(), &input, None),
                };
                html! {
                    <MemorySpaces kernel={kernel} declarations={declarations}
                                  threads_per_block={spaces_input.block.count()}
                                  blocks={spaces_input.grid.count()} />
                }
            }
            View::Pitched => html! { <PitchedAllocation device={state.device} /> },
        }
    };
    // The first screen's controls; the pattern menu goes with the explorer where that is a tab.
    let first_controls: Vec<Control> = state
        .controls()
        .into_iter()
        .filter(|&control| control != Control::Pattern || primary == View::BankMap)
        .collect();
    let tabs = lesson.tabs();
    // A tab the lesson does not have (a link from another lesson) opens the kernel's.
    let tab = if tabs.contains(&state.tab) {
        state.tab
    } else {
        Tab::Kernel
    };
    let tab_panel = match tab {
        Tab::Kernel => html! {
            <KernelView
                variant={state.variant}
                source={state.source().to_string()}
                edited={state.edited_source.is_some()}
                link_status={state.source_link.status()}
                compile={state.compile}
                sanitize={state.sanitizes()}
                launch={launch.clone()}
                run={shown.run.clone()}
                progress={shown.progress}
                worker_failure={shown.worker_failure.clone()}
                cancelled={shown.cancelled}
                on_action={on_action.clone()}
            >
                if let Some(sweep) = shown.sweep.clone() {
                    { time_sweep(&TimeSweepProps {
                        setting: sweep.setting.label(),
                        points: sweep.points,
                        current: sweep.current,
                    }) }
                }
            </KernelView>
        },
        Tab::Compare => compare_view(&CompareViewProps {
            compare: state.compare,
            choices: lesson.compare_choices().to_vec(),
            own_label: state.compare_own_label(),
            other_label: compared.clone().map(|(label, _)| label),
            own: shown.run.clone(),
            other: shown.compare.clone(),
            on_action: on_action.clone(),
        }),
        Tab::View(view) => render_view(view),
        Tab::LessonFile => html! {
            <LessonFileView lesson={lesson} page={page_address()} on_action={on_action.clone()} />
        },
    };
    let covered = state.view_covered();
    let key_number = key_number(lesson, shown.run.as_deref(), !covered);
    // A click anywhere in the covered view uncovers it, after the control clicked has had the
    // click, so the student who reaches for a control of the view gets it at once. A focus does
    // not: a press's focus comes before its click, and uncovering moves the view up under it.
    let on_uncover_click = on_action.reform(|_: MouseEvent| Action::SkipPrediction);
    let on_reset = {
        let state = state.clone();
        let opening = opening.clone();
        Callback::from(move |()| {
            let to = Box::new(state.reset_target(&opening.borrow()));
            state.dispatch(Action::Reset { to });
        })
    };
    html! {
        <>
            if !embedded {
            <header class="site-header">
                <h1><a href="?" class="brand">{ "memplay" }</a></h1>
                <p class="tagline">
                    { "How one warp uses GPU memory, on devices from G80 to H100." }
                </p>
                { lesson_bar(&LessonBarProps {
                    variant: state.variant,
                    menus: true,
                    on_action: on_action.clone(),
                    on_reset: on_reset.clone(),
                }) }
            </header>
            }
            <main class={classes!(embedded.then_some("embedded"))}>
                if embedded {
                    { embed_bar(&EmbedBarProps {
                        title: lesson.title().into(),
                        full_page_href: link(&state.full_page_query(),
                                             state.link_fragment().as_deref()).into(),
                        children: lesson_bar(&LessonBarProps {
                            variant: state.variant,
                            menus: state.menus,
                            on_action: on_action.clone(),
                            on_reset: on_reset.clone(),
                        }),
                    }) }
                }
                <div class="lesson-first">
                    { guide }
                    <div class="lesson-stage">
                        { controls(first_controls, true) }
                        { notes(&NotesProps { notes: state.notes.clone() }) }
                        <section class="card lesson-view" data-testid="lesson-view"
                                 aria-label={format!("{}: {}", lesson.title(), primary.label())}>
                            <p class="key-number" data-testid="key-number" role="status">{ key_number }</p>
                            if let Some(Err(error)) = shown.run.as_ref().map(|run| &run.result) {
                                <div class="kernel-error" data-testid="lesson-error" role="alert">
                                    <p>{ error.to_string() }</p>
                                    if let Some(reason) = shown.run.as_ref().and_then(|run| model::ragged_tile_reason(&run.input, error)) {
                                        <p class="error-reason">{ reason }</p>
                                    }
                                </div>
                            }
                            if covered {
                                <p class="view-cover-note" data-testid="view-cover">
                                    { "The view below holds it too, so it is blurred until then. " }
                                    <button type="button" class="link-button" data-testid="uncover-view"
                                            onclick={on_uncover_click.clone()}>
                                        { "Show it without predicting" }
                                    </button>
                                </p>
                            }
                            // One wrapper whether covered or not, so uncovering keeps the view's
                            // elements, and the focus of the field the student clicked.
                            <div class={classes!("view-body", covered.then_some("view-covered"))}
                                 onclick={covered.then_some(on_uncover_click)}>
                                { render_view(primary) }
                            </div>
                        </section>
                    </div>
                </div>
                { tabs_view(&TabsProps { tabs, current: tab, on_action: on_action.clone() }) }
                <div class="tab-panel" id={TAB_PANEL} role="tabpanel"
                     aria-labelledby={format!("tab-{}", tab.key())}>
                    { tab_panel }
                </div>
                if !embedded {
                    <EmbedCodePanel code={state.embed_code(&page_address())}
                                    status={state.page.embed_code} on_copy={on_copy_embed} />
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
