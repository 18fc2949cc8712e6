//! The page's side of the simulation worker: what to simulate next, and what to show meanwhile.
//!
//! Every simulation runs in the worker (`memplay_web::worker`), so the page stays responsive
//! however long a kernel runs. This module is the only part of the page that knows the worker.
//! `Scheduler` is the protocol's logic, pure and tested on the host; `use_simulations` is the Yew
//! hook that connects it to the worker and to the page's renders.
//!
//! The protocol: each change of the launch is a new request with a higher sequence number, and
//! the newest request wins. The page posts one job (one launch) at a time and the next only when
//! the worker has answered: while the worker is busy with a request that a newer one superseded,
//! only the newest request waits, so a slider dragged over twenty values runs at most the value
//! in flight and the last one. An answer to a superseded request is dropped. After the launch
//! itself, the sweep's launches follow one message each, so its chart fills in point by point; a
//! point whose launch ran before (the shown launch, or the last sweep's) is not run again. A
//! launch that fails is not swept, and keeps the last good launch's sweep. Until the newest
//! request is answered, the last answered run stays on the page and `progress` says what is
//! pending.
//!
//! A job that a newer request superseded and that has run for `CANCEL_AFTER_MS` is cancelled: the
//! page terminates the worker (the only way to stop a wasm call in progress) and starts a fresh
//! one for the newest job. A worker that stops by itself (a bug in the simulator, or a module that
//! fails to load) ends the job it had with its message, shown on the page; the next job starts a
//! fresh worker, so the page never waits in vain.

use crate::components::kernel_view::{Progress, Shared, SimulationRun};
use crate::components::time_sweep::TimePoint;
use memplay_sim::simulate::{SimulationInput, SimulationReport};
use memplay_web::protocol::{Answer, FromWorker, Job, Request, Response, Sequence, SweptLaunch};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{ErrorEvent, MessageEvent};
use yew::prelude::*;

use crate::facts::{SweepRun, SweepRuns};
pub use crate::lessons::SweepLaunches;
use crate::lessons::SweepSetting;

/// The sweep chart's data: the predicted time at each value, `None` while it is being simulated.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepView {
    pub setting: SweepSetting,
    pub current: u32,
    pub points: Vec<TimePoint>,
    /// The launch at each point and, once it ran, its report and prediction: the numbers a
    /// lesson's words name at another value of the swept setting come from these. Shared, so
    /// the lesson's words take them without a copy.
    pub runs: Rc<SweepRuns>,
}

/// What the page shows of the simulations.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Shown {
    /// The newest run the worker answered; `None` until the first answer.
    pub run: Option<Shared<SimulationRun>>,
    /// The sweep of the newest launch that ran without an error.
    pub sweep: Option<SweepView>,
    /// What the newest request still waits for; `None` when it is complete.
    pub progress: Option<Progress>,
    /// Why the simulation worker stopped, if it stopped during a job whose request is still
    /// shown; cleared by the next launch that runs.
    pub worker_failure: Option<String>,
    /// How many superseded jobs were cancelled by terminating the worker.
    pub cancelled: u32,
    /// The run the shown one is compared with, when the newest request asks for a comparison
    /// and the worker has answered it.
    pub compare: Option<Shared<SimulationRun>>,
}

/// The newest request and how far it has come.
#[derive(Debug)]
struct Wanted {
    seq: Sequence,
    launch: SimulationInput,
    /// The launch to compare with, if any; it runs after the launch, before the sweep.
    compare: Option<SimulationInput>,
    /// Whether the worker has answered the comparison (or there is none to run).
    compared: bool,
    sweep: SweepLaunches,
    /// Whether the worker has answered the launch.
    launched: bool,
    /// Whether the launch ran and its sweep (the scheduler's `sweep`) is being filled in.
    sweeping: bool,
}

/// Decides what the worker runs next and keeps what the page shows. Pure: it returns the request
/// to post, and the caller posts it.
#[derive(Debug, Default)]
pub struct Scheduler {
    newest: Sequence,
    wanted: Option<Wanted>,
    /// The job with the worker, if any (at most one ever is).
    in_flight: Option<InFlight>,
    /// Predicted times of launches that ran, with their reports: the shown launch and its
    /// sweep's.
    known: Vec<Known>,
    run: Option<Shared<SimulationRun>>,
    sweep: Option<SweepView>,
    worker_failure: Option<String>,
    cancelled: u32,
    compare: Option<Shared<SimulationRun>>,
}

/// A launch that ran: its input, its predicted time or why it did not run, and its report.
type Known = (
    SimulationInput,
    Result<f64, String>,
    Option<Rc<SweptLaunch>>,
);

/// The job with the worker: its request's number and which of its jobs it is.
#[derive(Clone, Copy, Debug, PartialEq)]
struct InFlight {
    seq: Sequence,
    job: JobKind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum JobKind {
    Launch,
    Compare,
    SweepPoint(usize),
}

impl Scheduler {
    /// A new setting: `launch` and its sweep supersede every earlier request. Returns the job to
    /// post now, if the worker is idle.
    #[cfg(test)]
    pub fn want(&mut self, launch: SimulationInput, sweep: SweepLaunches) -> Option<Request> {
        self.want_compared(launch, None, sweep)
    }

    /// `want`, with a launch to compare the launch with: it runs after the launch and before the
    /// sweep, and shows beside it.
    pub fn want_compared(
        &mut self,
        launch: SimulationInput,
        compare: Option<SimulationInput>,
        sweep: SweepLaunches,
    ) -> Option<Request> {
        let same = self.wanted.as_ref().is_some_and(|wanted| {
            wanted.launch == launch && wanted.compare == compare && wanted.sweep == sweep
        });
        if !same {
            self.newest += 1;
            // A comparison with the same launch as the one shown is kept; any other goes.
            if self
                .compare
                .as_ref()
                .is_some_and(|run| Some(&run.input) != compare.as_ref())
            {
                self.compare = None;
            }
            // A comparison already shown is not run again.
            let compared = compare.is_none() || self.compare.is_some();
            self.wanted = Some(Wanted {
                seq: self.newest,
                launch,
                compared,
                compare,
                sweep,
                launched: false,
                sweeping: false,
            });
        }
        self.next_job()
    }

    /// The worker's answer to the job in flight. Returns the job to post next, if any.
    pub fn receive(&mut self, response: Response) -> Option<Request> {
        self.in_flight = None;
        let current = self
            .wanted
            .as_ref()
            .is_some_and(|wanted| wanted.seq == response.seq);
        // An answer to a superseded request is dropped: the newest request's job goes next.
        if current {
            match response.answer {
                Answer::Launch(outcome) => self.launched(*outcome),
                Answer::Compare(outcome) => self.compared(*outcome),
                Answer::SweepPoint {
                    index,
                    time_ms,
                    launch,
                } => self.swept(index, time_ms, launch.map(|launch| Rc::new(*launch))),
            }
        }
        self.next_job()
    }

    /// The launch of the newest request ran (or failed): show it, and start its sweep if it ran.
    fn launched(&mut self, outcome: memplay_web::protocol::Outcome) {
        let Some(wanted) = self.wanted.as_mut() else {
            return;
        };
        wanted.launched = true;
        self.worker_failure = None;
        let swept = match (&outcome.result, &outcome.prediction) {
            (Ok(report), Some(prediction)) => Some(Rc::new(SweptLaunch {
                report: SimulationReport {
                    trace: None,
                    ..report.clone()
                },
                prediction: prediction.clone(),
            })),
            _ => None,
        };
        self.run = Some(Shared::new(SimulationRun {
            input: wanted.launch.clone(),
            result: outcome.result,
            prediction: outcome.prediction,
            elapsed_ms: outcome.elapsed_ms,
            declarations: outcome.declarations,
        }));
        // A launch that fails is not swept: its sweep would fail the same way, several times
        // over. The last good launch's sweep and times stay.
        let Some(swept) = swept else {
            return;
        };
        let time_ms = swept.prediction.time_ms;
        // The sweep's launches trace no warp, and a trace changes no time: the launch counts as
        // the sweep's point at its value without its trace.
        let untraced = SimulationInput {
            trace: None,
            sanitizer: Default::default(),
            ..wanted.launch.clone()
        };
        self.known.retain(|(input, _, _)| *input != untraced);
        self.known.push((untraced, Ok(time_ms), Some(swept)));
        let known = &self.known;
        let found = |input: &SimulationInput| {
            known
                .iter()
                .find(|(known_input, _, _)| known_input == input)
        };
        let points = wanted
            .sweep
            .launches
            .iter()
            .map(|(value, input)| TimePoint {
                value: *value,
                time_ms: found(input).map(|(_, time, _)| time.clone()),
            })
            .collect();
        let runs = wanted
            .sweep
            .launches
            .iter()
            .map(|(value, input)| {
                let known = found(input);
                SweepRun {
                    value: *value,
                    input: input.clone(),
                    launch: known.and_then(|(_, _, launch)| launch.clone()),
                    failed: known.is_some_and(|(_, time, _)| time.is_err()),
                }
            })
            .collect();
        // Only this sweep's times can be used again (moving along the swept setting); the rest
        // are forgotten, so what is kept stays as small as one sweep.
        let launches = &wanted.sweep.launches;
        self.known
            .retain(|(input, _, _)| launches.iter().any(|(_, launch)| launch == input));
        self.sweep = Some(SweepView {
            setting: wanted.sweep.setting,
            current: wanted.sweep.current,
            points,
            runs: Rc::new(SweepRuns {
                setting: wanted.sweep.setting,
                runs,
            }),
        });
        wanted.sweeping = true;
    }

    /// One point of the newest request's sweep ran.
    fn compared(&mut self, outcome: memplay_web::protocol::Outcome) {
        let Some(wanted) = self.wanted.as_mut() else {
            return;
        };
        wanted.compared = true;
        if let Some(input) = wanted.compare.clone() {
            self.compare = Some(Shared::new(SimulationRun {
                input,
                result: outcome.result,
                prediction: outcome.prediction,
                elapsed_ms: outcome.elapsed_ms,
                declarations: outcome.declarations,
            }));
        }
    }

    fn swept(
        &mut self,
        index: usize,
        time_ms: Result<f64, String>,
        launch: Option<Rc<SweptLaunch>>,
    ) {
        let (Some(wanted), Some(sweep)) = (self.wanted.as_ref(), self.sweep.as_mut()) else {
            return;
        };
        let (Some((_, input)), Some(point)) = (
            wanted.sweep.launches.get(index),
            sweep.points.get_mut(index),
        ) else {
            return;
        };
        if wanted.sweeping {
            point.time_ms = Some(time_ms.clone());
            if let Some(run) = Rc::make_mut(&mut sweep.runs).runs.get_mut(index) {
                run.launch = launch.clone();
                run.failed = time_ms.is_err();
            }
            self.known.push((input.clone(), time_ms, launch));
        }
    }

    /// The newest request's next job, unless the worker is busy or the request is complete.
    fn next_job(&mut self) -> Option<Request> {
        if self.in_flight.is_some() {
            return None;
        }
        let wanted = self.wanted.as_ref()?;
        let job = if !wanted.launched {
            Job::Launch(wanted.launch.clone())
        } else if wanted.sweeping && !wanted.compared {
            Job::Compare(wanted.compare.clone()?)
        } else if wanted.sweeping {
            let index = self
                .sweep
                .as_ref()?
                .points
                .iter()
                .position(|point| point.time_ms.is_none())?;
            Job::SweepPoint {
                index,
                input: wanted.sweep.launches.get(index)?.1.clone(),
            }
        } else {
            return None;
        };
        self.in_flight = Some(InFlight {
            seq: wanted.seq,
            job: match &job {
                Job::Launch(_) => JobKind::Launch,
                Job::Compare(_) => JobKind::Compare,
                Job::SweepPoint { index, .. } => JobKind::SweepPoint(*index),
            },
        });
        Some(Request {
            seq: wanted.seq,
            job,
        })
    }

    /// Whether the job with the worker belongs to a request that a newer one superseded.
    pub fn in_flight_is_superseded(&self) -> bool {
        self.in_flight
            .is_some_and(|in_flight| in_flight.seq != self.newest)
    }

    /// The worker was terminated while it ran a superseded job. Returns the job to post next, to
    /// a fresh worker.
    pub fn cancelled_in_flight(&mut self) -> Option<Request> {
        if self.in_flight.take().is_some() {
            self.cancelled += 1;
        }
        self.next_job()
    }

    /// The worker stopped by itself (`message` says why) during the job in flight, if any. A job
    /// of the newest request ends with the failure: a launch is shown as not run, a sweep point
    /// as failed, so no job is tried twice. Returns the job to post next, to a fresh worker.
    pub fn worker_failed(&mut self, message: String) -> Option<Request> {
        let in_flight = self.in_flight.take();
        // A superseded job's failure is not shown: what the page shows next is the newest
        // request's, which a fresh worker runs.
        if in_flight.is_none_or(|in_flight| in_flight.seq == self.newest) {
            self.worker_failure = Some(message.clone());
        }
        if let (Some(in_flight), Some(wanted)) = (in_flight, self.wanted.as_mut()) {
            if in_flight.seq == wanted.seq {
                match in_flight.job {
                    JobKind::Launch => wanted.launched = true,
                    JobKind::Compare => wanted.compared = true,
                    JobKind::SweepPoint(index) => {
                        if let Some(sweep) = self.sweep.as_mut() {
                            if let Some(point) = sweep.points.get_mut(index) {
                                point.time_ms = Some(Err(message));
                            }
                            if let Some(run) = Rc::make_mut(&mut sweep.runs).runs.get_mut(index) {
                                run.failed = true;
                            }
                        }
                    }
                }
            }
        }
        self.next_job()
    }

    /// What the newest request still waits for.
    pub fn progress(&self) -> Option<Progress> {
        let wanted = self.wanted.as_ref()?;
        if !wanted.launched {
            return Some(Progress::Launch);
        }
        if wanted.sweeping && !wanted.compared {
            return Some(Progress::Compare);
        }
        let points = &self.sweep.as_ref().filter(|_| wanted.sweeping)?.points;
        let done = points
            .iter()
            .filter(|point| point.time_ms.is_some())
            .count();
        (done < points.len()).then_some(Progress::Sweep {
            done,
            total: points.len(),
        })
    }

    /// What the page shows now.
    pub fn shown(&self) -> Shown {
        Shown {
            run: self.run.clone(),
            sweep: self.sweep.clone(),
            progress: self.progress(),
            worker_failure: self.worker_failure.clone(),
            cancelled: self.cancelled,
            compare: self.compare.clone(),
        }
    }
}

/// The worker's handle, once the first request has started it.
/// How long a superseded job may run before the worker is terminated to stop it. Starting a fresh
/// worker costs about as long (its module is compiled again, from the browser's cache), so a job
/// that would end sooner is left to end, and a slider dragged over quick launches never restarts
/// the worker.
pub const CANCEL_AFTER_MS: f64 = 200.0;

/// The page's simulation worker: a `web_sys::Worker` running the page's own module
/// (`www/worker.js`), and its handlers, which live as long as it does.
struct SimulationWorker {
    worker: web_sys::Worker,
    /// Whether the worker said it is ready; until then the one job waits in `waiting`.
    ready: bool,
    waiting: Option<Request>,
    /// When the job in flight was posted, by the page's clock.
    posted_ms: f64,
    _on_message: Closure<dyn Fn(MessageEvent)>,
    _on_error: Closure<dyn Fn(ErrorEvent)>,
}

impl std::fmt::Debug for SimulationWorker {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SimulationWorker")
            .field("ready", &self.ready)
            .field("posted_ms", &self.posted_ms)
            .finish_non_exhaustive()
    }
}

impl Drop for SimulationWorker {
    fn drop(&mut self) {
        // A dropped worker is stopped at once, whatever it is running, and its handlers go.
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.terminate();
    }
}

/// What the page's side of the worker shares between its handlers and its renders.
#[derive(Clone)]
struct Connection {
    scheduler: Rc<RefCell<Scheduler>>,
    worker: Rc<RefCell<Option<SimulationWorker>>>,
    /// Whether a timer will check the superseded job again.
    check_pending: Rc<RefCell<bool>>,
    rerender: UseForceUpdateHandle,
}

/// What happened to the worker, as its handlers report it.
enum WorkerEvent {
    Message(MessageEvent),
    Error(String),
}

/// The page's clock, in milliseconds.
fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|window| window.performance())
        .map_or(0.0, |performance| performance.now())
}

/// The worker's name, which tells `www/worker.js` the page's module: the module's JS and wasm
/// files, as www/boot.js loaded them (the data attributes Trunk.toml's pattern_script writes). A
/// name rather than the script's query, because a service worker may answer the script from its
/// cache under the URL without the query.
fn worker_name() -> Result<String, String> {
    let script = gloo::utils::document()
        .query_selector("script[data-memplay-js]")
        .ok()
        .flatten()
        .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok())
        .ok_or("the page has no script element naming its module")?;
    let data = script.dataset();
    let (Some(js), Some(wasm)) = (data.get("memplayJs"), data.get("memplayWasm")) else {
        return Err("the page's script element does not name its module's files".to_string());
    };
    Ok(format!(
        "{{\"js\":{},\"wasm\":{}}}",
        json_string(&js),
        json_string(&wasm)
    ))
}

/// `text` as a JSON string literal. Written out rather than by serde_json, whose error type and
/// its messages the page would otherwise link for this alone.
fn json_string(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                quoted.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

impl Connection {
    /// Posts `request` to the worker, starting a fresh one if there is none.
    fn post(&self, request: Option<Request>) {
        let Some(request) = request else {
            return;
        };
        let mut slot = self.worker.borrow_mut();
        if slot.is_none() {
            match self.spawn() {
                Ok(worker) => *slot = Some(worker),
                Err(message) => {
                    drop(slot);
                    // A worker that cannot be created fails every job the same way: each job
                    // of the request ends with the message, and the page waits for no answer.
                    let mut scheduler = self.scheduler.borrow_mut();
                    while scheduler.worker_failed(message.clone()).is_some() {}
                    return;
                }
            }
        }
        let Some(worker) = slot.as_mut() else {
            return;
        };
        worker.posted_ms = now_ms();
        if worker.ready {
            send(&worker.worker, &request);
        } else {
            worker.waiting = Some(request);
        }
    }

    fn spawn(&self) -> Result<SimulationWorker, String> {
        let options = web_sys::WorkerOptions::new();
        options.set_type(web_sys::WorkerType::Module);
        options.set_name(&worker_name()?);
        let worker = web_sys::Worker::new_with_options(memplay_web::worker::SCRIPT, &options)
            .map_err(|error| format!("the simulation worker could not be created ({error:?})"))?;
        let on_message = {
            let connection = self.clone();
            Closure::<dyn Fn(MessageEvent)>::new(move |event| {
                connection.handle(WorkerEvent::Message(event));
            })
        };
        let on_error = {
            let connection = self.clone();
            Closure::<dyn Fn(ErrorEvent)>::new(move |event: ErrorEvent| {
                // The event does not travel further: the page reports it itself.
                event.prevent_default();
                let message = event.message();
                connection.handle(WorkerEvent::Error(if message.is_empty() {
                    "the simulation worker stopped".to_string()
                } else {
                    format!("the simulation worker stopped: {message}")
                }));
            })
        };
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(SimulationWorker {
            worker,
            ready: false,
            waiting: None,
            posted_ms: 0.0,
            _on_message: on_message,
            _on_error: on_error,
        })
    }

    fn handle(&self, event: WorkerEvent) {
        let next = match event {
            WorkerEvent::Message(event) => {
                let data = event.data();
                if let Some(text) = data.as_string() {
                    // www/worker.js could not load the module.
                    self.failed(text)
                } else {
                    let bytes = js_sys::Uint8Array::new(&data).to_vec();
                    match memplay_web::protocol::decode::<FromWorker>(&bytes) {
                        Ok(FromWorker::Ready) => {
                            if let Some(worker) = self.worker.borrow_mut().as_mut() {
                                worker.ready = true;
                                if let Some(request) = worker.waiting.take() {
                                    send(&worker.worker, &request);
                                }
                            }
                            None
                        }
                        Ok(FromWorker::Answer(response)) => {
                            self.scheduler.borrow_mut().receive(response)
                        }
                        Err(error) => self.failed(error.to_string()),
                    }
                }
            }
            WorkerEvent::Error(message) => self.failed(message),
        };
        self.post(next);
        self.watch_superseded();
        self.rerender.force_update();
    }

    /// The worker stopped or cannot work: it is dropped (terminated), and the scheduler decides
    /// what the job in flight shows.
    fn failed(&self, message: String) -> Option<Request> {
        self.worker.borrow_mut().take();
        self.scheduler.borrow_mut().worker_failed(message)
    }

    /// If the job in flight is superseded, terminates the worker once the job has run for
    /// `CANCEL_AFTER_MS`, checked now and again when that time comes.
    fn watch_superseded(&self) {
        if !self.scheduler.borrow().in_flight_is_superseded() {
            return;
        }
        let Some(posted_ms) = self.worker.borrow().as_ref().map(|worker| worker.posted_ms) else {
            return;
        };
        let waited = now_ms() - posted_ms;
        if waited >= CANCEL_AFTER_MS {
            self.worker.borrow_mut().take();
            let next = self.scheduler.borrow_mut().cancelled_in_flight();
            self.post(next);
            self.rerender.force_update();
        } else if !*self.check_pending.borrow() {
            let connection = self.clone();
            // A one-shot callback, freed once it has run; whole milliseconds, rounded up, so the
            // check never comes early.
            let check = Closure::once_into_js(move || {
                *connection.check_pending.borrow_mut() = false;
                connection.watch_superseded();
            });
            let delay = (CANCEL_AFTER_MS - waited).ceil() as i32;
            let armed = web_sys::window().is_some_and(|window| {
                window
                    .set_timeout_with_callback_and_timeout_and_arguments_0(
                        check.unchecked_ref(),
                        delay,
                    )
                    .is_ok()
            });
            *self.check_pending.borrow_mut() = armed;
        }
    }
}

fn send(worker: &web_sys::Worker, request: &Request) {
    let bytes = js_sys::Uint8Array::from(memplay_web::protocol::encode(request).as_slice());
    // Posting fails only for values that cannot be cloned, and bytes always can.
    let _ = worker.post_message(&bytes);
}

#[hook]
pub fn use_simulations(
    launch: SimulationInput,
    compare: Option<SimulationInput>,
    sweep: SweepLaunches,
) -> Shown {
    let scheduler = use_mut_ref(Scheduler::default);
    let worker = use_mut_ref(|| None);
    let check_pending = use_mut_ref(|| false);
    let rerender = use_force_update();
    let connection = Connection {
        scheduler: scheduler.clone(),
        worker,
        check_pending,
        rerender,
    };
    use_effect_with((launch, compare, sweep), move |(launch, compare, sweep)| {
        let request = connection.scheduler.borrow_mut().want_compared(
            launch.clone(),
            compare.clone(),
            sweep.clone(),
        );
        connection.post(request);
        connection.watch_superseded();
        connection.rerender.force_update();
    });
    let shown = scheduler.borrow().shown();
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::State;
    use memplay_sim::kernel::Span;
    use memplay_sim::simulate::SimulationError;
    use memplay_web::protocol::{respond, Outcome};

    #[test]
    fn a_json_string_reads_back_as_the_text_it_quotes() {
        for text in [
            "memplay-web-ee66cf1732d93652.js",
            "a \"quoted\" name",
            "back\\slash",
            "line\nbreak, tab\t and bell\u{7}",
            "caf\u{e9} \u{1f680}",
            "",
        ] {
            let quoted = json_string(text);
            let read: String = serde_json::from_str(&quoted).expect("valid JSON");
            assert_eq!(read, text, "{quoted}");
        }
    }

    /// The launch and the tile-width sweep of the tiled matmul lesson at `tile`.
    fn request_at(tile: u32, source: Option<&str>) -> (SimulationInput, SweepLaunches) {
        let state = State {
            variant: crate::lessons::variant("tiled-matmul", "tiled"),
            tile,
            edited_source: source.map(str::to_string),
            ..State::default()
        };
        let sweep = state.variant.sweep();
        let launches = [8, 16]
            .into_iter()
            .map(|value| {
                let at = sweep.with(state.settings(), value);
                (value, state.variant.launch(at, state.source()))
            })
            .collect();
        (
            state.launch(),
            SweepLaunches {
                setting: sweep,
                current: tile,
                launches,
            },
        )
    }

    /// An answer without simulating: a launch that spent its budget, or a sweep point of 2 ms.
    fn quick_answer(request: &Request) -> Response {
        let answer = match &request.job {
            Job::Launch(_) | Job::Compare(_) => Answer::Launch(Box::new(Outcome {
                result: Err(SimulationError::StepBudget {
                    steps: 2,
                    budget: 1,
                    span: Span::default(),
                }),
                prediction: None,
                elapsed_ms: 1.0,
                declarations: Ok(Vec::new()),
            })),
            Job::SweepPoint { index, .. } => Answer::SweepPoint {
                index: *index,
                time_ms: Ok(2.0),
                launch: None,
            },
        };
        Response {
            seq: request.seq,
            answer,
        }
    }

    /// Runs every job the scheduler asks for through the real simulator until it asks for none,
    /// and returns the jobs, as (sequence, "launch" or the sweep's index).
    fn run_to_the_end(scheduler: &mut Scheduler, first: Option<Request>) -> Vec<(u64, String)> {
        let mut jobs = Vec::new();
        let mut next = first;
        while let Some(request) = next {
            jobs.push((
                request.seq,
                match &request.job {
                    Job::Launch(_) => "launch".to_string(),
                    Job::Compare(_) => "compare".to_string(),
                    Job::SweepPoint { index, .. } => format!("point {index}"),
                },
            ));
            next = scheduler.receive(respond(request, || 0.0));
        }
        jobs
    }

    fn jobs(list: &[(u64, &str)]) -> Vec<(u64, String)> {
        list.iter()
            .map(|(seq, job)| (*seq, job.to_string()))
            .collect()
    }

    #[test]
    fn a_launch_runs_first_and_its_sweep_fills_in_after_it_reusing_the_launch_itself() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        let first = scheduler.want(launch, sweep);
        assert_eq!(scheduler.progress(), Some(Progress::Launch));
        // The launch at tile 16 is the sweep's second point: only the first one runs.
        assert_eq!(
            run_to_the_end(&mut scheduler, first),
            jobs(&[(1, "launch"), (1, "point 0")])
        );
        let shown = scheduler.shown();
        assert_eq!(shown.progress, None);
        let run = shown.run.expect("the launch is shown");
        assert!(run.result.is_ok());
        let sweep = shown.sweep.expect("the sweep is shown");
        assert_eq!(sweep.current, 16);
        assert!(sweep
            .points
            .iter()
            .all(|point| matches!(point.time_ms, Some(Ok(_)))));
        let launch_time = run.prediction.as_ref().expect("a prediction").time_ms;
        assert_eq!(sweep.points[1].time_ms, Some(Ok(launch_time)));
    }

    #[test]
    fn the_launch_with_its_warp_trace_still_stands_for_its_sweep_point() {
        let mut scheduler = Scheduler::default();
        let (mut launch, sweep) = request_at(16, None);
        launch.trace = Some(memplay_sim::trace::TraceRequest {
            block: [1, 0, 0],
            warp: 2,
        });
        let first = scheduler.want(launch, sweep);
        assert_eq!(
            run_to_the_end(&mut scheduler, first),
            jobs(&[(1, "launch"), (1, "point 0")])
        );
    }

    #[test]
    fn requests_made_while_the_worker_is_busy_coalesce_to_the_newest() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        let in_flight = scheduler.want(launch, sweep).expect("the worker is idle");
        // A slider moves over three more values while the first launch runs: nothing is posted.
        for tile in [17, 18, 8] {
            let (launch, sweep) = request_at(tile, None);
            assert_eq!(scheduler.want(launch, sweep), None);
            assert_eq!(scheduler.progress(), Some(Progress::Launch));
        }
        // The first answer is stale and dropped; the newest request (tile 8, number 4) goes next.
        let next = scheduler.receive(quick_answer(&in_flight));
        assert!(
            scheduler.shown().run.is_none(),
            "a stale answer is not shown"
        );
        let (newest, _) = request_at(8, None);
        assert_eq!(
            next,
            Some(Request {
                seq: 4,
                job: Job::Launch(newest),
            })
        );
        assert_eq!(
            run_to_the_end(&mut scheduler, next),
            jobs(&[(4, "launch"), (4, "point 1")])
        );
    }

    #[test]
    fn moving_along_the_swept_setting_runs_no_sweep_point_again() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        let first = scheduler.want(launch, sweep);
        run_to_the_end(&mut scheduler, first);
        let (launch, sweep) = request_at(8, None);
        let second = scheduler.want(launch, sweep);
        assert_eq!(
            run_to_the_end(&mut scheduler, second),
            jobs(&[(2, "launch")])
        );
        assert_eq!(scheduler.shown().sweep.map(|sweep| sweep.current), Some(8));
    }

    #[test]
    fn a_kernel_error_keeps_the_last_good_sweep_and_the_fix_reuses_it() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        let first = scheduler.want(launch, sweep);
        run_to_the_end(&mut scheduler, first);
        let good_sweep = scheduler.shown().sweep;

        let (broken, sweep) = request_at(16, Some("__global__ void mm_tiled() { m; }"));
        let second = scheduler.want(broken, sweep);
        assert_eq!(
            run_to_the_end(&mut scheduler, second),
            jobs(&[(2, "launch")])
        );
        let shown = scheduler.shown();
        assert!(shown.run.is_some_and(|run| run.result.is_err()));
        assert_eq!(shown.sweep, good_sweep);
        assert_eq!(shown.progress, None);

        let (launch, sweep) = request_at(16, None);
        let third = scheduler.want(launch, sweep);
        assert_eq!(
            run_to_the_end(&mut scheduler, third),
            jobs(&[(3, "launch")])
        );
        assert_eq!(scheduler.shown().sweep, good_sweep);
    }

    #[test]
    fn a_newer_request_during_the_sweep_drops_the_rest_of_the_old_sweep() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        let first = scheduler.want(launch, sweep).expect("the worker is idle");
        let point = scheduler
            .receive(respond(first, || 0.0))
            .expect("the sweep's first point follows");
        assert_eq!(
            scheduler.progress(),
            Some(Progress::Sweep { done: 1, total: 2 })
        );
        let (launch, sweep) = request_at(16, Some("__global__ void mm_tiled() { m; }"));
        assert_eq!(scheduler.want(launch, sweep), None);
        // The old sweep's point comes back and is dropped; the new launch goes next.
        let next = scheduler.receive(quick_answer(&point));
        assert!(matches!(
            next,
            Some(Request {
                seq: 2,
                job: Job::Launch(_)
            })
        ));
        assert_eq!(scheduler.progress(), Some(Progress::Launch));
    }

    #[test]
    fn asking_again_for_the_request_in_flight_posts_nothing_more() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        assert!(scheduler.want(launch.clone(), sweep.clone()).is_some());
        assert_eq!(scheduler.want(launch, sweep), None);
    }

    #[test]
    fn a_superseded_job_is_cancelled_and_the_newest_job_goes_to_a_fresh_worker() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        scheduler.want(launch, sweep).expect("the worker is idle");
        assert!(!scheduler.in_flight_is_superseded());
        let (launch, sweep) = request_at(8, None);
        assert_eq!(scheduler.want(launch.clone(), sweep), None);
        assert!(scheduler.in_flight_is_superseded());
        let next = scheduler.cancelled_in_flight();
        assert_eq!(
            next,
            Some(Request {
                seq: 2,
                job: Job::Launch(launch),
            })
        );
        assert_eq!(scheduler.shown().cancelled, 1);
        assert!(!scheduler.in_flight_is_superseded());
        assert_eq!(
            run_to_the_end(&mut scheduler, next),
            jobs(&[(2, "launch"), (2, "point 1")])
        );
    }

    #[test]
    fn a_worker_that_stops_during_the_launch_ends_it_with_its_message_and_tries_nothing_twice() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        scheduler.want(launch, sweep).expect("the worker is idle");
        let next = scheduler.worker_failed("the simulation worker stopped: unreachable".into());
        assert_eq!(next, None, "a failed launch is not swept");
        let shown = scheduler.shown();
        assert_eq!(shown.progress, None, "nothing is pending any more");
        assert_eq!(
            shown.worker_failure.as_deref(),
            Some("the simulation worker stopped: unreachable")
        );
        // The next setting runs again, and its launch clears the message.
        let (launch, sweep) = request_at(8, None);
        let next = scheduler.want(launch, sweep);
        run_to_the_end(&mut scheduler, next);
        assert_eq!(scheduler.shown().worker_failure, None);
    }

    #[test]
    fn a_worker_that_stops_during_a_sweep_point_fails_that_point_and_the_sweep_goes_on() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        let first = scheduler.want(launch, sweep).expect("the worker is idle");
        let point = scheduler
            .receive(respond(first, || 0.0))
            .expect("the sweep's first point follows");
        assert!(matches!(point.job, Job::SweepPoint { index: 0, .. }));
        assert_eq!(scheduler.worker_failed("stopped".into()), None);
        let sweep = scheduler.shown().sweep.expect("the sweep is shown");
        assert_eq!(sweep.points[0].time_ms, Some(Err("stopped".to_string())));
        assert!(matches!(sweep.points[1].time_ms, Some(Ok(_))));
        assert_eq!(scheduler.progress(), None);
    }

    #[test]
    fn a_superseded_jobs_failure_is_not_shown_and_the_newest_job_goes_next() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        scheduler.want(launch, sweep).expect("the worker is idle");
        let (launch, sweep) = request_at(8, None);
        assert_eq!(scheduler.want(launch, sweep), None);
        let next = scheduler.worker_failed("stopped".into());
        assert!(matches!(
            next,
            Some(Request {
                seq: 2,
                job: Job::Launch(_)
            })
        ));
        assert_eq!(scheduler.shown().worker_failure, None);
    }

    #[test]
    fn a_comparison_runs_after_the_launch_and_before_the_sweep_and_is_kept_while_it_stands() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        let (partner, _) = request_at(8, None);
        let first = scheduler.want_compared(launch.clone(), Some(partner.clone()), sweep.clone());
        assert_eq!(
            run_to_the_end(&mut scheduler, first),
            jobs(&[(1, "launch"), (1, "compare"), (1, "point 0")])
        );
        let compare = scheduler.shown().compare.expect("the comparison is shown");
        assert_eq!(compare.input, partner);
        assert!(compare.result.is_ok());
        // Another setting of the page's launch with the same comparison reruns only the launch.
        let (other, sweep) = request_at(8, None);
        let second = scheduler.want_compared(other, Some(partner), sweep);
        assert_eq!(
            run_to_the_end(&mut scheduler, second),
            jobs(&[(2, "launch")])
        );
        // No comparison any more: none is shown.
        let (launch, sweep) = request_at(16, None);
        let third = scheduler.want_compared(launch, None, sweep);
        run_to_the_end(&mut scheduler, third);
        assert_eq!(scheduler.shown().compare, None);
    }
}
