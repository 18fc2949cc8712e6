//! The simulation worker: a Web Worker that runs every simulation of the page, so that a long
//! kernel (up to the step budget, a second or more) never blocks the page's main thread.
//!
//! The worker runs the page's own wasm module: `www/worker.js` imports the module's JS and wasm
//! (the page names both files in the worker's name), and the module's `main` calls `start` when it
//! finds itself in a worker instead of a window. One module for both saves a visitor the download
//! of a second copy of the simulator's and the standard library's code.
//!
//! The worker has no state of its own: each request is answered with `protocol::respond`, timed
//! with the worker's own `performance.now()`. The page decides what to run next and stops the
//! worker when a newer request supersedes a long job; see `bridge` in the page.

use crate::protocol::{self, FromWorker, Request};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

/// The script the page starts the worker from, next to the page (copied by index.html). A worker
/// from a file of the page's own origin is what a `worker-src 'self'` policy allows.
pub const SCRIPT: &str = "worker.js";

/// Whether this module runs in a dedicated worker (the simulation worker) rather than a window.
pub fn in_worker() -> bool {
    js_sys::global().is_instance_of::<DedicatedWorkerGlobalScope>()
}

/// Starts answering requests: a panic is logged to the console and ends the worker, which the
/// page sees as the worker's `error` event.
pub fn start() {
    let Ok(scope) = js_sys::global().dyn_into::<DedicatedWorkerGlobalScope>() else {
        return;
    };
    std::panic::set_hook(Box::new(|info| {
        let message = format!("the memplay simulation worker stopped because of a bug: {info}");
        web_sys::console::error_1(&JsValue::from_str(&message));
    }));
    let reply_to = scope.clone();
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(move |event: MessageEvent| {
        let bytes = js_sys::Uint8Array::new(&event.data()).to_vec();
        // The page posts only requests it encoded itself; anything else is ignored.
        if let Ok(request) = protocol::decode::<Request>(&bytes) {
            let response = protocol::respond(request, now_ms);
            post(&reply_to, &FromWorker::Answer(response));
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker does.
    on_message.forget();
    post(&scope, &FromWorker::Ready);
}

fn post(scope: &DedicatedWorkerGlobalScope, message: &FromWorker) {
    let bytes = js_sys::Uint8Array::from(protocol::encode(message).as_slice());
    // Posting fails only for values that cannot be cloned, and bytes always can.
    let _ = scope.post_message(&bytes);
}

/// Milliseconds from the worker's clock; 0 where there is none.
fn now_ms() -> f64 {
    js_sys::global()
        .dyn_into::<web_sys::WorkerGlobalScope>()
        .ok()
        .and_then(|scope| scope.performance())
        .map_or(0.0, |performance| performance.now())
}
