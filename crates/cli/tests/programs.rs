//! Whole CUDA programs as students keep them (`tests/programs/*.cu`: headers, host functions,
//! classes, lambdas, `main` with its `cudaMalloc`s and launches), run as their `main` launches
//! them: `memplay launches` finds every launch, `simulate --launch N` runs it, and the counters are
//! the ones worked out by hand from the program's own sizes.

use std::path::PathBuf;
use std::process::Command;

fn program(name: &str) -> String {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "..",
        "tests",
        "programs",
        name,
    ]
    .iter()
    .collect();
    path.to_string_lossy().into_owned()
}

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

/// Runs `memplay args`, which must succeed, and returns its JSON.
fn json_of(args: &[&str]) -> serde_json::Value {
    let (ok, stdout, stderr) = memplay(args);
    assert!(ok, "{args:?}: {stderr}");
    serde_json::from_str(&stdout).expect("one JSON value")
}

/// The counters of launch `launch` of `file`, with `extra` flags.
fn counters(file: &str, launch: &str, extra: &[&str]) -> serde_json::Value {
    let path = program(file);
    let mut args = vec!["simulate", path.as_str(), "--launch", launch, "--json"];
    args.extend_from_slice(extra);
    json_of(&args)["counters"].clone()
}

const LOAD_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
const LOAD_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
const SHARED_LOADS: &str = "smsp__inst_executed_op_shared_ld.sum";

#[test]
fn every_program_s_launches_are_found_in_source_order() {
    let kernels = |file: &str| -> Vec<String> {
        let json = json_of(&["launches", &program(file), "--json"]);
        json.as_array()
            .expect("a list of launches")
            .iter()
            .map(|launch| launch["kernel"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(kernels("complex_scale.cu"), ["multiply_add", "norms"]);
    assert_eq!(kernels("guarded_host.cu"), ["scale", "scale"]);
    assert_eq!(kernels("particles_aos_soa.cu"), ["move_aos", "move_soa"]);
    assert_eq!(kernels("stencil_references.cu"), ["stencil_1d"]);
    assert_eq!(
        kernels("matmul_template.cu"),
        ["matmul_tiled<16>", "matmul_tiled<8>"]
    );
    // The launch in the uncalled host template `run<T>` comes first, in source order.
    assert_eq!(
        kernels("reduce_templates.cu"),
        [
            "reduce<T, threads>",
            "reduce<float, 256>",
            "reduce<double, 256>"
        ]
    );
    assert_eq!(
        kernels("shared_memory_helper.cu"),
        ["block_sum<float>", "block_sum<double>"]
    );
    assert_eq!(kernels("params_struct.cu"), ["scale_shift"]);
}

#[test]
fn a_stencil_launched_past_its_halo_reads_five_sectors_a_warp() {
    // 2^20 / 256 = 4096 blocks of 8 warps. Each warp loads in[g], 32 floats starting 3 floats
    // (12 bytes) into a sector: 5 sectors. Warp 0 of each block also loads the two halos, three
    // lanes each, one sector each.
    let c = counters("stencil_references.cu", "1", &[]);
    assert_eq!(c[LOAD_REQUESTS], 4096.0 * (8.0 + 2.0));
    assert_eq!(c[LOAD_SECTORS], 4096.0 * (8.0 * 5.0 + 2.0));
}

#[test]
fn an_array_of_structs_reads_six_times_the_sectors_of_its_structure_of_arrays() {
    // 2^20 particles, 32,768 warps. Each warp loads six members; in the array of structs each
    // load spans 32 x 24 bytes, 24 sectors; in the structure of arrays 32 x 4 bytes, 4 sectors.
    let warps = 32768.0;
    let aos = counters("particles_aos_soa.cu", "1", &[]);
    assert_eq!(aos[LOAD_REQUESTS], warps * 6.0);
    assert_eq!(aos[LOAD_SECTORS], warps * 6.0 * 24.0);
    // Host code fills the structure's pointers at run time: the buffers are named.
    let mib = "4194304";
    let buffers: Vec<String> = ["x", "y", "z", "vx", "vy", "vz"]
        .iter()
        .map(|name| format!("{name}={mib}"))
        .collect();
    let mut extra = Vec::new();
    for buffer in &buffers {
        extra.extend(["--buffer", buffer.as_str()]);
    }
    let soa = counters("particles_aos_soa.cu", "2", &extra);
    assert_eq!(soa[LOAD_REQUESTS], warps * 6.0);
    assert_eq!(soa[LOAD_SECTORS], warps * 6.0 * 4.0);
}

#[test]
fn a_complex_class_with_operators_loads_each_member_once() {
    // 2^16 elements, 2,048 warps; a Complex of two floats is aligned to 4, so each is two 4-byte
    // loads spanning 32 x 8 bytes, 8 sectors: x and y give 4 loads a warp.
    let c = counters("complex_scale.cu", "1", &[]);
    assert_eq!(c[LOAD_REQUESTS], 2048.0 * 4.0);
    assert_eq!(c[LOAD_SECTORS], 2048.0 * 4.0 * 8.0);
}

#[test]
fn the_host_s_run_time_size_is_asked_for_and_the_constant_launch_runs() {
    let path = program("guarded_host.cu");
    let (ok, _, stderr) = memplay(&["simulate", &path, "--launch", "1"]);
    assert!(!ok);
    assert!(stderr.contains("--arg n=VALUE"), "{stderr}");
    // Launch 2 is 4096 blocks of 8 warps over 2^20 floats, one load request a warp.
    let c = counters("guarded_host.cu", "2", &["--buffer", "data=4194304"]);
    assert_eq!(c[LOAD_REQUESTS], 32768.0);
}

#[test]
fn a_templated_matmul_runs_at_both_tiles_its_main_launches() {
    // 256 x 256 floats. At tile 16: 16 x 16 blocks of 8 warps, 16 phases, each warp making one
    // load request for a and one for b a phase.
    let t16 = counters("matmul_template.cu", "1", &[]);
    assert_eq!(t16[LOAD_REQUESTS], 256.0 * 8.0 * 16.0 * 2.0);
    // At tile 8: 32 x 32 blocks of 2 warps, 32 phases.
    let t8 = counters("matmul_template.cu", "2", &[]);
    assert_eq!(t8[LOAD_REQUESTS], 1024.0 * 2.0 * 32.0 * 2.0);
    // The inner loop reads as[ty][k] (the same for a warp's lanes of a row) and bs[k][tx]:
    // shared loads fall with the tile's bigger reuse, at most 2 x TILE a phase a warp.
    assert!(t16[SHARED_LOADS].as_f64() <= Some(256.0 * 8.0 * 16.0 * 32.0));
}

#[test]
fn a_templated_reduction_moves_twice_the_bytes_in_double() {
    let float = counters("reduce_templates.cu", "2", &[]);
    let double = counters("reduce_templates.cu", "3", &[]);
    // 2,048 blocks of 8 warps, 16,384 warps, two loads a thread (in[i] and in[i + BLOCK]):
    // 32,768 requests either way.
    assert_eq!(float[LOAD_REQUESTS], 32768.0);
    assert_eq!(double[LOAD_REQUESTS], 32768.0);
    // 32 floats are 4 sectors, 32 doubles 8.
    assert_eq!(float[LOAD_SECTORS], 32768.0 * 4.0);
    assert_eq!(double[LOAD_SECTORS], 32768.0 * 8.0);
}

#[test]
fn the_shared_memory_helper_s_sum_reads_its_dynamic_block_as_floats_and_as_doubles() {
    // 4 blocks of 128 over 512 elements, dynamic shared memory of 128 elements a block from the
    // launch. Each block fills 4 warps' worth and halves 7 times: 17 shared loads a block, 68 in
    // all, in float and double alike; a double warp is 2 wavefronts where a float warp is 1.
    let float = counters("shared_memory_helper.cu", "1", &[]);
    let double = counters("shared_memory_helper.cu", "2", &[]);
    assert_eq!(float[SHARED_LOADS], 68.0);
    assert_eq!(double[SHARED_LOADS], 68.0);
    let wavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
    assert_eq!(float[wavefronts], 68.0);
    assert_eq!(double[wavefronts], 92.0);
}

#[test]
fn a_struct_passed_by_value_is_asked_for_member_by_member() {
    // The host code's struct is not followed: the launch names each member it needs.
    let path = program("params_struct.cu");
    let (ok, _, stderr) = memplay(&["simulate", &path, "--launch", "1"]);
    assert!(!ok);
    assert!(
        stderr.contains(
            "give --arg s.n=VALUE, --arg s.alpha=VALUE, --arg shift.x=VALUE, \
             --arg shift.y=VALUE, --arg shift.z=VALUE"
        ),
        "{stderr}"
    );
    // Given them, it runs: 4,096 blocks of 8 warps, each loading 32 floats, 4 sectors.
    let members = [
        "--arg",
        "s.n=1048576",
        "--arg",
        "s.alpha=2",
        "--arg",
        "shift.x=1",
        "--arg",
        "shift.y=2",
        "--arg",
        "shift.z=3",
    ];
    let c = counters("params_struct.cu", "1", &members);
    assert_eq!(c[LOAD_REQUESTS], 4096.0 * 8.0);
    assert_eq!(c[LOAD_SECTORS], 4096.0 * 8.0 * 4.0);
}
