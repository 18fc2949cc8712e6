//! The timing model against real H100 times.
//!
//! `tests/reference/h100-timing.json` holds 31 launches of the lecture kernels, each with its
//! launch `spec` and the median time measured with CUDA events after a warm-up (so a launch whose
//! data fits the L2 finds it there). This test simulates every spec on the H100 preset, predicts
//! its time with `memplay_sim::timing::predict`, prints a table, and checks:
//!
//! - the mean relative error is at most 15% and the largest at most 35%;
//! - for every pair of launches that differ in one thing (naive or tiled matmul at the same tile
//!   and size, padding 0 or 1, the transpose variants, the strided copies by stride, adjacent
//!   difference naive or shared), the one measured faster is predicted faster. Two launches whose
//!   measured times are within 3% of each other may be predicted within 3% in either order.
//!
//! The measurements are read here and only compared; nothing measured is copied into the model.

mod common;

use common::{input_from_spec, read_reference};
use memplay_sim::simulate;
use memplay_sim::timing::{predict, Prediction};
use serde_json::Value as Json;
use std::fmt::Write as _;
use std::sync::OnceLock;
use std::time::Instant;

/// What a launch is, for finding the pairs that differ in one thing.
#[derive(Clone, Debug, PartialEq)]
struct Key {
    kernel: String,
    /// The matmul tile (the block's width).
    tile: u32,
    pad: i64,
    n: i64,
    stride: i64,
}

impl Key {
    fn of(spec: &Json) -> Key {
        let int = |v: &Json| v.as_i64().unwrap_or(-1);
        Key {
            kernel: spec["kernel"].as_str().unwrap_or("?").to_string(),
            tile: spec["block"][0].as_u64().unwrap_or(0) as u32,
            pad: int(&spec["defines"]["PAD"]),
            n: int(&spec["args"]["n"]),
            stride: int(&spec["args"]["stride"]),
        }
    }

    fn family(&self) -> &str {
        match self.kernel.as_str() {
            "mm_naive" | "mm_tiled" => "matmul",
            k if k.starts_with("tr_") => "transpose",
            k if k.starts_with("adj_diff") => "adj_diff",
            k => k,
        }
    }

    /// Whether the two launches are a variant pair the ordering check compares.
    fn pairs_with(&self, other: &Key) -> bool {
        if self == other || self.family() != other.family() {
            return false;
        }
        match self.family() {
            // Naive against tiled at the same tile and size, or one tiled launch padded and not.
            "matmul" => {
                self.tile == other.tile
                    && self.n == other.n
                    && (self.kernel != other.kernel || self.pad != other.pad)
            }
            "transpose" | "adj_diff" => self.n == other.n,
            "strided_copy" => self.stride != other.stride,
            _ => false,
        }
    }
}

struct Row {
    id: String,
    key: Key,
    measured_ms: f64,
    prediction: Prediction,
}

impl Row {
    fn error(&self) -> f64 {
        (self.prediction.time_ms - self.measured_ms) / self.measured_ms
    }
}

/// Every timed launch, simulated and predicted once for both tests (with the seconds it took).
fn predicted_rows() -> &'static (Vec<Row>, f64) {
    static ROWS: OnceLock<(Vec<Row>, f64)> = OnceLock::new();
    ROWS.get_or_init(|| {
        let started = Instant::now();
        let rows = simulate_and_predict();
        (rows, started.elapsed().as_secs_f64())
    })
}

fn simulate_and_predict() -> Vec<Row> {
    let timing: Json = serde_json::from_str(&read_reference("h100-timing.json"))
        .expect("h100-timing.json is valid JSON");
    let launches = timing.as_array().expect("h100-timing.json is a list");
    assert!(!launches.is_empty(), "h100-timing.json has no launches");
    launches
        .iter()
        .map(|launch| {
            let id = launch["id"].as_str().unwrap_or("?").to_string();
            let input = input_from_spec(&launch["spec"])
                .unwrap_or_else(|error| panic!("{id}: bad spec: {error}"));
            let report =
                simulate(&input).unwrap_or_else(|error| panic!("{id}: does not simulate: {error}"));
            let measured_ms = launch["ms"]
                .as_f64()
                .unwrap_or_else(|| panic!("{id} has no time"));
            Row {
                key: Key::of(&launch["spec"]),
                prediction: predict(&report),
                id,
                measured_ms,
            }
        })
        .collect()
}

#[test]
fn predicted_times_match_the_h100_measurements() {
    let (rows, seconds) = predicted_rows();

    let mut table = String::new();
    let _ = writeln!(
        table,
        "{:<40} {:>10} {:>10} {:>7}  {:<9} {:>8} {:>7}",
        "launch", "measured", "predicted", "err %", "bound", "GB/s", "GFLOP/s"
    );
    for row in rows {
        let p = &row.prediction;
        let _ = writeln!(
            table,
            "{:<40} {:>10.4} {:>10.4} {:>+7.1}  {:<9} {:>8.0} {:>7.0}",
            row.id,
            row.measured_ms,
            p.time_ms,
            100.0 * row.error(),
            format!("{:?}", p.bottleneck),
            p.gbps,
            p.gflops
        );
    }
    let errors: Vec<f64> = rows.iter().map(|r| r.error().abs()).collect();
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    let max = errors.iter().copied().fold(0.0, f64::max);
    let _ = writeln!(
        table,
        "mean |error| {:.1}%, max {:.1}%, {} launches in {:.1} s",
        100.0 * mean,
        100.0 * max,
        rows.len(),
        seconds
    );
    println!("{table}");
    assert!(mean <= 0.15, "mean |error| {:.1}% > 15%", 100.0 * mean);
    assert!(max <= 0.35, "max |error| {:.1}% > 35%", 100.0 * max);
}

#[test]
fn variants_are_predicted_in_the_measured_order() {
    let (rows, _) = predicted_rows();
    let mut failures = Vec::new();
    let mut compared = 0;
    for (i, a) in rows.iter().enumerate() {
        for b in &rows[i + 1..] {
            if !a.key.pairs_with(&b.key) {
                continue;
            }
            compared += 1;
            let within = |x: f64, y: f64| (x - y).abs() <= 0.03 * x.min(y);
            let (ma, mb) = (a.measured_ms, b.measured_ms);
            let (pa, pb) = (a.prediction.time_ms, b.prediction.time_ms);
            let ok = if within(ma, mb) {
                within(pa, pb) || (pa < pb) == (ma < mb)
            } else {
                (pa < pb) == (ma < mb)
            };
            let line = format!(
                "{} ({ma:.4} measured, {pa:.4} predicted) vs {} ({mb:.4}, {pb:.4})",
                a.id, b.id
            );
            println!("{} {line}", if ok { "ok  " } else { "FAIL" });
            if !ok {
                failures.push(line);
            }
        }
    }
    assert!(compared >= 40, "only {compared} pairs compared");
    assert!(
        failures.is_empty(),
        "{} pairs in the wrong order:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
