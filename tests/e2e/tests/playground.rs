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
use std::time::{Duration, Instant, SystemTime};
use thirtyfour::extensions::cdp::ChromeDevTools;
use thirtyfour::prelude::*;
use thirtyfour::{CapabilitiesHelper, ChromiumLikeCapabilities};

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

/// Whether chromedriver keeps the browser's logs for the test to read (see ReadLog).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Logs {
    Off,
    Kept,
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
        Harness::start_with(Logs::Off).await
    }

    async fn start_with(logs: Logs) -> Harness {
        Harness::start_configured(logs, None).await
    }

    /// A harness whose browser saves downloads into `folder` without asking.
    async fn start_downloading_to(folder: &std::path::Path) -> Harness {
        Harness::start_configured(Logs::Off, Some(folder)).await
    }

    async fn start_configured(logs: Logs, downloads: Option<&std::path::Path>) -> Harness {
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
        if logs == Logs::Kept {
            // Chromedriver keeps the console ("browser") and the DevTools protocol's Network and
            // Page events ("performance") for ReadLog.
            caps.set_base_capability(
                "goog:loggingPrefs",
                serde_json::json!({ "browser": "ALL", "performance": "ALL" }),
            )
            .unwrap();
        }
        if let Some(folder) = downloads {
            caps.add_experimental_option(
                "prefs",
                serde_json::json!({
                    "download.default_directory": folder.display().to_string(),
                    "download.prompt_for_download": false,
                }),
            )
            .unwrap();
        }
        let driver = WebDriver::new(format!("http://127.0.0.1:{driver_port}"), caps)
            .await
            .expect("chromedriver starts a Chromium session");
        if let Some(folder) = downloads {
            // Headless Chromium may ignore the profile's download folder; the DevTools protocol
            // sets it for the browser as a whole.
            ChromeDevTools::new(driver.handle.clone())
                .execute_cdp_with_params(
                    "Browser.setDownloadBehavior",
                    serde_json::json!({
                        "behavior": "allow",
                        "downloadPath": folder.display().to_string(),
                    }),
                )
                .await
                .expect("the browser takes a download folder");
        }
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

    /// Polls until `sim-cost` reports a run ("simulated ..."); `what` says which, for a failure.
    async fn wait_for_simulated(&self, what: &str) -> String {
        self.wait_for_text_where("sim-cost", what, |text| text.starts_with("simulated"))
            .await
    }

    /// Polls until the worker's answer to the page's launch is shown: its run (true) or the
    /// kernel's error (false).
    async fn wait_for_run_or_kernel_error(&self) -> bool {
        let start = Instant::now();
        loop {
            if self.is_present("kernel-error").await {
                return false;
            }
            if let Ok(cost) = self.driver.find(By::Css("[data-testid='sim-cost']")).await {
                if cost
                    .text()
                    .await
                    .is_ok_and(|text| text.starts_with("simulated"))
                {
                    return true;
                }
            }
            assert!(
                start.elapsed() < DEADLINE,
                "the page should show its launch's run or the kernel's error"
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// Whether an element with this test id is on the page now.
    async fn is_present(&self, test_id: &str) -> bool {
        self.driver
            .find_all(By::Css(format!("[data-testid='{test_id}']")))
            .await
            .is_ok_and(|found| !found.is_empty())
    }

    /// Polls until no simulation is pending: the worker has answered the newest launch and its
    /// sweep, so what the page shows is the current settings' result.
    async fn wait_until_updated(&self) {
        let start = Instant::now();
        while self.is_present("updating").await {
            assert!(
                start.elapsed() < DEADLINE,
                "the page should finish updating (the worker answers every request)"
            );
            tokio::time::sleep(POLL).await;
        }
    }

    async fn finish(self) {
        self.driver.quit().await.expect("the browser session ends");
    }
}

#[tokio::test]
async fn the_g80_refuses_the_atomics_lesson_with_the_capability_it_lacks() {
    // Compute capability 1.0 has no atomic functions: the launch is refused with the reason, as
    // a block too large for the device is, and the GT200 (1.3) runs the same kernel.
    let page = Harness::start().await;
    page.open("?lesson=atomics&variant=hierarchical&device=g80")
        .await;
    let error = page
        .wait_for_text_where("kernel-error", "refuse the G80's atomics", |text| {
            text.contains("needs compute capability 1.2") && text.contains("the G80 has 1.0")
        })
        .await;
    println!("the G80's atomics: {error}");
    page.open("?lesson=atomics&variant=hierarchical&device=gt200")
        .await;
    page.wait_for_simulated("run the GT200's atomics").await;
    page.finish().await;
}

#[tokio::test]
async fn padding_removes_the_32_way_conflict_of_row_per_thread() {
    let page = Harness::start().await;
    page.open("?lesson=bank-conflicts&pattern=row-per-thread&pad=0")
        .await;
    // The pattern explorer is the lesson's tab; the padding is a control of its first screen.
    page.open_tab("bank-map").await;
    page.wait_for_text("conflict-degree", "32-way").await;

    // A student sets the padding to one word in the UI.
    let pad = page.wait_for("[data-testid='control-pad']").await;
    pad.focus().await.expect("the padding control takes focus");
    pad.send_keys(Key::Right)
        .await
        .expect("the keyboard moves the padding slider");
    page.wait_for_text("conflict-degree", "no conflict").await;
    page.wait_for_url_containing("pad=1").await;
    page.finish().await;
}

#[tokio::test]
async fn a_link_restores_the_view_and_bad_values_fall_back_with_a_note() {
    let page = Harness::start().await;
    page.open(
        "?lesson=bank-conflicts&device=g80&pattern=row-per-thread&pad=0&tile=abc&tab=bank-map",
    )
    .await;
    // The link opens the pattern explorer's tab. G80 serves shared memory per half-warp over 16
    // banks: the column read is 16-way there.
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
    page.open("?lesson=occupancy&device=g80&block=64&tile=8&regs=10")
        .await;
    page.wait_for_text("occupancy-limiter", "blocks").await;
    // At 32 registers per thread the 8 K register file holds only 4 such blocks.
    page.open("?lesson=occupancy&device=g80&block=64&tile=8&regs=32")
        .await;
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
async fn a_kernel_that_prints_shows_its_lines_as_text_under_its_counters() {
    let page = Harness::start().await;
    page.open("?lesson=matmul-tiled&tile=16").await;
    page.wait_for_simulated("the lesson's kernel runs first")
        .await;
    page.run_kernel(
        "__global__ void mm_tiled(float* a, float* b, float* c, int n) {\n  \
         if (threadIdx.x == 0 && threadIdx.y == 0 && blockIdx.y == 0)\n    \
         printf(\"<b>block %d</b> n=%d\\n\", blockIdx.x, n);\n}\n",
    )
    .await;
    // The sampled blocks of row 0 print, in block order; the markup is shown as typed.
    let text = page
        .wait_for_text_where("printf-output", "the kernel's lines", |text| {
            text.starts_with(
                "printf output of the simulated blocks, in block order:\n<b>block 0</b> n=1024",
            )
        })
        .await;
    assert!(!page.is_present("kernel-error").await, "{text}");
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
    // The worker answers the steps of the slider after the URL has moved: the newest, tile 16,
    // is on the page once nothing is pending.
    page.wait_until_updated().await;
    let tile_16 = page
        .wait_for_text_where("throughput", "change with the tile", |t| {
            t.contains(" ms · ") && t != tile_8
        })
        .await;
    // The wasm timing of a rerun, once the engine has optimised the hot code (BENCHMARKS.md reports it).
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
    page.open_tab("roofline").await;
    page.wait_for("[data-testid='roofline-simulated']").await;
    page.finish().await;
}

/// The signed percentage at the end of the measured-time line ("... differs by −5.2%").
fn difference_pct(line: &str) -> f64 {
    let pct = line
        .rsplit(' ')
        .next()
        .unwrap_or_default()
        .trim_end_matches('%')
        .replace('\u{2212}', "-");
    pct.parse().unwrap_or(f64::NAN)
}

#[tokio::test]
async fn a_measured_launch_shows_the_h100_s_time_and_counters_beside_the_prediction() {
    let page = Harness::start().await;
    page.open("?lesson=matmul-tiled&tile=16&device=h100").await;
    let measured = page
        .wait_for_text_where("measured-time", "show the measured time", |t| {
            t.starts_with("Measured on a real H100: ") && t.ends_with('%')
        })
        .await;
    let predicted = page
        .wait_for_text_where("throughput", "show a prediction", |t| t.contains(" ms · "))
        .await;
    // The difference is the prediction's from the measurement, in percent of the measurement;
    // from the rounded times on the page it comes out within a few tenths of a percent.
    let measured_ms = predicted_ms(measured.trim_start_matches("Measured on a real H100: "));
    let expected = 100.0 * (predicted_ms(&predicted) - measured_ms) / measured_ms;
    let shown = difference_pct(&measured);
    assert!(
        (shown - expected).abs() < 0.5,
        "{measured:?} beside {predicted:?}: expected about {expected:.1}%"
    );

    // The counters table has the measured column, and its global load requests are the ones
    // Nsight Compute counted for this launch in tests/reference/h100.json.
    page.wait_for("[data-testid='measured-counters']").await;
    let cells = page
        .driver
        .find_all(By::Css(
            "[data-testid='counters'] tr[title='l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum'] td",
        ))
        .await
        .expect("the row's cells");
    let mut texts = Vec::new();
    for cell in cells {
        texts.push(cell.text().await.expect("a cell's text"));
    }
    assert_eq!(texts.len(), 3, "simulated, measured, difference: {texts:?}");
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../reference/h100.json"),
        )
        .expect("the measurements are in the repository"),
    )
    .expect("valid JSON");
    let record = reference["ncu"]
        .as_array()
        .expect("ncu records")
        .iter()
        .find(|r| {
            let spec = &r["launch_spec"];
            spec["kernel"] == "mm_tiled"
                && spec["defines"]["TILE_WIDTH"] == 16
                && spec["defines"]["PAD"] == 0
        })
        .expect("mm_tiled T=16 PAD=0 was counted");
    let counted = record["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
        .as_f64()
        .expect("a number");
    assert_eq!(
        texts[1].replace(',', "").parse::<f64>().ok(),
        Some(counted),
        "{texts:?}"
    );
    assert_eq!(
        texts[0], texts[1],
        "the simulator counts these requests exactly"
    );
    assert_eq!(texts[2], "0%");
    assert!(!page.is_present("no-measurement").await);

    // GT200 was never measured: one quiet line says so, and nothing measured is shown.
    page.open("?lesson=matmul-tiled&tile=16&device=gt200").await;
    page.wait_for_text_where("no-measurement", "say there is no measurement", |t| {
        t.starts_with("No H100 measurement of this exact launch")
    })
    .await;
    assert!(!page.is_present("measured-time").await);
    assert!(!page.is_present("measured-counters").await);
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
    page.wait_for_simulated("report the first run").await;
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
    page.wait_for("[data-testid='predict']").await;
    page.wait_for("[data-testid='lesson-view']").await;
    page.wait_for("[data-testid='tab-compare']").await;
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
    page.wait_for_simulated("report the first run").await;
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
        page.wait_for_simulated("report the good kernel's run")
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
        page.wait_for("[data-testid='predict']").await;
    }
    page.finish().await;
}

#[tokio::test]
async fn kernels_nested_to_the_limits_run_in_the_browser() {
    let page = Harness::start().await;
    page.open("?lesson=adj-diff-naive").await;
    page.wait_for_simulated("report the first run").await;
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
        page.wait_for_simulated("report the edited kernel's run")
            .await;
    }
    page.finish().await;
}

/// Chromedriver's log endpoint (`POST /session/{id}/se/log`), for which thirtyfour has no method:
/// it answers the entries of one log kept since the last read, and clears them. "browser" is the
/// console with the browser's own messages (a failed load, a policy violation); "performance" holds
/// the DevTools protocol's events, among them `Network.requestWillBeSent` for every request the
/// page makes. thirtyfour's ChromeDevTools can send protocol commands but not read events, so the
/// events come this way.
#[derive(Debug)]
struct ReadLog(&'static str);

impl thirtyfour::common::command::FormatRequestData for ReadLog {
    fn format_request(&self, session_id: &thirtyfour::SessionId) -> thirtyfour::RequestData {
        thirtyfour::RequestData::new(http::Method::POST, format!("/session/{session_id}/se/log"))
            .add_body(serde_json::json!({ "type": self.0 }))
    }
}

impl Harness {
    /// The entries of a log kept since the last read (the harness must start with Logs::Kept).
    async fn read_log(&self, kind: &'static str) -> Vec<serde_json::Value> {
        self.driver
            .handle
            .cmd(ReadLog(kind))
            .await
            .and_then(|response| response.value())
            .unwrap_or_else(|e| panic!("chromedriver reads its {kind} log: {e}"))
    }

    /// The URL of every request made for one of the page's documents (its origin's) in the
    /// DevTools events of the performance log since the last read. Requests of the browser's own
    /// pages, such as the new-tab page a session starts with, are someone else's.
    async fn requests_since_last_read(&self) -> Vec<String> {
        let mut urls = Vec::new();
        for entry in self.read_log("performance").await {
            let Some(message) = entry["message"].as_str() else {
                continue;
            };
            let event: serde_json::Value = serde_json::from_str(message)
                .expect("a performance log message is a DevTools event in JSON");
            let params = &event["message"]["params"];
            let document = params["documentURL"].as_str().unwrap_or_default();
            if event["message"]["method"] == "Network.requestWillBeSent" && self.is_own(document) {
                if let Some(url) = params["request"]["url"].as_str() {
                    urls.push(url.to_string());
                }
            }
        }
        urls
    }

    /// The page's origin, such as `http://127.0.0.1:8123`.
    fn origin(&self) -> &str {
        self.base_url.trim_end_matches('/')
    }

    /// Whether a URL is the page's own: its origin, an inline `data:` URL, or a `blob:` URL the
    /// page made itself.
    fn is_own(&self, url: &str) -> bool {
        let own = format!("{}/", self.origin());
        url.starts_with(&own) || url.starts_with("data:") || url.starts_with(&format!("blob:{own}"))
    }
}

/// Collects the page's Content-Security-Policy violations from the start of each document: the
/// DevTools protocol runs it before the page's own scripts, and it is exempt from the policy.
const VIOLATION_LISTENER: &str = r#"
window.memplayViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.memplayViolations.push(
    `${e.effectiveDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`);
});
"#;

#[tokio::test]
async fn lessons_load_with_no_request_to_another_origin_and_no_policy_violation() {
    let page = Harness::start_with(Logs::Kept).await;
    let devtools = ChromeDevTools::new(page.driver.handle.clone());
    devtools
        .execute_cdp_with_params(
            "Page.addScriptToEvaluateOnNewDocument",
            serde_json::json!({ "source": VIOLATION_LISTENER }),
        )
        .await
        .expect("the DevTools protocol installs the violation listener");
    let mut requests = Vec::new();
    // Lessons on both bank layouts, the bank-map explorer and an edited kernel's error.
    for query in [
        "?lesson=matmul-tiled&tile=16",
        "?lesson=transpose-shared&device=a100",
        "?lesson=atomics-hierarchical&device=gt200",
        "?lesson=row-per-thread&pad=0&compile=as-written",
        "?lesson=bank-conflicts&pattern=row-per-thread&pad=1&device=gt200",
        "?lesson=roofline",
    ] {
        page.open(query).await;
        page.wait_for_simulated("report the lesson's run").await;
        page.wait_for("[data-testid='lesson-intro']").await;
        let violations = page
            .driver
            .execute("return window.memplayViolations;", vec![])
            .await
            .expect("the page answers a script")
            .json()
            .clone();
        assert_eq!(
            violations,
            serde_json::json!([]),
            "{query} broke the page's Content-Security-Policy"
        );
        // The page's own account of what it loaded, as a second witness.
        let resources = page
            .driver
            .execute(
                "return performance.getEntriesByType('resource').map((e) => e.name);",
                vec![],
            )
            .await
            .expect("the page lists its resources")
            .json()
            .clone();
        for resource in resources.as_array().into_iter().flatten() {
            let url = resource.as_str().unwrap_or_default();
            assert!(page.is_own(url), "{query} loaded {url} from another origin");
        }
        requests.extend(page.requests_since_last_read().await);
    }
    // The recording saw the page's own files, so an empty list cannot pass for a clean one.
    for own_file in ["/boot.js", "_bg.wasm", ".css"] {
        assert!(
            requests.iter().any(|url| url.contains(own_file)),
            "the DevTools events should show the request for {own_file}: {requests:?}"
        );
    }
    let foreign: Vec<&String> = requests.iter().filter(|url| !page.is_own(url)).collect();
    assert!(
        foreign.is_empty(),
        "requests to another origin than {}: {foreign:?}",
        page.origin()
    );
    println!(
        "{} requests over 5 loads, all to {}",
        requests.len(),
        page.origin()
    );
    page.finish().await;
}

#[tokio::test]
async fn the_page_loads_with_its_own_icon_and_no_console_error() {
    let page = Harness::start_with(Logs::Kept).await;
    page.open("?lesson=matmul-tiled&tile=16").await;
    page.wait_for_simulated("report the lesson's run").await;
    // Chromium asks for the icon after the page has loaded (for /favicon.ico when the page names
    // none); wait for that request, so that a missing icon's 404 is in the console when it is read.
    let start = Instant::now();
    let mut requests = Vec::new();
    while !requests.iter().any(|url: &String| url.contains("favicon")) {
        assert!(
            start.elapsed() < DEADLINE,
            "Chromium should request the page's icon: {requests:?}"
        );
        requests.extend(page.requests_since_last_read().await);
        tokio::time::sleep(POLL).await;
    }
    let console = page.read_log("browser").await;
    let errors: Vec<&serde_json::Value> = console
        .iter()
        .filter(|entry| entry["level"] == "SEVERE")
        .collect();
    assert!(errors.is_empty(), "console errors on load: {errors:?}");
    assert!(
        !requests.iter().any(|url| url.ends_with("/favicon.ico")),
        "the page names its icon, so nothing asks for /favicon.ico: {requests:?}"
    );
    let icon = page
        .wait_for("link[rel='icon']")
        .await
        .attr("href")
        .await
        .expect("the icon link has attributes")
        .expect("the icon link names its file");
    assert!(icon.ends_with(".svg"), "the icon is our SVG: {icon}");
    let status = page
        .driver
        .execute_async(
            "fetch(arguments[0]).then((r) => arguments[1](r.status), () => arguments[1](0));",
            vec![serde_json::Value::from(icon.as_str())],
        )
        .await
        .expect("the page fetches its icon")
        .json()
        .clone();
    assert_eq!(status, serde_json::json!(200), "{icon} is served");
    page.finish().await;
}

/// A kernel with the adjacent-difference lesson's parameters whose loop of scattered loads runs
/// for seconds of simulation (some 27 million steps, within the default budget of 60 million).
const LONG_KERNEL: &str = "__global__ void adj_diff_naive(int* result, const int* input, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  int s = 0;
  for (int k = 0; k < 20000; k++) { s = s + input[(i * 4099 + k * 65537) % n]; }
  result[i] = s;
}
";

/// The global load requests of the whole launch, read from the counters table.
async fn global_load_requests(page: &Harness) -> Option<f64> {
    let cell = page
        .driver
        .find(By::Css(
            "[data-testid='counters'] tr[title='l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum'] td",
        ))
        .await
        .ok()?;
    cell.text().await.ok()?.replace(',', "").trim().parse().ok()
}

#[tokio::test]
async fn a_long_kernel_leaves_the_page_responsive_and_a_newer_run_supersedes_it() {
    let page = Harness::start().await;
    page.open("?lesson=adj-diff-naive").await;
    page.wait_for_simulated("report the first run").await;
    page.wait_until_updated().await;

    page.run_kernel(LONG_KERNEL).await;
    let started = Instant::now();
    page.wait_for("[data-testid='updating']").await;

    // While the worker runs the long kernel, the page handles clicks on the lesson's question:
    // a prediction, then the answer, which the page shows at once.
    let choices = page
        .driver
        .find_all(By::Css("[data-testid='predict-choice']"))
        .await
        .expect("the question's choices");
    choices[1].click().await.expect("a prediction can be made");
    page.wait_for("[data-testid='predict-reveal']:enabled")
        .await
        .click()
        .await
        .expect("the answer can be asked for");
    page.wait_for("[data-testid='predict-answer']").await;
    let answered = started.elapsed();
    assert!(
        page.is_present("updating").await,
        "the answer should show while the long kernel still runs ({answered:?} after Run)"
    );
    println!("the page answered two clicks {answered:?} after Run, while the long kernel ran");

    // A short kernel supersedes the long one: its result shows, and the long one's never does.
    page.run_kernel(&format!("{ADJ_DIFF_HEAD}\n  result[0] = n;\n}}\n"))
        .await;
    let start = Instant::now();
    loop {
        let loads = global_load_requests(&page).await;
        assert!(
            loads.is_none_or(|loads| loads < 1e9),
            "the superseded long kernel's result must not show: {loads:?} global load requests"
        );
        if !page.is_present("updating").await && loads == Some(0.0) {
            break;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "the short kernel's result (no global loads) should show, last read {loads:?}"
        );
        tokio::time::sleep(POLL).await;
    }
    println!(
        "the short kernel's result showed {:?} after the long kernel's Run",
        started.elapsed()
    );
    // The long kernel had run far longer than the page lets a superseded job run: the page
    // stopped the worker instead of waiting for the long kernel's end.
    let status = page.wait_for("[data-cancelled-runs]").await;
    let cancelled = attribute(&status, "data-cancelled-runs").await;
    assert_eq!(
        cancelled, "1",
        "the superseded long kernel is cancelled, not run to its end"
    );
    page.finish().await;
}

#[tokio::test]
async fn a_simulation_worker_that_stops_is_named_on_the_page_which_waits_no_longer() {
    // The worker's script throws before the module starts, as a worker that crashes does.
    let site = EditedSite::serve(|folder| {
        std::fs::write(
            folder.join("worker.js"),
            "throw new Error('a stopped worker, for the test');\n",
        )
        .expect("the worker script is replaced");
    })
    .await;
    let page = Harness::start().await;
    page.driver
        .goto(site.url("index.html?lesson=bank-conflicts&pattern=row-per-thread"))
        .await
        .expect("the page loads");
    let message = page
        .wait_for_text_where("worker-failure", "name the stopped worker", |text| {
            text.contains("the simulation worker stopped") && text.contains("a stopped worker")
        })
        .await;
    println!("a worker that stops shows: {message}");
    let failure = page.wait_for("[data-testid='worker-failure']").await;
    assert_eq!(attribute(&failure, "role").await, "alert");
    assert!(
        !page.is_present("updating").await,
        "nothing is shown as pending once the worker has stopped"
    );
    // The views that need no worker still answer: the pattern explorer, in its tab.
    page.open_tab("bank-map").await;
    page.wait_for_text("conflict-degree", "32-way").await;
    page.finish().await;
}

/// Installed before the page's own scripts: keeps every long task (over 50 ms of the main
/// thread), every event that took 16 ms or more from input to the next paint, and the scripts of
/// every long animation frame (which say what the long tasks ran).
const TASK_OBSERVER: &str = "
window.__memplayTasks = { longtasks: [], events: [], frames: [] };
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    window.__memplayTasks.frames.push(Math.round(e.duration) + ' ms: ' + e.scripts.map((s) =>
      s.invoker + ' ' + Math.round(s.duration) + ' ms').join(', '));
}).observe({ type: 'long-animation-frame', buffered: true });
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    window.__memplayTasks.longtasks.push({ start: e.startTime, duration: e.duration });
}).observe({ type: 'longtask', buffered: true });
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    window.__memplayTasks.events.push({ name: e.name, start: e.startTime, duration: e.duration,
      handlers: e.processingEnd - e.processingStart });
}).observe({ type: 'event', buffered: true, durationThreshold: 16 });
";

/// The observed long tasks and slow events since the last call, which clears them, as
/// (longest task in ms, number of long tasks, longest event in ms and its name, number of slow events).
async fn tasks_since_last_read(page: &Harness) -> (f64, usize, f64, String, usize) {
    let read = page
        .driver
        .execute(
            "const t = window.__memplayTasks; \
             window.__memplayTasks = { longtasks: [], events: [], frames: [] }; return t;",
            vec![],
        )
        .await
        .expect("the observers' entries can be read");
    let value = read.json();
    for frame in value["frames"].as_array().into_iter().flatten() {
        println!(
            "  long animation frame {}",
            frame.as_str().unwrap_or_default()
        );
    }
    let longtasks = value["longtasks"].as_array().cloned().unwrap_or_default();
    let events = value["events"].as_array().cloned().unwrap_or_default();
    let longest_task = longtasks
        .iter()
        .filter_map(|task| task["duration"].as_f64())
        .fold(0.0, f64::max);
    let (longest_event, event_name) = events
        .iter()
        .filter_map(|event| {
            Some((
                event["duration"].as_f64()?,
                format!(
                    "{} ({:.0} ms in handlers)",
                    event["name"].as_str()?,
                    event["handlers"].as_f64()?
                ),
            ))
        })
        .fold((0.0, String::from("none")), |best, event| {
            if event.0 > best.0 {
                event
            } else {
                best
            }
        });
    (
        longest_task,
        longtasks.len(),
        longest_event,
        event_name,
        events.len(),
    )
}

#[tokio::test]
async fn main_thread_tasks_on_load_and_while_moving_the_tile_slider_are_reported() {
    let page = Harness::start().await;
    thirtyfour::extensions::cdp::ChromeDevTools::new(page.driver.handle.clone())
        .execute_cdp_with_params(
            "Page.addScriptToEvaluateOnNewDocument",
            serde_json::json!({ "source": TASK_OBSERVER }),
        )
        .await
        .expect("Chromium runs the observers before the page's scripts");

    // The load: the page's module starts, the worker starts and answers the launch and its sweep.
    page.open("?lesson=matmul-naive").await;
    page.wait_for_simulated("report the naive matmul").await;
    page.wait_until_updated().await;
    let (task, tasks, _, _, _) = tasks_since_last_read(&page).await;
    println!(
        "main thread, load of ?lesson=matmul-naive until the sweep is complete: longest task \
         {task:.0} ms, {tasks} tasks over 50 ms (0 means none over 50 ms)"
    );

    // The interaction: a student drags the tile slider of the tiled matmul from 16 to 32, one
    // step per key, while the worker simulates.
    page.open("?lesson=matmul-tiled&tile=16").await;
    page.wait_for_text_where("sim-cost", "report the tiled matmul", |text| {
        text.starts_with("simulated 9 blocks of 4,096")
    })
    .await;
    page.wait_until_updated().await;
    tasks_since_last_read(&page).await;
    let tile = page.wait_for("[data-testid='control-tile-range']").await;
    tile.focus().await.expect("the tile slider takes focus");
    for _ in 16..32 {
        tile.send_keys(Key::Right)
            .await
            .expect("the keyboard moves the tile slider");
    }
    page.wait_for_url_containing("tile=32").await;
    page.wait_until_updated().await;
    let cost = page
        .wait_for_text_where("sim-cost", "report tile 32", |text| {
            text.starts_with("simulated 9 blocks of 1,024")
        })
        .await;
    let (task, tasks, event, event_name, events) = tasks_since_last_read(&page).await;
    println!(
        "main thread, tile slider 16 -> 32 on ?lesson=matmul-tiled (16 key presses): longest \
         task {task:.0} ms, {tasks} tasks over 50 ms; longest event {event:.0} ms, {event_name}, \
         {events} events over 16 ms"
    );
    println!("worker, mm_tiled n=1024 TILE=32: {cost}");

    // Typing: the student selects the number in the tile box and types 8 over it.
    let number = page.wait_for("[data-testid='control-tile']").await;
    number.focus().await.expect("the tile box takes focus");
    number
        .send_keys(Key::Control + "a")
        .await
        .expect("the student selects the tile width");
    number
        .send_keys("8")
        .await
        .expect("the student types a tile width");
    page.wait_for_url_containing("tile=8").await;
    page.wait_until_updated().await;
    let (task, tasks, event, event_name, events) = tasks_since_last_read(&page).await;
    println!(
        "main thread, typing tile 8 into the number box: longest task {task:.0} ms, {tasks} \
         tasks over 50 ms; longest event {event:.0} ms, {event_name}, {events} events over 16 ms"
    );
    page.finish().await;
}

/// The sandbox tokens the embed code gives (README, "Embedding in a course page").
const EMBED_SANDBOX: &str = "allow-scripts allow-same-origin allow-popups allow-downloads";

/// An attribute of an element that the page must have.
async fn attribute(element: &WebElement, name: &str) -> String {
    element
        .attr(name)
        .await
        .expect("the driver reads attributes")
        .unwrap_or_else(|| panic!("the element has a {name} attribute"))
}

#[tokio::test]
async fn an_embed_hides_the_header_and_footer_and_opens_the_same_view_in_a_new_tab() {
    let page = Harness::start().await;
    page.open("?lesson=row-per-thread&pad=1&embed=1").await;
    page.wait_for_simulated("report the row-per-thread kernel")
        .await;
    let open_full = page.wait_for("[data-testid='open-full']").await;
    let href = attribute(&open_full, "href").await;
    assert!(
        href.starts_with('?')
            && href.contains("lesson=bank-conflicts&variant=row-per-thread")
            && href.contains("pad=1"),
        "the link keeps the view: {href}"
    );
    assert!(!href.contains("embed"), "the link leaves the embed: {href}");
    assert_eq!(attribute(&open_full, "target").await, "_blank");
    assert_eq!(attribute(&open_full, "rel").await, "noopener");
    for absent in [
        ".site-header",
        ".site-footer",
        "[data-testid='copy-embed']",
        "#boot-status",
    ] {
        assert!(
            page.driver
                .find_all(By::Css(absent))
                .await
                .is_ok_and(|found| found.is_empty()),
            "an embed shows no {absent}"
        );
    }
    // The embed rewrites its own address like the full page does, and keeps its layout.
    page.wait_for_url_containing("embed=1").await;

    // A bad value falls back to the full page, with a note naming it.
    page.open("?lesson=row-per-thread&embed=yes").await;
    page.wait_for_text_where("url-notes", "name the bad embed value", |text| {
        text.contains("embed=yes is not one of 0, 1; using 0.")
    })
    .await;
    page.wait_for(".site-header").await;
    page.finish().await;
}

#[tokio::test]
async fn copy_embed_code_gives_the_iframe_of_the_view_with_its_sandbox_tokens() {
    let page = Harness::start().await;
    // The click waits for the worker's first answer: the render that shows it may replace the
    // button, and a click on the node it replaces reaches no handler.
    page.open_and_wait_for_results("?lesson=matmul-tiled&tile=8")
        .await;
    page.wait_for("[data-testid='copy-embed']")
        .await
        .click()
        .await
        .expect("Copy embed code is a button");
    let area = page.wait_for("[data-testid='embed-code']").await;
    let code = area
        .value()
        .await
        .expect("the driver reads the text area")
        .unwrap_or_default();
    let src = format!(
        "src=\"{}?device=h100&amp;lesson=tiled-matmul&amp;variant=tiled&amp;tile=8&amp;pad=0&amp;\
         regs=32&amp;embed=1\"",
        page.base_url
    );
    for part in [
        "<iframe ",
        src.as_str(),
        "title=\"memplay: Matrix multiply, tiled in shared memory\"",
        "loading=\"lazy\"",
        &format!("sandbox=\"{EMBED_SANDBOX}\""),
        "></iframe>",
    ] {
        assert!(code.contains(part), "the embed code has {part}: {code}");
    }
    assert_eq!(attribute(&area, "readonly").await, "true");
    // Headless Chromium may or may not grant the clipboard; either answer is shown.
    let status = page
        .wait_for_text_where(
            "embed-status",
            "answer whether the code was copied",
            |text| text.starts_with("Copied") || text.contains("Ctrl+C"),
        )
        .await;
    println!("copy embed code in headless Chromium: {status}");
    page.finish().await;
}

#[tokio::test]
async fn the_course_example_shows_two_lessons_and_an_instructors_own_in_sandboxed_frames() {
    let page = Harness::start().await;
    page.open("course-example.html").await;
    page.wait_for("iframe").await;
    let frames = page
        .driver
        .find_all(By::Css("iframe"))
        .await
        .expect("the course page has frames");
    assert_eq!(
        frames.len(),
        3,
        "the course example embeds two lessons and its own"
    );
    let mut titles = Vec::new();
    for (index, frame) in frames.iter().enumerate() {
        assert_eq!(attribute(frame, "sandbox").await, EMBED_SANDBOX);
        assert_eq!(attribute(frame, "loading").await, "lazy");
        titles.push(attribute(frame, "title").await);
        // A lazy frame loads once it nears the viewport.
        frame
            .scroll_into_view()
            .await
            .expect("the frame scrolls into view");
        page.driver
            .enter_frame(u16::try_from(index).expect("three frames"))
            .await
            .expect("the driver enters the frame");
        page.wait_for_simulated("report the embedded lesson").await;
        page.wait_for("[data-testid='open-full']").await;
        page.driver
            .enter_default_frame()
            .await
            .expect("the driver leaves the frame");
    }
    assert_ne!(titles[0], titles[1], "two different lessons");
    assert_eq!(
        titles[2], "memplay: Misaligned loads",
        "the instructor's own lesson"
    );
    page.finish().await;
}

/// Polls the course example's log of what its frames posted until `condition` holds for it;
/// returns the log. The log is read as text (textContent), as the course page writes it.
async fn wait_for_host_log(page: &Harness, what: &str, condition: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    let mut last = String::from("<no log>");
    loop {
        if let Ok(value) = page
            .driver
            .execute(
                "const log = document.querySelector(\"[data-testid='host-log']\"); \
                 return log ? log.textContent : null;",
                vec![],
            )
            .await
        {
            if let Some(text) = value.json().as_str() {
                if condition(text) {
                    return text.to_string();
                }
                last = text.to_string();
            }
        }
        assert!(
            start.elapsed() < DEADLINE,
            "the course page's log should {what}, it reads {last:?}"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// The lines of the log from the frame named `frame` whose message is of type `kind`.
fn host_log_lines<'a>(log: &'a str, frame: &str, kind: &str) -> Vec<&'a str> {
    let prefix = format!("{frame}: {kind} ");
    log.lines()
        .filter(|line| line.starts_with(&prefix))
        .collect()
}

/// The course example, once its first frame has posted `ready`.
async fn course_example_with_its_first_frame_ready() -> Harness {
    let page = Harness::start().await;
    page.open("course-example.html").await;
    wait_for_host_log(&page, "show the first frame's ready", |log| {
        !host_log_lines(log, "tiling", "ready").is_empty()
    })
    .await;
    page
}

#[tokio::test]
async fn a_frame_of_the_course_example_tells_the_course_page_that_it_runs() {
    let page = course_example_with_its_first_frame_ready().await;
    // Once it runs the frame writes its link, and says which settings it holds.
    let log = wait_for_host_log(&page, "show the first frame's settings", |log| {
        !host_log_lines(log, "tiling", "settings").is_empty()
    })
    .await;
    let settings = host_log_lines(&log, "tiling", "settings")[0];
    assert!(
        settings.contains("\"lesson\":\"tiled-matmul\""),
        "{settings}"
    );
    assert!(settings.contains("\"tile\":\"16\""), "{settings}");
    assert!(settings.contains("\"link\":\"?device=h100"), "{settings}");
    page.finish().await;
}

#[tokio::test]
async fn a_student_who_skips_the_prediction_uncovers_the_view_and_its_number() {
    let page = Harness::start().await;
    page.open("?lesson=bank-conflicts").await;
    page.wait_for_simulated("report the lesson's run").await;
    page.wait_for_text_where("key-number", "ask for a prediction first", |text| {
        text.starts_with("Predict first:")
    })
    .await;
    page.click("uncover-view").await;
    // The number the view holds is now at the top of the view, and the guide gives the answer
    // without judging a choice the student never made.
    let number = page
        .wait_for_text_where("key-number", "show the simulator's number", |text| {
            !text.starts_with("Predict first:")
        })
        .await;
    assert!(
        number.chars().any(|c| c.is_ascii_digit()),
        "the key number is a number: {number}"
    );
    assert!(!page.is_present("view-cover").await);
    let answer = page
        .wait_for_text_where("predict-answer", "give the simulator's answer", |text| {
            text.contains("The simulator, at the settings on the page:")
        })
        .await;
    assert!(
        !answer.contains("Your prediction"),
        "no verdict on a prediction never made: {answer}"
    );
    page.finish().await;
}

#[tokio::test]
async fn an_answer_revealed_in_a_frame_is_posted_to_the_course_page() {
    let page = course_example_with_its_first_frame_ready().await;
    page.driver
        .enter_frame(0)
        .await
        .expect("the driver enters the first frame");
    let choice = page.wait_for("[data-testid='predict-choice']").await;
    choice.click().await.expect("a choice is a radio button");
    page.wait_for("[data-testid='predict-reveal']")
        .await
        .click()
        .await
        .expect("the reveal is a button");
    page.driver
        .enter_default_frame()
        .await
        .expect("the driver leaves the frame");
    let log = wait_for_host_log(&page, "show the answer", |log| {
        !host_log_lines(log, "tiling", "answered").is_empty()
    })
    .await;
    let answered = host_log_lines(&log, "tiling", "answered")[0];
    println!("{answered}");
    assert!(
        answered.contains("\"lesson\":\"tiled-matmul\""),
        "{answered}"
    );
    assert!(answered.contains("\"choice\":\""), "{answered}");
    assert!(
        answered.contains("\"correct\":true") || answered.contains("\"correct\":false"),
        "{answered}"
    );
    page.finish().await;
}

#[tokio::test]
async fn a_button_of_the_course_page_sets_the_frames_tile_and_the_frame_reports_it() {
    let page = course_example_with_its_first_frame_ready().await;
    page.wait_for("[data-testid='set-tile-32']")
        .await
        .click()
        .await
        .expect("Tile 32 is a button");
    let log = wait_for_host_log(&page, "show settings with a tile of 32", |log| {
        host_log_lines(log, "tiling", "settings")
            .iter()
            .any(|line| line.contains("\"tile\":\"32\""))
    })
    .await;
    // The run at the new tile is reported with its counters.
    let results = wait_for_host_log(&page, "show a run's numbers", |log| {
        host_log_lines(log, "tiling", "results")
            .iter()
            .any(|line| line.contains("\"time_ms\":"))
    })
    .await;
    assert!(
        results.contains("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
        "{results}"
    );
    page.driver
        .enter_frame(0)
        .await
        .expect("the driver enters the first frame");
    // The frame's own link says the tile too (the driver's URL is the course page's).
    wait_for_script(
        &page,
        "return location.search.includes('tile=32');",
        "the frame's link",
    )
    .await;
    page.driver
        .enter_default_frame()
        .await
        .expect("the driver leaves the frame");
    println!("{log}");
    page.finish().await;
}

#[tokio::test]
async fn a_frame_pinned_to_its_course_pages_origin_talks_to_it_and_one_pinned_elsewhere_does_not() {
    let page = Harness::start().await;
    page.open("course-example.html").await;
    page.wait_for("iframe").await;
    // The first frame is pinned to this page's origin, the second to another one.
    page.driver
        .execute(
            "const frames = document.querySelectorAll('iframe'); \
             const pin = (frame, origin) => { frame.src = frame.getAttribute('src') \
                 + '&parent-origin=' + encodeURIComponent(origin); }; \
             pin(frames[0], location.origin); \
             pin(frames[1], 'https://elsewhere.example');",
            vec![],
        )
        .await
        .expect("the frames take new addresses");
    // The pinned frame has started (it listens before it posts) and keeps its origin in its link.
    wait_for_host_log(&page, "show the pinned frame's settings", |log| {
        host_log_lines(log, "tiling", "settings")
            .iter()
            .any(|line| line.contains("parent-origin=http%3A%2F%2F127.0.0.1"))
    })
    .await;
    page.wait_for("[data-testid='set-tile-32']")
        .await
        .click()
        .await
        .expect("Tile 32 is a button");
    // The pinned frame takes the course page's setting.
    wait_for_host_log(
        &page,
        "show the pinned frame's settings at tile 32",
        |log| {
            host_log_lines(log, "tiling", "settings")
                .iter()
                .any(|line| {
                    line.contains("parent-origin=http%3A%2F%2F127.0.0.1")
                        && line.contains("\"tile\":\"32\"")
                })
        },
    )
    .await;
    // The frame pinned elsewhere has written its link, so it has posted its settings: to an
    // origin that is not this page's, which the browser does not deliver.
    page.driver
        .enter_frame(1)
        .await
        .expect("the driver enters the second frame");
    wait_for_script(
        &page,
        "return location.search.includes('parent-origin=https%3A%2F%2Felsewhere.example');",
        "the second frame's link",
    )
    .await;
    page.wait_for_simulated("report the second frame's lesson")
        .await;
    page.driver
        .enter_default_frame()
        .await
        .expect("the driver leaves the frame");
    let log = wait_for_host_log(&page, "still hold the first frame's lines", |log| {
        !log.is_empty()
    })
    .await;
    assert!(
        !log.lines()
            .any(|line| line.starts_with("banks:") && line.contains("elsewhere.example")),
        "{log}"
    );
    page.finish().await;
}

/// Copies a folder (the built site) into another, subfolders included.
fn copy_folder(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("the temporary folder can be made");
    for entry in std::fs::read_dir(from).expect("the built site can be listed") {
        let entry = entry.expect("a directory entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_folder(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("a built file can be copied");
        }
    }
}

/// A copy of the built site, changed by `edit`, served on a port of its own; the shipped dist/
/// stays as it is. The server stops and the copy is removed when the value is dropped.
struct EditedSite {
    port: u16,
    folder: PathBuf,
    _server: Process,
}

impl EditedSite {
    async fn serve(edit: impl FnOnce(&std::path::Path)) -> EditedSite {
        let port = free_port();
        let folder =
            std::env::temp_dir().join(format!("memplay-e2e-site-{}-{port}", std::process::id()));
        copy_folder(&dist_dir(), &folder);
        edit(&folder);
        let server = Process(
            Command::new("python3")
                .args([
                    "-m",
                    "http.server",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--directory",
                ])
                .arg(&folder)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("python3 serves the copy"),
        );
        wait_for_port(port, "the copy's static file server").await;
        EditedSite {
            port,
            folder,
            _server: server,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }
}

impl Drop for EditedSite {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

#[tokio::test]
async fn a_frame_sandboxed_with_allow_scripts_alone_says_why_memplay_cannot_start() {
    // A course page that gives fewer tokens than the embed code.
    let site = EditedSite::serve(|folder| {
        std::fs::write(
            folder.join("scripts-only.html"),
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\" />\
             <title>allow-scripts alone</title></head><body>\
             <iframe src=\"index.html?lesson=matmul-tiled&amp;embed=1\" title=\"memplay\" \
             width=\"960\" height=\"760\" sandbox=\"allow-scripts\"></iframe></body></html>",
        )
        .expect("the test page is written");
    })
    .await;
    let page = Harness::start().await;
    page.driver
        .goto(site.url("scripts-only.html"))
        .await
        .expect("the test page loads");
    page.wait_for("iframe").await;
    page.driver
        .enter_frame(0)
        .await
        .expect("the driver enters the frame");
    let message = page
        .wait_for_text_where(
            "boot-status",
            "say what the frame's sandbox lacks",
            |text| text.contains("could not start") && text.contains("allow-same-origin"),
        )
        .await;
    println!("a frame with sandbox=\"allow-scripts\" alone shows: {message}");
    assert!(
        !page.is_present("kernel").await,
        "the app does not start in an opaque origin"
    );
    page.driver
        .enter_default_frame()
        .await
        .expect("the driver leaves the frame");
    page.finish().await;
}

#[tokio::test]
async fn a_bundle_that_fails_to_load_is_named_in_an_alert_instead_of_a_blank_page() {
    // The site without the page's script bundle: boot.js runs, its import fails.
    let site = EditedSite::serve(|folder| {
        for entry in std::fs::read_dir(folder).expect("the copy can be listed") {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with("memplay-web-") && name.ends_with(".js") {
                std::fs::remove_file(&path).expect("the bundle's script can be removed");
            }
        }
    })
    .await;
    let page = Harness::start().await;
    page.driver
        .goto(site.url("index.html?lesson=matmul-tiled"))
        .await
        .expect("the page loads");
    let message = page
        .wait_for_text_where("boot-status", "name the failed load", |text| {
            text.starts_with("memplay could not start here: its program failed to load")
        })
        .await;
    println!("a site without its bundle shows: {message}");
    let status = page.wait_for("[data-testid='boot-status']").await;
    assert_eq!(attribute(&status, "role").await, "alert");
    page.finish().await;
}

/// A folder of its own for one test's downloads, removed when the test ends.
struct DownloadFolder(PathBuf);

impl DownloadFolder {
    fn new(name: &str) -> DownloadFolder {
        let folder =
            std::env::temp_dir().join(format!("memplay-e2e-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(&folder).expect("a download folder");
        DownloadFolder(folder)
    }

    /// Polls until a finished download whose name satisfies `matches` is in the folder, and
    /// returns its name and bytes. Chromium writes a `.crdownload` file and renames it when done.
    async fn wait_for_file(&self, what: &str, matches: impl Fn(&str) -> bool) -> (String, Vec<u8>) {
        let start = Instant::now();
        loop {
            let names: Vec<String> = std::fs::read_dir(&self.0)
                .expect("the download folder can be listed")
                .filter_map(|entry| entry.ok())
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect();
            if let Some(name) = names
                .iter()
                .find(|name| !name.ends_with(".crdownload") && matches(name))
            {
                let bytes = std::fs::read(self.0.join(name)).expect("the download can be read");
                if !bytes.is_empty() {
                    return (name.clone(), bytes);
                }
            }
            assert!(
                start.elapsed() < DEADLINE,
                "{what} should arrive in {}, it holds {names:?}",
                self.0.display()
            );
            tokio::time::sleep(POLL).await;
        }
    }
}

impl Drop for DownloadFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Harness {
    async fn click(&self, test_id: &str) {
        self.wait_for(&format!("[data-testid='{test_id}']"))
            .await
            .click()
            .await
            .unwrap_or_else(|e| panic!("[data-testid={test_id}] can be clicked: {e}"));
    }

    /// Opens the tab `key` below the lesson's first screen by its button, as a student does, and
    /// waits until it is the open one.
    async fn open_tab(&self, key: &str) {
        self.click(&format!("tab-{key}")).await;
        self.wait_for(&format!("[data-testid='tab-{key}'][aria-selected='true']"))
            .await;
    }

    /// The value of a row of the counters table, by its label, without thousands separators.
    async fn counter_value(&self, label: &str) -> String {
        let table = self.wait_for("[data-testid='counters']").await;
        for row in table
            .find_all(By::Css("tr"))
            .await
            .expect("the table has rows")
        {
            let heading = row.find(By::Css("th")).await.expect("a row heading");
            if heading.text().await.expect("its text") == label {
                let value = row.find(By::Css("td")).await.expect("a value");
                return value.text().await.expect("its text").replace(',', "");
            }
        }
        panic!("the counters table has no row {label:?}");
    }
}

#[tokio::test]
async fn every_export_downloads_a_file_with_the_right_content() {
    let downloads = DownloadFolder::new("downloads");
    let page = Harness::start_downloading_to(&downloads.0).await;
    page.open("?lesson=matmul-tiled").await;
    page.wait_for_simulated("report the first run").await;
    page.wait_until_updated().await;
    let global_loads = page.counter_value("global load requests").await;

    // The counters as CSV: a header and the table's rows, with Nsight Compute's names.
    page.click("export-csv").await;
    let (_, csv) = downloads
        .wait_for_file("the counters CSV", |name| name == "mm_tiled-counters.csv")
        .await;
    let csv = String::from_utf8(csv).expect("the CSV is UTF-8");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "counter,metric,value", "{csv}");
    assert_eq!(lines.len(), 11, "a header and ten counters: {csv}");
    assert!(
        lines.contains(&&*format!(
            "global load requests,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,{global_loads}"
        )),
        "the CSV has the table's global load requests ({global_loads}): {csv}"
    );

    // The kernel as a .cu file: the text in the text area.
    let source = page
        .wait_for("[data-testid='kernel-source']")
        .await
        .prop("value")
        .await
        .expect("the text area has a value")
        .expect("a value");
    page.click("export-cu").await;
    let (_, kernel) = downloads
        .wait_for_file("the kernel", |name| name == "mm_tiled.cu")
        .await;
    assert_eq!(String::from_utf8(kernel).expect("UTF-8"), source);

    // The launch file: the launch the page simulated, which reruns to the page's results.
    page.click("export-launch").await;
    let (_, launch) = downloads
        .wait_for_file("the launch file", |name| name == "mm_tiled-launch.json")
        .await;
    let json: serde_json::Value = serde_json::from_slice(&launch).expect("the launch is JSON");
    assert_eq!(json["memplay_launch"], 1);
    assert_eq!(json["input"]["kernel"], "mm_tiled");
    assert_eq!(json["input"]["source"], source.as_str());
    assert_eq!(
        json["expected"]["counters"]["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
            .as_f64()
            .map(|value| value.to_string()),
        Some(global_loads.clone())
    );
    let file: memplay_sim::replay::LaunchFile =
        serde_json::from_slice(&launch).expect("the launch file reads as memplay replay reads it");
    let rerun = memplay_sim::simulate(&file.input).expect("the launch reruns");
    let time_ms = memplay_sim::timing::predict(&rerun).time_ms;
    assert_eq!(
        file.differences(&rerun.counters, time_ms),
        Vec::<String>::new(),
        "the page's counters and time are the simulator's"
    );

    // The sweep chart as SVG, standalone with its style, and as PNG.
    page.click("export-svg").await;
    let (name, svg) = downloads
        .wait_for_file("the chart's SVG", |name| name.ends_with(".svg"))
        .await;
    let svg = String::from_utf8(svg).expect("the SVG is UTF-8");
    assert_eq!(name, "time-vs-tile-width.svg");
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(
        svg.contains("xmlns=\"http://www.w3.org/2000/svg\""),
        "{svg}"
    );
    assert!(svg.contains("<style>"), "the SVG carries its style: {svg}");
    // On its own the chart keeps its text alternative: its name, and its numbers as <desc>.
    assert!(
        svg.contains("aria-label=\"Predicted time against tile width\"")
            && svg.contains("<desc>Predicted time against tile width: 4 ")
            && !svg.contains("aria-describedby"),
        "the SVG carries its name and description: {svg}"
    );
    page.click("export-png").await;
    let (_, png) = downloads
        .wait_for_file("the chart's PNG", |name| name.ends_with(".png"))
        .await;
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG file");

    // The other charts have their own buttons, in the lesson's tabs.
    page.open_tab("roofline").await;
    page.click("export-svg-roofline").await;
    let (_, roofline) = downloads
        .wait_for_file("the roofline's SVG", |name| name == "roofline-h100.svg")
        .await;
    assert!(roofline.starts_with(b"<svg"));
    page.open_tab("occupancy").await;
    page.click("export-png-occupancy-registers").await;
    downloads
        .wait_for_file("an occupancy chart's PNG", |name| {
            name == "occupancy-vs-registers.png"
        })
        .await;

    // An edited kernel is exported as edited.
    let edited = format!("// edited\n{source}");
    page.open_tab("kernel").await;
    page.run_kernel(&edited).await;
    page.wait_for("[data-testid='reset-source']").await;
    page.wait_until_updated().await;
    // The first export goes, so that the second one's name is the same whatever Chromium does
    // with a name already taken.
    std::fs::remove_file(downloads.0.join("mm_tiled.cu")).expect("the first .cu can be removed");
    page.click("export-cu").await;
    let (_, kernel) = downloads
        .wait_for_file("the edited kernel", |name| name == "mm_tiled.cu")
        .await;
    assert_eq!(String::from_utf8(kernel).expect("UTF-8"), edited);
    page.finish().await;
}

/// Moves every file of the copied site into `sub_path` under it, as an instructor who copies the
/// built folder into a course site's folder does.
fn move_into(folder: &std::path::Path, sub_path: &str) {
    // The files go into a folder aside first, since the sub-path's first folder may have the
    // name of one of the site's own (its `course/`).
    const ASIDE: &str = ".site-being-moved";
    let aside = folder.join(ASIDE);
    std::fs::create_dir(&aside).expect("a folder aside can be made");
    for entry in std::fs::read_dir(folder).expect("the copy can be listed") {
        let entry = entry.expect("a directory entry");
        if entry.file_name() != ASIDE {
            std::fs::rename(entry.path(), aside.join(entry.file_name()))
                .expect("a built file can be moved");
        }
    }
    let target = folder.join(sub_path);
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).expect("the sub-path's folders can be made");
    }
    std::fs::rename(&aside, &target).expect("the site moves into its sub-path");
}

/// Polls until `script` (the body of a function, which may return a promise) returns true.
async fn wait_for_script(page: &Harness, script: &str, what: &str) {
    let start = Instant::now();
    loop {
        let value = page.driver.execute(script, vec![]).await;
        if value
            .as_ref()
            .is_ok_and(|value| value.json() == &serde_json::json!(true))
        {
            return;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "{what}: `{script}` should return true, last {:?}",
            value.map(|value| value.json().clone())
        );
        tokio::time::sleep(POLL).await;
    }
}

/// The names of the page's caches (the service worker's).
async fn cache_names(page: &Harness) -> Vec<String> {
    let names = page
        .driver
        .execute("return caches.keys();", vec![])
        .await
        .expect("the page can list its caches");
    serde_json::from_value(names.json().clone()).expect("cache names are strings")
}

const CONTROLLED: &str = "return navigator.serviceWorker.controller !== null;";

#[tokio::test]
async fn after_one_visit_a_reload_and_every_lesson_work_with_the_server_gone() {
    // The site under a sub-path of the host, as an instructor copies it into a course site.
    let site = EditedSite::serve(|folder| move_into(folder, "course/memplay")).await;
    let url = site.url("course/memplay/index.html?lesson=matmul-tiled");
    let page = Harness::start().await;
    page.driver.goto(&url).await.expect("the page loads");
    page.wait_for_simulated("report the first run").await;
    wait_for_script(&page, CONTROLLED, "the service worker takes over the page").await;
    let caches = cache_names(&page).await;
    assert_eq!(caches.len(), 1, "one cache, of this build: {caches:?}");

    // Online, the page the service worker controls runs as the first did.
    page.driver.goto(&url).await.expect("the page reloads");
    page.wait_for_simulated("report a run from a controlled page")
        .await;
    // The network is gone: the server stops and its files are deleted.
    drop(site);
    page.driver.goto(&url).await.expect("the page reloads");
    page.wait_for_simulated("report a run offline").await;
    assert!(
        !page.is_present("boot-status").await,
        "the app started offline"
    );

    // Every lesson of the menu runs, offline.
    let select = page.wait_for("[data-testid='control-lesson']").await;
    let mut lessons = Vec::new();
    for option in select
        .find_all(By::Css("option"))
        .await
        .expect("the lesson menu has options")
    {
        lessons.push(attribute(&option, "value").await);
    }
    assert!(lessons.len() >= 5, "the lesson menu lists {lessons:?}");
    for lesson in &lessons {
        let select = page.wait_for("[data-testid='control-lesson']").await;
        thirtyfour::components::SelectElement::new(&select)
            .await
            .expect("the lesson control is a select")
            .select_by_value(lesson)
            .await
            .expect("every lesson can be chosen");
        page.wait_for_url_containing(&format!("lesson={lesson}"))
            .await;
        page.wait_until_updated().await;
        assert!(
            !page.is_present("worker-failure").await,
            "lesson {lesson} runs offline"
        );
        // The worker answered offline: with the run, or with the kernel's error where the lesson
        // opens on one (boundary-checks).
        page.wait_for_run_or_kernel_error().await;
    }
    println!(
        "offline, from the cache under a sub-path: a reload and {} lessons ran",
        lessons.len()
    );
    page.finish().await;
}

#[tokio::test]
async fn a_new_deploy_replaces_the_cached_build() {
    let site = EditedSite::serve(|_| {}).await;
    let url = site.url("index.html?lesson=adj-diff-naive");
    let page = Harness::start().await;
    page.driver.goto(&url).await.expect("the page loads");
    wait_for_script(&page, CONTROLLED, "the service worker takes over the page").await;
    let first = cache_names(&page).await;
    assert_eq!(first.len(), 1, "{first:?}");

    // A new deploy: the page changed, so the build hook wrote a sw.js with a new build hash.
    let service_worker =
        std::fs::read_to_string(site.folder.join("sw.js")).expect("sw.js is built");
    let build_line = service_worker
        .lines()
        .find(|line| line.starts_with("const BUILD = "))
        .expect("sw.js names its build")
        .to_string();
    std::fs::write(
        site.folder.join("sw.js"),
        service_worker.replace(&build_line, "const BUILD = \"a-newer-deploy\";"),
    )
    .expect("the new sw.js is written");
    let index = std::fs::read_to_string(site.folder.join("index.html")).expect("the page is built");
    std::fs::write(
        site.folder.join("index.html"),
        index.replace(
            "<title>memplay</title>",
            "<title>memplay, deployed again</title>",
        ),
    )
    .expect("the new page is written");
    // The static server answers a revalidation by the file's time in whole seconds, so a page
    // rewritten within the second it was copied would look unchanged: the new deploy is dated
    // a minute on, as a real one would be.
    for file in ["index.html", "sw.js"] {
        std::fs::File::options()
            .write(true)
            .open(site.folder.join(file))
            .and_then(|f| f.set_modified(SystemTime::now() + Duration::from_secs(60)))
            .expect("the new deploy's files are dated");
    }

    // The next visit shows the new page, and the new worker's cache replaces the old one.
    page.driver.goto(&url).await.expect("the page loads again");
    wait_for_script(
        &page,
        "return document.title === 'memplay, deployed again';",
        "the new page shows at once",
    )
    .await;
    wait_for_script(
        &page,
        "return caches.keys().then((names) => names.length === 1 && names[0] === 'memplay-a-newer-deploy');",
        "the new build's cache replaces the old one",
    )
    .await;
    page.finish().await;
}

impl Harness {
    /// The address of the page now, fragment included.
    async fn current_url(&self) -> String {
        self.driver
            .current_url()
            .await
            .expect("the driver reports the URL")
            .to_string()
    }

    /// Polls until the address satisfies `condition`; returns it.
    async fn wait_for_url_where(&self, what: &str, condition: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let url = self.current_url().await;
            if condition(&url) {
                return url;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "the URL should {what}, it is {url}"
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// Polls until the kernel text area holds `expected`.
    async fn wait_for_kernel_source(&self, what: &str, expected: &str) {
        let start = Instant::now();
        loop {
            let area = self.wait_for("[data-testid='kernel-source']").await;
            let value = area.prop("value").await.ok().flatten().unwrap_or_default();
            if value == expected {
                return;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "the kernel source should be {what}; it starts {:?}",
                value.chars().take(120).collect::<String>()
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// Loads `url` afresh: a new document, not a jump to a fragment of the one on the screen.
    async fn load_afresh(&self, url: &str) {
        self.driver
            .goto("about:blank")
            .await
            .expect("the browser leaves the page");
        self.driver.goto(url).await.expect("the page loads");
    }
}

/// `bytes`, a Python expression, compressed as a link's `#src=1.` payload: raw deflate in
/// base64url without padding, made by Python's zlib (Python serves the page in these tests
/// anyway), so a payload need not come from the page to be read by it.
fn python_payload(bytes: &str) -> String {
    let script = format!(
        "import base64, sys, zlib\n\
         packer = zlib.compressobj(9, zlib.DEFLATED, -15)\n\
         packed = packer.compress({bytes}) + packer.flush()\n\
         sys.stdout.write(base64.urlsafe_b64encode(packed).decode().rstrip('='))"
    );
    let output = Command::new("python3")
        .args(["-c", &script])
        .output()
        .expect("python3 runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).expect("base64url is ASCII")
}

#[tokio::test]
async fn an_edited_kernel_is_shared_in_the_links_fragment_and_a_corrupt_one_falls_back() {
    use memplay_sim::lesson_kernels::ADJ_DIFF;
    let page = Harness::start_with(Logs::Kept).await;
    page.open("?lesson=adj-diff-naive").await;
    page.wait_for_simulated("report the first run").await;
    page.wait_until_updated().await;
    let lesson_counters = page
        .wait_for_text_where("counters", "show the lesson's counters", |text| {
            !text.is_empty()
        })
        .await;
    let lesson_loads: f64 = page
        .counter_value("global load requests")
        .await
        .parse()
        .expect("a number");

    // The student adds two loads of new elements to every thread's difference (a reload of
    // `input[i]` would not count: the compiled code keeps it in a register): the launch's
    // global load requests double, and the edit goes into the link's fragment.
    let edited = ADJ_DIFF.replace(
        "input[i] - input[i - 1];",
        "input[i] - input[i - 1] + input[i / 2] - input[i / 3];",
    );
    assert_ne!(edited, ADJ_DIFF, "the lesson's kernel has the line edited");
    page.run_kernel(&edited).await;
    let edited_counters = page
        .wait_for_text_where("counters", "change with the edit", |text| {
            !text.is_empty() && text != lesson_counters
        })
        .await;
    let edited_loads: f64 = page
        .counter_value("global load requests")
        .await
        .parse()
        .expect("a number");
    assert_eq!(edited_loads, 2.0 * lesson_loads, "{edited_counters}");
    let link = page
        .wait_for_url_where("carry the edit in #src=", |url| url.contains("#src=1."))
        .await;
    // The query is written as before, and the kernel only after the `#`.
    let (query, fragment) = link.split_once('#').expect("a fragment");
    assert!(
        query.contains("?device=h100&")
            && query.contains("&lesson=adjacent-difference&variant=naive&"),
        "{link}"
    );
    assert!(
        !query.contains("src="),
        "the kernel stays out of the query: {link}"
    );
    assert!(
        fragment.len() < 1_000,
        "a small edit makes a short link: {link}"
    );
    page.wait_for_text_where("source-link", "say the edit is in the address", |text| {
        text.starts_with("Your edit is in this page's address")
    })
    .await;

    // The link opened afresh shows the edit, and the result of the edit.
    page.load_afresh(&link).await;
    page.wait_for_kernel_source("the edit from the link", &edited)
        .await;
    page.wait_for_text("counters", &edited_counters).await;
    page.wait_for("[data-testid='reset-source']").await;
    assert_eq!(
        page.current_url().await,
        link,
        "the link keeps its fragment"
    );

    // A fragment that is base64url but not deflate: the lesson's own kernel and a note.
    let corrupt = format!("{query}#src=1.____");
    page.load_afresh(&corrupt).await;
    let note = page
        .wait_for_text_where("url-notes", "name the broken kernel", |text| {
            text.contains("src=1.____ is not a kernel memplay can read")
        })
        .await;
    assert!(note.contains("using the lesson's own kernel"), "{note}");
    page.wait_for_kernel_source("the lesson's own", ADJ_DIFF)
        .await;
    page.wait_for_text("counters", &lesson_counters).await;
    page.wait_for_url_where("lose the broken fragment", |url| !url.contains('#'))
        .await;

    // A zip bomb: 5,440 characters that unpack to 4 MiB of zeros. The page stops unpacking at
    // its 1 MiB limit and says so.
    let bomb = python_payload("bytes(4 << 20)");
    assert!(
        bomb.len() < 7_000 - 6,
        "the bomb fits a link: {}",
        bomb.len()
    );
    page.load_afresh(&format!("{query}#src=1.{bomb}")).await;
    page.wait_for_text_where("url-notes", "name the limit", |text| {
        text.contains("unpacks to more than 1,048,576 bytes")
    })
    .await;
    page.wait_for_kernel_source("the lesson's own", ADJ_DIFF)
        .await;
    page.wait_for_text("counters", &lesson_counters).await;

    // A kernel that does not compress into 7,000 characters stays on the page, out of the
    // link, with a message saying how to share it instead.
    let mut seed: u64 = 1;
    let noise: String = (0..20_000)
        .map(|_| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            char::from(b'!' + (seed >> 58) as u8)
        })
        .collect();
    page.run_kernel(&format!("// {noise}\n{ADJ_DIFF}")).await;
    let message = page
        .wait_for_text_where("source-link", "say the kernel is too large", |text| {
            text.starts_with("This kernel is too large to put into a link")
        })
        .await;
    assert!(message.contains("Download buttons"), "{message}");
    assert!(!page.current_url().await.contains('#'));

    // Nothing above is an error in the console: a broken link is a note, not a failure.
    let errors: Vec<serde_json::Value> = page
        .read_log("browser")
        .await
        .into_iter()
        .filter(|entry| entry["level"] == "SEVERE")
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:?}");
    page.finish().await;
}

/// The source of axe-core's `axe.min.js`, which the accessibility test injects into the pages it
/// checks: the file MEMPLAY_AXE names, or where `cargo xtask test` installs it. It is a test tool
/// only; nothing of the built site loads it.
fn axe_source() -> String {
    let path = std::env::var_os("MEMPLAY_AXE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../target/tools/axe-core/node_modules/axe-core/axe.min.js"
            ))
        });
    std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "axe-core is missing: cannot read {} ({error}). `cargo xtask test` installs the npm \
             package axe-core into target/tools/axe-core/ and names its axe.min.js in MEMPLAY_AXE",
            path.display()
        )
    })
}

/// Runs axe over the whole document and answers its version and every violation: its rule, its
/// impact, what to do, how many elements break it and the first few of them as CSS selectors.
const AXE_RUN: &str = r#"
const done = arguments[arguments.length - 1];
axe.run(document, { resultTypes: ["violations"] }).then(
  (results) => done({
    version: axe.version,
    violations: results.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      count: v.nodes.length,
      targets: v.nodes.slice(0, 4).map((node) => node.target.join(" ")),
    })),
  }),
  (error) => done({ error: String(error) }));
"#;

/// One violation as a line of a report: rule, impact, advice and where.
fn violation_line(violation: &serde_json::Value) -> String {
    let targets: Vec<&str> = violation["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|target| target.as_str())
        .collect();
    format!(
        "{} ({}): {}; {} element(s), such as {}",
        violation["id"].as_str().unwrap_or("?"),
        violation["impact"].as_str().unwrap_or("no impact"),
        violation["help"].as_str().unwrap_or("?"),
        violation["count"],
        targets.join(" | ")
    )
}

impl Harness {
    /// Injects axe-core into the page on the screen (WebDriver's scripts are not the page's, so
    /// its Content-Security-Policy does not stop them), runs it, and returns every violation.
    async fn axe_violations(&self, axe: &str, what: &str) -> Vec<serde_json::Value> {
        let axe_type = "return typeof axe;";
        let before = self.driver.execute(axe_type, vec![]).await;
        assert_eq!(
            before.expect("the page answers a script").json(),
            "undefined",
            "the page itself never loads axe-core ({what})"
        );
        self.driver
            .execute(axe, vec![])
            .await
            .unwrap_or_else(|e| panic!("axe-core can be injected into {what}: {e}"));
        let after = self.driver.execute(axe_type, vec![]).await;
        assert_eq!(
            after.expect("the page answers a script").json(),
            "object",
            "axe-core is defined once injected into {what}, under the page's policy"
        );
        let answer = self
            .driver
            .execute_async(AXE_RUN, vec![])
            .await
            .unwrap_or_else(|e| panic!("axe-core runs on {what}: {e}"))
            .json()
            .clone();
        assert!(
            answer["error"].is_null(),
            "axe-core failed on {what}: {}",
            answer["error"]
        );
        println!(
            "axe-core {} on {what}: {} violation(s)",
            answer["version"].as_str().unwrap_or("?"),
            answer["violations"].as_array().map_or(0, Vec::len)
        );
        answer["violations"].as_array().cloned().unwrap_or_default()
    }

    /// Opens `query` and waits until the page shows the results of its settings: the lesson's
    /// run and its sweep are back and nothing is pending.
    async fn open_and_wait_for_results(&self, query: &str) {
        self.open(query).await;
        // A lesson that opens on a failing kernel (boundary-checks) is checked as it shows its
        // error; it has no sweep, since a launch that fails is not swept.
        if self.wait_for_run_or_kernel_error().await {
            self.wait_until_updated().await;
            self.wait_for("[data-testid='time-sweep'] svg").await;
        }
    }
}

#[tokio::test]
async fn axe_finds_no_serious_or_critical_violation_on_the_page_an_embed_and_every_lesson() {
    let axe = axe_source();
    let page = Harness::start().await;
    ChromeDevTools::new(page.driver.handle.clone())
        .execute_cdp_with_params(
            "Page.addScriptToEvaluateOnNewDocument",
            serde_json::json!({ "source": VIOLATION_LISTENER }),
        )
        .await
        .expect("the DevTools protocol installs the violation listener");
    page.driver
        .set_script_timeout(Duration::from_secs(120))
        .await
        .expect("axe-core may take a while on a slow machine");

    // The main page, opened without a query, offers the lessons in its menu: every key there is
    // checked, so that a new lesson is checked without a list kept here.
    page.open_and_wait_for_results("").await;
    let mut lessons = Vec::new();
    for option in page
        .driver
        .find_all(By::Css("[data-testid='control-lesson'] option"))
        .await
        .expect("the lesson menu has options")
    {
        lessons.push(
            option
                .value()
                .await
                .expect("an option has a value")
                .expect("every lesson has a key"),
        );
    }
    assert!(
        lessons.len() >= 5 && lessons.iter().any(|key| key == "tiled-matmul"),
        "the lesson menu lists the lessons: {lessons:?}"
    );
    // Each check: what it is, its query, and the window it is seen in. The embed is seen at the
    // size of the embed code's frame, where the bank map scrolls sideways.
    let mut checks = vec![("the main page".to_string(), String::new(), (1280, 1600))];
    checks.push((
        "an embedded lesson".to_string(),
        "?lesson=transpose-shared&pattern=tile-column&pad=0&embed=1".to_string(),
        (800, 600),
    ));
    for key in &lessons {
        checks.push((
            format!("lesson {key}"),
            format!("?lesson={key}"),
            (1280, 1600),
        ));
    }

    let mut failures = Vec::new();
    for (what, query, (width, height)) in &checks {
        page.driver
            .set_window_rect(0, 0, *width, *height)
            .await
            .expect("the window can be resized");
        page.open_and_wait_for_results(query).await;
        let violations = page.axe_violations(&axe, what).await;
        for violation in &violations {
            println!("  {}", violation_line(violation));
            if matches!(violation["impact"].as_str(), Some("serious" | "critical")) {
                failures.push(format!(
                    "{what} (?{}): {}",
                    query.trim_start_matches('?'),
                    violation_line(violation)
                ));
            }
        }
        // axe-core ran under the page's policy, and the page kept to it.
        let policy = page
            .driver
            .execute("return window.memplayViolations;", vec![])
            .await
            .expect("the page answers a script")
            .json()
            .clone();
        assert_eq!(
            policy,
            serde_json::json!([]),
            "{what} broke the page's Content-Security-Policy"
        );
    }
    assert!(
        failures.is_empty(),
        "serious or critical accessibility violations:\n{}",
        failures.join("\n")
    );
    page.finish().await;
}

/// How the keyboard tests name an element: its test id, its id, or the test id of the nearest
/// element around it that has one and its own tag ("numbers-time-sweep summary").
const NAME_OF_ELEMENT: &str = r#"
const nameOf = (element) => {
  if (element.dataset.testid) return element.dataset.testid;
  if (element.id) return element.id;
  const around = element.closest("[data-testid]");
  return (around ? around.dataset.testid + " " : "") + element.tagName.toLowerCase();
};
"#;

/// What the keyboard test reads of the focused element: its name, whether the browser shows it as
/// keyboard-focused (`:focus-visible`), and the outline it draws around it; null when the focus
/// is on no element of the page.
const DESCRIBE_FOCUS: &str = r#"
const element = document.activeElement;
if (!element || element === document.body) return null;
const style = getComputedStyle(element);
return {
  who: nameOf(element),
  focus_visible: element.matches(":focus-visible"),
  outline_style: style.outlineStyle,
  outline_width: parseFloat(style.outlineWidth) || 0,
};
"#;

/// Every element of the page that the keyboard should reach: the controls, links, disclosure
/// summaries and anything given a tab stop. Elements that are not rendered (in a closed
/// disclosure, or hidden by the layout) are left out: Chromium lays out a closed disclosure's
/// content when asked for its boxes, so `checkVisibility` tells that it is not shown.
const FOCUSABLE_ELEMENTS: &str = r#"
return [...document.querySelectorAll(
    "a[href], button:not([tabindex='-1']), input, select, textarea, summary, \
     [tabindex]:not([tabindex='-1'])")]
  .filter((element) =>
    element.getClientRects().length > 0 && element.checkVisibility() && !element.disabled)
  .map(nameOf);
"#;

impl Harness {
    /// The computed accessible role, name and description of the element that a JavaScript
    /// expression gives, from Chromium's accessibility tree: what a screen reader is told.
    async fn accessible_text_of(&self, expression: &str) -> (String, String, String) {
        let devtools = ChromeDevTools::new(self.driver.handle.clone());
        let found = devtools
            .execute_cdp_with_params(
                "Runtime.evaluate",
                serde_json::json!({ "expression": expression }),
            )
            .await
            .expect("the DevTools protocol evaluates an expression");
        let object = found["result"]["objectId"]
            .as_str()
            .unwrap_or_else(|| panic!("{expression} is no element: {found}"));
        let tree = devtools
            .execute_cdp_with_params(
                "Accessibility.getPartialAXTree",
                serde_json::json!({ "objectId": object, "fetchRelatives": false }),
            )
            .await
            .expect("the DevTools protocol reads the accessibility tree");
        let node = &tree["nodes"][0];
        let text = |field: &str| {
            node[field]["value"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        (text("role"), text("name"), text("description"))
    }

    /// The accessible role, name and description of the first element `css` selects.
    async fn accessible_text(&self, css: &str) -> (String, String, String) {
        self.wait_for(css).await;
        self.accessible_text_of(&format!(
            "document.querySelector({})",
            serde_json::json!(css)
        ))
        .await
    }

    /// Clicks the first element that `css` selects.
    async fn click_css(&self, css: &str) {
        self.wait_for(css)
            .await
            .click()
            .await
            .unwrap_or_else(|e| panic!("{css} can be clicked: {e}"));
    }

    /// Clicks just inside the top left corner of the first element `css` selects, where a box
    /// with padding has none of its content: the keyboard's walk then starts at that element.
    async fn click_top_left_corner_of(&self, css: &str) {
        self.wait_for(css).await;
        let corner = self
            .driver
            .execute(
                "const box = document.querySelector(arguments[0]);
                 box.scrollIntoView();
                 const rect = box.getBoundingClientRect();
                 return [Math.ceil(rect.left) + 2, Math.ceil(rect.top) + 2];",
                vec![serde_json::Value::from(css)],
            )
            .await
            .expect("the page reports the element's corner");
        let corner: Vec<i64> = serde_json::from_value(corner.json().clone()).expect("two numbers");
        self.driver
            .action_chain()
            .move_to(corner[0], corner[1])
            .click()
            .perform()
            .await
            .unwrap_or_else(|e| panic!("{css} can be clicked in its corner: {e}"));
    }

    /// Presses a key as a keyboard does, on whatever has the focus.
    async fn press(&self, key: Key) {
        self.driver
            .action_chain()
            .send_keys(key)
            .perform()
            .await
            .expect("the keyboard presses a key");
    }

    /// Presses Tab and describes the element that then has the focus (DESCRIBE_FOCUS).
    async fn tab(&self) -> serde_json::Value {
        self.press(Key::Tab).await;
        self.driver
            .execute(&format!("{NAME_OF_ELEMENT}{DESCRIBE_FOCUS}"), vec![])
            .await
            .expect("the page describes its focused element")
            .json()
            .clone()
    }
}

#[tokio::test]
async fn tab_reaches_every_control_with_a_visible_focus_ring_and_a_distinct_name() {
    let page = Harness::start().await;
    page.open_and_wait_for_results("?lesson=matmul-tiled&tile=16")
        .await;
    // Once the student has asked for the embed code, its text area is one more control.
    page.click("copy-embed").await;
    page.wait_for("[data-testid='embed-code']").await;
    // The walk is made with the kernel's tab open and again with the roofline's: every control
    // of the page is in one of them or in what the two share.
    let mut reached_in_any: Vec<String> = Vec::new();
    for tab in ["kernel", "roofline"] {
        page.open_tab(tab).await;
        let expected: Vec<String> = serde_json::from_value(
            page.driver
                .execute(&format!("{NAME_OF_ELEMENT}{FOCUSABLE_ELEMENTS}"), vec![])
                .await
                .expect("the page lists its focusable elements")
                .json()
                .clone(),
        )
        .expect("a list of names");

        // From the top of the page (a click in the header's corner, beside its links, starts the
        // keyboard's walk there), Tab after Tab, until the focus leaves the page.
        page.click_top_left_corner_of(".site-header").await;
        let mut reached: Vec<String> = Vec::new();
        let mut without_ring = Vec::new();
        let mut names: Vec<(String, String, String)> = Vec::new();
        loop {
            let focused = page.tab().await;
            if focused.is_null() {
                break;
            }
            let who = focused["who"].as_str().unwrap_or("?").to_string();
            if reached.first() == Some(&who) {
                break;
            }
            let ring = focused["focus_visible"] == true
                && focused["outline_style"] != "none"
                && focused["outline_width"].as_f64().unwrap_or(0.0) >= 2.0;
            if !ring {
                without_ring.push(format!("{who}: {focused}"));
            }
            let (role, name, _) = page.accessible_text_of("document.activeElement").await;
            println!("{tab} tab: {who:<36} {role:<12} {name}");
            names.push((who.clone(), role, name));
            reached.push(who);
            assert!(
                reached.len() < 200,
                "Tab should leave the page: {reached:?}"
            );
        }
        let missed: Vec<&String> = expected.iter().filter(|e| !reached.contains(e)).collect();
        assert!(
            missed.is_empty(),
            "with the {tab} tab open, Tab never reaches {missed:?}; it reached {reached:?}"
        );
        assert!(
            without_ring.is_empty(),
            "focused without a visible focus ring: {without_ring:?}"
        );
        // A screen reader announces each stop by its role and name: no name is empty, and no
        // two stops are alike (the charts' many "SVG" buttons say which chart they save; the
        // tile width's slider and number box share a name but not a role).
        for (who, role, name) in &names {
            assert!(!name.trim().is_empty(), "{who} has no accessible name");
            let alike: Vec<&String> = names
                .iter()
                .filter(|(_, other_role, other)| (other_role, other) == (role, name))
                .map(|(other_who, _, _)| other_who)
                .collect();
            assert_eq!(alike.len(), 1, "{alike:?} are all a {role} named {name:?}");
        }
        reached_in_any.extend(reached);
    }
    let reached = reached_in_any;
    // The page's own controls, so that a page that lost them cannot pass.
    for control in [
        "control-device",
        "control-tile-range",
        "control-lesson",
        "kernel-source",
        "run",
        "export-png-roofline",
        "numbers-time-sweep summary",
    ] {
        assert!(
            reached.iter().any(|who| who == control),
            "Tab reaches {control}: {reached:?}"
        );
    }
    page.finish().await;
}

#[tokio::test]
async fn a_chart_s_numbers_open_from_the_keyboard_and_every_chart_describes_its_numbers() {
    let page = Harness::start().await;
    page.open_and_wait_for_results("?lesson=matmul-tiled&tile=16&pattern=row-per-thread&pad=0")
        .await;
    let throughput = page
        .wait_for_text_where("throughput", "show a prediction", |t| t.contains(" ms · "))
        .await;
    let now = throughput
        .split(" · ")
        .next()
        .unwrap_or_default()
        .to_string();

    // A screen reader hears the sweep chart's name, and its points as its description.
    let (role, name, description) = page.accessible_text("[data-testid='time-sweep'] svg").await;
    assert_eq!(role, "image", "the sweep chart is an image");
    assert_eq!(name, "Predicted time against tile width");
    assert!(
        description.contains("Now tile width 16."),
        "the description names the current tile width: {description}"
    );

    // The keyboard: from the chart's caption, Tab reaches its "Numbers", and Enter opens them.
    page.click_css("[data-testid='time-sweep'] figcaption")
        .await;
    let mut presses = 0;
    while page.tab().await["who"] != "numbers-time-sweep summary" {
        presses += 1;
        assert!(
            presses < 5,
            "Tab from the chart reaches its Numbers within a few presses"
        );
    }
    let table = page
        .wait_for("[data-testid='numbers-time-sweep'] table")
        .await;
    assert!(
        !table
            .is_displayed()
            .await
            .expect("the driver sees the table"),
        "the numbers are closed until asked for"
    );
    page.press(Key::Enter).await;
    let start = Instant::now();
    while !table
        .is_displayed()
        .await
        .expect("the driver sees the table")
    {
        assert!(
            start.elapsed() < DEADLINE,
            "Enter opens the chart's numbers"
        );
        tokio::time::sleep(POLL).await;
    }
    let mut rows = Vec::new();
    for row in table
        .find_all(By::Css("tbody tr"))
        .await
        .expect("the table has rows")
    {
        rows.push(row.text().await.expect("a row has text"));
    }
    assert_eq!(rows.len(), 4, "one row per tile width: {rows:?}");
    for (row, tile) in rows.iter().zip([4, 8, 16, 32]) {
        // "16 0.268 ms (now)": the tile width and its time, which the description has too.
        let point = row.split(" (").next().unwrap_or_default();
        assert!(
            point.starts_with(&format!("{tile} ")) && point.ends_with(" ms"),
            "the row of tile {tile} gives its time: {rows:?}"
        );
        assert!(
            description.contains(point),
            "the description has {point:?} as the table does: {description}"
        );
    }
    assert!(
        rows[2].starts_with(&format!("16 {now} (now")),
        "the current tile's row says so in words, with the headline's time {now}: {rows:?}"
    );

    // The occupancy charts describe their runs of occupancy, among them the launch's own.
    page.open_tab("occupancy").await;
    let occupancy = page
        .wait_for("[data-testid='occupancy'] .stats dd")
        .await
        .text()
        .await
        .expect("the occupancy has text");
    for (kind, axis) in [
        ("block-size", "threads per block"),
        ("registers", "registers per thread"),
        ("shared-memory", "shared memory per block (B)"),
    ] {
        let (chart_role, chart_name, chart_description) = page
            .accessible_text(&format!(
                "svg[aria-describedby='description-occupancy-{kind}']"
            ))
            .await;
        assert_eq!(chart_role, "image", "the {kind} chart is an image");
        assert!(chart_name.contains(&occupancy), "{chart_name}");
        assert!(
            chart_description.starts_with(&format!("Occupancy against {axis}: "))
                && chart_description.contains(&format!("{occupancy} ")),
            "the {kind} chart's description has its runs, {occupancy} among them: \
             {chart_description}"
        );
    }

    // The roofline's description is the text beside it, numbers and all.
    page.open_tab("roofline").await;
    let (role, name, description) = page.accessible_text("svg.roofline").await;
    let datasheet = page
        .wait_for("#roofline-facts li")
        .await
        .text()
        .await
        .expect("the first fact has text");
    assert_eq!(role, "image");
    assert!(name.starts_with("Roofline of the "), "{name}");
    assert!(
        description.contains(&datasheet) && description.contains("GFLOP/s"),
        "the roofline is described by its facts ({datasheet}): {description}"
    );

    // The bank map's conflicts are named in words, not only coloured and striped: the bank map
    // is the bank-conflicts lesson's pattern explorer, in its tab.
    page.open_and_wait_for_results("?lesson=bank-conflicts&pattern=row-per-thread&pad=0")
        .await;
    page.open_tab("bank-map").await;
    let (_, cell, _) = page
        .accessible_text("[data-testid='bank-map'] td.lane.conflict")
        .await;
    assert_eq!(cell, "0 conflict", "a conflicting lane's cell says so");
    page.finish().await;
}

#[tokio::test]
async fn text_typed_into_the_kernel_survives_results_arriving_before_it_is_run() {
    let page = Harness::start().await;
    page.open("?lesson=adj-diff-naive").await;
    page.wait_for_simulated("report the first run").await;
    let source = page.wait_for("[data-testid='kernel-source']").await;
    source.click().await.expect("the text area takes focus");
    source
        .send_keys("// a note the student is still writing")
        .await
        .expect("the student types");
    // Another device is chosen without the text area losing focus (as a script or an embed's
    // host could), so a new launch runs and its results arrive while the text is unsent.
    page.driver
        .execute(
            "const select = document.querySelector(\"[data-testid='control-device']\"); \
             select.value = 'a100'; select.dispatchEvent(new Event('change', { bubbles: true }));",
            vec![],
        )
        .await
        .expect("the device changes");
    page.wait_for_url_containing("device=a100").await;
    page.wait_until_updated().await;
    let focused = page
        .driver
        .execute(
            "return document.activeElement === document.querySelector(\"[data-testid='kernel-source']\");",
            vec![],
        )
        .await
        .expect("the focus can be read");
    assert_eq!(
        focused.json(),
        &serde_json::json!(true),
        "the text area kept the focus"
    );
    let text = source
        .prop("value")
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
    assert!(
        text.contains("// a note the student is still writing"),
        "the typed text is still there after the results came: {text:?}"
    );
    page.finish().await;
}

/// The key of the tab that holds the view with this test id (its key in the link).
fn view_tab(test_id: &str) -> &str {
    match test_id {
        "line-view" => "lines",
        "pitched-allocation" => "pitched",
        view => view,
    }
}

#[tokio::test]
async fn each_lesson_asks_first_and_its_answer_shows_the_simulators_number_and_why() {
    let page = Harness::start().await;
    // Each lesson with the views it shows, and one it does not. A view is the lesson's first
    // screen or one of its tabs; every lesson has the line-by-line table.
    for (lesson, views, not_shown) in [
        ("memory-spaces", &["memory-spaces"][..], "bank-map"),
        (
            "pitched-allocation",
            &["pitched-allocation", "line-view"][..],
            "bank-map",
        ),
        ("adjacent-difference", &["line-view"][..], "occupancy"),
        (
            "tiled-matmul",
            &["line-view", "roofline", "occupancy"][..],
            "bank-map",
        ),
        (
            "boundary-checks&variant=guarded",
            &["line-view"][..],
            "roofline",
        ),
        ("bank-conflicts", &["bank-map", "line-view"][..], "roofline"),
        ("coalescing", &["line-view"][..], "bank-map"),
        ("atomics", &["line-view"][..], "memory-spaces"),
        ("warp-divergence", &["divergence"][..], "occupancy"),
        ("occupancy", &["occupancy", "line-view"][..], "roofline"),
        (
            "latency-hiding",
            &["latency-hiding", "occupancy"][..],
            "roofline",
        ),
        ("roofline", &["roofline"][..], "occupancy"),
        ("host-transfers", &["transfers"][..], "bank-map"),
        (
            "my-kernel",
            &["launch-form", "line-view", "occupancy", "roofline"][..],
            "bank-map",
        ),
    ] {
        page.open(&format!("?lesson={lesson}")).await;
        page.wait_for("[data-testid='lesson-view']").await;
        for view in views {
            let tab = view_tab(view);
            if page.is_present(&format!("tab-{tab}")).await {
                page.open_tab(tab).await;
            }
            page.wait_for(&format!("[data-testid='{view}']")).await;
        }
        assert!(
            !page.is_present(not_shown).await
                && !page
                    .is_present(&format!("tab-{}", view_tab(not_shown)))
                    .await,
            "{lesson} shows the views that matter for it, not {not_shown}"
        );
        page.open_tab("kernel").await;
        // The introduction's first paragraph is on the first screen, and the rest with the
        // lectures it comes from is one click away in its fold.
        let intro = page
            .wait_for_text_where("lesson-intro", "introduce the lesson", |text| {
                !text.is_empty()
            })
            .await;
        page.click_css("[data-testid='lesson-more'] summary").await;
        let more = page
            .wait_for_text_where("lesson-more", "say where the lesson comes from", |text| {
                text.contains("From the lectures:")
            })
            .await;
        assert!(
            intro.len() + more.len() > 200,
            "{lesson}: a real introduction: {intro} {more}"
        );
        page.wait_for_simulated("report the lesson's run").await;
        page.wait_until_updated().await;
        // The answer is hidden until the student has predicted.
        let reveal = page.wait_for("[data-testid='predict-reveal']").await;
        assert!(
            !reveal.is_enabled().await.expect("the button's state"),
            "{lesson}: no answer before a prediction"
        );
        assert!(!page.is_present("predict-answer").await);
        // The lesson's view holds the answer too, so it is covered until then; the launch
        // form, which the student writes in, holds none.
        assert_eq!(
            page.is_present("view-cover").await,
            lesson != "my-kernel",
            "{lesson}: the view is covered before a prediction unless it is the launch form"
        );
        let choices = page
            .driver
            .find_all(By::Css("[data-testid='predict-choice']"))
            .await
            .expect("the question's choices");
        assert!(choices.len() >= 3, "{lesson}: a choice to make");
        choices[0].click().await.expect("a choice can be picked");
        page.wait_for("[data-testid='predict-reveal']:enabled")
            .await
            .click()
            .await
            .expect("the answer can be asked for");
        let answer = page
            .wait_for_text_where("predict-answer", "give the simulator's number", |text| {
                text.contains("The simulator, at the settings on the page:")
            })
            .await;
        assert!(
            !page.is_present("view-cover").await,
            "{lesson}: the view is uncovered with the answer"
        );
        // The simulator's number names the choice the lesson marks as right.
        let right = page.wait_for(".predict .choice.right label").await;
        let right = right.text().await.unwrap_or_default();
        let right = right.trim_end_matches(" (right)").trim();
        assert!(
            answer.contains(&format!("(the answer \"{right}\")")),
            "{lesson}: the simulator's answer is the marked choice {right:?}: {answer}"
        );
        // Every choice says why it is or is not the answer.
        let reasons = page
            .driver
            .find_all(By::Css("[data-testid='choice-reason']"))
            .await
            .expect("the choices' reasons");
        assert_eq!(
            reasons.len(),
            choices.len(),
            "{lesson}: a reason per choice"
        );
        println!("{lesson}: {}", answer.lines().next().unwrap_or_default());
    }
    page.finish().await;
}

#[tokio::test]
async fn a_first_links_kernel_key_opens_its_lesson_at_that_variant() {
    let page = Harness::start().await;
    page.open("?lesson=transpose-naive&device=a100").await;
    page.wait_for_url_containing("lesson=coalescing&variant=transpose&")
        .await;
    let lesson = page.wait_for("[data-testid='control-lesson']").await;
    assert_eq!(
        lesson.value().await.ok().flatten().as_deref(),
        Some("coalescing")
    );
    let variant = page.wait_for("[data-testid='control-variant']").await;
    assert_eq!(
        variant.value().await.ok().flatten().as_deref(),
        Some("transpose")
    );
    page.wait_for_text_where("launch", "launch the naive transpose", |text| {
        text.starts_with("tr_naive<<<")
    })
    .await;
    // The other variant of the lesson is one choice away.
    thirtyfour::components::SelectElement::new(&variant)
        .await
        .expect("the variant control is a select")
        .select_by_value("strided-copy")
        .await
        .expect("the lesson's other variant can be chosen");
    page.wait_for_url_containing("lesson=coalescing&variant=strided-copy&")
        .await;
    page.wait_for_text_where("launch", "launch the strided copy", |text| {
        text.starts_with("strided_copy<<<")
    })
    .await;
    page.finish().await;
}

#[tokio::test]
async fn the_boundary_lesson_shows_the_unguarded_kernels_error_then_the_guarded_kernel_runs() {
    let page = Harness::start().await;
    page.open("?lesson=boundary-checks").await;
    let error = page
        .wait_for_text_where(
            "kernel-error",
            "name the access outside the matrix",
            |text| text.contains("outside"),
        )
        .await;
    println!("n = 1000 without boundary checks: {error}");
    page.wait_for_text_where("boundary-hint", "say why the kernel read outside", |text| {
        text.starts_with("n = 1000 is not a multiple of the tile width 16")
    })
    .await;
    let variant = page.wait_for("[data-testid='control-variant']").await;
    thirtyfour::components::SelectElement::new(&variant)
        .await
        .expect("the variant control is a select")
        .select_by_value("guarded")
        .await
        .expect("the guarded kernel can be chosen");
    page.wait_for_simulated("report the guarded kernel's run")
        .await;
    assert!(
        !page.is_present("kernel-error").await,
        "the guarded kernel runs"
    );
    page.finish().await;
}

#[tokio::test]
async fn comparing_the_tiled_matmul_with_the_naive_one_shows_sixteen_times_the_loads() {
    let page = Harness::start().await;
    page.open("?lesson=tiled-matmul&compare=variant").await;
    page.open_tab("compare").await;
    let sentence = page
        .wait_for_text_where("compare-sentence", "compare the two kernels", |text| {
            !text.is_empty()
        })
        .await;
    assert!(
        sentence.starts_with("mm_naive makes 16× the global load requests of mm_tiled"),
        "{sentence}"
    );
    println!("compare, tiled against naive: {sentence}");
    // Padding instead: the menu changes what is compared, and the link says so.
    let menu = page.wait_for("[data-testid='control-compare']").await;
    thirtyfour::components::SelectElement::new(&menu)
        .await
        .expect("the compare control is a select")
        .select_by_value("padding")
        .await
        .expect("padding can be compared");
    page.wait_for_url_containing("compare=padding").await;
    page.wait_for_text_where("compare-sentence", "compare the paddings", |text| {
        text.starts_with("PAD=1 ")
    })
    .await;
    // Any device: the same launch on the G80, named in the sentence.
    let menu = page.wait_for("[data-testid='control-compare']").await;
    thirtyfour::components::SelectElement::new(&menu)
        .await
        .expect("the compare control is a select")
        .select_by_value("g80")
        .await
        .expect("a device can be compared");
    page.wait_for_url_containing("compare=g80").await;
    page.wait_for_text_where("compare-sentence", "compare with the G80", |text| {
        text.starts_with("G80 ")
    })
    .await;
    page.finish().await;
}

#[tokio::test]
async fn memory_spaces_put_the_tiles_in_shared_memory_and_the_matrices_in_global_memory() {
    let page = Harness::start().await;
    page.open("?lesson=memory-spaces").await;
    // Seed 000's tiled matmul: the two tiles are shared, one copy per block; the three matrices
    // the pointer parameters point to are global; the matrix size is a parameter.
    let row = |name: &str, space: &str| {
        format!(
            "[data-testid='memory-spaces'] [data-testid='memory-space-row']\
             [data-name='{name}'][data-space='{space}']"
        )
    };
    for (name, space) in [
        ("sa", "shared"),
        ("sb", "shared"),
        ("a", "global"),
        ("b", "global"),
        ("c", "global"),
        ("n", "parameter"),
        ("tx", "registers"),
    ] {
        page.wait_for(&row(name, space)).await;
    }
    // The keyboard chooses a row: its name is a button.
    let sa = page
        .wait_for(&format!("{} button", row("sa", "shared")))
        .await;
    sa.focus().await.expect("the name takes focus");
    sa.send_keys(Key::Enter)
        .await
        .expect("Enter presses the name's button");
    page.wait_for_text_where(
        "memory-space-explanation",
        "explain sa as per-block shared memory",
        |text| {
            text.starts_with(
                "sa: shared memory, seen by the 256 threads of its block: 4,096 copies, one per \
                 block, lives as long as the block",
            )
        },
    )
    .await;
    page.wait_for(&format!("{}.selected", row("sa", "shared")))
        .await;

    // A kernel that does not compile shows its one-line error here too, and the page lives on.
    page.run_kernel(
        "__global__ void mm_tiled(float* a, float* b, float* c, int n) {\n  c[0] = m;\n}\n",
    )
    .await;
    page.wait_for_text("memory-spaces-error", "2:10: 'm' is not declared")
        .await;
    page.wait_for("[data-testid='predict']").await;
    page.finish().await;
}

#[tokio::test]
async fn the_pitched_view_pads_a_row_of_100_floats_to_512_bytes_on_the_h100() {
    let page = Harness::start().await;
    page.open("?lesson=pitched-allocation&device=h100").await;
    // Seed 001's example: 64 rows of 100 floats, 400 bytes a row, pitched to 512 on the H100 as
    // measured (tests/reference/h100.json), with 112 bytes of padding per row.
    page.wait_for_text("pitch-bytes", "512 B").await;
    page.wait_for_text("pitch-padding", "112 B").await;
    page.wait_for_text("pitch-total", "32,768 B (packed: 25,600 B)")
        .await;
    page.wait_for_text("pitch-address", "base + 1 × 512 + 0 × 4 = base + 512")
        .await;
    page.wait_for("[data-testid='pitched-allocation'] svg.pitch-picture rect.pitch-padding")
        .await;
    page.wait_for_text("pitch-gt200", "512 B").await;

    // 60 floats are 240 bytes: 256 on the GT200's 256-byte alignment, still 512 on the H100.
    let width = page.wait_for("[data-testid='pitched-width']").await;
    width.focus().await.expect("the width box takes focus");
    width
        .send_keys(Key::Control + "a")
        .await
        .expect("the student selects the width");
    width
        .send_keys("60")
        .await
        .expect("the student types a width over it");
    page.wait_for_text("pitch-gt200", "256 B").await;
    page.wait_for_text("pitch-h100", "512 B").await;
    page.wait_for_text("pitch-padding", "272 B").await;
    page.finish().await;
}

impl Harness {
    /// Picks the per-line view's row for the access on `line` of this space ("shared",
    /// "global") and kind ("load", "store", "atomic"), once the launch's rows are there. The
    /// table is the first screen's view of a lesson about lines, and the "lines" tab of others.
    async fn pick_line(&self, line: u32, space: &str, kind: &str) {
        self.wait_for("[data-testid='lesson-view']").await;
        if self.is_present("tab-lines").await {
            self.open_tab("lines").await;
        }
        self.wait_for(&format!(
            "[data-testid='line-counters'] tr[data-line='{line}'][data-space='{space}']\
             [data-kind='{kind}'] button"
        ))
        .await
        .click()
        .await
        .unwrap_or_else(|e| panic!("the row of line {line} can be picked: {e}"));
    }
}

#[tokio::test]
async fn the_strided_copys_coalescing_map_shows_32_sectors_per_request_at_stride_32_and_4_at_1() {
    let page = Harness::start().await;
    // Seeds 001/002: `in[(size_t)i * stride]` on line 4 of coalescing.cu. Each lane of warp 0
    // reads its own sector at a stride of 32 floats; 32 floats in a row are one line of 4.
    for (stride, sectors) in [(32, "32"), (1, "4")] {
        page.open(&format!("?lesson=strided-copy&stride={stride}"))
            .await;
        page.pick_line(4, "global", "load").await;
        page.wait_for_text("sectors-per-request", sectors).await;
        let lines = page
            .wait_for_text_where("coalescing-map", "list the lines", |text| {
                text.contains("in + 0 B")
            })
            .await;
        let expected_lines = if stride == 32 {
            "in + 3,968 B"
        } else {
            "in + 0 B"
        };
        assert!(lines.contains(expected_lines), "{lines}");
        // The row counts the whole launch the same way.
        let row = page
            .wait_for(
                "[data-testid='line-counters'] tr[data-line='4'][data-kind='load'] .verdict-cell",
            )
            .await;
        assert_eq!(
            row.text().await.expect("the row has text"),
            format!("{sectors} sectors per request")
        );
    }
    page.finish().await;
}

#[tokio::test]
async fn the_per_line_bank_map_of_tr_shared_shows_the_column_reads_32_way_conflict_and_pad_1_none()
{
    let page = Harness::start().await;
    // transpose.cu line 23 reads the tile's column: tile[threadIdx.x][threadIdx.y + j], four
    // times per warp (the loop over j). Without padding the 32 lanes' words share one bank.
    for (pad, degree) in [(0, "32-way"), (1, "no conflict")] {
        page.open(&format!("?lesson=transpose-shared&pad={pad}"))
            .await;
        // The lesson opens on that access: its drawing is the first screen's view.
        page.wait_for_text_where("line-detail", "draw the column read of line 23", |text| {
            text.starts_with("Line 23: tile[threadIdx.x][threadIdx.y + j]")
        })
        .await;
        page.wait_for("[data-testid='lesson-view'] [data-testid='line-detail']")
            .await;
        page.wait_for_text("line-conflict-degree", degree).await;
        page.wait_for_text("line-step-position", "execution 1 of 4")
            .await;
        // The stepper walks the warp through the loop: every iteration reads a column.
        page.click("line-step-next").await;
        page.wait_for_text("line-step-position", "execution 2 of 4")
            .await;
        page.wait_for_text("line-conflict-degree", degree).await;
        // Another warp of the block is traced on request and starts at its first iteration.
        page.wait_for("[data-testid='trace-warp']").await;
        page.driver
            .execute(
                "const warp = document.querySelector(\"[data-testid='trace-warp']\"); \
                 warp.value = '3'; warp.dispatchEvent(new Event('change', { bubbles: true }));",
                vec![],
            )
            .await
            .expect("another warp is chosen");
        page.wait_for_text("line-step-position", "execution 1 of 4")
            .await;
        page.wait_until_updated().await;
        page.wait_for_text("line-conflict-degree", degree).await;
    }
    page.finish().await;
}

#[tokio::test]
async fn registers_that_cut_the_resident_warps_leave_drams_wait_uncovered() {
    let page = Harness::start().await;
    // Seed 003's count on the H100: at 32 registers 64 warps cover the adjacent difference's
    // wait for DRAM, which needs about 50.
    page.open("?lesson=latency-hiding").await;
    page.wait_for_text("latency-resident", "64 of 64").await;
    page.wait_for_text("latency-covered", "100%").await;
    let needed = page
        .wait_for_text_where("latency-needed", "count the warps needed", |text| {
            text.parse::<f64>().is_ok_and(|n| (40.0..60.0).contains(&n))
        })
        .await;
    // 128 registers per thread leave room for 2 blocks, 16 warps.
    page.open("?lesson=latency-hiding&regs=128").await;
    page.wait_for_text("latency-resident", "16 of 64").await;
    page.wait_for_text_where("latency-covered", "fall below a half", |text| {
        text.trim_end_matches('%')
            .parse::<f64>()
            .is_ok_and(|pct| pct < 50.0)
    })
    .await;
    // The count is the kernel's: the registers do not change it.
    page.wait_for_text("latency-needed", &needed).await;
    page.wait_for_text_where("latency-explanation", "say DRAM idles", |text| {
        text.contains("idles while they all wait")
    })
    .await;
    page.finish().await;
}

#[tokio::test]
async fn a_divergent_warp_issues_both_paths_with_half_its_lanes_and_a_uniform_one_does_not() {
    let page = Harness::start().await;
    page.open("?lesson=warp-divergence&variant=divergent").await;
    page.wait_for_text("divergence-lanes", "16.0 of 32").await;
    page.wait_for_text("divergence-fp32-useful", "50%").await;
    let count = |text: &str| text.replace(',', "").parse::<f64>().unwrap_or(0.0);
    let divergent = page
        .wait_for_text_where("divergence-instructions", "count instructions", |text| {
            count(text) > 0.0
        })
        .await;
    page.open("?lesson=warp-divergence&variant=uniform").await;
    page.wait_for_text("divergence-lanes", "32.0 of 32").await;
    page.wait_for_text("divergence-fp32-useful", "100%").await;
    let uniform = page
        .wait_for_text_where("divergence-instructions", "count instructions", |text| {
            count(text) > 0.0 && text != divergent
        })
        .await;
    let paths = count(&divergent) / count(&uniform);
    assert!(
        (1.9..2.0).contains(&paths),
        "both paths issued: {divergent} against {uniform} warp instructions"
    );
    page.finish().await;
}

#[tokio::test]
async fn the_hierarchical_roofline_meets_the_tiled_matmul_at_the_l2_at_four_flop_per_byte() {
    let page = Harness::start().await;
    // Seed 003's count, TILE / 4 = 4 FLOP/B, is the tiled kernel's intensity at the L2 on the
    // H100: every tile a block loads passes through it once. DRAM sees far fewer bytes.
    page.open("?lesson=roofline&variant=tiled&device=h100&tile=16")
        .await;
    // The row reads: level, GB/s, bytes moved, FLOP/B, GFLOP/s allowed.
    let flop_per_byte = |text: &str| {
        text.split_whitespace()
            .nth(3)
            .and_then(|word| word.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let l2 = page
        .wait_for_text_where("roofline-level-l2", "show 4 FLOP/B at the L2", |text| {
            (flop_per_byte(text) - 4.0).abs() < 0.1
        })
        .await;
    assert!(l2.starts_with("L2"), "{l2}");
    page.wait_for("[data-testid='roofline-level-l1-shared']")
        .await;
    page.wait_for("[data-testid='roofline-level-dram']").await;
    page.wait_for_text_where("roofline-binding", "name the level that binds", |text| {
        text.starts_with("L1 / shared binds")
    })
    .await;
    // The GT200 has no L2: its tiles go to DRAM at the same 4 FLOP/B.
    page.open("?lesson=roofline&variant=tiled&device=gt200&tile=16")
        .await;
    page.wait_for_text_where(
        "roofline-level-dram",
        "show DRAM at about 4 FLOP/B",
        |text| (flop_per_byte(text) - 4.0).abs() < 0.5,
    )
    .await;
    assert!(!page.is_present("roofline-level-l2").await);
    page.finish().await;
}

#[tokio::test]
async fn a_swizzled_tile_reads_its_column_without_conflict_and_wider_elements_take_more_wavefronts()
{
    let page = Harness::start().await;
    // swizzle.cu line 18 reads the tile's column as tile[threadIdx.x][c ^ threadIdx.x]: the XOR
    // gives every lane its own bank, with no padding column.
    page.open("?lesson=bank-conflicts&variant=swizzle&pad=0")
        .await;
    page.pick_line(18, "shared", "load").await;
    page.wait_for_text("line-conflict-degree", "no conflict")
        .await;
    // The bank map of lane t reading element t: 32 float4s are 512 bytes, four wavefronts.
    page.open("?lesson=bank-conflicts&pattern=stride&stride=1&element=float4")
        .await;
    page.open_tab("bank-map").await;
    page.wait_for_text_where("bank-wavefronts", "take four wavefronts", |text| {
        text.starts_with("4 wavefronts (ideal 4)")
    })
    .await;
    page.wait_for_text("conflict-degree", "no conflict").await;
    // Choosing halves from the menu: two lanes share each word, one wavefront.
    page.driver
        .execute(
            "const element = document.querySelector(\"[data-testid='control-element']\"); \
             element.value = 'half'; element.dispatchEvent(new Event('change', { bubbles: true }));",
            vec![],
        )
        .await
        .expect("the element menu takes a choice");
    page.wait_for_text_where("bank-wavefronts", "take one wavefront", |text| {
        text.starts_with("1 wavefront (ideal 1)")
    })
    .await;
    page.wait_for_url_containing("element=half").await;
    page.finish().await;
}

#[tokio::test]
async fn the_adjacent_differences_copies_cost_more_than_its_kernel_and_pageable_memory_more_still()
{
    let page = Harness::start().await;
    let times = |text: &str| {
        let (number, unit) = text.split_once(' ').unwrap_or((text, "ms"));
        let value = number.replace(',', "").parse::<f64>().unwrap_or(0.0);
        if unit == "us" {
            value / 1e3
        } else {
            value
        }
    };
    page.open("?lesson=host-transfers&variant=adjacent-difference&device=h100")
        .await;
    // 32 MB over PCIe 5.0 against a 16 us kernel: the copies cost some 38 kernels.
    let ratio = page
        .wait_for_text_where(
            "transfer-ratio",
            "show the copies over the kernel",
            |text| {
                text.trim_end_matches('x')
                    .parse::<f64>()
                    .is_ok_and(|r| (30.0..45.0).contains(&r))
            },
        )
        .await;
    let pinned = page
        .wait_for_text_where("transfer-copies", "time the copies", |text| {
            times(text) > 0.0
        })
        .await;
    page.wait_for_text_where("transfer-verdict", "say the bus sets the pace", |text| {
        text.contains("the bus, not the GPU, sets the pace")
    })
    .await;
    page.open("?lesson=host-transfers&variant=adjacent-difference&device=h100&host=pageable")
        .await;
    let pageable = page
        .wait_for_text_where("transfer-copies", "time the pageable copies", |text| {
            times(text) > 1.2 * times(&pinned)
        })
        .await;
    println!("pinned {pinned} ({ratio}), pageable {pageable}");
    // The matmul's work pays for its copies.
    page.open("?lesson=host-transfers&variant=matmul&device=h100")
        .await;
    page.wait_for_text_where(
        "transfer-verdict",
        "say the kernel pays for its copies",
        |text| text.contains("the kernel's work pays for them"),
    )
    .await;
    page.finish().await;
}

/// Sets a field of the page as a student would type it and leave it (a `change` event).
async fn set_field(page: &Harness, test_id: &str, value: &str) {
    let element = page.wait_for(&format!("[data-testid='{test_id}']")).await;
    page.driver
        .execute(
            "arguments[0].value = arguments[1]; \
             arguments[0].dispatchEvent(new Event('change', { bubbles: true }));",
            vec![
                element.to_json().expect("an element is an argument"),
                serde_json::Value::from(value),
            ],
        )
        .await
        .unwrap_or_else(|e| panic!("{test_id} takes {value:?}: {e}"));
}

#[tokio::test]
async fn my_kernel_runs_an_edited_kernel_with_a_new_name_and_launch_from_a_link_alone() {
    let page = Harness::start().await;
    page.open("?lesson=my-kernel").await;
    // The starter: saxpy over 2^20 floats, two load requests per warp.
    page.wait_for_simulated("report the starter").await;
    page.wait_until_updated().await;
    assert_eq!(page.counter_value("global load requests").await, "65536");

    // A kernel of the student's own, with a name the lectures never use: each thread sums a
    // row of 64 floats, so a warp's 32 lanes read 32 rows 256 bytes apart, one request each.
    let source = "#define M 4096\n\
                  __global__ void rowsum(float* out, const float* a, int cols) {\n\
                  \x20 int r = blockIdx.x * blockDim.x + threadIdx.x;\n\
                  \x20 float s = 0.0f;\n\
                  \x20 for (int c = 0; c < cols; ++c) s += a[r * cols + c];\n\
                  \x20 out[r] = s;\n\
                  }\n";
    page.run_kernel(source).await;
    page.wait_for("[data-testid='launch-kernel'] option[value='rowsum']")
        .await;
    // The form's saxpy, which the source no longer has, is listed unchosen above rowsum, so that
    // choosing rowsum is a change even from a menu of one kernel.
    let missing = page
        .wait_for("[data-testid='launch-kernel'] option[value='']")
        .await;
    assert_eq!(
        missing.text().await.ok().as_deref(),
        Some("saxpy (not in the source): choose")
    );
    set_field(&page, "launch-kernel", "rowsum").await;
    page.wait_for("[data-testid='launch-arg-cols']").await;
    set_field(&page, "launch-grid-x", "M / 128").await;
    set_field(&page, "launch-block-x", "128").await;
    set_field(&page, "launch-arg-cols", "64").await;
    set_field(&page, "launch-buffer-a", "M * 64").await;
    set_field(&page, "launch-buffer-out", "M").await;
    // 128 warps x 64 loads, each a request of its own.
    page.wait_for_text_where("counters", "count rowsum's loads", |text| {
        text.contains("8,192")
    })
    .await;
    assert_eq!(page.counter_value("global load requests").await, "8192");
    let link = page
        .wait_for_url_where("carry the kernel and its launch", |url| {
            url.contains("&launch=k%3Drowsum") && url.contains("#src=1.")
        })
        .await;

    // The link alone, in a fresh page: the same kernel, launch and counts.
    page.load_afresh(&link).await;
    page.wait_for_text_where("counters", "count rowsum's loads from the link", |text| {
        text.contains("8,192")
    })
    .await;
    assert_eq!(page.counter_value("global load requests").await, "8192");
    let kernel = page.wait_for("[data-testid='launch-kernel']").await;
    assert_eq!(
        kernel.value().await.ok().flatten().as_deref(),
        Some("rowsum")
    );

    // A value that is no constant names its field and column.
    set_field(&page, "launch-grid-x", "M / BLOCK").await;
    page.wait_for_text_where("launch-errors", "name the grid's error", |text| {
        text.starts_with("grid x: column 1")
    })
    .await;
    page.finish().await;
}

#[tokio::test]
async fn my_kernel_runs_the_cuda_a_course_writes_and_names_what_it_refuses() {
    let page = Harness::start().await;
    page.open("?lesson=my-kernel").await;
    page.wait_for_simulated("report the starter").await;
    page.wait_until_updated().await;

    // C++ as a course writes it: a header, a typedef, a namespace's constexpr, an enum, a
    // switch, launch bounds, and a float4 read through reinterpret_cast: each lane loads 16
    // bytes, so each warp makes one request of 16 sectors.
    let source = "#include <cfloat>\n\
                  typedef float real;\n\
                  namespace tile { constexpr int WIDTH = 4; }\n\
                  enum Mode { COPY, SCALE };\n\
                  __global__ void __launch_bounds__(256) copy4(real* out, const real* in, int mode) {\n\
                  \x20 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                  \x20 float4 v = reinterpret_cast<const float4*>(in)[i];\n\
                  \x20 switch (mode) {\n\
                  \x20 case SCALE: v.x *= 2.0f; v.y *= 2.0f; v.z *= 2.0f; v.w *= 2.0f; break;\n\
                  \x20 default: break;\n\
                  \x20 }\n\
                  \x20 reinterpret_cast<float4*>(out)[i] = v;\n\
                  }\n";
    page.run_kernel(source).await;
    page.wait_for("[data-testid='launch-kernel'] option[value='copy4']")
        .await;
    set_field(&page, "launch-kernel", "copy4").await;
    page.wait_for("[data-testid='launch-arg-mode']").await;
    set_field(&page, "launch-grid-x", "1024").await;
    set_field(&page, "launch-block-x", "256").await;
    set_field(&page, "launch-arg-mode", "1").await;
    set_field(&page, "launch-buffer-in", "1024 * 256 * 4").await;
    set_field(&page, "launch-buffer-out", "1024 * 256 * 4").await;
    // 1,024 blocks of 8 warps, one 16-byte load a lane: 8,192 requests.
    page.wait_for_text_where("counters", "count copy4's loads", |text| {
        text.contains("8,192")
    })
    .await;
    assert_eq!(page.counter_value("global load requests").await, "8192");

    // A warp function removed from CUDA in the launched kernel is refused in words, at its place.
    page.run_kernel(
        "__global__ void copy4(float* out, const float* in, int mode) {\n\
         \x20 out[0] = __shfl_down(in[0], 1);\n}\n",
    )
    .await;
    page.wait_for_text(
        "kernel-error",
        "2:12: the warp functions without `_sync` were removed in CUDA 9: name the lanes, as in \
         `__shfl_down_sync(0xffffffff, v, 1)`",
    )
    .await;
    page.finish().await;
}

#[tokio::test]
async fn my_kernel_runs_a_pasted_whole_program_as_its_main_launches_it() {
    let page = Harness::start().await;
    page.open("?lesson=my-kernel").await;
    page.wait_for_simulated("report the starter").await;
    page.wait_until_updated().await;

    // A whole program: headers, a helper taking references, main with its cudaMallocs and a
    // launch with pointers moved past the halo. The form takes the launch from main.
    page.run_kernel(include_str!("../../programs/stencil_references.cu"))
        .await;
    page.wait_for("[data-testid='launch-program']").await;
    page.wait_for_text_where("counters", "count the stencil's loads", |text| {
        text.contains("40,960")
    })
    .await;
    // 4,096 blocks of 8 warps load in[g], and warp 0 of each the two halos: 40,960 requests.
    assert_eq!(page.counter_value("global load requests").await, "40960");
    let kernel = page.wait_for("[data-testid='launch-kernel']").await;
    assert_eq!(
        kernel.value().await.ok().flatten().as_deref(),
        Some("stencil_1d")
    );
    page.finish().await;
}

impl Harness {
    /// Sizes the window so that the page's viewport is `width` x `height` CSS pixels.
    async fn set_viewport(&self, width: u32, height: u32) {
        self.driver
            .set_window_rect(0, 0, width, height)
            .await
            .expect("the window can be resized");
        let inner = self
            .driver
            .execute("return [innerWidth, innerHeight];", vec![])
            .await
            .expect("the page reports its viewport");
        let inner: Vec<u32> = serde_json::from_value(inner.json().clone()).expect("two numbers");
        self.driver
            .set_window_rect(0, 0, 2 * width - inner[0], 2 * height - inner[1])
            .await
            .expect("the window can be resized");
    }

    /// The keys of the lessons the full page's menu lists.
    async fn lesson_keys(&self) -> Vec<String> {
        self.open("").await;
        self.wait_for("[data-testid='control-lesson']").await;
        let mut keys = Vec::new();
        for option in self
            .driver
            .find_all(By::Css("[data-testid='control-lesson'] option"))
            .await
            .expect("the lesson menu has options")
        {
            keys.push(
                option
                    .value()
                    .await
                    .expect("an option has a value")
                    .expect("every lesson has a key"),
            );
        }
        keys
    }

    /// The value of the number control `test_id`.
    async fn control_value(&self, test_id: &str) -> String {
        self.wait_for(&format!("[data-testid='{test_id}']"))
            .await
            .prop("value")
            .await
            .expect("a control has a value")
            .unwrap_or_default()
    }

    /// Types `value` over the number in the control `test_id`, as a student selects it and
    /// types.
    async fn set_number(&self, test_id: &str, value: u32) {
        let input = self.wait_for(&format!("[data-testid='{test_id}']")).await;
        input.focus().await.expect("the control takes focus");
        input
            .send_keys(Key::Control + "a")
            .await
            .expect("the student selects the number");
        input
            .send_keys(value.to_string())
            .await
            .expect("the control takes a number");
    }
}

/// Where a lesson's view and question begin and how wide the page is, in one viewport.
#[derive(Debug)]
struct FirstScreen {
    width: f64,
    height: f64,
    /// The viewport's width less a vertical scroll bar's: the width the page has to fit.
    client_width: f64,
    page_width: f64,
    view_top: f64,
    predict_top: f64,
}

impl FirstScreen {
    fn read(json: &serde_json::Value) -> FirstScreen {
        // A missing element's top is Infinity, which JSON carries as null: below any screen.
        let number = |key: &str| json[key].as_f64().unwrap_or(f64::INFINITY);
        FirstScreen {
            width: number("width"),
            height: number("height"),
            client_width: number("client_width"),
            page_width: number("page_width"),
            view_top: number("view_top"),
            predict_top: number("predict_top"),
        }
    }
}

const FIRST_SCREEN: &str = "
    const top = (id) => {
        const element = document.querySelector(`[data-testid='${id}']`);
        return element ? element.getBoundingClientRect().top : Infinity;
    };
    return {
        width: innerWidth,
        height: innerHeight,
        client_width: document.documentElement.clientWidth,
        page_width: document.documentElement.scrollWidth,
        view_top: top('lesson-view'),
        predict_top: top('predict'),
    };";

#[tokio::test]
async fn every_lesson_begins_its_view_and_question_on_the_first_screen_at_every_size() {
    let page = Harness::start().await;
    let lessons = page.lesson_keys().await;
    assert!(
        lessons.len() >= 15,
        "the menu lists the lessons: {lessons:?}"
    );
    // A laptop's window, the embed code's frame and a smaller one, and a phone.
    let sizes = [
        ("a laptop", 1280, 800, ""),
        ("an 800 x 600 frame", 800, 600, "&embed=1"),
        ("a 640 x 480 frame", 640, 480, "&embed=1"),
        ("a phone", 390, 844, ""),
    ];
    let mut failures = Vec::new();
    for (what, width, height, embed) in sizes {
        page.set_viewport(width, height).await;
        for key in &lessons {
            page.open(&format!("?lesson={key}{embed}")).await;
            page.wait_for("[data-testid='lesson-view']").await;
            page.wait_for_run_or_kernel_error().await;
            page.wait_until_updated().await;
            let screen = page
                .driver
                .execute(FIRST_SCREEN, vec![])
                .await
                .expect("the page reports its layout");
            let screen = FirstScreen::read(screen.json());
            assert_eq!((screen.width, screen.height), (width.into(), height.into()));
            if screen.view_top >= screen.height || screen.predict_top >= screen.height {
                failures.push(format!(
                    "{key} in {what}: the view begins at {} and the question at {}, below {}",
                    screen.view_top, screen.predict_top, screen.height
                ));
            }
            // A page taller than the screen has a vertical scroll bar, which takes its width
            // from the viewport's: the page pans sideways once wider than what is left.
            if screen.page_width > screen.client_width {
                failures.push(format!(
                    "{key} in {what}: the page is {} px wide in a {} px viewport ({} px beside \
                     its scroll bar)",
                    screen.page_width, screen.width, screen.client_width
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    page.finish().await;
}

#[tokio::test]
async fn back_and_forward_step_through_the_settings_and_reset_returns_to_the_first() {
    let page = Harness::start().await;
    page.set_viewport(1280, 800).await;
    page.open("?lesson=tiled-matmul").await;
    page.wait_for_url_containing("tile=16").await;
    page.set_number("control-tile", 32).await;
    page.wait_for_url_containing("tile=32").await;
    page.set_number("control-tile", 8).await;
    page.wait_for_url_containing("tile=8").await;
    // Each setting that settled is an entry of the history: Back steps to the one before.
    page.driver.back().await.expect("the browser goes back");
    page.wait_for_url_containing("tile=32").await;
    wait_for_script(
        &page,
        "return document.querySelector(\"[data-testid='control-tile']\").value === '32';",
        "Back shows the tile of the entry it steps to",
    )
    .await;
    page.driver
        .forward()
        .await
        .expect("the browser goes forward");
    page.wait_for_url_containing("tile=8").await;
    assert_eq!(page.control_value("control-tile").await, "8");
    // The link the page was opened with is where Reset goes: the lesson's first tile, its own
    // kernel, and the question asked afresh.
    page.wait_for("[data-testid='reset']")
        .await
        .click()
        .await
        .expect("Reset is a button");
    page.wait_for_url_containing("tile=16").await;
    assert_eq!(page.control_value("control-tile").await, "16");
    page.finish().await;
}

#[tokio::test]
async fn an_instructors_lesson_opens_from_its_file_and_from_a_link_that_carries_it() {
    let page = Harness::start().await;
    page.set_viewport(1280, 800).await;
    // The course example's own lesson, a file beside memplay's page.
    page.open("?lesson-url=course%2Fmisaligned-loads.txt&stride=4")
        .await;
    page.wait_for_text("lesson-title", "Misaligned loads").await;
    // The link's offset is read against the loaded lesson, and Reset returns to it.
    page.wait_for_url_containing("stride=4").await;
    page.set_number("control-stride", 9).await;
    page.wait_for_url_containing("stride=9").await;
    page.wait_for("[data-testid='reset']")
        .await
        .click()
        .await
        .expect("Reset is a button");
    page.wait_for_url_containing("stride=4").await;
    page.wait_for_text_where("control-lesson", "list the loaded lesson", |text| {
        text.contains("Misaligned loads")
    })
    .await;
    page.wait_for_url_containing("lesson=misaligned-loads")
        .await;
    // Its file, edited in the lesson editor, travels whole in a link.
    page.wait_for("[data-testid='tab-lesson-file']")
        .await
        .click()
        .await
        .expect("the lesson file's tab opens");
    let area = page.wait_for("[data-testid='lesson-file-text']").await;
    page.driver
        .execute(
            "const area = arguments[0];
             area.value = area.value.replace('title: Misaligned loads', 'title: Loads off the edge');
             area.dispatchEvent(new Event('input', { bubbles: true }));",
            vec![area.to_json().expect("an element is an argument")],
        )
        .await
        .expect("the editor takes the edit");
    page.wait_for_text_where("lesson-file-status", "read the edit", |text| {
        text.contains("Loads off the edge")
    })
    .await;
    page.wait_for("[data-testid='lesson-file-make-link']")
        .await
        .click()
        .await
        .expect("the link is made on request");
    let link = page
        .wait_for("[data-testid='lesson-file-link']")
        .await
        .prop("value")
        .await
        .expect("the link is a value")
        .unwrap_or_default();
    assert!(link.contains("#lesson=1."), "{link}");
    page.driver.goto(&link).await.expect("the link opens");
    page.driver
        .refresh()
        .await
        .expect("the page reloads from the link");
    page.wait_for_text("lesson-title", "Loads off the edge")
        .await;
    page.finish().await;
}

#[tokio::test]
async fn moving_a_control_redraws_the_lessons_view_in_place() {
    let page = Harness::start().await;
    page.set_viewport(1280, 800).await;
    page.open("?lesson=bank-conflicts&pad=0").await;
    page.wait_for_text("line-conflict-degree", "32-way").await;
    page.wait_until_updated().await;
    let top = || async {
        page.driver
            .execute(
                "return document.querySelector(\"[data-testid='lesson-view']\").getBoundingClientRect().top + scrollY;",
                vec![],
            )
            .await
            .expect("the page reports the view's place")
            .json()
            .as_f64()
            .expect("a number")
    };
    let before = top().await;
    let pad = page.wait_for("[data-testid='control-pad']").await;
    pad.focus().await.expect("the padding control takes focus");
    pad.send_keys(Key::Right)
        .await
        .expect("the keyboard moves the padding slider");
    page.wait_for_text("line-conflict-degree", "no conflict")
        .await;
    page.wait_until_updated().await;
    // The view redraws where it was: the student's eye stays on the map.
    assert_eq!(top().await, before, "the lesson's view stays in place");
    page.finish().await;
}

#[tokio::test]
async fn the_arrow_keys_move_between_the_tabs_and_the_link_keeps_the_open_one() {
    let page = Harness::start().await;
    page.open("?lesson=tiled-matmul").await;
    let kernel = page.wait_for("[data-testid='tab-kernel']").await;
    kernel.focus().await.expect("the open tab takes focus");
    kernel
        .send_keys(Key::Right)
        .await
        .expect("the arrow key reaches the tab");
    // The tiled matmul's own view is its per-line table: the next tab is its roofline.
    page.wait_for_url_containing("tab=roofline").await;
    wait_for_script(
        &page,
        "return document.activeElement && document.activeElement.id === 'tab-roofline';",
        "the focus follows the arrow key to the roofline's tab",
    )
    .await;
    page.wait_for("[data-testid='roofline-simulated']").await;
    let roofline = page.wait_for("[data-testid='tab-roofline']").await;
    roofline
        .send_keys(Key::Home)
        .await
        .expect("Home reaches the tab");
    page.wait_for_url_where("open the kernel's tab again", |url| !url.contains("tab="))
        .await;
    page.finish().await;
}
