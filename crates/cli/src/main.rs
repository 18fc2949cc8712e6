//! `memplay`: the simulator on the command line, for instructors, scripts and tests.
//!
//! A thin layer over `memplay-sim`: it parses flags, calls one pure function and prints its result,
//! as JSON with `--json` (the contract other tools rely on) or as a short table. Every problem is
//! one `error:` line on stderr and a non-zero exit; nothing the user types can make it panic.

use clap::{Parser, Subcommand};
use memplay_sim::occupancy::{self, BlockResources, OccupancyReport};
use memplay_sim::{Device, DeviceId};
use serde::Serialize;
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
    /// The device presets and their main numbers.
    Devices {
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
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
