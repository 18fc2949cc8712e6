//! `memplay`: the simulator on the command line, for instructors, scripts and tests.
//!
//! A thin layer over `memplay-sim`: it parses flags, calls one pure function and prints its result,
//! as JSON with `--json` (the contract other tools rely on) or as a short table. Every problem is
//! one `error:` line on stderr and a non-zero exit; nothing the user types can make it panic.
//! Every error, clap's and the file system's included, passes through `kernel::span::one_line`,
//! so it is one line of printable characters whatever the arguments held. Output goes to a locked
//! stdout whose write errors are handled: a closed pipe (`memplay ... | head`) ends the program
//! quietly with success, any other write error is one `error:` line.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Parser, Subcommand};
use memplay_sim::compile_effects::CompileEffects;
use memplay_sim::kernel::limits::MAX_SOURCE_BYTES;
use memplay_sim::kernel::span::one_line;
use memplay_sim::kernel::{Dim3, Value};
use memplay_sim::occupancy::{self, BlockResources, OccupancyReport};
use memplay_sim::pointer_argument::{self, PointerArgument};
use memplay_sim::printf_output::PrintfOutput;
use memplay_sim::replay::LaunchFile;
use memplay_sim::sanitizer::{SanitizerConfig, SanitizerReport};
use memplay_sim::simulate::{
    simulate, SampledBlock, SimulationError, SimulationInput, SimulationReport, DEFAULT_STEP_BUDGET,
};
use memplay_sim::timing::{predict, Prediction};
use memplay_sim::{Device, DeviceId, Fill};
use serde::Serialize;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod program;

/// The most values one `--sweep` may list. A sweep is a table for a slide or a chart, and each of
/// its launches may take a whole step budget (seconds at the default), so a thousand values is
/// already far more than a table shows and bounds the run to what one sitting can wait for.
const MAX_SWEEP_VALUES: usize = 1000;

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
    /// Simulates one launch for each value of a define or argument and prints a table.
    Sweep(SweepArgs),
    /// Runs a launch file the playground exported and prints what `simulate` prints.
    Replay(ReplayArgs),
    /// The kernel launches a whole program's host code makes, numbered for `simulate --launch`.
    Launches {
        /// The CUDA C++ program (`main` and its kernels).
        file: PathBuf,
        /// Overrides a `#define`, as nvcc's -D NAME=VALUE.
        #[arg(short = 'D', value_parser = parse_pair)]
        define: Vec<(String, String)>,
        /// Print a JSON array instead of a table.
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

/// One launch, as the command line describes it. Grid and block extents may name a `-D` define or a
/// scalar argument (`TILE_WIDTH`), or divide a number by one (`1024/TILE_WIDTH`, rounded up), so that
/// a sweep over the define changes the launch with it.
#[derive(Debug, clap::Args)]
struct LaunchArgs {
    /// The CUDA C source file (one or more `__global__` kernels, or a whole program).
    file: PathBuf,
    /// Launch N (from 1) of the program's host code, as `memplay launches` lists them: its
    /// kernel, grid, block, shared memory, arguments and buffer sizes, each of which a flag given
    /// here overrides; what the host code computes at run time must be given by flag.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    launch: Option<u64>,
    /// The kernel to launch (the program's, with --launch).
    #[arg(long, required_unless_present = "launch")]
    kernel: Option<String>,
    /// Device preset: g80, gt200, fermi, v100, a100 or h100.
    #[arg(long, default_value = "h100")]
    device: String,
    /// Blocks in the grid, as X,Y,Z (or X or X,Y); each a number, NAME or NUMBER/NAME.
    #[arg(long, value_parser = parse_dim_spec, required_unless_present = "launch")]
    grid: Option<DimSpec>,
    /// Threads per block, as X,Y,Z (or X or X,Y); each a number, NAME or NUMBER/NAME.
    #[arg(long, value_parser = parse_dim_spec, required_unless_present = "launch")]
    block: Option<DimSpec>,
    /// Dynamic shared memory per block, in bytes (0, or the program's with --launch).
    #[arg(long = "dyn-smem")]
    dyn_smem: Option<u32>,
    /// Registers per thread (what nvcc reports; 0 leaves registers out of the occupancy).
    #[arg(long, default_value_t = 0)]
    regs: u32,
    /// Overrides a `#define`, as nvcc's -D NAME=VALUE.
    #[arg(short = 'D', value_parser = parse_pair)]
    define: Vec<(String, String)>,
    /// The value of a scalar parameter, NAME=VALUE; or where a pointer parameter points,
    /// NAME=BUFFER+K: K elements into the buffer BUFFER (bytes for a void*), as host code
    /// launches `kernel<<<g, b>>>(d_in + 3)`. A pointer not given so points at the start of the
    /// buffer named after it.
    #[arg(long = "arg", value_parser = parse_pair)]
    args: Vec<(String, String)>,
    /// The size in bytes of a buffer, NAME=BYTES: the one a pointer parameter of that name
    /// points to, or one that --arg NAME=BUFFER+K points into.
    #[arg(long = "buffer", value_parser = parse_pair)]
    buffers: Vec<(String, String)>,
    /// What a buffer holds before the kernel runs, NAME=FILL, once per buffer: small (the
    /// default: integers 0 to 15, floats in [0, 1)), random (any integer, floats in [-1, 1)),
    /// iota (element i holds i) or zeros.
    #[arg(long = "fill", value_parser = parse_pair)]
    fills: Vec<(String, String)>,
    /// Count the memory instructions as written: without nvcc's fusion into 128-bit loads, its
    /// predication of short `if` bodies and its reuse of loaded values.
    #[arg(long = "as-written")]
    as_written: bool,
    /// Interpreter steps the simulation of one launch may take over all its simulated blocks
    /// (the page's budget by default); a sweep gives each launch this budget.
    #[arg(long, default_value_t = DEFAULT_STEP_BUDGET, value_parser = clap::value_parser!(u64).range(1..))]
    budget: u64,
}

#[derive(Debug, clap::Args)]
struct SimulateArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Run the sanitizer's racecheck, synccheck and initcheck on the simulated blocks, every
    /// warp and iteration of them, and print what they find after the report.
    #[arg(long)]
    sanitize: bool,
}

#[derive(Debug, clap::Args)]
struct SweepArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// The define or argument to vary and its values, NAME=V1,V2,... (e.g. TILE_WIDTH=4,8,16,32).
    #[arg(long, value_parser = parse_pair)]
    sweep: (String, String),
    /// Print a JSON array instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ReplayArgs {
    /// The launch file (`memplay_launch` JSON, as the playground's "launch (.json)" writes it).
    file: PathBuf,
    /// Compare the counters (exactly) and the predicted time (within 1e-9 relative) with the
    /// file's `expected`, and fail if they differ.
    #[arg(long)]
    check: bool,
    /// The most interpreter steps the file's launch may ask for; a file asking for more is refused
    /// rather than run for longer than a simulation on the page may take.
    #[arg(long, default_value_t = DEFAULT_STEP_BUDGET, value_parser = clap::value_parser!(u64).range(1..))]
    budget: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// One extent of a grid or block dimension.
#[derive(Clone, Debug, PartialEq)]
enum Extent {
    Number(u32),
    Name(String),
    /// `NUMBER/NAME`, rounded up: the blocks that cover NUMBER elements in tiles of NAME.
    Divided(u32, String),
}

#[derive(Clone, Debug, PartialEq)]
struct DimSpec([Extent; 3]);

/// Why a command stopped: a message for the user, or stdout could not be written.
#[derive(Debug)]
enum Failure {
    Message(String),
    Output(io::Error),
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::Message(message)
    }
}

/// Writes `text` and a newline to the command's output.
fn emit(out: &mut dyn Write, text: &str) -> Result<(), Failure> {
    writeln!(out, "{text}").map_err(Failure::Output)
}

/// Writes one `error:` line to stderr. If stderr itself cannot be written there is nobody left to
/// tell, and the exit status still says it failed.
fn report(message: &str) {
    let _ = writeln!(io::stderr().lock(), "error: {}", one_line(message));
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error),
    };
    let mut out = io::stdout().lock();
    let result = run(cli.command, &mut out).and_then(|()| out.flush().map_err(Failure::Output));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`memplay ... | head`): nothing more is wanted, nothing went wrong.
        Err(Failure::Output(error)) if error.kind() == io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(Failure::Output(error)) => {
            report(&format!("cannot write the output: {error}"));
            ExitCode::FAILURE
        }
        Err(Failure::Message(message)) => {
            // What was printed before the error (a sweep's finished rows) comes first.
            let _ = out.flush();
            report(&message);
            ExitCode::FAILURE
        }
    }
}

/// Help and version go to stdout with success. A usage error is one `error:` line and exits 2, as
/// clap's do: the missing arguments are listed on that line, and clap's usage and hints are left
/// out (a tip is kept in parentheses).
fn usage_error(error: &clap::Error) -> ExitCode {
    if !error.use_stderr() {
        return match error.print() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(e) => {
                report(&format!("cannot write the output: {e}"));
                ExitCode::FAILURE
            }
        };
    }
    let missing = match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::Strings(names))
            if error.kind() == ErrorKind::MissingRequiredArgument =>
        {
            Some(names.join(", "))
        }
        _ => None,
    };
    let message = match missing {
        Some(names) if names.contains(", ") => format!("missing required arguments: {names}"),
        Some(names) => format!("missing required argument: {names}"),
        None => clap_message(&error.render().to_string()),
    };
    report(&message);
    ExitCode::from(2)
}

/// Clap's rendered error without its `error: ` prefix, usage and help pointer; a tip stays, in
/// parentheses. A value given on the command line may itself hold blank lines: those stay in the
/// message, which `report` turns into escapes.
fn clap_message(rendered: &str) -> String {
    let mut message = String::new();
    let mut tips = String::new();
    for paragraph in rendered.split("\n\n") {
        let trimmed = paragraph.trim();
        if trimmed.starts_with("Usage:") || trimmed.starts_with("For more information") {
            continue;
        }
        if let Some(tip) = trimmed.strip_prefix("tip: ") {
            tips.push_str(&format!(" (tip: {tip})"));
            continue;
        }
        if !message.is_empty() {
            message.push_str("\n\n");
        }
        message.push_str(paragraph);
    }
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    format!("{}{tips}", message.trim_end())
}

fn run(command: Command, out: &mut dyn Write) -> Result<(), Failure> {
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
            // The report serializes under the contract's names; its limits carry Nsight
            // Compute's `launch__occupancy_limit_*` meaning.
            let text = if json {
                to_json(&report)?
            } else {
                occupancy_table(&device, &report)
            };
            emit(out, &text)
        }
        Command::Simulate(args) => simulate_command(args, out),
        Command::Sweep(args) => sweep_command(args, out),
        Command::Replay(args) => replay_command(args, out),
        Command::Launches { file, define, json } => {
            let source = read_source(&file)?;
            let found = program::launches(&source, &define)?;
            let text = if json {
                to_json(&program::launches_json(&found))?
            } else {
                program::launches_table(&found)
            };
            emit(out, &text)
        }
        Command::Devices { json } => {
            let devices: Vec<Device> = DeviceId::ALL.iter().map(|id| id.device()).collect();
            let text = if json {
                to_json(&devices)?
            } else {
                devices_table(&devices)
            };
            emit(out, &text)
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

fn parse_dim_spec(text: &str) -> Result<DimSpec, String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("'{text}' is not X,Y,Z"));
    }
    let is_name = |name: &str| {
        name.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let number = |part: &str| {
        part.parse::<u32>()
            .ok()
            .filter(|&extent| extent > 0)
            .ok_or_else(|| match parts.len() {
                1 => format!("'{part}' is not a whole number above 0"),
                _ => format!("'{part}' in '{text}' is not a whole number above 0"),
            })
    };
    let mut extents = [Extent::Number(1), Extent::Number(1), Extent::Number(1)];
    for (slot, part) in extents.iter_mut().zip(&parts) {
        *slot = match part.split_once('/') {
            Some((count, name)) if is_name(name.trim()) => {
                Extent::Divided(number(count.trim())?, name.trim().to_string())
            }
            None if is_name(part) => Extent::Name(part.to_string()),
            _ => Extent::Number(number(part)?),
        };
    }
    Ok(DimSpec(extents))
}

/// The grid or block for the launch's defines and arguments.
fn resolve_dim(spec: &DimSpec, values: &[(String, String)]) -> Result<Dim3, String> {
    let value = |name: &str| -> Result<u32, String> {
        let text = values
            .iter()
            .rev()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value)
            .ok_or_else(|| format!("the launch names {name}, which is no -D define or --arg"))?;
        text.parse::<u32>()
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| format!("{name}={text} is not a whole number above 0"))
    };
    let mut extents = [1u32; 3];
    for (slot, extent) in extents.iter_mut().zip(&spec.0) {
        *slot = match extent {
            Extent::Number(n) => *n,
            Extent::Name(name) => value(name)?,
            Extent::Divided(count, name) => count.div_ceil(value(name)?),
        };
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
///
/// A float is what C's `strtof` reads in decimal, with an optional `f`/`F` suffix after a digit or
/// point as in C source (`1.5f`); `inf`, `infinity` and `nan`, with a sign or not, are read in any
/// case, as `strtof` reads them.
fn parse_value(name: &str, text: &str) -> Result<Value, String> {
    if let Ok(int) = text.parse::<i64>() {
        return Ok(Value::Int(int));
    }
    let unsuffixed = match text.strip_suffix(['f', 'F']) {
        Some(number) if number.ends_with(|c: char| c.is_ascii_digit() || c == '.') => number,
        _ => text,
    };
    let unsigned = unsuffixed.trim_start_matches(['+', '-']);
    let special = ["inf", "infinity", "nan"]
        .iter()
        .any(|word| unsigned.eq_ignore_ascii_case(word));
    let numeric = unsigned.starts_with(|c: char| c.is_ascii_digit() || c == '.');
    if special || numeric {
        if let Ok(float) = unsuffixed.parse::<f64>() {
            return Ok(Value::Float(float));
        }
    }
    match text {
        "true" => Ok(Value::Bool(true)),
        "false" => Ok(Value::Bool(false)),
        _ => Err(format!("--arg {name}={text}: the value is not a number")),
    }
}

/// A pointer argument `--arg NAME=TEXT`, TEXT being `BUFFER+K` (`pointer_argument::parse`),
/// into one of the launch's `--buffer`s; an error names the column in `NAME=TEXT`.
fn parse_pointer(
    name: &str,
    text: &str,
    buffers: &[(String, String)],
) -> Result<PointerArgument, String> {
    let at = |column: usize, message: &str| {
        format!(
            "--arg {name}={text}: column {}: {message}",
            name.len() + 1 + column
        )
    };
    let (buffer, offset) =
        pointer_argument::parse(text).map_err(|error| at(error.column, error.message))?;
    if !buffers.iter().any(|(given, _)| *given == buffer) {
        return Err(at(
            1,
            &format!(
                "'{buffer}' is neither a number nor a buffer (give a buffer's size with --buffer \
                 {buffer}=BYTES)"
            ),
        ));
    }
    Ok(PointerArgument {
        parameter: name.to_string(),
        buffer,
        offset,
    })
}

/// The kernel source of `path`, read up to the size the simulator accepts: a larger file (or a
/// device such as `/dev/zero`) is refused without reading it all.
fn read_source(path: &Path) -> Result<String, String> {
    let bytes = read_bounded(path, MAX_SOURCE_BYTES, "a kernel source")?;
    String::from_utf8(bytes)
        .map_err(|_| format!("cannot read {}: it is not UTF-8 text", path.display()))
}

/// The bytes of `path`, reading at most one byte more than `max`, so that a larger file (or a
/// device such as `/dev/zero`) is refused without reading it all; `what` names the kind of file.
fn read_bounded(path: &Path, max: usize, what: &str) -> Result<Vec<u8>, String> {
    let cannot = |e: &dyn std::fmt::Display| format!("cannot read {}: {e}", path.display());
    let file = std::fs::File::open(path).map_err(|e| cannot(&e))?;
    let mut bytes = Vec::new();
    file.take(max as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| cannot(&e))?;
    if bytes.len() > max {
        return Err(format!(
            "{} is longer than {max} bytes, the most {what} may have",
            path.display()
        ));
    }
    Ok(bytes)
}

/// The simulation input of a launch, with `overrides` (a swept define or argument) applied.
fn build_input(
    launch: &LaunchArgs,
    source: &str,
    overrides: &[(String, String)],
) -> Result<SimulationInput, String> {
    let device = parse_device(&launch.device)?;
    let is_arg = |name: &str| launch.args.iter().any(|(arg, _)| arg == name);
    let mut defines = launch.define.clone();
    let mut args = Vec::new();
    let mut given_args = launch.args.clone();
    for (name, value) in overrides {
        if is_arg(name) {
            given_args.push((name.clone(), value.clone()));
        } else {
            defines.push((name.clone(), value.clone()));
        }
    }
    // Later values win, so the override of a define or argument replaces the one given before.
    let latest = |pairs: &[(String, String)]| -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for (name, value) in pairs {
            out.retain(|(kept, _)| kept != name);
            out.push((name.clone(), value.clone()));
        }
        out
    };
    let defines = latest(&defines);
    // The program's launch, its values under the flags given, which override them.
    let mut buffers = Vec::new();
    let mut missing = Vec::new();
    let mut from_program = None;
    if let Some(number) = launch.launch {
        let number = usize::try_from(number).unwrap_or(usize::MAX);
        let found = program::program_launch(source, &defines, &device, number)?;
        let is_buffer = |name: &str| launch.buffers.iter().any(|(b, _)| b == name);
        for (name, value) in found.args.iter().filter(|(n, _)| !is_arg(n)) {
            match value {
                Ok(text) => args.push((name.clone(), text.clone())),
                Err(flag) => missing.push(flag.clone()),
            }
        }
        for (name, value) in found.buffers.iter().filter(|(n, _)| !is_buffer(n)) {
            match value {
                Ok(text) => buffers.push((name.clone(), text.clone())),
                Err(flag) => missing.push(flag.clone()),
            }
        }
        from_program = Some(found);
    }
    args.extend(given_args);
    buffers.extend(launch.buffers.iter().cloned());
    let args = latest(&args);
    let values: Vec<(String, String)> = defines.iter().chain(&args).cloned().collect();
    let dim = |flag: &Option<DimSpec>, program: Option<&program::Given<[u32; 3]>>| {
        match (flag, program) {
            (Some(spec), _) => resolve_dim(spec, &values).map(Some),
            (None, Some(Ok([x, y, z]))) => Ok(Some(Dim3::new(*x, *y, *z))),
            // A size the host code computes is asked for below, with the others.
            (None, Some(Err(_)) | None) => Ok(None),
        }
    };
    let grid = dim(&launch.grid, from_program.as_ref().map(|p| &p.grid))?;
    let block = dim(&launch.block, from_program.as_ref().map(|p| &p.block))?;
    if let Some(found) = &from_program {
        for (given, flag) in [
            (grid.is_some(), &found.grid),
            (block.is_some(), &found.block),
        ] {
            if let (false, Err(flag)) = (given, flag) {
                missing.push(flag.clone());
            }
        }
        if let (None, Err(flag)) = (launch.dyn_smem, &found.dyn_smem) {
            missing.push(flag.clone());
        }
    }
    if !missing.is_empty() {
        return Err(format!(
            "launch {} needs values its host code computes at run time (`memplay launches` \
             shows how): give {}",
            launch.launch.unwrap_or(0),
            missing.join(", ")
        ));
    }
    let kernel = match (&launch.kernel, &from_program) {
        (Some(kernel), _) => kernel.clone(),
        (None, Some(found)) => found.kernel.clone(),
        (None, None) => return Err("--kernel is missing (or --launch N)".to_string()),
    };
    let mut input = SimulationInput::new(source, &kernel, device);
    input.grid = grid.ok_or("--grid is missing")?;
    input.block = block.ok_or("--block is missing")?;
    input.defines = defines;
    input.dyn_smem = launch
        .dyn_smem
        .or_else(|| from_program.as_ref().and_then(|p| p.dyn_smem.clone().ok()))
        .unwrap_or(0);
    input.regs = launch.regs;
    for (name, text) in &args {
        match parse_value(name, text) {
            Ok(value) => input.args.push((name.clone(), value)),
            // A name where a number would be is where a pointer points: BUFFER+K.
            Err(_) if text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => {
                input.pointers.push(parse_pointer(name, text, &buffers)?);
            }
            Err(error) => return Err(error),
        }
    }
    input.buffers = latest(&buffers)
        .iter()
        .map(|(name, text)| {
            text.parse::<u64>()
                .map(|bytes| (name.clone(), bytes))
                .map_err(|_| {
                    format!("--buffer {name}={text}: the size is not a whole number of bytes")
                })
        })
        .collect::<Result<_, _>>()?;
    input.fills = launch
        .fills
        .iter()
        .map(|(name, text)| {
            text.parse::<Fill>()
                .map(|fill| (name.clone(), fill))
                .map_err(|error| format!("--fill {name}={text}: {error}"))
        })
        .collect::<Result<_, _>>()?;
    if launch.as_written {
        input.compile = CompileEffects::AS_WRITTEN;
    }
    input.step_budget = launch.budget;
    Ok(input)
}

/// A simulation error as the command line shows it: a spent budget says how to raise it.
fn simulation_error(error: &SimulationError) -> String {
    match error {
        SimulationError::StepBudget { .. } => {
            format!("{error} (raise it with --budget, or simulate a smaller launch)")
        }
        _ => error.to_string(),
    }
}

fn simulate_command(args: SimulateArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let source = read_source(&args.launch.file)?;
    let mut input = build_input(&args.launch, &source, &[])?;
    if args.sanitize {
        input.sanitizer = SanitizerConfig::ALL;
    }
    let report = simulate(&input).map_err(|e| simulation_error(&e))?;
    let prediction = predict(&report);
    print_simulation(&input, &report, &prediction, args.json, out)
}

/// What `simulate` and `replay` print for a launch that ran: one JSON object, or a table.
fn print_simulation(
    input: &SimulationInput,
    report: &SimulationReport,
    prediction: &Prediction,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    if json {
        let mut json = serde_json::json!({
            "kernel": report.kernel,
            "time_ms": prediction.time_ms,
            "gflops": prediction.gflops,
            "gbps": prediction.gbps,
            "bottleneck": prediction.bottleneck.as_str(),
            "prediction": prediction,
            "device": input.device.id,
            "counters": report.counters,
            "occupancy": report.occupancy,
            "sampled_blocks": report.sampled_blocks.iter().map(sampled_block_json).collect::<Vec<_>>(),
            "grid_blocks": report.grid_blocks,
            "warp_instructions": report.warp_instructions,
            "shared_bytes_per_block": report.shared_bytes_per_block,
            "compile": report.compile,
            "fused_loads": report.fused_loads,
            "steps": report.steps,
        });
        if let Some(sanitizer) = &report.sanitizer {
            json["sanitizer"] = serde_json::json!(sanitizer);
        }
        if let Some(printf) = &report.printf {
            json["printf"] = serde_json::json!(printf);
        }
        emit(out, &to_json(&json)?)
    } else {
        let mut lines = vec![format!(
            "{} on {}: {} blocks, {} simulated",
            report.kernel,
            input.device.name,
            report.grid_blocks,
            report.sampled_blocks.len()
        )];
        lines.push(format!(
            "predicted {:.4} ms, {:.1} GFLOP/s, {:.1} GB/s, bottleneck: {}",
            prediction.time_ms,
            prediction.gflops,
            prediction.gbps,
            prediction.bottleneck.describe()
        ));
        for (name, value) in report.counters.nsight() {
            lines.push(format!("{name:<60} {value:>16.0}"));
        }
        lines.push(occupancy_table(&input.device, &report.occupancy));
        if let Some(sanitizer) = &report.sanitizer {
            lines.push(sanitizer_text(sanitizer));
        }
        if let Some(printf) = &report.printf {
            lines.push(printf_text(printf));
        }
        emit(out, &lines.join("\n"))
    }
}

/// What the kernel printed, under a line that says where it comes from, and how many lines
/// were left out.
fn printf_text(printf: &PrintfOutput) -> String {
    let mut text = String::from("printf output of the simulated blocks:");
    for line in &printf.lines {
        text.push_str("\n  ");
        text.push_str(line);
    }
    if printf.lines_not_shown > 0 {
        text.push_str(&format!(
            "\n  ({} more lines not shown)",
            printf.lines_not_shown
        ));
    }
    text
}

/// The sanitizer's findings, one a line after a line that counts them.
fn sanitizer_text(sanitizer: &SanitizerReport) -> String {
    let count = sanitizer.findings.len() as u64 + sanitizer.more;
    let mut text = format!(
        "sanitizer: {count} finding{}",
        if count == 1 { "" } else { "s" }
    );
    for finding in &sanitizer.findings {
        text.push_str(&format!("\n  {finding}"));
    }
    if sanitizer.more > 0 {
        text.push_str(&format!("\n  and {} more", sanitizer.more));
    }
    text
}

/// The most bytes a launch file may have: the largest source the simulator takes, written as JSON
/// (where a control character can take six bytes), and room for the rest of the launch.
const MAX_LAUNCH_FILE_BYTES: usize = 6 * MAX_SOURCE_BYTES + 1024 * 1024;

/// Reads and checks a launch file: its version, a device that is one of the presets exactly (a
/// file's device is data, and the simulator's rules are only proven on the presets' values), and
/// a step budget within `budget`.
fn read_launch_file(path: &Path, budget: u64) -> Result<LaunchFile, String> {
    let bytes = read_bounded(path, MAX_LAUNCH_FILE_BYTES, "a launch file")?;
    let launch: LaunchFile = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{} is not a memplay launch file: {e}", path.display()))?;
    launch.check_version()?;
    let device = &launch.input.device;
    if *device != device.id.device() {
        return Err(format!(
            "the launch file's device differs from memplay's '{}' preset; only the presets run",
            device.id.as_str()
        ));
    }
    if launch.input.step_budget > budget {
        return Err(format!(
            "the launch file asks for a budget of {} steps, more than --budget {budget}",
            launch.input.step_budget
        ));
    }
    Ok(launch)
}

/// Runs a launch file exactly as written and prints what `simulate` prints; with `--check`, the
/// output is followed by a failure if the counters or the time differ from the file's.
fn replay_command(args: ReplayArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let launch = read_launch_file(&args.file, args.budget)?;
    let input = &launch.input;
    let report = simulate(input).map_err(|e| simulation_error(&e))?;
    let prediction = predict(&report);
    print_simulation(input, &report, &prediction, args.json, out)?;
    if args.check {
        let differences = launch.differences(&report.counters, prediction.time_ms);
        if !differences.is_empty() {
            return Err(Failure::Message(format!(
                "the replay differs from the file's expected results in {} value{}: {}",
                differences.len(),
                if differences.len() == 1 { "" } else { "s" },
                differences.join("; ")
            )));
        }
    }
    Ok(())
}

fn sampled_block_json(block: &SampledBlock) -> serde_json::Value {
    serde_json::json!({
        "block": block.block,
        "position": block.position,
        "scale": block.scale,
        "reused_for": block.reused_for,
        "warps_shown_alike": block.warps_shown_alike,
        "iterations_skipped": block.iterations_skipped,
        "steps": block.steps,
    })
}

/// One launch per value, each with its own step budget. Every launch is built (its values read,
/// its grid and block resolved) before the first one runs, so a value that cannot be read fails
/// at once. The sweep stops at the first launch that fails: the rows before it are printed (as
/// they finish, in the table), then its error.
fn sweep_command(args: SweepArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let (name, list) = &args.sweep;
    let values: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .collect();
    if values.is_empty() {
        return Err(format!("--sweep {name}= names no values").into());
    }
    if values.len() > MAX_SWEEP_VALUES {
        return Err(format!(
            "--sweep {name} lists {} values; a sweep takes at most {MAX_SWEEP_VALUES}",
            values.len()
        )
        .into());
    }
    let source = read_source(&args.launch.file)?;
    // (These errors name the value themselves: "--arg n=x: ...", "TILE_WIDTH=0 is not ...".)
    let inputs = values
        .iter()
        .map(|value| build_input(&args.launch, &source, &[(name.clone(), value.to_string())]))
        .collect::<Result<Vec<_>, _>>()?;
    if !args.json {
        emit(out, &sweep_header(name))?;
    }
    let mut rows = Vec::new();
    for (value, input) in values.iter().zip(&inputs) {
        let report = match simulate(input) {
            Ok(report) => report,
            Err(error) => {
                if args.json {
                    emit(out, &to_json(&rows)?)?;
                }
                return Err(format!("{name}={value}: {}", simulation_error(&error)).into());
            }
        };
        let prediction = predict(&report);
        let row = SweepRow::new(name, value, input, &report, &prediction);
        if !args.json {
            emit(out, &sweep_line(&row))?;
        }
        rows.push(row);
    }
    if args.json {
        emit(out, &to_json(&rows)?)?;
    }
    Ok(())
}

/// One line of a sweep: the value and what the launch does with it.
#[derive(Debug, Serialize)]
struct SweepRow {
    parameter: String,
    value: String,
    grid: [u32; 3],
    block: [u32; 3],
    time_ms: f64,
    gflops: f64,
    gbps: f64,
    bottleneck: &'static str,
    occupancy_pct: f64,
    shared_ld_instructions: f64,
    shared_ld_wavefronts: f64,
    global_ld_requests: f64,
    global_ld_sectors: f64,
    fp32_flops: f64,
}

impl SweepRow {
    fn new(
        name: &str,
        value: &str,
        input: &SimulationInput,
        report: &SimulationReport,
        prediction: &Prediction,
    ) -> SweepRow {
        let get = |metric: &str| report.counters.get(metric).unwrap_or(0.0);
        SweepRow {
            parameter: name.to_string(),
            value: value.to_string(),
            grid: [input.grid.x, input.grid.y, input.grid.z],
            block: [input.block.x, input.block.y, input.block.z],
            time_ms: prediction.time_ms,
            gflops: prediction.gflops,
            gbps: prediction.gbps,
            bottleneck: prediction.bottleneck.as_str(),
            occupancy_pct: report.occupancy.theoretical_occupancy_pct,
            shared_ld_instructions: get("smsp__inst_executed_op_shared_ld.sum"),
            shared_ld_wavefronts: get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
            global_ld_requests: get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
            global_ld_sectors: get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
            fp32_flops: report.counters.fp32_flops,
        }
    }
}

/// The header of a sweep's table.
fn sweep_header(name: &str) -> String {
    format!(
        "{:>12} {:>14} {:>10} {:>10} {:>10} {:>10} {:>5} {:>12} {:>6} {:>12} {:>8}",
        name,
        "grid",
        "block",
        "time ms",
        "GFLOP/s",
        "GB/s",
        "occ%",
        "shared ld",
        "wf/ld",
        "global ld",
        "sect/req"
    )
}

/// One row of a sweep's table.
fn sweep_line(row: &SweepRow) -> String {
    let ratio = |a: f64, b: f64| {
        if b > 0.0 {
            format!("{:.2}", a / b)
        } else {
            "-".to_string()
        }
    };
    format!(
        "{:>12} {:>14} {:>10} {:>10.4} {:>10.1} {:>10.1} {:>5.0} {:>12.0} {:>6} {:>12.0} {:>8}  {}",
        row.value,
        format!("{}x{}x{}", row.grid[0], row.grid[1], row.grid[2]),
        format!("{}x{}x{}", row.block[0], row.block[1], row.block[2]),
        row.time_ms,
        row.gflops,
        row.gbps,
        row.occupancy_pct,
        row.shared_ld_instructions,
        ratio(row.shared_ld_wavefronts, row.shared_ld_instructions),
        row.global_ld_requests,
        ratio(row.global_ld_sectors, row.global_ld_requests),
        row.bottleneck,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use memplay_sim::kernel::Span;

    fn check_value(text: &str, expected: Result<Value, String>) {
        assert_eq!(parse_value("x", text), expected, "{text}");
    }

    #[test]
    fn infinities_and_nans_are_read_in_any_case_as_strtof_reads_them() {
        for text in ["inf", "INF", "Inf", "infinity", "INFINITY", "+inf"] {
            check_value(text, Ok(Value::Float(f64::INFINITY)));
        }
        check_value("-Infinity", Ok(Value::Float(f64::NEG_INFINITY)));
        for text in ["nan", "NaN", "NAN", "-nan"] {
            assert!(
                matches!(parse_value("x", text), Ok(Value::Float(v)) if v.is_nan()),
                "{text}"
            );
        }
    }

    #[test]
    fn a_float_may_carry_c_s_f_suffix_after_a_digit_only() {
        check_value("1.5f", Ok(Value::Float(1.5)));
        check_value("2.F", Ok(Value::Float(2.0)));
        check_value("64", Ok(Value::Int(64)));
        check_value("true", Ok(Value::Bool(true)));
        for text in ["inff", "f", "1.5ff", "infinit", "e5", "0x10", ""] {
            check_value(
                text,
                Err(format!("--arg x={text}: the value is not a number")),
            );
        }
    }

    #[test]
    fn a_spent_budget_tells_the_command_line_user_how_to_raise_it() {
        let error = SimulationError::StepBudget {
            steps: 1200,
            budget: 1000,
            span: Span {
                line: 19,
                col: 17,
                start: 0,
                end: 1,
            },
        };
        assert_eq!(
            simulation_error(&error),
            "19:17: the simulation used up its step budget of 1000 steps \
             (raise it with --budget, or simulate a smaller launch)"
        );
    }

    #[test]
    fn clap_s_usage_and_help_pointer_are_left_out_and_a_tip_kept() {
        assert_eq!(
            clap_message(
                "error: unrecognized subcommand 'simulat'\n\n  tip: a similar subcommand \
                 exists: 'simulate'\n\nUsage: memplay <COMMAND>\n\nFor more information, try \
                 '--help'.\n"
            ),
            "unrecognized subcommand 'simulat' (tip: a similar subcommand exists: 'simulate')"
        );
        assert_eq!(
            clap_message("error: invalid value 'a\n\nb' for '--grid <GRID>'\n\nFor more information, try '--help'.\n"),
            "invalid value 'a\n\nb' for '--grid <GRID>'"
        );
    }
}
