//! The timing model and the counters against kernels it was not built from.
//!
//! `tests/reference/students/` holds 30 launches of kernels of the kinds students write after the
//! lectures (reductions, histograms, stencils, a scan, matrix-vector products, 2D copies, a tiled
//! transpose, a register-tiled matmul, a softmax, a gather, a Mandelbrot, a bitonic step), timed on
//! the H100 and measured with Nsight Compute after the model's mechanisms were in place; no
//! constant was fitted to them (see its README). This test prints the table and checks that the
//! model holds on them about as well as on the probes: it is the closest thing here to the kernels
//! nobody has measured yet.
//!
//! The same comparison writes the figures the page prints on every kernel card (the model's
//! median and worst error on these kernels) to `tests/reference/students/model_error.json`, and
//! checks that the committed file holds what it computes, so the page's sentence cannot drift
//! from the model. After a change to the model, rewrite it with
//!
//! ```sh
//! MEMPLAY_UPDATE_SNAPSHOT=1 cargo test -p memplay-sim --release --test students_reference
//! ```

mod common;

use common::{measured_launches, memory_counters_off, occupancy_limits_off, MeasuredLaunch};
use serde_json::Value as Json;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;

fn launches() -> &'static [MeasuredLaunch] {
    static LAUNCHES: OnceLock<Vec<MeasuredLaunch>> = OnceLock::new();
    LAUNCHES.get_or_init(|| measured_launches("students", "students/ncu.jsonl"))
}

#[test]
fn kernels_the_model_was_not_built_from_are_predicted_within_a_quarter() {
    let launches = launches();
    assert_eq!(launches.len(), 30, "the students' set holds 30 launches");
    let mut table = String::new();
    let _ = writeln!(
        table,
        "{:<40} {:>9} {:>10} {:>7}  bound",
        "launch", "measured", "predicted", "err %"
    );
    let mut errors = Vec::new();
    for launch in launches {
        let error = launch.error();
        errors.push(error.abs());
        let _ = writeln!(
            table,
            "{:<40} {:>9.4} {:>10.4} {:>+7.1}  {:?}",
            launch.id,
            launch.measured_ms,
            launch.prediction.time_ms,
            100.0 * error,
            launch.prediction.bottleneck
        );
    }
    let within = errors.iter().filter(|e| **e <= 0.25).count();
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    let _ = writeln!(
        table,
        "{within} of {} within 25%, mean |error| {:.1}%",
        errors.len(),
        100.0 * mean
    );
    println!("{table}");
    // Measured: 27 of 30 within 25%, mean 11.6% (26 and 18.2% before the sampling in strata, when
    // the Mandelbrot rows were 3x slow: the sampled interior row is the set's deepest, and it
    // stood for every row; now +4.6%). Outside: the column-major matrix-vector product (16 blocks
    // on 132 SMs, 41% fast), a softmax (29% fast) and a bitonic step (28% slow). The bounds leave
    // room for one more launch to move out.
    assert!(within >= 26, "only {within} of 30 within 25%");
    assert!(mean <= 0.14, "mean |error| {:.1}%", 100.0 * mean);
}

#[test]
fn the_students_memory_counters_and_occupancy_limits_match_nsight_compute() {
    // The eight memory counters of the lecture reference, within 10% for every launch.
    // And the occupancy limits of registers, warps and blocks, exactly.
    let off: Vec<String> = launches()
        .iter()
        .flat_map(|launch| {
            let mut off = memory_counters_off(&launch.id, &launch.report, &launch.ncu, |_| 0.10);
            off.extend(occupancy_limits_off(
                &launch.id,
                &launch.report,
                &launch.ncu,
            ));
            off
        })
        .collect();
    assert!(off.is_empty(), "{}", off.join("\n"));
}

/// The median and the largest of `errors`, which must not be empty.
fn median_and_worst(mut errors: Vec<f64>) -> (f64, f64) {
    errors.sort_by(f64::total_cmp);
    let n = errors.len();
    let median = if n % 2 == 1 {
        errors[n / 2]
    } else {
        (errors[n / 2 - 1] + errors[n / 2]) / 2.0
    };
    (median, errors[n - 1])
}

/// The summary the page prints: how many kernels, and the median and worst absolute error of the
/// predicted time against the measured one, in whole percent (as the page writes them).
fn model_error_summary(launches: &[MeasuredLaunch]) -> Json {
    let errors: Vec<f64> = launches
        .iter()
        .map(|launch| 100.0 * launch.error().abs())
        .collect();
    let (median, worst) = median_and_worst(errors);
    serde_json::json!({
        "kernels": launches.len(),
        "median_abs_error_pct": median.round() as u64,
        "worst_abs_error_pct": worst.round() as u64,
    })
}

fn model_error_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/reference/students/model_error.json")
}

#[test]
fn the_model_error_the_page_prints_is_the_one_this_comparison_computes() {
    let computed = model_error_summary(launches());
    if std::env::var_os("MEMPLAY_UPDATE_SNAPSHOT").is_some() {
        let text = serde_json::to_string_pretty(&computed).expect("a JSON value") + "\n";
        std::fs::write(model_error_path(), text).expect("the summary can be written");
        return;
    }
    let text = std::fs::read_to_string(model_error_path()).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (write it with MEMPLAY_UPDATE_SNAPSHOT=1)",
            model_error_path().display()
        )
    });
    let committed: Json = serde_json::from_str(&text).expect("the summary is JSON");
    assert_eq!(
        committed, computed,
        "the page's figures differ from the model's error on the students' kernels \
         (MEMPLAY_UPDATE_SNAPSHOT=1 rewrites the summary if the model changed on purpose)"
    );
}

#[test]
fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
    assert_eq!(median_and_worst(vec![40.0, 10.0, 30.0, 20.0]), (25.0, 40.0));
    assert_eq!(median_and_worst(vec![3.0, 1.0, 2.0]), (2.0, 3.0));
}
