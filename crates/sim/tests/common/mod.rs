//! What the reference tests share: reading `tests/reference/` (the measurements the repository carries) and
//! turning a measured launch's `launch_spec` / `spec` into a simulation input on the H100 preset;
//! and what the tests of the C++ that students bring share: a launch on the H100, the counters
//! of one block, and the buffers one warp leaves.

// Each test file uses the part of this module it needs.
#![allow(dead_code)]

use memplay_sim::device::h100;
use memplay_sim::kernel::{compile, Dim3, Launch, Simulation, Value};
use memplay_sim::timing::{predict, Prediction};
use memplay_sim::{simulate, SimulationInput, SimulationReport};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// The eight memory counters every hardware comparison checks (Nsight Compute's names): shared
/// instructions and wavefronts, global requests and sectors, loads and stores.
pub const MEMORY_COUNTERS: [&str; 8] = [
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
];

/// Where `report`'s eight memory counters miss Nsight Compute's `measured` ones for launch `id`:
/// by more than `tolerance(name)`, a fraction of the measured value (0 for an exact count).
pub fn memory_counters_off(
    id: &str,
    report: &SimulationReport,
    measured: &Json,
    tolerance: impl Fn(&str) -> f64,
) -> Vec<String> {
    let mut off = Vec::new();
    for name in MEMORY_COUNTERS {
        let measured = measured[name]
            .as_f64()
            .unwrap_or_else(|| panic!("{id} has no {name}"));
        let simulated = report
            .counters
            .get(name)
            .unwrap_or_else(|| panic!("memplay has no counter {name}"));
        if (simulated - measured).abs() > tolerance(name) * measured {
            off.push(format!("{id} {name}: {simulated} against {measured}"));
        }
    }
    off
}

/// Where `report`'s occupancy limits of registers, warps and blocks differ from Nsight Compute's
/// `launch__occupancy_limit_*` for launch `id` (they must match exactly).
pub fn occupancy_limits_off(id: &str, report: &SimulationReport, measured: &Json) -> Vec<String> {
    let o = &report.occupancy;
    [
        ("registers", o.limit_registers),
        ("warps", o.limit_warps),
        ("blocks", o.limit_blocks),
    ]
    .into_iter()
    .filter_map(|(name, simulated)| {
        let limit = measured[format!("launch__occupancy_limit_{name}")].as_f64();
        (limit != Some(f64::from(simulated)))
            .then(|| format!("{id} {name} limit: {simulated} against {limit:?}"))
    })
    .collect()
}

/// The JSON rows of a JSON-lines file under `tests/reference/` (blank lines skipped).
pub fn read_lines(name: &str) -> Vec<Json> {
    read_reference(name)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}: bad line: {e}")))
        .collect()
}

/// Nsight Compute's measurements of a JSON-lines file whose rows carry `id` and `measured`, by id.
pub fn measured_by_id(name: &str) -> std::collections::BTreeMap<String, Json> {
    read_lines(name)
        .into_iter()
        .filter_map(|row| Some((row["id"].as_str()?.to_string(), row["measured"].clone())))
        .collect()
}

/// The folder with the measurements, in the repository.
pub fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference")
}

/// The step budget of a measured launch: twice the largest one's steps.
pub const REFERENCE_STEP_BUDGET: u64 = 110_000_000;

/// Reads a file of the reference folder, failing with a message that says what is missing.
pub fn read_reference(name: &str) -> String {
    let dir = reference_dir();
    assert!(
        dir.is_dir(),
        "the reference measurements are missing: expected the folder {} (tests/reference in \
         the repository, with h100.json, h100-timing.json and kernels/)",
        dir.display()
    );
    let path = dir.join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

pub fn read_json(name: &str) -> Json {
    serde_json::from_str(&read_reference(name))
        .unwrap_or_else(|error| panic!("{name} is not valid JSON: {error}"))
}

/// One timed launch of a reference folder: what was measured and what memplay makes of it.
pub struct MeasuredLaunch {
    pub id: String,
    pub kernel: String,
    pub measured_ms: f64,
    /// Nsight Compute's metrics for the same launch (null where it has none).
    pub ncu: Json,
    pub report: SimulationReport,
    pub prediction: Prediction,
}

impl MeasuredLaunch {
    /// The prediction's signed error, a fraction of the measured time.
    pub fn error(&self) -> f64 {
        (self.prediction.time_ms - self.measured_ms) / self.measured_ms
    }
}

/// Every launch with a spec in `folder/time.jsonl`, simulated and predicted, with Nsight
/// Compute's metrics from `ncu` (a file of `measured_by_id`).
pub fn measured_launches(folder: &str, ncu: &str) -> Vec<MeasuredLaunch> {
    let ncu = measured_by_id(ncu);
    read_lines(&format!("{folder}/time.jsonl"))
        .into_iter()
        .filter(|row| row.get("spec").is_some())
        .map(|row| {
            let id = row["id"].as_str().unwrap_or("?").to_string();
            let input = input_from_spec_in(&row["spec"], folder)
                .unwrap_or_else(|e| panic!("{id}: bad spec: {e}"));
            let report =
                simulate(&input).unwrap_or_else(|e| panic!("{id}: does not simulate: {e}"));
            MeasuredLaunch {
                kernel: input.kernel,
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
}

/// The median of `values` (the mean of the middle two for an even count; 0 for none).
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => 0.5 * (values[n / 2 - 1] + values[n / 2]),
    }
}

/// The simulation input of a measured lecture launch on the H100 preset (its source under
/// `kernels/`).
pub fn input_from_spec(spec: &Json) -> Result<SimulationInput, String> {
    input_from_spec_in(spec, "kernels")
}

/// The simulation input of a measured launch whose source lies in `folder` of the reference
/// folder (`kernels` for the lecture kernels, `probes` for the probes).
pub fn input_from_spec_in(spec: &Json, folder: &str) -> Result<SimulationInput, String> {
    let text = |key: &str| {
        spec[key]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("the spec has no text '{key}'"))
    };
    let number = |value: &Json, what: &str| {
        value
            .as_u64()
            .ok_or_else(|| format!("{what} is not a whole number: {value}"))
    };
    let dim3 = |key: &str| -> Result<Dim3, String> {
        let values = spec[key]
            .as_array()
            .ok_or_else(|| format!("the spec has no '{key}' list"))?;
        let mut out = [1u32; 3];
        for (slot, value) in out.iter_mut().zip(values) {
            *slot = u32::try_from(number(value, key)?).map_err(|e| e.to_string())?;
        }
        Ok(Dim3::new(out[0], out[1], out[2]))
    };
    let file = text("file")?;
    let mut input = SimulationInput::new(
        &read_reference(&format!("{folder}/{file}")),
        &text("kernel")?,
        h100(),
    );
    // The n = 2048 matmuls take up to 54 million steps, more than the page's default budget
    // (which bounds what a student's kernel may take); a measured launch is known to end.
    input.step_budget = REFERENCE_STEP_BUDGET;
    if let Some(defines) = spec["defines"].as_object() {
        input.defines = defines
            .iter()
            .map(|(name, value)| {
                let value = match value {
                    Json::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (name.clone(), value)
            })
            .collect();
    }
    input.grid = dim3("grid")?;
    input.block = dim3("block")?;
    input.dyn_smem =
        u32::try_from(number(&spec["dyn_smem"], "dyn_smem")?).map_err(|e| e.to_string())?;
    input.regs = u32::try_from(number(&spec["regs"], "regs")?).map_err(|e| e.to_string())?;
    if let Some(args) = spec["args"].as_object() {
        for (name, value) in args {
            let value = match (value.as_i64(), value.as_f64()) {
                (Some(int), _) => Value::Int(int),
                (None, Some(float)) => Value::Float(float),
                _ => return Err(format!("argument '{name}' is not a number: {value}")),
            };
            input.args.push((name.clone(), value));
        }
    }
    if let Some(buffers) = spec["buffers"].as_object() {
        for (name, bytes) in buffers {
            input.buffers.push((name.clone(), number(bytes, name)?));
        }
    }
    Ok(input)
}

/// Global load requests, load sectors, store requests and store sectors (Nsight Compute's names).
pub const GLOBAL_COUNTERS: [&str; 4] = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
];

/// The launch of `kernel` of `source` on the H100 with `grid` x `block` threads, the buffers
/// (`bytes` each) and the integer arguments given.
pub fn h100_launch(
    source: &str,
    kernel: &str,
    grid: [u32; 2],
    block: [u32; 2],
    buffers: &[(&str, u64)],
    args: &[(&str, i64)],
) -> SimulationInput {
    let mut input = SimulationInput::new(source, kernel, h100());
    input.grid = Dim3::new(grid[0], grid[1], 1);
    input.block = Dim3::new(block[0], block[1], 1);
    input.buffers = buffers.iter().map(|(n, b)| (n.to_string(), *b)).collect();
    input.args = args
        .iter()
        .map(|(n, v)| (n.to_string(), Value::Int(*v)))
        .collect();
    input
}

/// The named counters of `kernel` in `source`, launched on the H100 as one block of `threads`
/// threads with the buffers `buffers` (name, bytes).
pub fn one_block_counters<const N: usize>(
    source: &str,
    kernel: &str,
    threads: u32,
    buffers: &[(&str, u64)],
    names: [&str; N],
) -> [f64; N] {
    let input = h100_launch(source, kernel, [1, 1], [threads, 1], buffers, &[]);
    let report = simulate(&input).unwrap_or_else(|e| panic!("{kernel}: {e}"));
    names.map(|name| report.counters.get(name).unwrap_or(f64::NAN))
}

/// Runs `kernel` as one block of 32 threads over the buffers `buffers` (name, bytes) and returns
/// what each buffer holds then, in the order given.
pub fn one_warp_buffers(source: &str, kernel: &str, buffers: &[(&str, u64)]) -> Vec<Vec<u8>> {
    let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
    let launch = Launch {
        grid: Dim3::new(1, 1, 1),
        block: Dim3::new(32, 1, 1),
        dyn_smem: 0,
        args: Vec::<(String, Value)>::new(),
        buffers: buffers.iter().map(|&(n, b)| (n.to_string(), b)).collect(),
        fills: vec![],
        pointers: vec![],
    };
    let mut sim = Simulation::new(&program, kernel, &launch, 7).unwrap_or_else(|d| panic!("{d}"));
    sim.run_block([0, 0, 0], 1_000_000)
        .unwrap_or_else(|d| panic!("{d}"));
    buffers
        .iter()
        .map(|(name, _)| sim.read_buffer(name).unwrap_or_default())
        .collect()
}

pub fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap_or([0; 4])))
        .collect()
}

pub fn i32s(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap_or([0; 4])))
        .collect()
}

pub fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}
