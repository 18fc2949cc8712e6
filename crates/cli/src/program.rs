//! Whole programs on the command line: the kernel launches their host code makes
//! (`memplay launches FILE.cu`) and the values of one of them for `memplay simulate FILE.cu
//! --launch N`.
//!
//! `memplay_sim::kernel::launches` finds the launches; this module names their arguments after the
//! kernel's parameters (in nvcc's device pass for the preset, as `simulate` reads the file) and
//! turns each into the flags the command line takes: `--grid`, `--block`, `--dyn-smem`, `--arg
//! NAME=VALUE` (`NAME=BUFFER+K` for a pointer moved into its buffer) and `--buffer NAME=BYTES`. A
//! value the host code computes at run time stays unknown, and the launch asks for the flag that
//! gives it, by name. Launches are numbered from 1, in source order, as the listing shows them.

use memplay_sim::kernel::ast::{Item, Type};
use memplay_sim::kernel::launches::{find_launches, ArgumentValue, HostLaunch, HostValue};
use memplay_sim::kernel::parse;
use memplay_sim::kernel::templates::instantiate;
use memplay_sim::Device;
use serde::Serialize;

/// A value of the program's launch, or the flag that must give it.
pub type Given<T> = Result<T, String>;

/// One launch of the program, as the command line's flags.
pub struct ProgramLaunch {
    pub kernel: String,
    pub grid: Given<[u32; 3]>,
    pub block: Given<[u32; 3]>,
    pub dyn_smem: Given<u32>,
    /// `--arg` pairs, by parameter name.
    pub args: Vec<(String, Given<String>)>,
    /// `--buffer` pairs, by buffer name.
    pub buffers: Vec<(String, Given<String>)>,
}

/// The launches of `source`'s host code (`defines` are the `-D`s).
pub fn launches(source: &str, defines: &[(String, String)]) -> Result<Vec<HostLaunch>, String> {
    find_launches(source, defines).map_err(|d| d.to_string())
}

fn value_text(value: &HostValue) -> String {
    match value {
        HostValue::Known(v) => v.to_string(),
        HostValue::Unknown(text) => format!("unknown ({text})"),
    }
}

/// One line per launch and one per argument.
pub fn launches_table(launches: &[HostLaunch]) -> String {
    let mut lines = Vec::new();
    for (index, launch) in launches.iter().enumerate() {
        let dims = |d: &[HostValue; 3]| d.iter().map(value_text).collect::<Vec<_>>().join(", ");
        let stream = launch
            .stream
            .as_ref()
            .map_or(String::new(), |s| format!(", stream {s}"));
        lines.push(format!(
            "launch {} (line {}): {}<<<({}), ({}), {}{stream}>>>",
            index + 1,
            launch.span.line,
            launch.kernel,
            dims(&launch.grid),
            dims(&launch.block),
            value_text(&launch.shared_bytes)
        ));
        for (k, arg) in launch.args.iter().enumerate() {
            let what = match &arg.value {
                ArgumentValue::Integer(v) => v.to_string(),
                ArgumentValue::Float(v) => format!("{v:?}"),
                ArgumentValue::Buffer(b) => {
                    let copied = b
                        .copied
                        .as_ref()
                        .map_or(String::new(), |c| format!(", {} copied in", value_text(c)));
                    format!(
                        "buffer {} + {}, {} bytes{copied}",
                        b.buffer,
                        value_text(&b.offset),
                        value_text(&b.bytes)
                    )
                }
                ArgumentValue::Unknown(text) => format!("unknown ({text})"),
            };
            lines.push(format!("  arg {}: {} = {what}", k + 1, arg.text));
        }
    }
    if lines.is_empty() {
        lines.push("no kernel launches in the host code".to_string());
    }
    lines.join("\n")
}

#[derive(Serialize)]
struct NumberedLaunch<'a> {
    launch: usize,
    line: u32,
    #[serde(flatten)]
    found: &'a HostLaunch,
}

/// The launches as a JSON array, each with its number and line.
pub fn launches_json(launches: &[HostLaunch]) -> serde_json::Value {
    let numbered: Vec<NumberedLaunch> = launches
        .iter()
        .enumerate()
        .map(|(index, found)| NumberedLaunch {
            launch: index + 1,
            line: found.span.line,
            found,
        })
        .collect();
    serde_json::to_value(numbered).unwrap_or(serde_json::Value::Null)
}

/// A launch's extent as a positive `u32`, or the flag that gives it.
fn extent(value: &HostValue, flag: &str) -> Given<u32> {
    match value {
        HostValue::Known(v) => u32::try_from(*v)
            .ok()
            .filter(|&v| v > 0)
            .ok_or_else(|| format!("{flag} (the host code gives {v})")),
        HostValue::Unknown(_) => Err(flag.to_string()),
    }
}

fn dims(values: &[HostValue; 3], flag: &str) -> Given<[u32; 3]> {
    let mut dims = [1; 3];
    for (slot, value) in dims.iter_mut().zip(values) {
        *slot = extent(value, flag)?;
    }
    Ok(dims)
}

/// Launch `number` (from 1) of `source`, its arguments named after the parameters of the kernel
/// as `device`'s device pass reads the file.
pub fn program_launch(
    source: &str,
    defines: &[(String, String)],
    device: &Device,
    number: usize,
) -> Result<ProgramLaunch, String> {
    let found = launches(source, defines)?;
    let count = found.len();
    let Some(launch) = number.checked_sub(1).and_then(|k| found.get(k)) else {
        return Err(match count {
            0 => "--launch: the host code launches no kernel".to_string(),
            _ => format!("--launch {number}: the host code has launches 1 to {count}"),
        });
    };
    let mut unit = parse(
        source,
        &device.compute_capability.device_pass_defines(defines),
    )
    .map_err(|d| d.to_string())?;
    // A template launch (`mm<float, 16><<<...>>>`) names its instantiation, made here.
    let kernel = instantiate(&mut unit, &launch.kernel).map_err(|d| d.to_string())?;
    let params = unit
        .items
        .iter()
        .find_map(|item| match item {
            Item::Function(f) if f.name == kernel => Some(&f.params),
            _ => None,
        })
        .ok_or_else(|| {
            format!(
                "launch {number} (line {}) launches '{}', which is no kernel of the file memplay \
                 reads",
                launch.span.line, launch.kernel
            )
        })?;
    let mut args = Vec::new();
    let mut buffers = Vec::new();
    for (param, arg) in params.iter().zip(&launch.args) {
        let name = &param.name;
        // A struct or vector passed by value is given member by member (`--arg p.n=VALUE`); the
        // host code's value of it is not followed.
        if !matches!(param.ty, Type::Pointer { .. } | Type::Scalar(_)) {
            if let Ok(leaves) = memplay_sim::kernel::interp::parameter_leaves(name, &param.ty) {
                args.extend(
                    leaves
                        .into_iter()
                        .map(|(leaf, _)| (leaf.clone(), Err(format!("--arg {leaf}=VALUE")))),
                );
                continue;
            }
        }
        let unknown = format!("--arg {name}=VALUE");
        let value = match &arg.value {
            ArgumentValue::Integer(v) => Ok(v.to_string()),
            ArgumentValue::Float(v) => Ok(format!("{v:?}")),
            // A pointer the host sets at run time (`s.x`, a pointer from a function) points at
            // the start of a buffer named after the parameter, whose size the student gives.
            ArgumentValue::Unknown(_) if matches!(param.ty, Type::Pointer { .. }) => {
                buffers.push((name.clone(), Err(format!("--buffer {name}=BYTES"))));
                continue;
            }
            ArgumentValue::Unknown(_) => Err(unknown),
            ArgumentValue::Buffer(b) if matches!(param.ty, Type::Pointer { .. }) => {
                // A pointer at its buffer's start names the buffer after the parameter, as a
                // launch without host code does; one moved into it names the host's buffer.
                let buffer = match &b.offset {
                    HostValue::Known(0) => name.clone(),
                    _ => b.buffer.clone(),
                };
                let bytes = match &b.bytes {
                    HostValue::Known(v) if *v > 0 => Ok(v.to_string()),
                    _ => Err(format!("--buffer {buffer}=BYTES")),
                };
                buffers.push((buffer.clone(), bytes));
                match &b.offset {
                    HostValue::Known(0) => continue,
                    HostValue::Known(k) => Ok(format!("{buffer}+{k}")),
                    HostValue::Unknown(_) => Err(format!("--arg {name}={buffer}+K")),
                }
            }
            ArgumentValue::Buffer(_) => Err(unknown),
        };
        args.push((name.clone(), value));
    }
    Ok(ProgramLaunch {
        kernel,
        grid: dims(&launch.grid, "--grid"),
        block: dims(&launch.block, "--block"),
        dyn_smem: match &launch.shared_bytes {
            HostValue::Known(v) => {
                u32::try_from(*v).map_err(|_| format!("--dyn-smem (the host code gives {v})"))
            }
            HostValue::Unknown(_) => Err("--dyn-smem".to_string()),
        },
        args,
        buffers,
    })
}
