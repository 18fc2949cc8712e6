//! memplay-web's library: what the page and its simulation worker share.
//!
//! The page (`main.rs`, binary `memplay-web`) and the worker (`bin/memplay-worker.rs`) are two
//! wasm modules of one Trunk build. Every simulation runs in the worker, so that a long kernel
//! never blocks the page: `protocol` names the messages between them and what the worker does
//! with each (pure, tested on the host), `worker` is the worker's side of the Web Worker.

pub mod protocol;
pub mod worker;
