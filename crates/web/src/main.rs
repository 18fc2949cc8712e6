//! memplay-web: the playground page, a Yew front end over `memplay-sim`.
//!
//! `state` (the reducer), `url` (the link's query), `source_link` (an edited kernel in the link's
//! fragment), `model` (what the views show) and `measured` (the H100 measurements of the page's
//! launch) are pure and tested on the host with `cargo test -p memplay-web`; `app` and
//! `components` render them. The only side effects are in
//! `app` (reading the URL once at start and writing it back from an effect), `deflate` (the
//! browser's compression streams, for the kernel in the fragment) and `bridge` (the simulation
//! worker, which runs every simulation off the page's thread).

mod app;
mod bridge;
mod compare;
mod components;
mod deflate;
mod embed_api;
mod facts;
mod format;
#[cfg(test)]
mod lesson_checks;
mod lesson_fetch;
mod lesson_launch;
mod lesson_link;
mod lesson_text;
mod lessons;
mod line_model;
mod measured;
mod model;
mod my_kernel;
mod run;
mod settings;
mod source_link;
mod state;
mod statements;
mod url;

fn main() {
    // Both branches compile on every target, so the host build (which runs the unit tests)
    // checks the components too; only the browser can render them.
    if cfg!(target_arch = "wasm32") {
        // The simulation worker runs this same module (www/worker.js): there it answers the
        // page's requests instead of rendering a page.
        if memplay_web::worker::in_worker() {
            memplay_web::worker::start();
            return;
        }
        app::install_panic_hook();
        app::start();
    } else {
        eprintln!("memplay-web runs in a browser: build it with `trunk build --release`.");
    }
}
