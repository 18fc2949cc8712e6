//! The simulator's answers kept as a snapshot, so that work on how it computes them (making it
//! faster, or simpler to read) is shown to leave every one as it is, to the last digit; work that
//! changes the model on purpose rewrites the snapshot and shows the change in its diff.
//!
//! An answer is what the page and the timing model read of a launch: its counters, occupancy,
//! shared bytes per block, fused loads, memory profile, per-line counters, the trace of one warp
//! (`TRACED_WARP`, asked for by every launch) and the prediction; or the error's text. Left out
//! is what may change with such work: which blocks were run and how many steps it took. A check
//! also runs every launch without the trace, whose answer must be the same but for the trace
//! (`changed_by_the_trace`). Two files keep the answers, one a line, compared as text:
//!
//! - `snapshots/launches.jsonl`, every reference launch: the lecture launches that Nsight
//!   Compute counted (`h100.json`) and that were timed (`h100-timing.json`), the probes, the
//!   students' kernels and the DRAM mix. Each is kept in full but for its trace's records, which
//!   would make the file some 26 MB: the trace keeps its counts, buffers and problem, and the
//!   FNV-1a hash of its JSON (`kept_form`).
//! - `snapshots/generated.jsonl`, `GENERATED_CASES` cases that the fuzz target's grammar
//!   (`fuzz/grammar.rs` `c_subset_case`: generated kernels, mutated lecture kernels and hostile
//!   shapes, each with its launch) draws from proptest's ChaCha generator seeded with
//!   `GENERATED_SEED`, as the fuzz target's own cases: the same step budgets, the same sizes. Each
//!   is kept in full, trace included (some 1.5 MB in all), with `case`, the FNV-1a hash of the
//!   case's file (`fuzz/case.rs` `Case::content_hash`), which changes when the grammar or the
//!   lecture kernels it mutates do. The cases are drawn again at each run, from the seed.
//!
//! Rewriting both after a change of the model on purpose:
//!
//! ```sh
//! MEMPLAY_UPDATE_SNAPSHOT=1 cargo test -p memplay-sim --release --test snapshot
//! ```
//!
//! Seeing launches in full, by a part of their id: a reference launch with its trace's records,
//! a generated case with its source and launch as a fuzz case file (`fuzz/case.rs`). A run with
//! this set prints and checks nothing:
//!
//! ```sh
//! MEMPLAY_SNAPSHOT_SHOW='generated 0042' cargo test -p memplay-sim --release --test snapshot
//! MEMPLAY_SNAPSHOT_SHOW='mm_tiled n=1024' cargo test -p memplay-sim --release --test snapshot
//! ```
//!
//! Comparing with another commit's build on cases the snapshot does not hold: with
//! `MEMPLAY_SNAPSHOT_SEED=N MEMPLAY_SNAPSHOT_WRITE=PATH`, the generated cases' test writes the
//! answers of `GENERATED_CASES` cases of seed N to PATH, as `generated.jsonl` holds those of
//! `GENERATED_SEED`, instead of checking them. Written by both builds, the two files must be the
//! same; `MEMPLAY_SNAPSHOT_SEED=N` with `MEMPLAY_SNAPSHOT_SHOW` shows a case of seed N in full.
//! For a commit older than this test, copy `tests/snapshot.rs` and `tests/fuzz/` over its own
//! first.
//!
//! ```sh
//! git worktree add /tmp/base BASE_COMMIT
//! (cd /tmp/base && MEMPLAY_SNAPSHOT_SEED=2 MEMPLAY_SNAPSHOT_WRITE=/tmp/base.jsonl \
//!     cargo test -p memplay-sim --release --test snapshot -- generated)
//! MEMPLAY_SNAPSHOT_SEED=2 MEMPLAY_SNAPSHOT_WRITE=/tmp/head.jsonl \
//!     cargo test -p memplay-sim --release --test snapshot -- generated
//! diff /tmp/base.jsonl /tmp/head.jsonl && echo same
//! ```

#[allow(dead_code)]
#[path = "fuzz/case.rs"]
mod case;
mod common;
#[allow(dead_code)]
#[path = "fuzz/cpp.rs"]
mod cpp;
#[allow(dead_code)]
#[path = "fuzz/grammar.rs"]
mod grammar;
#[allow(dead_code)]
#[path = "fuzz/mutate.rs"]
mod mutate;
#[allow(dead_code)]
#[path = "fuzz/warp.rs"]
mod warp;

use case::Case;
use common::{input_from_spec, input_from_spec_in, read_json, read_lines};
use memplay_sim::simulate::{simulate, SimulationInput};
use memplay_sim::timing::predict;
use memplay_sim::trace::TraceRequest;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{json, Value as Json};
use std::io::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// The warp every launch traces: the first warp of the first block, which every launch that
/// runs has, so that the snapshot holds a trace for each of them.
const TRACED_WARP: TraceRequest = TraceRequest {
    block: [0, 0, 0],
    warp: 0,
};

/// The seed of the generated cases the snapshot keeps.
const GENERATED_SEED: u64 = 1;

/// How many generated cases the snapshot keeps, and a comparison writes.
const GENERATED_CASES: usize = 1_500;

/// The stack each launch runs on. The fuzz target shows every case an answer on the 1 MB a
/// browser gives WebAssembly in a release build; this leaves room for a debug build.
const LAUNCH_STACK_BYTES: usize = 64 << 20;

const UPDATE_ENV: &str = "MEMPLAY_UPDATE_SNAPSHOT";
const SEED_ENV: &str = "MEMPLAY_SNAPSHOT_SEED";
const WRITE_ENV: &str = "MEMPLAY_SNAPSHOT_WRITE";
const SHOW_ENV: &str = "MEMPLAY_SNAPSHOT_SHOW";

fn snapshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

fn launches_path() -> PathBuf {
    snapshot_dir().join("launches.jsonl")
}

fn generated_path() -> PathBuf {
    snapshot_dir().join("generated.jsonl")
}

/// Every reference launch by its id, in a fixed order, each tracing `TRACED_WARP`.
fn reference_launches() -> Vec<(String, SimulationInput)> {
    let mut launches = Vec::new();
    let mut add = |prefix: &str, id: &str, input: Result<SimulationInput, String>| {
        let mut input = input.unwrap_or_else(|e| panic!("{prefix} {id}: bad spec: {e}"));
        input.trace = Some(TRACED_WARP);
        launches.push((format!("{prefix} {id}"), input));
    };
    let lecture = read_json("h100.json");
    for record in lecture["ncu"]
        .as_array()
        .expect("h100.json has an 'ncu' list")
    {
        let id = record["launch"].as_str().unwrap_or("?");
        add("counted", id, input_from_spec(&record["launch_spec"]));
    }
    let timed = read_json("h100-timing.json");
    for record in timed.as_array().expect("h100-timing.json is a list") {
        let id = record["id"].as_str().unwrap_or("?");
        add("timed", id, input_from_spec(&record["spec"]));
    }
    for folder in ["probes", "students", "dram_mix"] {
        for row in read_lines(&format!("{folder}/time.jsonl")) {
            if row.get("spec").is_some() {
                let id = row["id"].as_str().unwrap_or("?");
                add(folder, id, input_from_spec_in(&row["spec"], folder));
            }
        }
    }
    launches
}

/// The first `count` cases the fuzz grammar draws from `seed`, in order. A case depends only on
/// the seed, the grammar and the lecture kernels it mutates.
fn generated_cases(seed: u64, count: usize) -> Vec<Case> {
    let strategy = grammar::c_subset_case();
    // proptest's defaults, written out so that no PROPTEST_* variable changes what is drawn.
    let config = Config {
        max_local_rejects: 65_536,
        max_global_rejects: 1_024,
        max_flat_map_regens: 1_000_000,
        max_default_size_range: 100,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &case::seed_bytes(seed)),
    );
    (0..count)
        .map(|number| {
            strategy
                .new_tree(&mut runner)
                .unwrap_or_else(|reason| panic!("{}: not drawn: {reason}", case_id(number)))
                .current()
        })
        .collect()
}

fn case_id(number: usize) -> String {
    format!("generated {number:04}")
}

/// A generated case as it is launched: `TRACED_WARP` traced.
fn case_input(case: &Case) -> SimulationInput {
    let mut input = case.input();
    input.trace = Some(TRACED_WARP);
    input
}

/// What the snapshot keeps of one launch.
fn answer(id: &str, input: &SimulationInput) -> Json {
    match simulate(input) {
        Ok(report) => {
            let prediction = predict(&report);
            json!({
                "id": id,
                "counters": report.counters,
                "occupancy": report.occupancy,
                "shared_bytes_per_block": report.shared_bytes_per_block,
                "fused_loads": report.fused_loads,
                "memory": report.memory,
                "lines": report.lines,
                "trace": report.trace,
                "prediction": prediction,
            })
        }
        Err(error) => json!({ "id": id, "error": error.to_string() }),
    }
}

/// An answer and how long its launch took.
struct Timed {
    answer: Json,
    took: Duration,
}

/// The answers of `launches`, in their order, computed on as many threads as the machine has
/// cores, each on a stack of `LAUNCH_STACK_BYTES`. A panic names the launch that made it.
fn answers(launches: &[(String, SimulationInput)]) -> Vec<Timed> {
    let threads = thread::available_parallelism().map_or(1, |n| n.get());
    let next = AtomicUsize::new(0);
    let mut answered: Vec<(usize, Timed)> = thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                thread::Builder::new()
                    .stack_size(LAUNCH_STACK_BYTES)
                    .spawn_scoped(scope, || {
                        let mut mine = Vec::new();
                        loop {
                            let index = next.fetch_add(1, Ordering::Relaxed);
                            let Some((id, input)) = launches.get(index) else {
                                return mine;
                            };
                            let start = Instant::now();
                            let answer =
                                panic::catch_unwind(AssertUnwindSafe(|| answer(id, input)))
                                    .unwrap_or_else(|_| panic!("{id}: the simulator panicked"));
                            let took = start.elapsed();
                            mine.push((index, Timed { answer, took }));
                        }
                    })
                    .expect("a thread for the launches can be started")
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().expect("a launch's thread ends"))
            .collect()
    });
    answered.sort_by_key(|(index, _)| *index);
    answered.into_iter().map(|(_, timed)| timed).collect()
}

/// Writes a line past the test harness's capture, so that a run prints it without `--nocapture`.
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// The slowest launches, for the message that says how long a run took.
fn slowest(ids: &[String], timed: &[Timed], count: usize) -> String {
    let mut order: Vec<usize> = (0..timed.len()).collect();
    order.sort_by_key(|&index| std::cmp::Reverse(timed[index].took));
    order
        .iter()
        .take(count)
        .map(|&index| format!("{} {:.2} s", ids[index], timed[index].took.as_secs_f64()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How `launches.jsonl` keeps an answer: in full, but for its trace, whose records would make
/// the file some 26 MB (a matmul's warp makes 4,096 accesses); the trace is kept as its counts,
/// buffers and problem, with the FNV-1a hash of its JSON for its records.
fn kept_form(answer: &Json) -> Json {
    let mut kept = answer.clone();
    if let Some(trace) = kept.get_mut("trace").filter(|trace| !trace.is_null()) {
        let records = trace["records"].as_array().map_or(0, Vec::len);
        *trace = json!({
            "accesses": trace["accesses"],
            "buffers": trace["buffers"],
            "problem": trace["problem"],
            "records": records,
            "fnv1a": case::content_hash(trace.to_string().as_bytes()),
        });
    }
    kept
}

/// The top-level keys whose values differ between two lines of the snapshot. Both lines are
/// parsed by the same parser (which may round a float's last bit), so that a key is named only
/// where the values differ.
fn differing_keys(kept: &str, now: &str) -> Vec<String> {
    let parse = |line: &str| serde_json::from_str::<Json>(line).unwrap_or(Json::Null);
    let (kept, now) = (parse(kept), parse(now));
    let keys = |value: &Json| -> Vec<String> {
        value
            .as_object()
            .map(|object| object.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut all = keys(&kept);
    all.extend(keys(&now));
    all.sort();
    all.dedup();
    all.into_iter()
        .filter(|key| kept.get(key) != now.get(key))
        .collect()
}

/// What a run of the snapshot's tests does with the answers.
#[derive(Clone, Debug, PartialEq)]
enum Action {
    /// Compare them with the snapshot.
    Check,
    /// Rewrite the snapshot with them.
    Update,
    /// Write the generated cases' answers to a file, checking nothing.
    Write(PathBuf),
    /// Print in full the launches whose id holds the text, checking nothing.
    Show(String),
}

/// What the environment asks of a run: the seed of the generated cases, and the action.
#[derive(Clone, Debug, PartialEq)]
struct Run {
    seed: u64,
    action: Action,
}

/// Why the environment names no run.
#[derive(Clone, Debug, PartialEq)]
enum RunError {
    /// `MEMPLAY_SNAPSHOT_SEED` is not a number.
    BadSeed(String),
    /// Another seed's cases are not in the snapshot: they can be written or shown, not checked
    /// or kept.
    SeedNotKept(u64),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::BadSeed(text) => write!(f, "{SEED_ENV}={text:?} is not a number"),
            RunError::SeedNotKept(seed) => write!(
                f,
                "the snapshot keeps the cases of seed {GENERATED_SEED}, not {seed}: set \
                 {WRITE_ENV}=PATH to write their answers, or {SHOW_ENV}=TEXT to show some"
            ),
        }
    }
}

/// The run that the values of `MEMPLAY_SNAPSHOT_SEED`, `MEMPLAY_SNAPSHOT_WRITE` and
/// `MEMPLAY_SNAPSHOT_SHOW`, and whether `MEMPLAY_UPDATE_SNAPSHOT` is set, ask for. Showing
/// comes before writing, writing before updating.
fn run_from(
    seed: Option<&str>,
    write: Option<&str>,
    show: Option<&str>,
    update: bool,
) -> Result<Run, RunError> {
    let seed = match seed {
        Some(text) => text
            .trim()
            .parse::<u64>()
            .map_err(|_| RunError::BadSeed(text.to_string()))?,
        None => GENERATED_SEED,
    };
    let action = match (show, write) {
        (Some(text), _) => Action::Show(text.to_string()),
        (None, Some(path)) => Action::Write(PathBuf::from(path)),
        (None, None) if update => Action::Update,
        (None, None) => Action::Check,
    };
    if seed != GENERATED_SEED && matches!(action, Action::Check | Action::Update) {
        return Err(RunError::SeedNotKept(seed));
    }
    Ok(Run { seed, action })
}

/// The run the environment asks for; `seeded` is false for the reference launches, which no
/// seed changes.
fn run_from_environment(seeded: bool) -> Run {
    let var = |name: &str| std::env::var(name).ok();
    let seed = if seeded { var(SEED_ENV) } else { None };
    run_from(
        seed.as_deref(),
        var(WRITE_ENV).as_deref(),
        var(SHOW_ENV).as_deref(),
        std::env::var_os(UPDATE_ENV).is_some(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Where the answers of the snapshot's lines `now` differ from the lines `kept`, by id: the keys
/// whose values differ, or that the generated case itself differs.
fn differences(kept: &str, now: &[String], ids: &[String]) -> Vec<String> {
    let kept: Vec<&str> = kept.lines().collect();
    let mut differ = Vec::new();
    if kept.len() != now.len() {
        differ.push(format!(
            "the snapshot has {} launches, the test {}",
            kept.len(),
            now.len()
        ));
    }
    for ((kept, now), id) in kept.iter().zip(now).zip(ids) {
        if *kept == now.as_str() {
            continue;
        }
        let keys = differing_keys(kept, now);
        let why = if keys.iter().any(|key| key == "case") {
            "the case itself differs (the fuzz grammar or the lecture kernels changed)".to_string()
        } else if keys.is_empty() {
            "the last digit of a number".to_string()
        } else {
            keys.join(", ")
        };
        differ.push(format!("{id}: {why}"));
    }
    differ
}

/// The launches whose answers without a trace differ from `traced`, their answers with one, in
/// more than the trace. A trace only reads what is counted (`memplay_sim::trace`), but the traced
/// warp is never one whose work is reused from another warp's, so the snapshot's answers, all
/// traced, take a path of their own through the reuse machinery; this holds the other path, the
/// one the command line and the benchmarks take, to the same answers.
fn changed_by_the_trace(launches: &[(String, SimulationInput)], traced: &[Timed]) -> Vec<String> {
    let untraced: Vec<(String, SimulationInput)> = launches
        .iter()
        .map(|(id, input)| {
            let mut input = input.clone();
            input.trace = None;
            (id.clone(), input)
        })
        .collect();
    let without_trace = |answer: &Json| {
        let mut answer = answer.clone();
        if let Some(object) = answer.as_object_mut() {
            object.remove("trace");
            object.remove("case");
        }
        answer.to_string()
    };
    answers(&untraced)
        .iter()
        .zip(traced)
        .zip(&untraced)
        .filter(|((plain, traced), _)| {
            without_trace(&plain.answer) != without_trace(&traced.answer)
        })
        .map(|(_, (id, _))| id.clone())
        .collect()
}

/// Fails naming the launches whose answers the trace changed.
fn assert_unchanged_by_the_trace(launches: &[(String, SimulationInput)], traced: &[Timed]) {
    let changed = changed_by_the_trace(launches, traced);
    assert!(
        changed.is_empty(),
        "{} launches answer otherwise than with block 0 warp 0 traced, other than by the trace:\n{}",
        changed.len(),
        changed.join("\n")
    );
}

/// Compares the lines of a run with the snapshot file `path`, or rewrites it.
fn check_or_update(path: &Path, lines: &[String], ids: &[String], action: &Action) {
    if *action == Action::Update {
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        std::fs::write(path, text)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let kept = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e} (write it with {UPDATE_ENV}=1)", path.display()));
    let differ = differences(&kept, lines, ids);
    assert!(
        differ.is_empty(),
        "{} launches differ from {} ({UPDATE_ENV}=1 rewrites it if the model changed on \
         purpose):\n{}\nTo see one in full: {SHOW_ENV}='ITS ID' cargo test -p memplay-sim \
         --release --test snapshot (and the same in the base commit's tree, to compare)",
        differ.len(),
        path.display(),
        differ.join("\n")
    );
}

/// Prints `answers` in full, each after its id.
fn show(ids: &[String], answers: &[Timed], files: &[Option<String>]) {
    for ((id, timed), file) in ids.iter().zip(answers).zip(files) {
        let answer = serde_json::to_string_pretty(&timed.answer).expect("an answer is written");
        let mut out = std::io::stdout().lock();
        if let Some(file) = file {
            let _ = writeln!(
                out,
                "== {id}, as a fuzz case file (block 0 warp 0 traced):\n{file}"
            );
        }
        let _ = writeln!(out, "== {id}'s answer:\n{answer}");
    }
}

#[test]
fn every_reference_launch_simulates_exactly_as_the_snapshot_says() {
    let run = run_from_environment(false);
    let mut launches = reference_launches();
    if let Action::Show(text) = &run.action {
        launches.retain(|(id, _)| id.contains(text.as_str()));
    }
    let start = Instant::now();
    let timed = answers(&launches);
    let ids: Vec<String> = launches.iter().map(|(id, _)| id.clone()).collect();
    say(&format!(
        "snapshot: {} reference launches in {:.1} s (slowest: {})",
        launches.len(),
        start.elapsed().as_secs_f64(),
        slowest(&ids, &timed, 3)
    ));
    match &run.action {
        Action::Show(_) => show(&ids, &timed, &vec![None; ids.len()]),
        Action::Write(_) => {}
        Action::Check | Action::Update => {
            let lines: Vec<String> = timed
                .iter()
                .map(|timed| kept_form(&timed.answer).to_string())
                .collect();
            check_or_update(&launches_path(), &lines, &ids, &run.action);
            assert_unchanged_by_the_trace(&launches, &timed);
        }
    }
}

#[test]
fn every_generated_case_of_the_fixed_seed_simulates_exactly_as_the_snapshot_says() {
    let run = run_from_environment(true);
    let mut cases: Vec<(String, Case)> = generated_cases(run.seed, GENERATED_CASES)
        .into_iter()
        .enumerate()
        .map(|(number, case)| (case_id(number), case))
        .collect();
    if let Action::Show(text) = &run.action {
        cases.retain(|(id, _)| id.contains(text.as_str()));
    }
    let launches: Vec<(String, SimulationInput)> = cases
        .iter()
        .map(|(id, case)| (id.clone(), case_input(case)))
        .collect();
    let start = Instant::now();
    let mut timed = answers(&launches);
    let ids: Vec<String> = launches.iter().map(|(id, _)| id.clone()).collect();
    let full_bytes: usize = timed
        .iter()
        .map(|timed| timed.answer.to_string().len())
        .sum();
    say(&format!(
        "snapshot: {} generated cases of seed {} in {:.1} s, {:.1} MB of answers (slowest: {})",
        launches.len(),
        run.seed,
        start.elapsed().as_secs_f64(),
        full_bytes as f64 / 1e6,
        slowest(&ids, &timed, 3)
    ));
    for (timed, (_, case)) in timed.iter_mut().zip(&cases) {
        timed.answer["case"] = json!(case.content_hash());
    }
    let lines: Vec<String> = timed.iter().map(|timed| timed.answer.to_string()).collect();
    match &run.action {
        Action::Show(_) => {
            let files: Vec<Option<String>> =
                cases.iter().map(|(_, case)| Some(case.to_file())).collect();
            show(&ids, &timed, &files);
        }
        Action::Write(path) => {
            let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
            std::fs::write(path, text)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        }
        Action::Check | Action::Update => {
            check_or_update(&generated_path(), &lines, &ids, &run.action);
            assert_unchanged_by_the_trace(&launches, &timed);
        }
    }
}

#[test]
fn the_environment_names_the_run_of_the_snapshot() {
    let run = |seed: u64, action: Action| Ok(Run { seed, action });
    assert_eq!(
        run_from(None, None, None, false),
        run(GENERATED_SEED, Action::Check)
    );
    assert_eq!(
        run_from(None, None, None, true),
        run(GENERATED_SEED, Action::Update)
    );
    assert_eq!(
        run_from(Some("7"), Some("/tmp/head.jsonl"), None, false),
        run(7, Action::Write(PathBuf::from("/tmp/head.jsonl")))
    );
    assert_eq!(
        run_from(
            Some("7"),
            Some("/tmp/head.jsonl"),
            Some("generated 0042"),
            true
        ),
        run(7, Action::Show("generated 0042".to_string()))
    );
    assert_eq!(
        run_from(Some("7"), None, None, true),
        Err(RunError::SeedNotKept(7))
    );
    assert_eq!(
        run_from(Some("x"), None, None, false),
        Err(RunError::BadSeed("x".to_string()))
    );
}

#[test]
fn a_difference_names_the_launch_and_the_keys_or_the_case_that_changed() {
    let kept = "{\"case\":\"aa\",\"id\":\"generated 0000\",\"lines\":[1]}\n\
                {\"case\":\"bb\",\"id\":\"generated 0001\",\"lines\":[2],\"trace\":null}\n\
                {\"case\":\"cc\",\"id\":\"generated 0002\",\"lines\":[3]}\n\
                {\"id\":\"generated 0003\",\"x\":0.1}\n";
    let now = [
        r#"{"case":"aa","id":"generated 0000","lines":[1]}"#,
        r#"{"case":"bb","id":"generated 0001","lines":[5],"trace":{}}"#,
        r#"{"case":"dd","id":"generated 0002","lines":[4]}"#,
        r#"{"id":"generated 0003","x":0.10}"#,
    ]
    .map(String::from);
    let ids = ["0", "1", "2", "3"].map(|n| format!("generated 000{n}"));
    assert_eq!(
        differences(kept, &now, &ids),
        vec![
            "generated 0001: lines, trace",
            "generated 0002: the case itself differs (the fuzz grammar or the lecture kernels \
             changed)",
            "generated 0003: the last digit of a number",
        ]
    );
    assert_eq!(
        differences(kept, &now[..3], &ids),
        vec![
            "the snapshot has 4 launches, the test 3",
            "generated 0001: lines, trace",
            "generated 0002: the case itself differs (the fuzz grammar or the lecture kernels \
             changed)",
        ]
    );
}

#[test]
fn a_launch_whose_answer_the_trace_changed_is_named() {
    let source = "__global__ void k(float* a) { a[threadIdx.x * 2] = 1.0f; }";
    let mut input = SimulationInput::new(source, "k", memplay_sim::DeviceId::H100.device());
    input.block = memplay_sim::kernel::Dim3::new(64, 1, 1);
    input.buffers = vec![("a".to_string(), 1024)];
    input.trace = Some(TRACED_WARP);
    let launches = vec![("one".to_string(), input)];
    let mut traced = answers(&launches);
    assert!(traced[0].answer["trace"].is_object());
    assert!(changed_by_the_trace(&launches, &traced).is_empty());
    traced[0].answer["counters"]["warp_instructions"] = json!(-1.0);
    assert_eq!(changed_by_the_trace(&launches, &traced), vec!["one"]);
}

#[test]
fn a_kept_answer_holds_its_trace_as_counts_and_a_hash_of_its_records() {
    let answer = json!({
        "id": "one",
        "counters": { "warp_instructions": 4.0 },
        "trace": {
            "accesses": 2,
            "buffers": [{ "name": "a", "base": 256, "size": 1024 }],
            "problem": null,
            "records": [{ "occurrence": 0 }, { "occurrence": 1 }],
            "request": { "block": [0, 0, 0], "warp": 0 },
        },
    });
    let kept = kept_form(&answer);
    assert_eq!(kept["counters"], answer["counters"]);
    assert_eq!(kept["trace"]["records"], json!(2));
    assert_eq!(kept["trace"]["accesses"], json!(2));
    assert_eq!(kept["trace"]["buffers"], answer["trace"]["buffers"]);
    let mut moved = answer.clone();
    moved["trace"]["records"][1]["occurrence"] = json!(2);
    assert_ne!(
        kept_form(&moved)["trace"]["fnv1a"],
        kept["trace"]["fnv1a"],
        "a change of one record changes the hash"
    );
    let failed = json!({ "id": "two", "error": "1:1: no kernel" });
    assert_eq!(kept_form(&failed), failed);
}

#[test]
fn only_the_keys_whose_values_differ_are_named() {
    let kept = r#"{"counters":{"a":1.0},"id":"x","trace":{"records":2}}"#;
    let now = r#"{"counters":{"a":1.0},"id":"x","trace":{"records":3},"extra":1}"#;
    assert_eq!(differing_keys(kept, now), vec!["extra", "trace"]);
    assert!(differing_keys(kept, kept).is_empty());
}

#[test]
fn the_same_seed_draws_the_same_cases_and_another_seed_others() {
    // Compared by their files' hashes: a case with a NaN argument is not equal to itself.
    let hashes = |seed: u64| -> Vec<String> {
        generated_cases(seed, 20)
            .iter()
            .map(Case::content_hash)
            .collect()
    };
    let first = hashes(GENERATED_SEED);
    assert_eq!(hashes(GENERATED_SEED), first);
    assert_ne!(hashes(GENERATED_SEED + 1), first);
}
