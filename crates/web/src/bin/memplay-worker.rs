//! memplay-worker: the Web Worker that runs the playground's simulations (see `worker` in the
//! library). Trunk builds it beside the page's own module, from the same `trunk build`.

fn main() {
    // Both branches compile on every target, as in the page's main.rs; only a browser's worker
    // can run the first.
    if cfg!(target_arch = "wasm32") {
        memplay_web::worker::start();
    } else {
        eprintln!(
            "memplay-worker runs in a browser's Web Worker: build it with `trunk build --release`."
        );
    }
}
