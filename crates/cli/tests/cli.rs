//! The `memplay` binary as scripts see it: JSON on stdout, one `error:` line and a non-zero exit
//! for bad input, never a panic.

use std::process::Command;

/// Runs `memplay args` and returns (success, stdout, stderr).
fn memplay(args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_memplay"))
        .args(args)
        .output()
        .expect("the binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn check_error(args: &[&str], expected_fragment: &str) {
    let (ok, stdout, stderr) = memplay(args);
    assert!(!ok, "{args:?} should fail");
    assert!(stdout.is_empty(), "{args:?} printed {stdout}");
    assert_eq!(
        stderr.trim().lines().count(),
        1,
        "{args:?}: one line, got {stderr}"
    );
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    assert!(stderr.contains(expected_fragment), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}

#[test]
fn occupancy_json_has_the_nsight_limit_names() {
    let (ok, stdout, stderr) = memplay(&[
        "occupancy",
        "--device",
        "h100",
        "--block",
        "256",
        "--regs",
        "32",
        "--smem-per-block",
        "2048",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(json["active_blocks_per_sm"], 8);
    assert_eq!(json["theoretical_occupancy_pct"], 100.0);
    assert_eq!(json["limiter"], "warps");
    assert_eq!(json["limit_registers"], 8);
    assert_eq!(json["limit_shared_mem"], 32);
    assert_eq!(json["limit_warps"], 8);
    assert_eq!(json["limit_blocks"], 32);
}

#[test]
fn g80_sixteen_by_sixteen_tiles_run_three_blocks() {
    let (ok, stdout, _) = memplay(&[
        "occupancy",
        "--device",
        "g80",
        "--block",
        "256",
        "--regs",
        "10",
        "--json",
    ]);
    assert!(ok);
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(json["active_blocks_per_sm"], 3);
    assert_eq!(json["limiter"], "warps");
}

#[test]
fn bad_input_is_one_error_line_and_a_failure() {
    check_error(&["occupancy", "--block", "0"], "at least one thread");
    check_error(&["occupancy", "--block", "2000"], "2000 threads");
    check_error(
        &["occupancy", "--block", "256", "--regs", "300"],
        "300 registers",
    );
    check_error(
        &["occupancy", "--device", "rtx4090", "--block", "256"],
        "unknown device 'rtx4090'",
    );
    check_error(&["occupancy", "--block", "many"], "invalid value 'many'");
    check_error(
        &["occupancy", "--block", "256", "--smem-per-block", "999999"],
        "shared memory",
    );
    check_error(&["frobnicate"], "unrecognized subcommand");
}

#[test]
fn devices_lists_every_preset() {
    let (ok, stdout, _) = memplay(&["devices", "--json"]);
    assert!(ok);
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("a JSON array");
    let ids: Vec<&str> = json
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect();
    assert_eq!(ids.len(), 6, "{ids:?}");
}
