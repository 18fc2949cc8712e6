//! End-to-end tests of the built playground in headless Chromium.
//!
//! `cargo xtask test` builds the release bundle into `dist/` and runs these tests with
//! `MEMPLAY_DIST` pointing at it. Each test serves that folder with Python's static file server
//! (the page is static files: no server logic), drives Debian's Chromium through chromedriver, and
//! polls the page for conditions instead of sleeping for fixed times.

use memplay_sim::kernel::limits::{MAX_NESTING, MAX_TREE_DEPTH};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use thirtyfour::prelude::*;
use thirtyfour::ChromiumLikeCapabilities;

/// How long a condition may take before the test fails: generous, because CI machines are slow
/// and the first load compiles the wasm module.
const DEADLINE: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(50);

/// A child process that is killed when the test ends, pass or fail.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("the OS hands out a free loopback port")
}

fn dist_dir() -> PathBuf {
    let dist = std::env::var_os("MEMPLAY_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../dist")));
    assert!(
        dist.join("index.html").exists(),
        "no built page in {}: run `cargo xtask test`, which builds it first",
        dist.display()
    );
    dist
}

/// Waits until something accepts connections on the port.
async fn wait_for_port(port: u16, what: &str) {
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < DEADLINE,
            "{what} did not start listening on port {port}"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// The page's static server, the driver, and a browser session.
struct Harness {
    driver: WebDriver,
    base_url: String,
    _server: Process,
    _chromedriver: Process,
}

impl Harness {
    async fn start() -> Harness {
        let dist = dist_dir();
        let http_port = free_port();
        let server = Process(
            Command::new("python3")
                .args([
                    "-m",
                    "http.server",
                    &http_port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--directory",
                ])
                .arg(&dist)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("python3 serves the built page"),
        );
        let driver_port = free_port();
        let chromedriver = Process(
            Command::new("/usr/bin/chromedriver")
                .arg(format!("--port={driver_port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("chromedriver is installed by `cargo xtask test`"),
        );
        wait_for_port(http_port, "the static file server").await;
        wait_for_port(driver_port, "chromedriver").await;

        let profile =
            std::env::temp_dir().join(format!("memplay-e2e-{}-{driver_port}", std::process::id()));
        let mut caps = DesiredCapabilities::chrome();
        caps.set_binary("/usr/bin/chromium").unwrap();
        for arg in [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--no-first-run",
            "--window-size=1280,1600",
            &format!("--user-data-dir={}", profile.display()),
        ] {
            caps.add_arg(arg).unwrap();
        }
        let driver = WebDriver::new(format!("http://127.0.0.1:{driver_port}"), caps)
            .await
            .expect("chromedriver starts a Chromium session");
        Harness {
            driver,
            base_url: format!("http://127.0.0.1:{http_port}/"),
            _server: server,
            _chromedriver: chromedriver,
        }
    }

    async fn open(&self, query: &str) {
        self.driver
            .goto(format!("{}{query}", self.base_url))
            .await
            .expect("the page loads");
    }

    /// Polls until the element's text equals `expected`; fails with the last text seen.
    async fn wait_for_text(&self, test_id: &str, expected: &str) {
        self.wait_for_text_where(test_id, &format!("read {expected:?}"), |text| {
            text == expected
        })
        .await;
    }

    /// Polls until the element's text satisfies `condition`; returns the text.
    async fn wait_for_text_where(
        &self,
        test_id: &str,
        what: &str,
        condition: impl Fn(&str) -> bool,
    ) -> String {
        let start = Instant::now();
        let mut last = String::from("<element not found>");
        loop {
            if let Ok(element) = self
                .driver
                .find(By::Css(format!("[data-testid='{test_id}']")))
                .await
            {
                if let Ok(text) = element.text().await {
                    if condition(text.trim()) {
                        return text.trim().to_string();
                    }
                    last = text;
                }
            }
            assert!(
                start.elapsed() < DEADLINE,
                "[data-testid={test_id}] should {what}, last read {last:?}"
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// Polls until the CSS selector matches an element.
    async fn wait_for(&self, css: &str) -> WebElement {
        let start = Instant::now();
        loop {
            if let Ok(element) = self.driver.find(By::Css(css)).await {
                return element;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "nothing on the page matches {css}"
            );
            tokio::time::sleep(POLL).await;
        }
    }

    async fn wait_for_url_containing(&self, needle: &str) {
        let start = Instant::now();
        loop {
            let url = self
                .driver
                .current_url()
                .await
                .expect("the driver reports the URL")
                .to_string();
            if url.contains(needle) {
                return;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "the URL should contain {needle:?}, it is {url}"
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// Puts `source` into the kernel text area and presses Run. The text is set through the DOM
    /// rather than typed, since the hostile kernels are hundreds of kilobytes long.
    async fn run_kernel(&self, source: &str) {
        let area = self.wait_for("[data-testid='kernel-source']").await;
        self.driver
            .execute(
                "arguments[0].value = arguments[1];",
                vec![
                    area.to_json().expect("an element is an argument"),
                    serde_json::Value::from(source),
                ],
            )
            .await
            .expect("the text area takes the kernel");
        self.wait_for("[data-testid='run']")
            .await
            .click()
            .await
            .expect("Run is a button");
    }

    async fn finish(self) {
        self.driver.quit().await.expect("the browser session ends");
    }
}

#[tokio::test]
async fn padding_removes_the_32_way_conflict_of_row_per_thread() {
    let page = Harness::start().await;
    page.open("?pattern=row-per-thread&pad=0").await;
    page.wait_for_text("conflict-degree", "32-way").await;

    // A student sets the padding to one word in the UI.
    let pad = page.wait_for("[data-testid='control-pad']").await;
    pad.focus().await.expect("the padding control takes focus");
    pad.send_keys(Key::Right)
        .await
        .expect("the keyboard moves the padding slider");
    page.wait_for_text("conflict-degree", "no conflict").await;
    page.wait_for_url_containing("pad=1").await;

    page.wait_for("[data-testid='roofline'] svg").await;
    page.wait_for("[data-testid='occupancy']").await;
    page.finish().await;
}

#[tokio::test]
async fn a_link_restores_the_view_and_bad_values_fall_back_with_a_note() {
    let page = Harness::start().await;
    page.open("?device=g80&pattern=row-per-thread&pad=0&tile=abc")
        .await;
    // G80 serves shared memory per half-warp over 16 banks: the column read is 16-way there.
    page.wait_for_text("conflict-degree", "16-way").await;
    let notes = page.wait_for("[data-testid='url-notes']").await;
    let text = notes.text().await.expect("the note has text");
    assert!(
        text.contains("tile"),
        "the note names the bad value: {text:?}"
    );
    page.finish().await;
}

#[tokio::test]
async fn the_occupancy_view_names_the_limiter_of_a_g80_tile() {
    let page = Harness::start().await;
    // Seed 003: on G80, 8x8 blocks are limited by the 8 blocks an SM may hold (512 threads),
    // with the few registers a kernel of its day used.
    page.open("?device=g80&block=64&tile=8&regs=10").await;
    page.wait_for_text("occupancy-limiter", "blocks").await;
    // At 32 registers per thread the 8 K register file holds only 4 such blocks.
    page.open("?device=g80&block=64&tile=8&regs=32").await;
    page.wait_for_text("occupancy-limiter", "registers").await;
    page.finish().await;
}

#[tokio::test]
async fn a_kernel_edit_with_an_undeclared_name_shows_its_line_and_column() {
    let page = Harness::start().await;
    page.open("?lesson=matmul-tiled&tile=16").await;
    // The wasm timing of the simulation, printed for the benchmark report.
    let cost = page
        .wait_for_text_where("sim-cost", "report the simulated blocks", |text| {
            text.starts_with("simulated 9 blocks of 4,096")
        })
        .await;
    println!("wasm in Chromium, mm_tiled n=1024 TILE=16: {cost}");

    // Seed 000's slide uses an `m` that is never declared: the student types it in.
    let source = page.wait_for("[data-testid='kernel-source']").await;
    source.clear().await.expect("the source can be cleared");
    source
        .send_keys(
            "__global__ void mm_tiled(float* a, float* b, float* c, int n) {\n  c[0] = m;\n}\n",
        )
        .await
        .expect("the student types a kernel");
    page.wait_for("[data-testid='run']")
        .await
        .click()
        .await
        .expect("Run is a button");
    page.wait_for_text("kernel-error", "2:10: 'm' is not declared")
        .await;

    // The page is still alive and goes back to the lesson's kernel.
    page.wait_for("[data-testid='reset-source']")
        .await
        .click()
        .await
        .expect("reset is a button");
    page.wait_for_text_where("sim-cost", "come back after the reset", |text| {
        text.starts_with("simulated 9 blocks")
    })
    .await;
    page.finish().await;
}

#[tokio::test]
async fn padding_the_row_per_thread_kernel_removes_its_conflicts() {
    let page = Harness::start().await;
    page.open("?lesson=row-per-thread&pad=0&compile=as-written")
        .await;
    // 32 wavefronts per shared load: the 32-way conflict, counted over the whole launch.
    let counters = page
        .wait_for_text_where("counters", "show 32 wavefronts per load", |text| {
            text.contains("32.00")
        })
        .await;
    assert!(
        counters.contains("wavefronts per shared load"),
        "{counters}"
    );
    page.open("?lesson=row-per-thread&pad=1&compile=as-written")
        .await;
    page.wait_for_text_where("counters", "show 1 wavefront per load", |text| {
        text.contains("(1 = no conflict) 1.00")
    })
    .await;
    page.finish().await;
}

/// The predicted time in milliseconds at the start of the throughput readout ("0.268 ms · ...").
fn predicted_ms(throughput: &str) -> f64 {
    let first = throughput.split(" · ").next().unwrap_or_default();
    let (number, unit) = first.split_once(' ').unwrap_or((first, ""));
    let value: f64 = number.replace(',', "").parse().unwrap_or(f64::NAN);
    if unit == "µs" {
        value / 1000.0
    } else {
        value
    }
}

#[tokio::test]
async fn predicted_time_moves_the_right_way_with_tile_width_and_padding() {
    let page = Harness::start().await;
    page.open("?device=h100&lesson=matmul-tiled&tile=8&pad=0")
        .await;
    let tile_8 = page
        .wait_for_text_where("throughput", "show a prediction", |t| t.contains(" ms · "))
        .await;
    page.wait_for("[data-testid='time-sweep'] svg").await;

    // A student widens the tile to 16 in the UI: fewer global loads, a faster kernel (seed 003).
    let tile = page.wait_for("[data-testid='control-tile-range']").await;
    tile.focus().await.expect("the tile slider takes focus");
    for _ in 8..16 {
        tile.send_keys(Key::Right)
            .await
            .expect("the keyboard moves the tile slider");
    }
    page.wait_for_url_containing("tile=16").await;
    let tile_16 = page
        .wait_for_text_where("throughput", "change with the tile", |t| {
            t.contains(" ms · ") && t != tile_8
        })
        .await;
    // The wasm timing of a rerun, once the engine has optimised the hot code, for BENCHMARKS.md.
    let cost = page
        .wait_for_text_where("sim-cost", "report the rerun", |t| {
            t.starts_with("simulated 9 blocks of 4,096")
        })
        .await;
    println!("wasm in Chromium, rerun of mm_tiled n=1024 TILE=16: {cost}");
    assert!(
        predicted_ms(&tile_16) < predicted_ms(&tile_8),
        "16-wide tiles should be faster: {tile_16} vs {tile_8}"
    );

    // On the H100 one word of padding breaks nvcc's 128-bit shared loads: slower (h100.json).
    page.open("?device=h100&lesson=matmul-tiled&tile=16&pad=1")
        .await;
    let padded = page
        .wait_for_text_where("throughput", "show the padded prediction", |t| {
            t.contains(" ms · ") && t != tile_16
        })
        .await;
    assert!(
        predicted_ms(&padded) > predicted_ms(&tile_16),
        "padding should slow the H100 down: {padded} vs {tile_16}"
    );
    page.wait_for("[data-testid='roofline-simulated']").await;
    page.finish().await;
}

#[tokio::test]
async fn on_gt200_tiling_is_many_times_faster_than_the_naive_matmul() {
    let page = Harness::start().await;
    page.open("?device=gt200&lesson=matmul-naive&tile=16&regs=16")
        .await;
    let naive = page
        .wait_for_text_where("throughput", "show a prediction", |t| t.contains(" ms · "))
        .await;
    page.open("?device=gt200&lesson=matmul-tiled&tile=16&regs=16")
        .await;
    let tiled = page
        .wait_for_text_where("throughput", "show the tiled prediction", |t| {
            t.contains(" ms · ") && t != naive
        })
        .await;
    let speedup = predicted_ms(&naive) / predicted_ms(&tiled);
    println!("GT200 tiled matmul speed-up on the page: {speedup:.1}x ({naive} -> {tiled})");
    assert!(
        speedup > 8.0,
        "seed 000 measured 17.2x on a GT200; the page shows {speedup:.1}x"
    );
    page.finish().await;
}

#[tokio::test]
async fn a_kernel_that_never_ends_stops_at_the_step_budget_and_the_page_lives_on() {
    let page = Harness::start().await;
    page.open("?lesson=adj-diff-naive").await;
    page.wait_for_text_where("sim-cost", "report the first run", |text| {
        text.starts_with("simulated")
    })
    .await;
    let source = page.wait_for("[data-testid='kernel-source']").await;
    source.clear().await.expect("the source can be cleared");
    source
        .send_keys("__global__ void adj_diff_naive(int* result, const int* input, int n) {\n  while (1) { n = n + 1; }\n}\n")
        .await
        .expect("the student types a loop without end");
    page.wait_for("[data-testid='run']")
        .await
        .click()
        .await
        .expect("Run is a button");
    let error = page
        .wait_for_text_where("kernel-error", "name the step budget", |text| {
            text.contains("step budget")
        })
        .await;
    assert!(
        error.starts_with("2:"),
        "the error points at the loop: {error}"
    );
    // The rest of the page still answers.
    page.wait_for("[data-testid='bank-map']").await;
    page.wait_for("[data-testid='roofline'] svg").await;
    page.finish().await;
}

/// The parameters of the adjacent-difference lesson's kernel, which the hostile kernels keep so
/// that the lesson's launch matches them.
const ADJ_DIFF_HEAD: &str =
    "__global__ void adj_diff_naive(int* result, const int* input, int n) {";

#[tokio::test]
async fn hostile_kernels_typed_into_the_page_end_in_one_error_line_and_the_page_lives_on() {
    let page = Harness::start().await;
    page.open("?lesson=adj-diff-naive").await;
    page.wait_for_text_where("sim-cost", "report the first run", |text| {
        text.starts_with("simulated")
    })
    .await;
    let chain = vec!["1"; 180_000].join("+");
    let mut macros = String::from("#define X0 1\n");
    for level in 1..=39 {
        macros.push_str(&format!(
            "#define X{level} X{} + X{}\n",
            level - 1,
            level - 1
        ));
    }
    // Each kernel with the start of the error it must end in.
    let hostile = [
        // A flat chain overflowed the stack of the browser's wasm before the front end bounded it.
        (
            format!("{ADJ_DIFF_HEAD}\n  result[0] = {chain};\n}}\n"),
            "2:199993: the preprocessed source is longer than the simulator's limit of 200000 tokens",
        ),
        // A macro that doubles itself 39 times would expand to a trillion tokens.
        (
            format!("{macros}{ADJ_DIFF_HEAD}\n  result[0] = X39;\n}}\n"),
            "42:15: macros expand more often than the simulator's limit of 100000 expansions",
        ),
        // A control character is shown escaped, not sent to the page raw.
        (
            format!("{ADJ_DIFF_HEAD}\n  result[0] = \u{1b}[31m;\n}}\n"),
            "2:15: unexpected character '\\u{1b}'",
        ),
        // A name of 100,000 characters is cut, not echoed whole.
        (
            format!("{ADJ_DIFF_HEAD}\n  result[0] = {};\n}}\n", "x".repeat(100_000)),
            "2:15: 'xxxxxxxx",
        ),
    ];
    for (source, expected) in &hostile {
        // A good run first, so the error below cannot be the previous kernel's.
        page.run_kernel(&format!("{ADJ_DIFF_HEAD}\n  result[0] = n;\n}}\n"))
            .await;
        page.wait_for_text_where("sim-cost", "report the good kernel's run", |text| {
            text.starts_with("simulated")
        })
        .await;
        page.run_kernel(source).await;
        let error = page
            .wait_for_text_where(
                "kernel-error",
                &format!("start with {expected:?}"),
                |text| text.starts_with(expected),
            )
            .await;
        assert!(
            !error.contains('\n') && error.chars().count() <= 250,
            "the error is one short line: {error:?}"
        );
        assert!(
            !error.chars().any(|c| c.is_control()),
            "the error has no control characters: {error:?}"
        );
        // The page still answers: its other views are there.
        page.wait_for("[data-testid='bank-map']").await;
    }
    page.finish().await;
}

#[tokio::test]
async fn kernels_nested_to_the_limits_run_in_the_browser() {
    let page = Harness::start().await;
    page.open("?lesson=adj-diff-naive").await;
    page.wait_for_text_where("sim-cost", "report the first run", |text| {
        text.starts_with("simulated")
    })
    .await;
    // The parser's limits bound every recursive walk of the simulator; a kernel just inside them
    // must run in the browser's wasm stack, which is smaller than a native thread's.
    let depth = MAX_NESTING as usize - 2;
    let parens = format!("{}n{}", "(".repeat(depth), ")".repeat(depth));
    let chain = vec!["n"; MAX_TREE_DEPTH - 4].join("+");
    for body in [
        format!("result[threadIdx.x] = {parens};"),
        format!("result[threadIdx.x] = {chain};"),
        "__threadfence(); result[threadIdx.x] = n;".to_string(),
    ] {
        // An error first, so the run below cannot be mistaken for the previous one.
        page.run_kernel(&format!("{ADJ_DIFF_HEAD}\n  result[0] = m;\n}}\n"))
            .await;
        page.wait_for_text("kernel-error", "2:15: 'm' is not declared")
            .await;
        page.run_kernel(&format!("{ADJ_DIFF_HEAD}\n  {body}\n}}\n"))
            .await;
        page.wait_for_text_where("sim-cost", "report the edited kernel's run", |text| {
            text.starts_with("simulated")
        })
        .await;
    }
    page.finish().await;
}
