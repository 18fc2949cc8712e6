//! The simulation worker: a Web Worker that runs every simulation of the page, so that a long
//! kernel (up to the step budget, a second or more) never blocks the page's main thread.
//!
//! It is a gloo-worker actor with no state of its own: each request is answered with
//! `protocol::respond`, timed with the worker's own `performance.now()`. The page decides what to
//! run next; see `bridge` in the page. The worker is its own wasm module, the binary
//! `memplay-worker`, started by the page from the loader script Trunk writes beside it.

use crate::protocol::{self, Request, Response};
use gloo::worker::{HandlerId, Registrable, Worker, WorkerScope};
use wasm_bindgen::{JsCast, JsValue};

/// The file the page starts the worker from: Trunk's loader shim for the `memplay-worker` binary
/// (`data-loader-shim` in index.html), next to the page. A worker from a file of the page's own
/// origin is what a `worker-src 'self'` policy allows, unlike gloo's default `blob:` worker.
pub const LOADER: &str = "memplay-worker_loader.js";

/// The worker's side: every request is simulated as it arrives and answered to its sender.
#[derive(Debug)]
pub struct SimulationWorker;

impl Worker for SimulationWorker {
    type Message = ();
    type Input = Request;
    type Output = Response;

    fn create(_scope: &WorkerScope<Self>) -> SimulationWorker {
        SimulationWorker
    }

    fn update(&mut self, _scope: &WorkerScope<Self>, _message: ()) {}

    fn received(&mut self, scope: &WorkerScope<Self>, request: Request, sender: HandlerId) {
        scope.respond(sender, protocol::respond(request, now_ms));
    }
}

/// Milliseconds from the worker's clock; 0 where there is none.
fn now_ms() -> f64 {
    js_sys::global()
        .dyn_into::<web_sys::WorkerGlobalScope>()
        .ok()
        .and_then(|scope| scope.performance())
        .map_or(0.0, |performance| performance.now())
}

/// Starts the worker: a panic is logged to the console (the page then waits in vain, but sees
/// why in the console), and requests are answered from now on.
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        let message = format!("the memplay simulation worker stopped because of a bug: {info}");
        web_sys::console::error_1(&JsValue::from_str(&message));
    }));
    SimulationWorker::registrar().register();
}
