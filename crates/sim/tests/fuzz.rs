//! The fuzz target: whatever kernel text and launch a student gives the page, `kernel::compile`,
//! `memory_spaces::declarations` (the page's list of the kernel's variables) and `simulate` return
//! `Ok` or an `Err` that reads as one short printable line, never panic, and
//! finish within `case::SLOW_LIMIT` (the default budget takes about 2 s at most), on a thread
//! with the 1 MB stack a browser gives WebAssembly.
//!
//! - `generated_and_mutated_kernels_never_crash_hang_or_print_a_bad_error` runs generated kernels
//!   (`fuzz/grammar.rs`), mutated lecture kernels (`fuzz/mutate.rs`) and hostile shapes for
//!   `MEMPLAY_FUZZ_SECONDS` (20 unless set; `cargo xtask test` gives it 120, `cargo xtask fuzz
//!   --minutes N` as long as asked), from `MEMPLAY_FUZZ_SEED` or a seed taken from the clock,
//!   shrinking what fails. With `MEMPLAY_FUZZ_SAVE=DIR`, each case is first written to
//!   `DIR/current.cu` (a stack overflow aborts the process, so the case is on disk when it does)
//!   and each finding is saved as `DIR/<content hash>.cu`.
//! - `every_saved_regression_is_an_answer_in_time` replays `fuzz/regressions/*.cu`, each
//!   in a child process of this test binary, so that one that overflows the stack is reported by
//!   name and does not take the other tests down. The cases too large to keep as files are built
//!   by `generated_regression` and replayed the same way by their own tests.
//!
//! - `generated_warp_programs_give_every_lane_what_a_lane_by_lane_reference_gives` runs
//!   programs of warp primitives (`fuzz/warp.rs`) in the interpreter and compares what every
//!   thread stores with what a reference that executes them lane by lane computes.
//!
//! A case file is a header line stating the launch, then the source (`fuzz/case.rs`).

#[path = "fuzz/case.rs"]
mod case;
#[path = "fuzz/cpp.rs"]
mod cpp;
#[path = "fuzz/grammar.rs"]
mod grammar;
#[path = "fuzz/mutate.rs"]
mod mutate;
#[path = "fuzz/warp.rs"]
mod warp;

use case::{Case, Finding};
use memplay_sim::kernel::{compile, Dim3, Launch, Simulation, Value};
use memplay_sim::Fill;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::env;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Names the case a child process of this binary runs (`child_entry`).
const CHILD_ENV: &str = "MEMPLAY_FUZZ_CHILD";

/// The test that runs the case named by `CHILD_ENV`; it does nothing when the variable is unset.
const CHILD_TEST: &str = "a_case_named_by_memplay_fuzz_child_runs_in_this_process";

/// The fuzz loop stops after this many findings: the same fault tends to be found again.
const MAX_FINDINGS: usize = 5;

/// How long one finding may be shrunk, in milliseconds.
const SHRINK_MILLIS: u32 = 20_000;

/// Cases per proptest run; the deadline is checked between runs.
const BATCH: u32 = 16;

fn regressions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz/regressions")
}

/// The saved regression files, `current.cu` (a fuzz run's case in progress) left out.
fn regression_files() -> Vec<PathBuf> {
    let dir = regressions_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .filter(|p| p.file_name().is_some_and(|n| n != "current.cu"))
        .collect();
    files.sort();
    files
}

fn read_case(path: &Path) -> Case {
    let text =
        std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    Case::from_file(&String::from_utf8_lossy(&text))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The regressions too large to keep as files, by name.
fn generated_regression(name: &str) -> Option<Case> {
    let kernel_with = |body: String| Case {
        buffers: vec![("a".to_string(), 1024)],
        ..Case::new(format!("__global__ void k(int* a) {{ {body} }}"), "k")
    };
    Some(match name {
        "flat_chain_180000" => kernel_with(format!("a[0] = 1{};", "+1".repeat(179_999))),
        "if_parens_50000" => Case {
            source: format!(
                "#if {}1{}\n#define V 1\n#else\n#define V 2\n#endif\n{}",
                "(".repeat(50_000),
                ")".repeat(50_000),
                kernel_with("a[0] = V;".to_string()).source
            ),
            ..kernel_with(String::new())
        },
        "ternary_100000" => kernel_with(format!(
            "a[0] = {}1{};",
            "threadIdx.x ? ".repeat(100_000),
            " : 0".repeat(100_000)
        )),
        _ => return None,
    })
}

/// Runs the case named `name` (`file:PATH` or `generated:NAME`) in a child process of this test
/// binary; a crash of the child is a finding like any other.
fn replay_in_child(name: &str) -> Result<(), Finding> {
    let exe = env::current_exe().map_err(|e| format!("cannot find the test binary: {e}"))?;
    let output = Command::new(exe)
        .args([CHILD_TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, name)
        .env_remove("MEMPLAY_FUZZ_SAVE")
        .output()
        .map_err(|e| format!("cannot start the child process: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The harness writes "test NAME ... " before the test's own output, on the same line.
    let marker = "memplay-fuzz-finding: ";
    if let Some(at) = stdout.find(marker) {
        let rest = &stdout[at + marker.len()..];
        return Err(rest.lines().next().unwrap_or("").to_string());
    }
    let tail: String = stderr
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(200)
        .collect();
    Err(format!("the process died ({}): {tail}", output.status))
}

#[test]
fn a_case_named_by_memplay_fuzz_child_runs_in_this_process() {
    let Ok(name) = env::var(CHILD_ENV) else {
        return;
    };
    let case = if let Some(path) = name.strip_prefix("file:") {
        read_case(Path::new(path))
    } else if let Some(generated) = name.strip_prefix("generated:") {
        generated_regression(generated).unwrap_or_else(|| panic!("no regression '{generated}'"))
    } else {
        panic!("{CHILD_ENV}={name} names no case")
    };
    if let Err(finding) = case::check(&case) {
        println!("memplay-fuzz-finding: {finding}");
        panic!("{finding}");
    }
}

#[test]
fn every_saved_regression_is_an_answer_in_time() {
    let files = regression_files();
    assert!(
        !files.is_empty(),
        "no regressions in {}",
        regressions_dir().display()
    );
    let failures: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            replay_in_child(&format!("file:{}", path.display()))
                .err()
                .map(|finding| format!("  {name}: {finding}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} saved regressions fail:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

fn replay_generated(name: &str) {
    assert!(generated_regression(name).is_some());
    if let Err(finding) = replay_in_child(&format!("generated:{name}")) {
        panic!("{name}: {finding}");
    }
}

#[test]
fn a_flat_chain_of_180000_additions_is_an_answer_in_time() {
    replay_generated("flat_chain_180000");
}

#[test]
fn an_if_with_50000_nested_parentheses_is_an_answer_in_time() {
    replay_generated("if_parens_50000");
}

#[test]
fn a_100000_deep_conditional_expression_is_an_answer_in_time() {
    replay_generated("ternary_100000");
}

#[test]
fn a_case_file_reads_back_as_the_case_it_was_written_from() {
    let case = Case {
        defines: vec![
            ("1X".to_string(), "a b".to_string()),
            ("".to_string(), "%,=".to_string()),
        ],
        args: vec![
            ("n".to_string(), Value::Int(i64::MIN)),
            ("x".to_string(), Value::Float(4.0)),
            ("y".to_string(), Value::Float(1e20)),
            ("b".to_string(), Value::Bool(true)),
        ],
        buffers: vec![("a".to_string(), u64::MAX)],
        grid: [0, u32::MAX, 1],
        step_budget: 200_000,
        all_blocks: true,
        ..Case::new("\u{feff}__global__ void k() {}\n// end\u{0}", "k")
    };
    assert_eq!(Case::from_file(&case.to_file()), Ok(case));
}

#[test]
fn a_header_written_by_hand_may_leave_fields_out() {
    let text =
        "// memplay-fuzz: kernel=k grid=1,1,1 block=32,1,1 args=n=4 buffers=a=1024 defines=\n\
                __global__ void k(int* a, int n) {}\n";
    let case = Case::from_file(text).unwrap();
    assert_eq!(case.args, vec![("n".to_string(), Value::Int(4))]);
    assert_eq!(case.buffers, vec![("a".to_string(), 1024)]);
    assert_eq!(case.source, "__global__ void k(int* a, int n) {}\n");
}

#[test]
fn every_lecture_kernel_unmutated_passes_the_check() {
    for lecture in mutate::lectures() {
        for kernel in &lecture.kernels {
            let case = Case {
                args: kernel
                    .scalars
                    .iter()
                    .map(|(name, _)| (name.clone(), Value::Int(64)))
                    .collect(),
                buffers: kernel
                    .pointers
                    .iter()
                    .map(|name| (name.clone(), 1 << 20))
                    .collect(),
                block: [16, 16, 1],
                step_budget: grammar::FUZZ_STEP_BUDGET,
                ..Case::new(lecture.source.clone(), &kernel.name)
            };
            if let Err(finding) = case::check(&case) {
                panic!("{} {}: {finding}", lecture.file, kernel.name);
            }
        }
    }
}

#[test]
fn generated_warp_programs_give_every_lane_what_a_lane_by_lane_reference_gives() {
    let config = Config {
        cases: 1000,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[37; 32]));
    let strategy = (warp::program(), 1u32..3, 1u32..4);
    let result = runner.run(&strategy, |(program, blocks, warps)| {
        let source = program.source();
        let threads = 32 * warps;
        let bytes = u64::from(blocks * threads) * 4;
        let compiled = compile(&source, &[]).map_err(|d| TestCaseError::fail(format!("{d}\n{source}")))?;
        let launch = Launch {
            grid: Dim3::new(blocks, 1, 1),
            block: Dim3::new(threads, 1, 1),
            dyn_smem: 0,
            args: Vec::new(),
            buffers: vec![("in".to_string(), bytes), ("out".to_string(), 4 * bytes)],
            fills: vec![("in".to_string(), Fill::Random)],
            pointers: Vec::new(),
        };
        let mut sim = Simulation::new(&compiled, "k", &launch, 11)
            .map_err(|d| TestCaseError::fail(format!("{d}\n{source}")))?;
        for block in 0..blocks {
            sim.run_block([block, 0, 0], 1_000_000)
                .map_err(|d| TestCaseError::fail(format!("{d}\n{source}")))?;
        }
        let words = |name: &str, sim: &mut Simulation| -> Vec<u32> {
            sim.read_buffer(name)
                .unwrap_or_default()
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        };
        let input = words("in", &mut sim);
        let simulated = words("out", &mut sim);
        let expected = program.expected(blocks, threads, &input);
        if let Some(at) = (0..expected.len()).find(|&k| simulated.get(k) != Some(&expected[k])) {
            return Err(TestCaseError::fail(format!(
                "thread {} register r{}: simulated {:?}, the reference {:#x} ({blocks} blocks of {threads})\n{source}",
                at / 4,
                at % 4,
                simulated.get(at),
                expected[at]
            )));
        }
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
}

/// Writes a line to the process's stderr directly, past the test harness's capture, so that it
/// is seen even when a case aborts the process.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[test]
fn generated_and_mutated_kernels_never_crash_hang_or_print_a_bad_error() {
    let seconds: f64 = env::var("MEMPLAY_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20.0);
    let seed: u64 = env::var("MEMPLAY_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    let save_dir = env::var_os("MEMPLAY_FUZZ_SAVE").map(PathBuf::from);
    if let Some(dir) = &save_dir {
        std::fs::create_dir_all(dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    }
    say(&format!(
        "memplay-fuzz: seed {seed} for {seconds} s (MEMPLAY_FUZZ_SEED={seed} repeats this run)"
    ));

    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds.max(0.0));
    let strategy = grammar::any_case();
    let mut master = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &case::seed_bytes(seed)),
    );
    let cases = Cell::new(0u64);
    let repeats = Cell::new(0u64);
    let slowest = Cell::new(Duration::ZERO);
    // Cases that simulated, that compiled and failed to simulate, that did not compile.
    let outcomes = Cell::new([0u64; 3]);
    let mut shrinking_time = Duration::ZERO;
    let mut next_progress = start + Duration::from_secs(30);
    let mut findings: Vec<String> = Vec::new();
    // The kinds of fault already reported: a case that fails the same way again is counted as a
    // repeat and not shrunk, so the run goes on looking for other faults.
    let known = RefCell::new(HashSet::<String>::new());

    while Instant::now() < deadline && findings.len() < MAX_FINDINGS && !case::hung() {
        let config = Config {
            cases: BATCH,
            failure_persistence: None,
            max_shrink_time: SHRINK_MILLIS,
            max_shrink_iters: 2_000,
            max_local_rejects: 1_000,
            max_global_rejects: 1_000,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(config, master.new_rng());
        // Set when a case fails: the shrinking that follows runs past the deadline.
        let failing_since = Cell::new(None::<Instant>);
        let result = runner.run(&strategy, |case: Case| {
            let Some(since) = failing_since.get() else {
                if Instant::now() >= deadline {
                    return Ok(());
                }
                cases.set(cases.get() + 1);
                if let Some(dir) = &save_dir {
                    let _ = std::fs::write(dir.join("current.cu"), case.to_file());
                }
                return match case::check(&case) {
                    Ok(passed) => {
                        slowest.set(slowest.get().max(passed.elapsed));
                        let mut counts = outcomes.get();
                        match passed.outcome {
                            case::Outcome::Simulated => counts[0] += 1,
                            case::Outcome::SimulateError => counts[1] += 1,
                            case::Outcome::CompileError => counts[2] += 1,
                            case::Outcome::NotRun => {}
                        }
                        outcomes.set(counts);
                        Ok(())
                    }
                    Err(finding) if known.borrow().contains(&case::finding_kind(&finding)) => {
                        repeats.set(repeats.get() + 1);
                        Ok(())
                    }
                    Err(finding) => {
                        failing_since.set(Some(Instant::now()));
                        Err(TestCaseError::fail(finding))
                    }
                };
            };
            // Shrinking: one slow run is enough, and past the time allowed every candidate
            // passes, which ends it (proptest checks its own limit only between steps).
            if since.elapsed() > Duration::from_millis(SHRINK_MILLIS.into()) {
                return Ok(());
            }
            case::check_slow(&case, false)
                .map(|_| ())
                .map_err(TestCaseError::fail)
        });
        if let Some(since) = failing_since.get() {
            shrinking_time += since.elapsed();
        }
        if let Err(error) = result {
            let (reason, case) = match error {
                TestError::Fail(reason, case) => (reason.to_string(), Some(case)),
                TestError::Abort(reason) => (reason.to_string(), None),
            };
            known.borrow_mut().insert(case::finding_kind(&reason));
            let mut report = format!("finding {}: {reason}", findings.len() + 1);
            if let Some(case) = case {
                let file = case.to_file();
                match &save_dir {
                    Some(dir) => {
                        let path = dir.join(format!("{}.cu", case.content_hash()));
                        match std::fs::write(&path, &file) {
                            Ok(()) => println!("memplay-fuzz: finding saved {}", path.display()),
                            Err(e) => println!("memplay-fuzz: cannot save {}: {e}", path.display()),
                        }
                        report.push_str(&format!("\n  saved as {}", path.display()));
                    }
                    None => {
                        let shown: String = file.chars().take(3_000).collect();
                        report.push_str(&format!(
                            "\n  the shrunk case ({} bytes):\n{shown}",
                            file.len()
                        ));
                    }
                }
            }
            println!("memplay-fuzz: {report}");
            findings.push(report);
        }
        if Instant::now() >= next_progress {
            println!(
                "memplay-fuzz: progress cases={} findings={} seconds={:.0}",
                cases.get(),
                findings.len(),
                start.elapsed().as_secs_f64()
            );
            next_progress += Duration::from_secs(30);
        }
    }
    if let Some(dir) = &save_dir {
        let _ = std::fs::remove_file(dir.join("current.cu"));
    }
    let elapsed = start.elapsed().as_secs_f64();
    let fuzzing = (elapsed - shrinking_time.as_secs_f64()).max(1e-9);
    println!(
        "memplay-fuzz: summary cases={} findings={} repeats={} seconds={elapsed:.1} \
         shrinking_seconds={:.1} cases_per_second={:.1} slowest_case_ms={} seed={seed} \
         simulated={} simulate_errors={} compile_errors={}",
        cases.get(),
        findings.len(),
        repeats.get(),
        shrinking_time.as_secs_f64(),
        cases.get() as f64 / fuzzing,
        slowest.get().as_millis(),
        outcomes.get()[0],
        outcomes.get()[1],
        outcomes.get()[2],
    );
    assert!(
        findings.is_empty(),
        "{} finding(s) in {} cases (seed {seed}):\n{}",
        findings.len(),
        cases.get(),
        findings.join("\n")
    );
}
