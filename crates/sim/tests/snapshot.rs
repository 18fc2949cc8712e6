//! The simulator's answer for every reference launch, kept as a snapshot: the lecture launches
//! that Nsight Compute counted (`h100.json`) and that were timed (`h100-timing.json`), the probes
//! and the students' kernels, each with its counters, memory profile, per-line counters,
//! occupancy and prediction. Work that makes the simulator faster (issue 13) must leave every one
//! of them as it is, to the last digit; work that changes the model on purpose rewrites the
//! snapshot and shows the change in its diff:
//!
//! ```sh
//! MEMPLAY_UPDATE_SNAPSHOT=1 cargo test -p memplay-sim --release --test snapshot
//! ```
//!
//! What is left out may change with the speed work: which blocks were run and how many steps it
//! took.

mod common;

use common::{input_from_spec, input_from_spec_in, read_json, read_lines};
use memplay_sim::simulate::{simulate, SimulationInput};
use memplay_sim::timing::predict;
use serde_json::{json, Value as Json};
use std::path::PathBuf;

fn snapshot_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/launches.jsonl")
}

/// Every reference launch by its id, in a fixed order.
fn reference_launches() -> Vec<(String, SimulationInput)> {
    let mut launches = Vec::new();
    let mut add = |prefix: &str, id: &str, input: Result<SimulationInput, String>| {
        let input = input.unwrap_or_else(|e| panic!("{prefix} {id}: bad spec: {e}"));
        launches.push((format!("{prefix} {id}"), input));
    };
    let lecture = read_json("h100.json");
    for record in lecture["ncu"]
        .as_array()
        .expect("h100.json has an 'ncu' list")
    {
        let id = record["launch"].as_str().unwrap_or("?");
        add("counted", id, input_from_spec(&record["launch_spec"]));
    }
    let timed = read_json("h100-timing.json");
    for record in timed.as_array().expect("h100-timing.json is a list") {
        let id = record["id"].as_str().unwrap_or("?");
        add("timed", id, input_from_spec(&record["spec"]));
    }
    for folder in ["probes", "students", "dram_mix"] {
        for row in read_lines(&format!("{folder}/time.jsonl")) {
            if row.get("spec").is_some() {
                let id = row["id"].as_str().unwrap_or("?");
                add(folder, id, input_from_spec_in(&row["spec"], folder));
            }
        }
    }
    launches
}

/// What the snapshot keeps of one launch.
fn answer(id: &str, input: &SimulationInput) -> Json {
    match simulate(input) {
        Ok(report) => {
            let prediction = predict(&report);
            json!({
                "id": id,
                "counters": report.counters,
                "occupancy": report.occupancy,
                "shared_bytes_per_block": report.shared_bytes_per_block,
                "fused_loads": report.fused_loads,
                "memory": report.memory,
                "lines": report.lines,
                "prediction": prediction,
            })
        }
        Err(error) => json!({ "id": id, "error": error.to_string() }),
    }
}

#[test]
fn every_reference_launch_simulates_exactly_as_the_snapshot_says() {
    let answers: Vec<Json> = reference_launches()
        .iter()
        .map(|(id, input)| answer(id, input))
        .collect();
    if std::env::var_os("MEMPLAY_UPDATE_SNAPSHOT").is_some() {
        let text: String = answers.iter().map(|answer| format!("{answer}\n")).collect();
        std::fs::write(snapshot_path(), text).expect("the snapshot can be written");
        return;
    }
    let text = std::fs::read_to_string(snapshot_path()).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (write it with MEMPLAY_UPDATE_SNAPSHOT=1)",
            snapshot_path().display()
        )
    });
    // Compared as text: serde_json writes a float so that it reads back as the same float, but
    // its parser may round the last bit, so parsed values are compared only to name the keys.
    let kept: Vec<&str> = text.lines().collect();
    assert_eq!(
        kept.len(),
        answers.len(),
        "the snapshot has {} launches, the references {}",
        kept.len(),
        answers.len()
    );
    let mut differ = Vec::new();
    for (kept, now) in kept.iter().zip(&answers) {
        let text = now.to_string();
        if *kept != text {
            let kept: Json = serde_json::from_str(kept).expect("a JSON line");
            let keys: Vec<&str> = now
                .as_object()
                .map(|object| {
                    object
                        .keys()
                        .filter(|key| {
                            kept.get(key.as_str()).map(Json::to_string)
                                != now.get(key.as_str()).map(Json::to_string)
                        })
                        .map(String::as_str)
                        .collect()
                })
                .unwrap_or_default();
            differ.push(format!("{}: {}", now["id"], keys.join(", ")));
        }
    }
    assert!(
        differ.is_empty(),
        "{} launches differ from the snapshot (MEMPLAY_UPDATE_SNAPSHOT=1 rewrites it if the \
         model changed on purpose):\n{}",
        differ.len(),
        differ.join("\n")
    );
}
