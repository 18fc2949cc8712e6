//! One fuzz case: a kernel source and its launch, the file format it is saved in, and the check
//! every case must pass.
//!
//! A case file is one header line, then the source exactly as it was simulated:
//!
//! ```text
//! // memplay-fuzz: kernel=k grid=1,1,1 block=32,1,1 dyn_smem=0 regs=0 args=n=4 buffers=a=1024 defines=PAD=1 device=h100 sampling=edges budget=200000
//! __global__ void k(int* a, int n) { ... }
//! ```
//!
//! Fields left out take the page's defaults (`budget=default` is `DEFAULT_STEP_BUDGET`). Names and
//! values that hold anything but letters, digits and `_.+-` are written `%XX` per UTF-8 byte, so a
//! define named `1 X` or an empty value survives the round trip.

use memplay_sim::device::DeviceId;
use memplay_sim::kernel::{self, Dim3, Value};
use memplay_sim::memory_spaces;
use memplay_sim::simulate::{BlockSampling, DEFAULT_STEP_BUDGET};
use memplay_sim::{simulate, SimulationInput};
use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The stack a case runs on: what a browser gives WebAssembly.
pub const CASE_STACK_BYTES: usize = 1 << 20;

/// A case that takes longer than this (twice in a row) is a finding: the page would freeze. The
/// default step budget ends the slowest kernels measured within 2.5 s natively on an idle machine
/// (`simulate::DEFAULT_STEP_BUDGET`), and the hour-long run found none over 4.7 s on a machine
/// busy with two builds; the limit leaves room for a slow CI machine, so that only a case the
/// budget does not bound is found, and a loaded machine never fails a sound case.
pub const SLOW_LIMIT: Duration = Duration::from_secs(10);

/// A case still running after this long is a hang; its thread cannot be stopped and is left behind.
pub const HANG_LIMIT: Duration = Duration::from_secs(20);

/// An error's `Display` may be at most this many characters: a line and column plus a message of
/// `kernel::limits::MAX_MESSAGE_CHARS`.
pub const MAX_ERROR_CHARS: usize = 300;

/// Whether an error must read as one line of printable characters of at most `MAX_ERROR_CHARS`.
/// `Diagnostic::new` makes every message one printable line (`kernel::span::one_line`); this check
/// holds the whole simulator to it.
pub const CHECK_ERROR_LINES: bool = true;

const HEADER_PREFIX: &str = "// memplay-fuzz:";

/// Set once a case hangs: its thread still runs, so no further case is started in this process.
static HUNG: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub source: String,
    pub kernel: String,
    pub defines: Vec<(String, String)>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dyn_smem: u32,
    pub regs: u32,
    pub args: Vec<(String, Value)>,
    pub buffers: Vec<(String, u64)>,
    pub device: DeviceId,
    pub all_blocks: bool,
    pub step_budget: u64,
}

impl Case {
    /// `source` launched as `kernel<<<1, 32>>>` on the H100 with the default budget.
    pub fn new(source: impl Into<String>, kernel: &str) -> Case {
        Case {
            source: source.into(),
            kernel: kernel.to_string(),
            defines: Vec::new(),
            grid: [1, 1, 1],
            block: [32, 1, 1],
            dyn_smem: 0,
            regs: 0,
            args: Vec::new(),
            buffers: Vec::new(),
            device: DeviceId::H100,
            all_blocks: false,
            step_budget: DEFAULT_STEP_BUDGET,
        }
    }

    pub fn input(&self) -> SimulationInput {
        let dim = |d: [u32; 3]| Dim3::new(d[0], d[1], d[2]);
        let mut input = SimulationInput::new(&self.source, &self.kernel, self.device.device());
        input.defines = self.defines.clone();
        input.grid = dim(self.grid);
        input.block = dim(self.block);
        input.dyn_smem = self.dyn_smem;
        input.regs = self.regs;
        input.args = self.args.clone();
        input.buffers = self.buffers.clone();
        input.sampling = if self.all_blocks {
            BlockSampling::All
        } else {
            BlockSampling::EdgeClasses
        };
        input.step_budget = self.step_budget;
        input
    }

    /// The header line, without its newline.
    pub fn header(&self) -> String {
        let dims = |d: [u32; 3]| format!("{},{},{}", d[0], d[1], d[2]);
        let list = |items: Vec<(String, String)>| {
            items
                .iter()
                .map(|(name, value)| format!("{}={}", escape(name), escape(value)))
                .collect::<Vec<_>>()
                .join(",")
        };
        let budget = if self.step_budget == DEFAULT_STEP_BUDGET {
            "default".to_string()
        } else {
            self.step_budget.to_string()
        };
        format!(
            "{HEADER_PREFIX} kernel={} grid={} block={} dyn_smem={} regs={} args={} buffers={} \
             defines={} device={} sampling={} budget={budget}",
            escape(&self.kernel),
            dims(self.grid),
            dims(self.block),
            self.dyn_smem,
            self.regs,
            list(
                self.args
                    .iter()
                    .map(|(n, v)| (n.clone(), value_text(*v)))
                    .collect()
            ),
            list(
                self.buffers
                    .iter()
                    .map(|(n, b)| (n.clone(), b.to_string()))
                    .collect()
            ),
            list(self.defines.clone()),
            self.device.as_str(),
            if self.all_blocks { "all" } else { "edges" },
        )
    }

    /// The case as a file: the header line, then the source.
    pub fn to_file(&self) -> String {
        format!("{}\n{}", self.header(), self.source)
    }

    /// Reads a case file: the first line is the header, the rest the source.
    pub fn from_file(text: &str) -> Result<Case, String> {
        let (header, source) = text.split_once('\n').unwrap_or((text, ""));
        let fields = header
            .trim_end_matches('\r')
            .strip_prefix(HEADER_PREFIX)
            .ok_or_else(|| format!("the first line does not start with '{HEADER_PREFIX}'"))?;
        let mut case = Case::new(source, "");
        for field in fields.split_whitespace() {
            let (key, value) = field
                .split_once('=')
                .ok_or_else(|| format!("header field '{field}' has no '='"))?;
            let number = |v: &str| {
                v.parse::<u64>()
                    .map_err(|_| format!("'{key}={v}' is not a number"))
            };
            let u32_of = |v: &str| {
                number(v)
                    .and_then(|n| u32::try_from(n).map_err(|_| format!("'{key}={v}' is too large")))
            };
            let dims = |v: &str| -> Result<[u32; 3], String> {
                let parts: Vec<&str> = v.split(',').collect();
                match parts.as_slice() {
                    [x, y, z] => Ok([u32_of(x)?, u32_of(y)?, u32_of(z)?]),
                    _ => Err(format!("'{key}={v}' is not X,Y,Z")),
                }
            };
            match key {
                "kernel" => case.kernel = unescape(value),
                "grid" => case.grid = dims(value)?,
                "block" => case.block = dims(value)?,
                "dyn_smem" => case.dyn_smem = u32_of(value)?,
                "regs" => case.regs = u32_of(value)?,
                "args" => {
                    case.args = pairs(value)?
                        .into_iter()
                        .map(|(n, v)| Ok((n, parse_value(&v)?)))
                        .collect::<Result<_, String>>()?;
                }
                "buffers" => {
                    case.buffers = pairs(value)?
                        .into_iter()
                        .map(|(n, v)| Ok((n, number(&v)?)))
                        .collect::<Result<_, String>>()?;
                }
                "defines" => case.defines = pairs(value)?,
                "device" => {
                    case.device = DeviceId::ALL
                        .into_iter()
                        .find(|d| d.as_str() == value)
                        .ok_or_else(|| format!("unknown device '{value}'"))?;
                }
                "sampling" => case.all_blocks = value == "all",
                "budget" if value == "default" => case.step_budget = DEFAULT_STEP_BUDGET,
                "budget" => case.step_budget = number(value)?,
                _ => return Err(format!("unknown header field '{key}'")),
            }
        }
        Ok(case)
    }

    /// A short name that changes with the content: FNV-1a of the file, in hex.
    pub fn content_hash(&self) -> String {
        content_hash(self.to_file().as_bytes())
    }
}

/// The 32 bytes of a proptest `TestRng` (ChaCha) from a 64-bit seed, so that a run is named by
/// one number: the fuzz loop's `MEMPLAY_FUZZ_SEED` and the snapshot's generated cases.
pub fn seed_bytes(seed: u64) -> [u8; 32] {
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let word = seed
            .wrapping_add(i as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(17);
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    bytes
}

/// FNV-1a (64 bits) of `bytes` as 16 hex digits; `cargo xtask fuzz` names crash files the same way.
pub fn content_hash(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

fn value_text(value: Value) -> String {
    match value {
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        // Debug writes a float that reads back exactly and never as an integer ("4.0", "1e20").
        Value::Float(f) => format!("{f:?}"),
    }
}

fn parse_value(text: &str) -> Result<Value, String> {
    if let Ok(i) = text.parse::<i64>() {
        return Ok(Value::Int(i));
    }
    if let Ok(b) = text.parse::<bool>() {
        return Ok(Value::Bool(b));
    }
    text.parse::<f64>()
        .map(Value::Float)
        .map_err(|_| format!("'{text}' is not a value"))
}

fn pairs(list: &str) -> Result<Vec<(String, String)>, String> {
    if list.is_empty() {
        return Ok(Vec::new());
    }
    list.split(',')
        .map(|item| {
            let (name, value) = item.split_once('=').unwrap_or((item, ""));
            Ok((unescape(name), unescape(value)))
        })
        .collect()
}

fn escape(text: &str) -> String {
    let mut out = String::new();
    for &b in text.as_bytes() {
        if b.is_ascii_alphanumeric() || b"_.+-".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// How a case that passed the check ended: what share of cases get how far shows how deep the
/// fuzzing reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// `simulate` returned a report.
    Simulated,
    /// It compiled, and `simulate` returned an error (the launch, a run-time fault, the budget).
    SimulateError,
    /// `compile` returned an error.
    CompileError,
    /// Not run: an earlier case hung.
    NotRun,
}

/// A case that passed: how it ended and its wall time.
#[derive(Clone, Copy, Debug)]
pub struct Passed {
    pub outcome: Outcome,
    pub elapsed: Duration,
}

/// What went wrong with a case, in one line for a test's failure message.
pub type Finding = String;

/// Compiles and simulates `case` on a thread with a browser-sized stack; a panic, an error that is
/// not one short printable line, or a wall time over `SLOW_LIMIT` twice in a row is a finding.
/// Returns the wall time of the (first) run.
pub fn check(case: &Case) -> Result<Passed, Finding> {
    check_slow(case, true)
}

/// `check`, where with `confirm_slow` false one slow run is enough (while shrinking a slow case).
pub fn check_slow(case: &Case, confirm_slow: bool) -> Result<Passed, Finding> {
    let passed = run_once(case)?;
    let first = passed.elapsed;
    if first <= SLOW_LIMIT {
        return Ok(passed);
    }
    if !confirm_slow {
        return Err(format!(
            "too slow: {:.2} s (the limit is {} s)",
            first.as_secs_f64(),
            SLOW_LIMIT.as_secs()
        ));
    }
    // One slow run may be the other processes on the machine; a second one is the case.
    let second = run_once(case)?.elapsed;
    if second <= SLOW_LIMIT {
        return Ok(passed);
    }
    Err(format!(
        "too slow: {:.2} s and then {:.2} s (the limit is {} s)",
        first.as_secs_f64(),
        second.as_secs_f64(),
        SLOW_LIMIT.as_secs()
    ))
}

/// What kind of fault a finding is, so that one fault found again is not reported again: the
/// finding up to its detail, digits left out.
pub fn finding_kind(finding: &str) -> String {
    let head = if finding.starts_with("panic: ") {
        finding
    } else {
        finding.split(": ").next().unwrap_or(finding)
    };
    head.chars()
        .filter(|c| !c.is_ascii_digit())
        .take(160)
        .collect()
}

/// Whether a case has hung in this process (its thread still runs).
pub fn hung() -> bool {
    HUNG.load(Ordering::SeqCst)
}

fn run_once(case: &Case) -> Result<Passed, Finding> {
    if hung() {
        // Not run: a hung case's thread still runs. Passing lets the shrinker keep the hang.
        return Ok(Passed {
            outcome: Outcome::NotRun,
            elapsed: Duration::ZERO,
        });
    }
    let input = case.input();
    let (send, receive) = mpsc::channel();
    let start = Instant::now();
    thread::Builder::new()
        .name("memplay-fuzz-case".to_string())
        .stack_size(CASE_STACK_BYTES)
        .spawn(move || {
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                let compiled = kernel::compile(&input.source, &input.defines)
                    .err()
                    .map(|e| e.to_string());
                // The page lists the kernel's variables from the same text (the memory-spaces
                // view), on the same browser-sized stack.
                let listed =
                    memory_spaces::declarations(&input.source, &input.defines, &input.kernel)
                        .err()
                        .map(|e| e.to_string());
                let simulated = simulate(&input).err().map(|e| e.to_string());
                (compiled, listed, simulated)
            }));
            let _ = send.send(outcome.map_err(|payload| {
                payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".to_string())
            }));
        })
        .map_err(|e| format!("cannot start the case's thread: {e}"))?;
    let outcome = match receive.recv_timeout(HANG_LIMIT) {
        Ok(outcome) => outcome,
        Err(_) => {
            HUNG.store(true, Ordering::SeqCst);
            return Err(format!(
                "hang: still running after {} s",
                HANG_LIMIT.as_secs()
            ));
        }
    };
    let elapsed = start.elapsed();
    let (compiled, listed, simulated) = outcome.map_err(|message| format!("panic: {message}"))?;
    let outcome = match (&compiled, &simulated) {
        (Some(_), _) => Outcome::CompileError,
        (None, Some(_)) => Outcome::SimulateError,
        (None, None) => Outcome::Simulated,
    };
    for (stage, error) in [
        ("compile", compiled),
        ("memory spaces", listed),
        ("simulate", simulated),
    ] {
        if let Some(text) = error {
            if let Some(problem) = bad_error_line(&text) {
                return Err(format!(
                    "{stage}'s error {problem}: {:?}",
                    text.chars().take(400).collect::<String>()
                ));
            }
        }
    }
    Ok(Passed { outcome, elapsed })
}

/// Why `text` is not one short line of printable characters, if it is not.
pub fn bad_error_line(text: &str) -> Option<String> {
    if !CHECK_ERROR_LINES {
        return None;
    }
    let chars = text.chars().count();
    if chars > MAX_ERROR_CHARS {
        return Some(format!(
            "is {chars} characters long (at most {MAX_ERROR_CHARS})"
        ));
    }
    if text.is_empty() {
        return Some("is empty".to_string());
    }
    let bidi = |c: char| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    text.chars()
        .find(|&c| c.is_control() || bidi(c))
        .map(|c| format!("holds the unprintable character {c:?}"))
}
