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
    assert_eq!(json["limit_shared_mem"], 21);
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

/// The flags of `memplay simulate` for one `launch_spec` / `spec` of the H100 reference.
fn simulate_flags(spec: &serde_json::Value, kernels: &std::path::Path) -> Vec<String> {
    let dim = |name: &str| {
        spec[name]
            .as_array()
            .expect("a dimension array")
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut flags = vec![
        "simulate".to_string(),
        kernels
            .join(spec["file"].as_str().expect("a file"))
            .display()
            .to_string(),
        "--kernel".to_string(),
        spec["kernel"].as_str().expect("a kernel").to_string(),
        "--device".to_string(),
        "h100".to_string(),
        "--grid".to_string(),
        dim("grid"),
        "--block".to_string(),
        dim("block"),
        "--dyn-smem".to_string(),
        spec["dyn_smem"].to_string(),
        "--regs".to_string(),
        spec["regs"].to_string(),
        "--json".to_string(),
    ];
    for (name, value) in spec["defines"].as_object().expect("defines") {
        flags.push("-D".to_string());
        flags.push(format!("{name}={value}"));
    }
    for (name, value) in spec["args"].as_object().expect("args") {
        flags.push("--arg".to_string());
        flags.push(format!("{name}={value}"));
    }
    for (name, value) in spec["buffers"].as_object().expect("buffers") {
        flags.push("--buffer".to_string());
        flags.push(format!("{name}={value}"));
    }
    flags
}

#[test]
fn simulate_runs_every_reference_launch_with_the_shipped_kernels() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let kernels = root.join("www/kernels");
    let timing_path = root.join("tests/reference/h100-timing.json");
    let text = std::fs::read_to_string(&timing_path).unwrap_or_else(|e| {
        panic!(
            "the reference timings are needed at {}: {e}",
            timing_path.display()
        )
    });
    let timings: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let specs: Vec<&serde_json::Value> = timings
        .as_array()
        .expect("an array")
        .iter()
        .map(|t| &t["spec"])
        .collect();
    assert!(specs.len() >= 30);
    for spec in specs {
        let flags = simulate_flags(spec, &kernels);
        let args: Vec<&str> = flags.iter().map(String::as_str).collect();
        let (ok, stdout, stderr) = memplay(&args);
        assert!(ok, "{args:?}: {stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
        for key in ["counters", "occupancy", "sampled_blocks"] {
            assert!(json.get(key).is_some(), "{key} in {stdout}");
        }
        assert!(
            json["counters"]["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"]
                .as_f64()
                .unwrap_or(0.0)
                > 0.0
        );
        assert_eq!(json["occupancy"]["limit_blocks"], 32);
    }
}

#[test]
fn simulate_reports_a_kernel_error_at_its_line_and_column() {
    let dir = std::env::temp_dir().join(format!("memplay-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let file = dir.join("undeclared.cu");
    // Seed 000's matmul slide uses an `m` it never declares.
    std::fs::write(
        &file,
        "__global__ void k(float* a) {\n  a[threadIdx.x] = m;\n}\n",
    )
    .expect("written");
    let path = file.display().to_string();
    check_error(
        &[
            "simulate", &path, "--kernel", "k", "--grid", "1", "--block", "32", "--buffer", "a=128",
        ],
        "2:20: ",
    );
    let matmul = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../www/kernels/matmul.cu")
        .display()
        .to_string();
    check_error(
        &[
            "simulate", &matmul, "--kernel", "nope", "--grid", "1", "--block", "32",
        ],
        "no kernel named 'nope'",
    );
    check_error(
        &[
            "simulate", &path, "--kernel", "k", "--grid", "0", "--block", "32",
        ],
        "not a whole number above 0",
    );
    check_error(
        &[
            "simulate",
            "/no/such/file.cu",
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "1",
        ],
        "cannot read",
    );
}

#[test]
fn a_tile_width_sweep_halves_the_global_loads_with_each_doubling() {
    let matmul = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../www/kernels/matmul.cu")
        .display()
        .to_string();
    let (ok, stdout, stderr) = memplay(&[
        "sweep",
        &matmul,
        "--kernel",
        "mm_tiled",
        "--grid",
        "256/TILE_WIDTH,256/TILE_WIDTH",
        "--block",
        "TILE_WIDTH,TILE_WIDTH",
        "--regs",
        "32",
        "-D",
        "PAD=0",
        "--arg",
        "n=256",
        "--buffer",
        "a=262144",
        "--buffer",
        "b=262144",
        "--buffer",
        "c=262144",
        "--sweep",
        "TILE_WIDTH=8,16,32",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let rows: serde_json::Value = serde_json::from_str(&stdout).expect("a JSON array");
    let rows = rows.as_array().expect("rows");
    assert_eq!(rows.len(), 3);
    let grids: Vec<u64> = rows
        .iter()
        .map(|r| r["grid"][0].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(grids, [32, 16, 8]);
    let loads: Vec<f64> = rows
        .iter()
        .map(|r| r["global_ld_requests"].as_f64().unwrap_or(0.0))
        .collect();
    // Seed 003: a TILE-wide tile loads each element n / TILE times; 2 n^3 / TILE / 32 warp requests.
    assert_eq!(
        loads,
        [
            2.0 * 256f64.powi(3) / 8.0 / 32.0,
            2.0 * 256f64.powi(3) / 16.0 / 32.0,
            2.0 * 256f64.powi(3) / 32.0 / 32.0
        ]
    );
}

#[test]
fn a_sweep_over_an_unknown_name_in_the_launch_is_an_error() {
    let matmul = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../www/kernels/matmul.cu")
        .display()
        .to_string();
    check_error(
        &[
            "sweep", &matmul, "--kernel", "mm_tiled", "--grid", "64/TILE", "--block", "16,16",
            "--arg", "n=1024", "--sweep", "PAD=0,1",
        ],
        "the launch names TILE, which is no -D define or --arg",
    );
}
