//! memplay-web's library: what the page and its simulation worker share.
//!
//! The page and the worker are one wasm module (`main.rs`, binary `memplay-web`), started twice:
//! in the window it renders the page, in a Web Worker (`www/worker.js`) it calls `worker::start`.
//! Every simulation runs in the worker, so that a long kernel never blocks the page: `protocol` names the messages between them and what the worker does
//! with each (pure, tested on the host), `worker` is the worker's side of the Web Worker.

pub mod protocol;
pub mod worker;
