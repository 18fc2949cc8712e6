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
        let mut flags = simulate_flags(spec, &kernels);
        // The n = 2048 matmuls take more steps than the default budget allows a student's kernel.
        flags.extend(["--budget".to_string(), "110000000".to_string()]);
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

/// `memplay args` must fail with exactly `expected` as its one stderr line and nothing on stdout.
fn check_error_line(args: &[&str], expected: &str) {
    let (ok, stdout, stderr) = memplay(args);
    assert!(!ok, "{args:?} should fail");
    assert!(stdout.is_empty(), "{args:?} printed {stdout}");
    assert_eq!(stderr, format!("{expected}\n"), "{args:?}");
}

fn lecture_kernel(file: &str) -> String {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../www/kernels")
        .join(file)
        .display()
        .to_string()
}

/// A kernel file of its own in a temporary folder, for one test.
fn kernel_file(name: &str, source: &str) -> String {
    let dir = std::env::temp_dir().join(format!("memplay-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let file = dir.join(name);
    std::fs::write(&file, source).expect("written");
    file.display().to_string()
}

/// The flags of a small tiled matmul (n = 256) whose define, grid and block follow TILE_WIDTH.
fn tiled_matmul(command: &str) -> Vec<String> {
    [
        command,
        &lecture_kernel("matmul.cu"),
        "--kernel",
        "mm_tiled",
        "--grid",
        "256/TILE_WIDTH,256/TILE_WIDTH",
        "--block",
        "TILE_WIDTH,TILE_WIDTH",
        "--arg",
        "n=256",
        "--buffer",
        "a=262144",
        "--buffer",
        "b=262144",
        "--buffer",
        "c=262144",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn with<'a>(base: &'a [String], more: &[&'a str]) -> Vec<&'a str> {
    base.iter()
        .map(String::as_str)
        .chain(more.iter().copied())
        .collect()
}

#[test]
fn a_launch_beyond_the_device_limits_is_refused_with_the_limit_and_the_device() {
    let matmul = lecture_kernel("matmul.cu");
    let launch = |grid: &'static str, block: &'static str, device: &'static str| {
        vec![
            "simulate".to_string(),
            matmul.clone(),
            "--kernel".to_string(),
            "mm_naive".to_string(),
            "--device".to_string(),
            device.to_string(),
            "--grid".to_string(),
            grid.to_string(),
            "--block".to_string(),
            block.to_string(),
            "--arg".to_string(),
            "n=64".to_string(),
        ]
    };
    // Today's wrap-around: 2^32 - 1 blocks along each dimension is no launch at all.
    let args = launch("4294967295,4294967295,4294967295", "16,16", "h100");
    check_error_line(
        &with(&args, &[]),
        "error: grid x is 4294967295; the H100 allows at most 2147483647",
    );
    let args = launch("4,70000", "16,16", "h100");
    check_error_line(
        &with(&args, &[]),
        "error: grid y is 70000; the H100 allows at most 65535",
    );
    let args = launch("4,4,2", "16,16", "g80");
    check_error_line(
        &with(&args, &[]),
        "error: grid z is 2; the G80 allows at most 1",
    );
    let args = launch("4,4", "32,32", "gt200");
    check_error_line(
        &with(&args, &[]),
        "error: a block of 32x32x1 is 1024 threads; the GT200 allows at most 512 per block",
    );
}

#[test]
fn simulate_without_arguments_names_the_missing_ones_on_one_line() {
    check_error_line(
        &["simulate"],
        "error: missing required arguments: --kernel <KERNEL>, --grid <GRID>, --block <BLOCK>, <FILE>",
    );
    check_error_line(
        &["occupancy"],
        "error: missing required argument: --block <BLOCK>",
    );
    check_error_line(
        &["simulat"],
        "error: unrecognized subcommand 'simulat' (tip: a similar subcommand exists: 'simulate')",
    );
}

#[test]
fn control_characters_in_arguments_are_escaped_and_long_ones_cut() {
    let matmul = lecture_kernel("matmul.cu");
    check_error_line(
        &[
            "simulate", &matmul, "--kernel", "mm_naive", "--grid", "4\n2", "--block", "16",
        ],
        "error: invalid value '4\\n2' for '--grid <GRID>': '4\\n2' is not a whole number above 0",
    );
    check_error_line(
        &[
            "simulate", &matmul, "--kernel", "mm_naive", "--grid", "4", "--block", "16", "--arg",
            "n=1\n2",
        ],
        "error: --arg n=1\\n2: the value is not a number",
    );
    check_error_line(
        &[
            "simulate",
            &matmul,
            "--kernel",
            "\u{1b}[2Jred\tx",
            "--grid",
            "4",
            "--block",
            "16",
        ],
        "error: there is no kernel named '\\u{1b}[2Jred\\tx' (kernels: mm_naive, mm_tiled)",
    );
    // An argument may be 128 KiB on Linux; a source file holds a longer identifier.
    let huge = "k".repeat(100_000);
    let undeclared = kernel_file(
        "huge.cu",
        &format!(
            "__global__ void k(int* a) {{ a[0] = {}; }}\n",
            "v".repeat(500_000)
        ),
    );
    for args in [
        [
            "simulate", &matmul, "--kernel", &huge, "--grid", "4", "--block", "16",
        ],
        [
            "simulate",
            &undeclared,
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "32",
        ],
    ] {
        let (ok, stdout, stderr) = memplay(&args);
        assert!(!ok && stdout.is_empty());
        let shown: String = stderr.chars().take(300).collect();
        assert_eq!(stderr.lines().count(), 1, "{shown}");
        assert!(stderr.starts_with("error: "), "{shown}");
        assert!(stderr.trim_end().ends_with("…"), "{shown}");
        assert!(
            stderr.chars().count() <= "error: \n".len() + 240 + "1:35: ".len(),
            "{shown}"
        );
    }
    let path = kernel_file("not\nthere.cu", "");
    let missing = path.replace("not\nthere.cu", "no\nsuch.cu");
    let (ok, _, stderr) = memplay(&[
        "simulate", &missing, "--kernel", "k", "--grid", "1", "--block", "1",
    ]);
    assert!(!ok);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no\\nsuch.cu: No such file"), "{stderr}");
}

#[test]
fn a_source_larger_than_the_simulator_takes_is_refused_without_reading_it_all() {
    check_error_line(
        &[
            "simulate",
            "/dev/zero",
            "--kernel",
            "k",
            "--grid",
            "1",
            "--block",
            "1",
        ],
        "error: /dev/zero is longer than 1048576 bytes, the most a kernel source may have",
    );
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    for args in [
        vec!["devices".to_string()],
        tiled_matmul("simulate")
            .into_iter()
            .chain(["-D", "TILE_WIDTH=16", "-D", "PAD=0"].map(String::from))
            .collect(),
        tiled_matmul("sweep")
            .into_iter()
            .chain(["-D", "PAD=0", "--sweep", "TILE_WIDTH=8,16"].map(String::from))
            .collect(),
    ] {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let output = Command::new(env!("CARGO_BIN_EXE_memplay"))
            .args(&args)
            .stdout(writer)
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "{args:?}: {:?} {stderr}",
            output.status
        );
        assert_eq!(stderr, "", "{args:?}");
    }
}

#[test]
fn a_full_disk_is_one_error_line_and_a_failure() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full exists on Linux");
    let output = Command::new(env!("CARGO_BIN_EXE_memplay"))
        .arg("devices")
        .stdout(full)
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: cannot write the output: No space left on device"),
        "{stderr}"
    );
}

#[test]
fn the_budget_bounds_each_launch_of_a_simulation_or_sweep() {
    // One launch of TILE 8 takes some 490,000 steps; three of them together would exceed 600,000.
    let base = tiled_matmul("sweep");
    let (ok, stdout, stderr) = memplay(&with(
        &base,
        &[
            "-D",
            "TILE_WIDTH=8",
            "--sweep",
            "PAD=0,1,0",
            "--budget",
            "600000",
            "--json",
        ],
    ));
    assert!(ok, "{stderr}");
    let rows: serde_json::Value = serde_json::from_str(&stdout).expect("a JSON array");
    assert_eq!(rows.as_array().map(Vec::len), Some(3));

    let base = tiled_matmul("simulate");
    let (ok, stdout, stderr) = memplay(&with(
        &base,
        &["-D", "TILE_WIDTH=8", "-D", "PAD=0", "--budget", "1000"],
    ));
    assert!(!ok && stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: ") && stderr.contains("step budget"),
        "{stderr}"
    );
    assert!(stderr.contains("1000"), "{stderr}");
    check_error(
        &with(
            &base,
            &["-D", "TILE_WIDTH=8", "-D", "PAD=0", "--budget", "0"],
        ),
        "invalid value '0' for '--budget <BUDGET>'",
    );
}

#[test]
fn a_sweep_stops_at_the_first_failing_launch_after_printing_the_rows_before_it() {
    let base = tiled_matmul("sweep");
    let (ok, stdout, stderr) = memplay(&with(
        &base,
        &["-D", "PAD=0", "--sweep", "TILE_WIDTH=8,16,64,4"],
    ));
    assert!(!ok);
    let values: Vec<&str> = stdout
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(values, ["8", "16"], "{stdout}");
    assert_eq!(
        stderr,
        "error: TILE_WIDTH=64: a block of 64x64x1 is 4096 threads; the H100 allows at most 1024 per block\n"
    );

    let (ok, stdout, stderr) = memplay(&with(
        &base,
        &["-D", "PAD=0", "--sweep", "TILE_WIDTH=8,64", "--json"],
    ));
    assert!(!ok);
    let rows: serde_json::Value = serde_json::from_str(&stdout).expect("a JSON array");
    assert_eq!(rows.as_array().map(Vec::len), Some(1));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");

    // A value that cannot be read fails before any launch runs.
    check_error_line(
        &with(&base, &["-D", "PAD=0", "--sweep", "TILE_WIDTH=8,x"]),
        "error: TILE_WIDTH=x is not a whole number above 0",
    );
    let many: Vec<String> = (1..=1001).map(|v| v.to_string()).collect();
    let sweep = format!("TILE_WIDTH={}", many.join(","));
    check_error_line(
        &with(&base, &["-D", "PAD=0", "--sweep", &sweep]),
        "error: --sweep TILE_WIDTH lists 1001 values; a sweep takes at most 1000",
    );
}

#[test]
fn infinity_and_nan_are_accepted_in_any_case() {
    let file = kernel_file(
        "fill.cu",
        "__global__ void fill(float* a, float x) { a[threadIdx.x] = x; }\n",
    );
    for value in ["inf", "INF", "Infinity", "-inf", "nan", "NaN", "1.5f"] {
        let arg = format!("x={value}");
        let (ok, _, stderr) = memplay(&[
            "simulate", &file, "--kernel", "fill", "--grid", "1", "--block", "32", "--arg", &arg,
            "--buffer", "a=128",
        ]);
        assert!(ok, "{value}: {stderr}");
    }
}

#[test]
fn a_value_the_parameter_cannot_take_is_shown_as_written() {
    let base = tiled_matmul("simulate");
    // The later --arg n wins over the n=256 of the base launch.
    let (ok, _, stderr) = memplay(&with(
        &base,
        &["-D", "TILE_WIDTH=8", "-D", "PAD=0", "--arg", "n=64.5"],
    ));
    assert!(!ok);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("64.5") && !stderr.contains("Float("),
        "{stderr}"
    );
}

#[test]
fn a_buffer_for_a_scalar_or_a_value_for_a_pointer_is_an_error() {
    let file = kernel_file(
        "scale.cu",
        "__global__ void scale(float* a, int n) { a[threadIdx.x] *= n; }\n",
    );
    let launch = [
        "simulate", &file, "--kernel", "scale", "--grid", "1", "--block", "32",
    ];
    check_error(
        &[&launch[..], &["--buffer", "a=128", "--buffer", "n=4"]].concat(),
        "'n' is a scalar parameter",
    );
    check_error(
        &[&launch[..], &["--arg", "n=2", "--arg", "a=5"]].concat(),
        "'a' is a pointer parameter",
    );
}

#[test]
fn a_define_name_that_is_no_identifier_is_an_error() {
    let base = tiled_matmul("simulate");
    for define in ["1X=2", "A B=1"] {
        check_error(
            &with(&base, &["-D", "TILE_WIDTH=8", "-D", "PAD=0", "-D", define]),
            "a macro name must be an identifier",
        );
    }
}

/// The launch file the playground writes for `tiled_matmul`'s launch at TILE_WIDTH=16: the input,
/// and the counters and time the simulator gives it, in `memplay_sim::replay`'s envelope.
fn tiled_matmul_launch_file() -> memplay_sim::replay::LaunchFile {
    use memplay_sim::lesson_kernels::{matmul_launch, MATMUL};
    let input = matmul_launch(MATMUL, "mm_tiled", 256, 16, memplay_sim::device::h100());
    let report = memplay_sim::simulate(&input).expect("the tiled matmul runs");
    let time_ms = memplay_sim::timing::predict(&report).time_ms;
    memplay_sim::replay::LaunchFile::new(input, report.counters, time_ms)
}

fn launch_file(name: &str, launch: &memplay_sim::replay::LaunchFile) -> String {
    let json = serde_json::to_string_pretty(launch).expect("a launch file serializes");
    kernel_file(name, &json)
}

#[test]
fn replay_runs_a_launch_file_exactly_as_simulate_runs_the_same_launch() {
    let file = launch_file("replay-tiled.json", &tiled_matmul_launch_file());
    let (ok, replayed, stderr) = memplay(&["replay", &file, "--check", "--json"]);
    assert!(ok, "{stderr}");
    let simulate_flags = tiled_matmul("simulate");
    let (ok, simulated, stderr) =
        memplay(&with(&simulate_flags, &["-D", "TILE_WIDTH=16", "--json"]));
    assert!(ok, "{stderr}");
    let replayed: serde_json::Value = serde_json::from_str(&replayed).expect("one JSON object");
    let simulated: serde_json::Value = serde_json::from_str(&simulated).expect("one JSON object");
    assert_eq!(replayed["counters"], simulated["counters"]);
    assert_eq!(replayed["time_ms"], simulated["time_ms"]);
    assert_eq!(replayed, simulated, "replay prints what simulate prints");

    // Without --json it prints simulate's table.
    let (ok, table, _) = memplay(&["replay", &file]);
    let (_, simulated_table, _) = memplay(&with(&simulate_flags, &["-D", "TILE_WIDTH=16"]));
    assert!(ok);
    assert_eq!(table, simulated_table);
}

#[test]
fn replay_check_fails_on_a_counter_or_time_that_differs() {
    let mut launch = tiled_matmul_launch_file();
    launch.expected.counters.global_ld_sectors += 1.0;
    let file = launch_file("replay-tampered.json", &launch);
    let (ok, stdout, stderr) = memplay(&["replay", &file, "--check"]);
    assert!(!ok, "a different counter fails the check");
    assert!(
        stdout.contains("mm_tiled on"),
        "the output comes first: {stdout}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: the replay differs from the file's expected results in 1 value: l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
        "{stderr}"
    );

    let mut launch = tiled_matmul_launch_file();
    launch.expected.time_ms *= 1.0 + 1e-6;
    let file = launch_file("replay-slower.json", &launch);
    let (ok, _, stderr) = memplay(&["replay", &file, "--check"]);
    assert!(!ok, "a time 1e-6 off fails the check");
    assert!(stderr.contains("time_ms: expected"), "{stderr}");
    // Without --check the same file only prints.
    assert!(memplay(&["replay", &file]).0);
}

#[test]
fn replay_refuses_what_is_not_a_launch_file_of_a_preset() {
    let file = kernel_file("not-a-launch.json", "{\"memplay_launch\": 1}");
    check_error(&["replay", &file], "is not a memplay launch file");

    let mut launch = tiled_matmul_launch_file();
    launch.memplay_launch = 3;
    check_error(
        &["replay", &launch_file("replay-v3.json", &launch)],
        "the launch file is version 3",
    );

    let mut launch = tiled_matmul_launch_file();
    launch.input.device.n_banks = 0;
    check_error(
        &["replay", &launch_file("replay-device.json", &launch)],
        "differs from memplay's 'h100' preset",
    );

    let mut launch = tiled_matmul_launch_file();
    launch.input.step_budget = u64::MAX;
    check_error(
        &["replay", &launch_file("replay-budget.json", &launch)],
        "steps, more than --budget ",
    );
}

/// A histogram of `data[i] & 15`: where its atomics land depends on what `data` holds.
const HISTOGRAM: &str = "__global__ void histogram(const int* data, int* bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[data[i] & 15], 1);
}
";

/// The flags of `histogram` over 16,384 elements in 64 blocks of 256 threads.
fn histogram(command: &str) -> Vec<String> {
    let file = kernel_file("histogram.cu", HISTOGRAM);
    [
        command,
        &file,
        "--kernel",
        "histogram",
        "--grid",
        "64",
        "--block",
        "256",
        "--arg",
        "n=16384",
        "--buffer",
        "data=65536",
        "--buffer",
        "bins=64",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The predicted time and the atomic unit's busy time of `histogram` with `fills` added.
fn histogram_times(fills: &[&str]) -> (serde_json::Value, f64, f64) {
    let base = histogram("simulate");
    let (ok, stdout, stderr) = memplay(&with(&base, &[fills, &["--json"]].concat()));
    assert!(ok, "{fills:?}: {stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    let atomics = json["prediction"]["units"]
        .as_array()
        .expect("the units")
        .iter()
        .find(|unit| unit["unit"] == "atomics")
        .and_then(|unit| unit["busy_ms"].as_f64())
        .expect("the atomic unit's busy time");
    let time_ms = json["time_ms"].as_f64().expect("a time");
    (json, time_ms, atomics)
}

#[test]
fn zeroed_data_puts_a_histogram_s_atomics_on_one_word_and_slows_it() {
    let (default, default_ms, default_atomics) = histogram_times(&[]);
    let (zeros, zeros_ms, zeros_atomics) = histogram_times(&["--fill", "data=zeros"]);
    // Small random data spreads a warp's 32 updates over 16 bins; zeros put all 32 on bins[0],
    // which the L2 serves one after another.
    assert!(
        zeros_atomics > 3.0 * default_atomics,
        "{zeros_atomics} against {default_atomics}"
    );
    assert!(
        zeros_ms > 1.5 * default_ms,
        "{zeros_ms} against {default_ms}"
    );
    assert_eq!(default["bottleneck"], "launch");
    assert_eq!(zeros["bottleneck"], "atomics");
    // The same 512 atomic requests, one a warp; the 16 bins span two 32-byte sectors, of which
    // zeroed data touches only the first.
    let atomics = |json: &serde_json::Value, metric: &str| {
        json["counters"][format!("l1tex__t_{metric}_pipe_lsu_mem_global_op_atom.sum")].as_f64()
    };
    assert_eq!(atomics(&default, "requests"), Some(512.0));
    assert_eq!(atomics(&zeros, "requests"), Some(512.0));
    assert_eq!(atomics(&default, "sectors"), Some(1024.0));
    assert_eq!(atomics(&zeros, "sectors"), Some(512.0));

    // iota spreads every warp evenly, two lanes a bin, below the random spread.
    let (_, _, iota_atomics) = histogram_times(&["--fill", "data=iota"]);
    assert!(iota_atomics < default_atomics, "{iota_atomics}");
    // The bins' own contents move no update, and naming the default changes nothing.
    for fills in [["--fill", "bins=zeros"], ["--fill", "data=small"]] {
        let (same, _, _) = histogram_times(&fills);
        assert_eq!(same, default, "{fills:?}");
    }
}

#[test]
fn a_bad_fill_is_one_error_line_listing_the_choices_or_the_buffers() {
    let base = histogram("simulate");
    check_error_line(
        &with(&base, &["--fill", "data=ones"]),
        "error: --fill data=ones: unknown fill 'ones' (expected one of small, random, iota, zeros)",
    );
    check_error_line(
        &with(&base, &["--fill", "dat=zeros"]),
        "error: 1:17: the launch fills a buffer 'dat', but its buffers are data, bins",
    );
    check_error(
        &with(&base, &["--fill", "data=zeros", "--fill", "data=iota"]),
        "the launch fills the buffer 'data' twice",
    );
    check_error(
        &with(&base, &["--fill", "data"]),
        "'data' is not NAME=VALUE",
    );
    // A sweep takes the same flag and refuses the same values before any launch runs.
    let sweep = histogram("sweep");
    check_error(
        &with(&sweep, &["--sweep", "n=4096,8192", "--fill", "data=Zeros"]),
        "unknown fill 'Zeros'",
    );
}

#[test]
fn replay_runs_a_launch_file_s_fills_as_simulate_runs_them() {
    use memplay_sim::kernel::{Dim3, Value};
    let mut input =
        memplay_sim::SimulationInput::new(HISTOGRAM, "histogram", memplay_sim::device::h100());
    input.grid = Dim3::new(64, 1, 1);
    input.block = Dim3::new(256, 1, 1);
    input.args = vec![("n".to_string(), Value::Int(16384))];
    input.buffers = vec![("data".to_string(), 65536), ("bins".to_string(), 64)];
    input.fills = vec![("data".to_string(), memplay_sim::Fill::Zeros)];
    let report = memplay_sim::simulate(&input).expect("the histogram runs");
    let time_ms = memplay_sim::timing::predict(&report).time_ms;
    let launch = memplay_sim::replay::LaunchFile::new(input, report.counters, time_ms);
    let file = launch_file("replay-histogram.json", &launch);
    let written = std::fs::read_to_string(&file).expect("the launch file reads");
    let json: serde_json::Value = serde_json::from_str(&written).expect("JSON");
    assert_eq!(
        json["input"]["fills"],
        serde_json::json!([["data", "zeros"]])
    );

    let (ok, replayed, stderr) = memplay(&["replay", &file, "--check", "--json"]);
    assert!(ok, "{stderr}");
    let replayed: serde_json::Value = serde_json::from_str(&replayed).expect("one JSON object");
    let (simulated, _, _) = histogram_times(&["--fill", "data=zeros"]);
    assert_eq!(replayed["bottleneck"], "atomics");
    assert_eq!(replayed, simulated, "replay prints what simulate prints");
}

const STENCIL: &str = "__global__ void stencil(const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i - 3] + in[i + 3];
}
";

/// `simulate` of the stencil over 1024 threads (8 blocks of 128) with `more` flags, from the
/// file `name` (one per test, as the tests run at once).
fn stencil(name: &str, more: &[&str]) -> (bool, String, String) {
    let file = kernel_file(name, STENCIL);
    let flags = [
        "simulate",
        &file,
        "--kernel",
        "stencil",
        "--grid",
        "8",
        "--block",
        "128",
        "--json",
        "--buffer",
        "d_in=4120",
        "--buffer",
        "out=4096",
    ];
    memplay(&[&flags[..], more].concat())
}

#[test]
fn a_pointer_argument_points_elements_into_a_named_buffer() {
    // in = d_in + 3: in[i - 3] is d_in[i], one 128-byte request of 4 sectors a warp; in[i + 3]
    // is d_in[i + 6], 24 bytes into a sector, so 5. 32 warps.
    for text in ["in=d_in+3", "in = d_in + 3"] {
        let (ok, stdout, stderr) = stencil("stencil-counters.cu", &["--arg", text]);
        assert!(ok, "{text}: {stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
        let counters = &json["counters"];
        assert_eq!(
            counters["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"], 64.0,
            "{text}"
        );
        assert_eq!(
            counters["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"],
            32.0 * (4.0 + 5.0),
            "{text}"
        );
    }
}

#[test]
fn a_pointer_argument_that_cannot_be_is_one_error_line_naming_why() {
    let (_, _, stderr) = stencil("stencil-errors.cu", &["--arg", "in=d_in+2"]);
    assert!(
        stderr.contains("index -1 is outside buffer 'd_in' (4120 bytes)"),
        "{stderr}"
    );
    let file = kernel_file("stencil-errors.cu", STENCIL);
    let flags = [
        "simulate",
        &file,
        "--kernel",
        "stencil",
        "--grid",
        "8",
        "--block",
        "128",
        "--buffer",
        "d_in=4120",
        "--buffer",
        "out=4096",
    ];
    let fails = |arg: &str, expected: &str| {
        check_error_line(&[&flags[..], &["--arg", arg]].concat(), expected);
    };
    fails(
        "in=d_in-3",
        "error: --arg in=d_in-3: column 8: a pointer argument points into its buffer, so its \
         offset is added: d_in + 3",
    );
    fails(
        "in=d_in+x",
        "error: --arg in=d_in+x: column 9: the offset is a whole number of elements, as in \
         d_in + 3",
    );
    fails(
        "in=d+3",
        "error: --arg in=d+3: column 4: 'd' is neither a number nor a buffer (give a buffer's \
         size with --buffer d=BYTES)",
    );
    fails(
        "in=d_in+1031",
        "error: 1:38: 'in' points 1031 elements into the buffer 'd_in', past its end (4120 \
         bytes, 1030 elements)",
    );
    let file = kernel_file(
        "scale.cu",
        "__global__ void scale(float* a, int n) { a[threadIdx.x] *= n; }\n",
    );
    check_error_line(
        &[
            "simulate", &file, "--kernel", "scale", "--grid", "1", "--block", "32", "--buffer",
            "a=128", "--arg", "n=a+1",
        ],
        "error: 1:37: 'n' is not a pointer (int): it takes a value, not a place in a buffer",
    );
}

/// A launch file as memplay wrote it before pointer arguments existed (version 1): the tiled
/// matmul at n = 64 with tiles of 16, `a` filled with iota. Its format is what the test keeps;
/// its expected results follow the model (the SASS instruction counts changed when multiply-adds
/// became one instruction).
const VERSION_1_LAUNCH: &str = include_str!("launch-v1-mm-tiled.json");

#[test]
fn a_launch_file_written_before_pointer_arguments_replays_as_it_did() {
    let file = kernel_file("replay-version-1.json", VERSION_1_LAUNCH);
    let (ok, _, stderr) = memplay(&["replay", &file, "--check"]);
    assert!(ok, "{stderr}");
}

#[test]
fn a_launch_file_keeps_its_pointer_arguments_and_replays_them() {
    use memplay_sim::pointer_argument::PointerArgument;
    let mut input =
        memplay_sim::SimulationInput::new(STENCIL, "stencil", memplay_sim::device::h100());
    input.grid = memplay_sim::kernel::Dim3::new(8, 1, 1);
    input.block = memplay_sim::kernel::Dim3::new(128, 1, 1);
    input.buffers = vec![("d_in".to_string(), 4120), ("out".to_string(), 4096)];
    input.pointers = vec![PointerArgument {
        parameter: "in".to_string(),
        buffer: "d_in".to_string(),
        offset: 3,
    }];
    let report = memplay_sim::simulate(&input).expect("the stencil runs");
    let time_ms = memplay_sim::timing::predict(&report).time_ms;
    let launch = memplay_sim::replay::LaunchFile::new(input, report.counters, time_ms);
    assert_eq!(launch.memplay_launch, 2);
    let file = launch_file("replay-stencil.json", &launch);
    let (ok, replayed, stderr) = memplay(&["replay", &file, "--check", "--json"]);
    assert!(ok, "{stderr}");
    let (ok, simulated, stderr) = stencil("stencil-replay.cu", &["--arg", "in=d_in+3"]);
    assert!(ok, "{stderr}");
    assert_eq!(replayed, simulated, "replay prints what simulate prints");
}

/// A whole program: a tiled matmul of 64 x 64 floats launched from `main` with its sizes in
/// `#define`s, `dim3` variables and `cudaMalloc` sizes, and a stencil launched with a pointer
/// moved past its halo and a size `main` reads from its arguments.
const PROGRAM: &str = "#include <cstdlib>
#include <vector>
#define N 64
#define TILE 16
#define RADIUS 3
__global__ void matmul_tiled(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[TILE][TILE];
  __shared__ float tb[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y;
  int col = blockIdx.x * TILE + threadIdx.x;
  float sum = 0.0f;
  for (int t = 0; t < n / TILE; ++t) {
    ta[threadIdx.y][threadIdx.x] = a[row * n + t * TILE + threadIdx.x];
    tb[threadIdx.y][threadIdx.x] = b[(t * TILE + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) sum += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = sum;
}
__global__ void stencil(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i - RADIUS] + in[i + RADIUS];
}
class Timer {
public:
  Timer() { cudaEventCreate(&start_); }
private:
  cudaEvent_t start_;
};
int main(int argc, char** argv) {
  Timer timer;
  size_t bytes = N * N * sizeof(float);
  float *d_a, *d_b, *d_c;
  cudaMalloc(&d_a, bytes);
  cudaMalloc((void**)&d_b, bytes);
  cudaMalloc(&d_c, bytes);
  std::vector<float> h(N * N, 1.0f);
  cudaMemcpy(d_a, h.data(), bytes, cudaMemcpyHostToDevice);
  dim3 block(TILE, TILE);
  dim3 grid(N / TILE, N / TILE);
  auto run = [&]() { matmul_tiled<<<grid, block>>>(d_a, d_b, d_c, N); };
  run();
  int n = argc > 1 ? atoi(argv[1]) : 1024;
  float* d_in;
  cudaMalloc(&d_in, (n + 2 * RADIUS) * sizeof(float));
  stencil<<<(n + 127) / 128, 128>>>(d_in + RADIUS, d_c, n);
  return 0;
}
";

#[test]
fn launches_lists_a_program_s_launches_with_what_its_host_code_fixes() {
    // 64 x 64 floats are 16,384 bytes; 64 / 16 = 4 tiles a side.
    let file = kernel_file("program-launches.cu", PROGRAM);
    let (ok, stdout, stderr) = memplay(&["launches", &file]);
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout.trim_end(),
        "launch 1 (line 42): matmul_tiled<<<(4, 4, 1), (16, 16, 1), 0>>>\n\
         \x20 arg 1: d_a = buffer d_a + 0, 16384 bytes, 16384 copied in\n\
         \x20 arg 2: d_b = buffer d_b + 0, 16384 bytes\n\
         \x20 arg 3: d_c = buffer d_c + 0, 16384 bytes\n\
         \x20 arg 4: 64 = 64\n\
         launch 2 (line 47): stencil<<<(unknown ((n + 127) / 128), 1, 1), (128, 1, 1), 0>>>\n\
         \x20 arg 1: d_in + 3 = buffer d_in + 3, unknown ((n + 2 * 3) * sizeof(float)) bytes\n\
         \x20 arg 2: d_c = buffer d_c + 0, 16384 bytes\n\
         \x20 arg 3: n = unknown (argc > 1 ? atoi(argv[1]) : 1024)"
    );
}

#[test]
fn launches_json_numbers_each_launch_and_marks_unknown_values() {
    let file = kernel_file("program-launches-json.cu", PROGRAM);
    let (ok, stdout, stderr) = memplay(&["launches", &file, "--json"]);
    assert!(ok, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON array");
    assert_eq!(json[0]["launch"], 1);
    assert_eq!(json[0]["line"], 42);
    assert_eq!(json[0]["kernel"], "matmul_tiled");
    assert_eq!(json[0]["grid"][0]["known"], 4);
    assert_eq!(json[0]["block"][1]["known"], 16);
    assert_eq!(
        json[0]["args"][0]["value"]["buffer"]["bytes"]["known"],
        16384
    );
    assert_eq!(json[1]["grid"][0]["unknown"], "(n + 127) / 128");
    assert_eq!(json[1]["args"][0]["value"]["buffer"]["offset"]["known"], 3);
    assert_eq!(
        json[1]["args"][2]["value"]["unknown"],
        "argc > 1 ? atoi(argv[1]) : 1024"
    );
}

#[test]
fn simulate_launch_runs_the_program_s_launch_as_the_same_flags_written_out() {
    let file = kernel_file("program-simulate.cu", PROGRAM);
    let counters = |args: &[&str]| {
        let (ok, stdout, stderr) = memplay(args);
        assert!(ok, "{args:?}: {stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
        json["counters"].clone()
    };
    let from_program = counters(&["simulate", &file, "--launch", "1", "--json"]);
    let written_out = counters(&[
        "simulate",
        &file,
        "--kernel",
        "matmul_tiled",
        "--grid",
        "4,4",
        "--block",
        "16,16",
        "--arg",
        "n=64",
        "--buffer",
        "a=16384",
        "--buffer",
        "b=16384",
        "--buffer",
        "c=16384",
        "--json",
    ]);
    assert_eq!(from_program, written_out);
    // 16 x 16 threads each load one float of a and of b per tile, 4 tiles: 2 x 4 x 16 blocks
    // x 8 warps global load requests.
    assert_eq!(
        from_program["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"],
        2.0 * 4.0 * 16.0 * 8.0
    );
}

#[test]
fn simulate_launch_asks_by_name_for_what_the_host_computes_at_run_time() {
    let file = kernel_file("program-unknowns.cu", PROGRAM);
    check_error(
        &["simulate", &file, "--launch", "2"],
        "give --arg n=VALUE, --buffer d_in=BYTES, --grid",
    );
    // Given those, the stencil runs over 1024 elements: in = d_in + 3, d_in holding 1030 floats.
    let (ok, stdout, stderr) = memplay(&[
        "simulate",
        &file,
        "--launch",
        "2",
        "--arg",
        "n=1024",
        "--buffer",
        "d_in=4120",
        "--grid",
        "8",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(json["grid_blocks"], 8);
    check_error(
        &["simulate", &file, "--launch", "3"],
        "--launch 3: the host code has launches 1 to 2",
    );
}

/// A shared reduction that assumes a block of 64 threads: a block of 48 leaves `s[48]` to
/// `s[63]` unwritten, and the first step reads them.
const REDUCTION_48: &str = "__global__ void sum(const float* in, float* out) {
  __shared__ float s[64];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  for (int stride = 32; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[0] = s[0];
}
";

/// Runs the reduction from its own file `name`: the tests run at once, each writing its own.
fn reduction_48(name: &str, more: &[&str]) -> (bool, String, String) {
    let path = kernel_file(name, REDUCTION_48);
    let mut args = vec![
        "simulate", &path, "--kernel", "sum", "--grid", "1", "--block", "48", "--buffer", "in=192",
        "--buffer", "out=4",
    ];
    args.extend_from_slice(more);
    memplay(&args)
}

#[test]
fn sanitize_prints_the_uninitialized_read_after_the_report() {
    let (ok, stdout, stderr) = reduction_48("reduction48-text.cu", &["--sanitize"]);
    assert!(ok, "{stderr}");
    let tail: Vec<&str> = stdout.lines().rev().take(2).collect();
    // Lanes 16 to 31 of warp 0 read s[48] onwards: byte 48 * 4 = 192.
    assert_eq!(
        tail,
        [
            "  initcheck 7:29: read of shared memory never written, block (0,0,0) warp 0 \
             lanes 0xffff0000 byte 192",
            "sanitizer: 1 finding",
        ]
    );
    let (ok, plain, _) = reduction_48("reduction48-text.cu", &[]);
    assert!(ok && !plain.contains("sanitizer"));
}

#[test]
fn sanitize_with_json_adds_the_findings_under_sanitizer() {
    let (ok, stdout, stderr) = reduction_48("reduction48-json.cu", &["--sanitize", "--json"]);
    assert!(ok, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let finding = &json["sanitizer"]["findings"][0];
    assert_eq!(finding["hazard"], "uninitialized_shared");
    assert_eq!(finding["span"]["line"], 7);
    assert_eq!(finding["warp"], 0);
    assert_eq!(finding["lanes"], 0xffff_0000u32);
    assert_eq!(finding["address"], 192);
    let (_, plain, _) = reduction_48("reduction48-json.cu", &["--json"]);
    let plain: serde_json::Value = serde_json::from_str(&plain).expect("JSON");
    assert!(plain.get("sanitizer").is_none());
}

/// A kernel whose first thread of each block prints a line.
const HELLO: &str = r#"__global__ void hello(int n) {
  if (threadIdx.x == 0) printf("block %d of %d\n", blockIdx.x, n);
}
"#;

#[test]
fn simulate_prints_the_kernels_printf_output_after_the_report() {
    let path = kernel_file("hello-text.cu", HELLO);
    let (ok, stdout, stderr) = memplay(&[
        "simulate", &path, "--kernel", "hello", "--grid", "2", "--block", "32", "--arg", "n=2",
    ]);
    assert!(ok, "{stderr}");
    let tail: Vec<&str> = stdout.lines().rev().take(3).collect();
    assert_eq!(
        tail,
        [
            "  block 1 of 2",
            "  block 0 of 2",
            "printf output of the simulated blocks:"
        ]
    );
    assert_eq!(stderr, "");
}

#[test]
fn simulate_with_json_puts_the_printf_output_in_a_field_of_its_own() {
    let path = kernel_file("hello-json.cu", HELLO);
    let (ok, stdout, stderr) = memplay(&[
        "simulate", &path, "--kernel", "hello", "--grid", "2", "--block", "32", "--arg", "n=2",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(
        json["printf"]["lines"],
        serde_json::json!(["block 0 of 2", "block 1 of 2"])
    );
    assert_eq!(json["printf"]["lines_not_shown"], 0);
}

#[test]
fn a_failed_assertion_is_one_line_on_stderr_with_its_place_and_thread() {
    let path = kernel_file(
        "assert.cu",
        "__global__ void checked(int n) {\n  assert(threadIdx.x < n);\n}\n",
    );
    let (ok, stdout, stderr) = memplay(&[
        "simulate", &path, "--kernel", "checked", "--grid", "1", "--block", "32", "--arg", "n=30",
    ]);
    assert!(!ok);
    assert_eq!(stdout, "");
    assert_eq!(
        stderr.trim_end(),
        "error: 2:3: the assertion failed in block (0, 0, 0), thread (30, 0, 0)"
    );
}
