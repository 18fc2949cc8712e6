//! `memplay`: the simulator on the command line, for instructors, scripts and tests.
//!
//! A thin layer over `memplay-sim`: it parses flags, calls one pure function and prints its result,
//! as JSON with `--json` (the contract other tools rely on) or as a short table. Every problem is
//! one `error:` line on stderr and a non-zero exit; nothing the user types can make it panic.

use clap::{Parser, Subcommand};
use memplay_sim::compile_effects::CompileEffects;
use memplay_sim::kernel::{Dim3, Value};
use memplay_sim::occupancy::{self, BlockResources, OccupancyReport};
use memplay_sim::simulate::{simulate, SampledBlock, SimulationInput};
use memplay_sim::{Device, DeviceId};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "memplay",
    version,
    about = "A GPU memory simulator for the CUDA memory lectures"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// How many blocks fit on one SM, as the CUDA occupancy API computes it.
    Occupancy {
        /// Device preset: g80, gt200, fermi, v100, a100 or h100.
        #[arg(long, default_value = "h100")]
        device: String,
        /// Threads per block.
        #[arg(long)]
        block: u32,
        /// Registers per thread.
        #[arg(long, default_value_t = 32)]
        regs: u32,
        /// Static plus dynamic shared memory per block, in bytes.
        #[arg(long = "smem-per-block", default_value_t = 0)]
        smem_per_block: u32,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Runs a kernel warp by warp and prints the counters Nsight Compute would report.
    Simulate(SimulateArgs),
    /// The device presets and their main numbers.
    Devices {
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, clap::Args)]
struct SimulateArgs {
    /// The CUDA C source file (one or more `__global__` kernels).
    file: PathBuf,
    /// The kernel to launch.
    #[arg(long)]
    kernel: String,
    /// Device preset: g80, gt200, fermi, v100, a100 or h100.
    #[arg(long, default_value = "h100")]
    device: String,
    /// Blocks in the grid, as X,Y,Z (or X or X,Y).
    #[arg(long, value_parser = parse_dim3)]
    grid: Dim3,
    /// Threads per block, as X,Y,Z (or X or X,Y).
    #[arg(long, value_parser = parse_dim3)]
    block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    #[arg(long = "dyn-smem", default_value_t = 0)]
    dyn_smem: u32,
    /// Registers per thread (what nvcc reports; 0 leaves registers out of the occupancy).
    #[arg(long, default_value_t = 0)]
    regs: u32,
    /// Overrides a `#define`, as nvcc's -D NAME=VALUE.
    #[arg(short = 'D', value_parser = parse_pair)]
    define: Vec<(String, String)>,
    /// The value of a scalar parameter, NAME=VALUE.
    #[arg(long = "arg", value_parser = parse_pair)]
    args: Vec<(String, String)>,
    /// The size in bytes of the buffer behind a pointer parameter, NAME=BYTES.
    #[arg(long = "buffer", value_parser = parse_pair)]
    buffers: Vec<(String, String)>,
    /// Count the shared loads as written, without nvcc's fusion into 128-bit loads.
    #[arg(long = "as-written")]
    as_written: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // Help and version go to stdout with success. A usage error is cut to its first line,
            // so that every error is one `error:` line, and exits 2 as clap's do.
            if !error.use_stderr() {
                let _ = error.print();
                return ExitCode::SUCCESS;
            }
            let rendered = error.render().to_string();
            eprintln!(
                "{}",
                rendered.lines().next().unwrap_or("error: bad arguments")
            );
            return ExitCode::from(2);
        }
    };
    match run(cli.command) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<String, String> {
    match command {
        Command::Occupancy {
            device,
            block,
            regs,
            smem_per_block,
            json,
        } => {
            let device = parse_device(&device)?;
            let resources = BlockResources {
                threads_per_block: block,
                regs_per_thread: regs,
                smem_per_block,
            };
            let report = occupancy::calculate(&device, resources).map_err(|e| e.to_string())?;
            let printed = OccupancyJson::from(&report);
            if json {
                to_json(&printed)
            } else {
                Ok(occupancy_table(&device, &report))
            }
        }
        Command::Simulate(args) => simulate_command(args),
        Command::Devices { json } => {
            let devices: Vec<Device> = DeviceId::ALL.iter().map(|id| id.device()).collect();
            if json {
                to_json(&devices)
            } else {
                Ok(devices_table(&devices))
            }
        }
    }
}

fn parse_device(id: &str) -> Result<Device, String> {
    id.parse::<DeviceId>().map(DeviceId::device).map_err(|_| {
        let known: Vec<&str> = DeviceId::ALL.iter().map(|d| d.as_str()).collect();
        format!("unknown device '{id}' (known: {})", known.join(", "))
    })
}

fn to_json<T: Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string_pretty(value).map_err(|e| e.to_string())
}

/// The JSON contract of `memplay occupancy`: the limits carry Nsight Compute's
/// `launch__occupancy_limit_*` meaning.
#[derive(Debug, Serialize)]
struct OccupancyJson {
    active_blocks_per_sm: u32,
    active_warps_per_sm: u32,
    theoretical_occupancy_pct: f64,
    limiter: &'static str,
    limit_registers: u32,
    limit_shared_mem: u32,
    limit_warps: u32,
    limit_blocks: u32,
    warps_per_block: u32,
    regs_per_block_allocated: u32,
    smem_per_block_allocated: u32,
}

impl From<&OccupancyReport> for OccupancyJson {
    fn from(r: &OccupancyReport) -> OccupancyJson {
        OccupancyJson {
            active_blocks_per_sm: r.active_blocks_per_sm,
            active_warps_per_sm: r.active_warps_per_sm,
            theoretical_occupancy_pct: r.theoretical_occupancy_pct,
            limiter: r.limiter.as_str(),
            limit_registers: r.limit_registers,
            limit_shared_mem: r.limit_shared_mem,
            limit_warps: r.limit_warps,
            limit_blocks: r.limit_blocks,
            warps_per_block: r.warps_per_block,
            regs_per_block_allocated: r.regs_per_block_allocated,
            smem_per_block_allocated: r.smem_per_block_allocated,
        }
    }
}

fn occupancy_table(device: &Device, r: &OccupancyReport) -> String {
    let mark = |limiter: &str| {
        if r.limiter.as_str() == limiter {
            "  <- limiter"
        } else {
            ""
        }
    };
    format!(
        "{name}\n\
         active blocks per SM  {blocks}\n\
         active warps per SM   {warps} of {max_warps} ({pct:.1}% theoretical occupancy)\n\
         limit: registers      {lr}{mr}\n\
         limit: shared memory  {ls}{ms}\n\
         limit: warps          {lw}{mw}\n\
         limit: blocks         {lb}{mb}",
        name = device.name,
        blocks = r.active_blocks_per_sm,
        warps = r.active_warps_per_sm,
        max_warps = device.max_warps_per_sm,
        pct = r.theoretical_occupancy_pct,
        lr = r.limit_registers,
        mr = mark("registers"),
        ls = r.limit_shared_mem,
        ms = mark("shared_mem"),
        lw = r.limit_warps,
        mw = mark("warps"),
        lb = r.limit_blocks,
        mb = mark("blocks"),
    )
}

fn devices_table(devices: &[Device]) -> String {
    let mut lines = vec![format!(
        "{:<6} {:<26} {:>4} {:>4} {:>10} {:>9} {:>6}",
        "id", "name", "cc", "SMs", "FP32 GF/s", "DRAM GB/s", "banks"
    )];
    for d in devices {
        lines.push(format!(
            "{:<6} {:<26} {:>4} {:>4} {:>10.0} {:>9.0} {:>6}",
            d.id.as_str(),
            d.name,
            format!(
                "{}.{}",
                d.compute_capability.major, d.compute_capability.minor
            ),
            d.n_sms,
            d.fp32_peak_gflops,
            d.dram_bandwidth_gbps,
            d.n_banks
        ));
    }
    lines.join("\n")
}

fn parse_dim3(text: &str) -> Result<Dim3, String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("'{text}' is not X,Y,Z"));
    }
    let mut extents = [1u32; 3];
    for (slot, part) in extents.iter_mut().zip(&parts) {
        *slot = part
            .parse::<u32>()
            .ok()
            .filter(|&extent| extent > 0)
            .ok_or_else(|| format!("'{part}' in '{text}' is not a whole number above 0"))?;
    }
    Ok(Dim3::new(extents[0], extents[1], extents[2]))
}

fn parse_pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!("'{text}' is not NAME=VALUE")),
    }
}

/// A scalar argument: an integer if it reads as one, else a float, else `true`/`false`.
fn parse_value(name: &str, text: &str) -> Result<Value, String> {
    if let Ok(int) = text.parse::<i64>() {
        return Ok(Value::Int(int));
    }
    if let Ok(float) = text.trim_end_matches('f').parse::<f64>() {
        return Ok(Value::Float(float));
    }
    match text {
        "true" => Ok(Value::Bool(true)),
        "false" => Ok(Value::Bool(false)),
        _ => Err(format!("--arg {name}={text}: the value is not a number")),
    }
}

fn simulate_command(args: SimulateArgs) -> Result<String, String> {
    let source = std::fs::read_to_string(&args.file)
        .map_err(|e| format!("cannot read {}: {e}", args.file.display()))?;
    let device = parse_device(&args.device)?;
    let mut input = SimulationInput::new(&source, &args.kernel, device);
    input.defines = args.define;
    input.grid = args.grid;
    input.block = args.block;
    input.dyn_smem = args.dyn_smem;
    input.regs = args.regs;
    input.args = args
        .args
        .iter()
        .map(|(name, text)| parse_value(name, text).map(|value| (name.clone(), value)))
        .collect::<Result<_, _>>()?;
    input.buffers = args
        .buffers
        .iter()
        .map(|(name, text)| {
            text.parse::<u64>()
                .map(|bytes| (name.clone(), bytes))
                .map_err(|_| {
                    format!("--buffer {name}={text}: the size is not a whole number of bytes")
                })
        })
        .collect::<Result<_, _>>()?;
    if args.as_written {
        input.compile = CompileEffects::AS_WRITTEN;
    }
    let report = simulate(&input).map_err(|e| e.to_string())?;
    if args.json {
        let json = serde_json::json!({
            "kernel": report.kernel,
            "device": input.device.id,
            "counters": report.counters,
            "occupancy": OccupancyJson::from(&report.occupancy),
            "sampled_blocks": report.sampled_blocks.iter().map(sampled_block_json).collect::<Vec<_>>(),
            "grid_blocks": report.grid_blocks,
            "warp_instructions": report.warp_instructions,
            "shared_bytes_per_block": report.shared_bytes_per_block,
            "compile": report.compile,
            "fused_loads": report.fused_loads,
            "steps": report.steps,
        });
        to_json(&json)
    } else {
        let mut lines = vec![format!(
            "{} on {}: {} blocks, {} simulated",
            report.kernel,
            input.device.name,
            report.grid_blocks,
            report.sampled_blocks.len()
        )];
        for (name, value) in report.counters.nsight() {
            lines.push(format!("{name:<60} {value:>16.0}"));
        }
        lines.push(occupancy_table(&input.device, &report.occupancy));
        Ok(lines.join("\n"))
    }
}

fn sampled_block_json(block: &SampledBlock) -> serde_json::Value {
    serde_json::json!({
        "block": block.block,
        "position": block.position,
        "scale": block.scale,
        "steps": block.steps,
    })
}
