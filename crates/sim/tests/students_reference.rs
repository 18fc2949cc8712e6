//! The timing model and the counters against kernels it was not built from.
//!
//! `tests/reference/students/` holds 30 launches of kernels of the kinds students write after the
//! lectures (reductions, histograms, stencils, a scan, matrix-vector products, 2D copies, a tiled
//! transpose, a register-tiled matmul, a softmax, a gather, a Mandelbrot, a bitonic step), timed on
//! the H100 and measured with Nsight Compute after the model's mechanisms were in place; no
//! constant was fitted to them (see its README). This test prints the table and checks that the
//! model holds on them about as well as on the probes: it is the closest thing here to the kernels
//! nobody has measured yet.

mod common;

use common::{
    input_from_spec_in, measured_by_id, memory_counters_off, occupancy_limits_off, read_lines,
};
use memplay_sim::timing::{predict, Prediction};
use memplay_sim::{simulate, SimulationReport};
use serde_json::Value as Json;
use std::fmt::Write as _;
use std::sync::OnceLock;

/// One launch: what was measured and what memplay makes of it.
struct Launch {
    id: String,
    measured_ms: f64,
    ncu: Json,
    report: SimulationReport,
    prediction: Prediction,
}

fn launches() -> &'static [Launch] {
    static LAUNCHES: OnceLock<Vec<Launch>> = OnceLock::new();
    LAUNCHES.get_or_init(|| {
        let ncu = measured_by_id("students/ncu.jsonl");
        read_lines("students/time.jsonl")
            .into_iter()
            .map(|row| {
                let id = row["id"].as_str().unwrap_or("?").to_string();
                let input = input_from_spec_in(&row["spec"], "students")
                    .unwrap_or_else(|e| panic!("{id}: bad spec: {e}"));
                let report =
                    simulate(&input).unwrap_or_else(|e| panic!("{id}: does not simulate: {e}"));
                Launch {
                    measured_ms: row["ms"]
                        .as_f64()
                        .unwrap_or_else(|| panic!("{id} has no time")),
                    ncu: ncu.get(&id).cloned().unwrap_or(Json::Null),
                    prediction: predict(&report),
                    report,
                    id,
                }
            })
            .collect()
    })
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
        let error = (launch.prediction.time_ms - launch.measured_ms) / launch.measured_ms;
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
