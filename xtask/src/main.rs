//! Project automation in the xtask pattern (https://github.com/matklad/cargo-xtask).
//!
//! `cargo xtask serve` and `cargo xtask test` are the two commands a fresh machine needs. Both install
//! what is missing first, and only what is missing, so a warm machine skips straight to the work:
//! the wasm32 target (rustup), Trunk and wasm-bindgen-cli (`cargo install --locked`, wasm-bindgen-cli
//! pinned to the version in Cargo.lock), wasm-opt from the npm package binaryen at an exact version
//! (`npm install` into `target/tools/`, Node and npm from apt-get if they are missing), and for
//! tests Debian's chromium and chromium-driver (apt-get) and the npm package axe-core at an exact
//! version (into `target/tools/axe-core/`; the browser tests inject it into the page they check,
//! and it is never part of the built site). Nothing is downloaded from outside the package
//! registries: Trunk runs with `offline = true` and finds wasm-opt on the PATH that xtask gives it.
//!
//! `cargo xtask fuzz --minutes N [--seed S]` runs the simulator's fuzz target
//! (`crates/sim/tests/fuzz.rs`) for N minutes and saves what it finds into
//! `crates/sim/tests/fuzz/regressions/`, which every test run replays. The fuzz test runs in a child
//! process and writes each case to `current.cu` there before running it; when a case kills the
//! child (a stack overflow aborts, it does not unwind), that file is kept under a content-hash name
//! and fuzzing resumes for the time left. `cargo xtask test` gives the fuzz target 120 seconds.
//!
//! `cargo xtask wasm-timing` is a benchmark, not a test: it builds `tests/wasm-timing` for wasm32
//! with the page's Cargo profile, serves it with its worker page from a local port, and prints the
//! times that page's worker measured in headless Chromium (BENCHMARKS.md keeps the figures).

use std::env;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const TRUNK_VERSION: &str = "0.21.14";

/// The npm package binaryen at this exact version provides wasm-opt. Debian's binaryen (108) cannot
/// read the module (it rejects `table.fill`); Trunk.toml names the same version (`version_132`).
const BINARYEN_VERSION: &str = "132.0.0";

/// What `wasm-opt --version` prints for BINARYEN_VERSION.
const WASM_OPT_VERSION: &str = "wasm-opt version 132";

/// The npm package axe-core at this exact version checks the page's accessibility in the browser
/// tests (`MEMPLAY_AXE` names its `axe.min.js`). It is a test tool only: nothing of the site loads it.
const AXE_CORE_VERSION: &str = "4.14.1";

const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// The fuzz loop of `crates/sim/tests/fuzz.rs`, the one test there that runs for a set time.
const FUZZ_TEST: &str = "generated_and_mutated_kernels_never_crash_hang_or_print_a_bad_error";

/// The seconds `cargo xtask test` gives the fuzz loop.
const TEST_FUZZ_SECONDS: &str = "120";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("serve") => serve(),
        Some("test") => test(),
        Some("dist") => ensure_web_tools()
            .and_then(|()| build_dist())
            .and_then(|()| report_bundle_size().map(drop)),
        Some("service-worker") => write_service_worker(),
        Some("wasm-timing") => wasm_timing(),
        Some("fuzz") => match fuzz_options(&args[1..]) {
            Ok((minutes, seed)) => fuzz(minutes, seed),
            Err(message) => {
                eprintln!("xtask: {message}");
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("usage: cargo xtask <serve|test|dist|fuzz>");
            eprintln!("  serve  install what is missing, build, and serve the playground on http://127.0.0.1:8080");
            eprintln!("  test   install what is missing and run every test (unit, golden, fuzz for {TEST_FUZZ_SECONDS} s, wasm build, browser)");
            eprintln!("  dist   build the static site into dist/ and print its sizes");
            eprintln!("  service-worker");
            eprintln!(
                "         write sw.js into the site being built (Trunk's post-build hook runs it)"
            );
            eprintln!("  wasm-timing");
            eprintln!("         time the simulator in wasm (the page's build) in a worker of headless Chromium");
            eprintln!("  fuzz --minutes N [--seed S]");
            eprintln!("         fuzz the simulator for N minutes; findings are saved into");
            eprintln!("         crates/sim/tests/fuzz/regressions/ and make it exit non-zero");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

type Result<T = ()> = std::result::Result<T, String>;

fn project_root() -> PathBuf {
    // `cargo run` (the xtask alias) sets CARGO_MANIFEST_DIR for the binary it runs. Read it at run
    // time: a binary from a target directory shared by two checkouts may have been built by the
    // other one, and the path compiled into it would name that checkout.
    let manifest_dir = env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest_dir
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

fn serve() -> Result {
    ensure_web_tools()?;
    fetch()?;
    println!("xtask: serving the playground on http://127.0.0.1:8080 (Ctrl-C to stop)");
    run(Command::new(trunk()).args(["serve", "--release", "--open=false"]))
}

fn test() -> Result {
    ensure_web_tools()?;
    ensure_browser()?;
    let axe = ensure_axe()?;
    fetch()?;
    // Unit, property, golden and CLI tests of the native crates. The comparisons with the H100
    // (counters, occupancy, timing) then run again with --nocapture, so their tables are printed.
    // The fuzz loop is left out here and runs once below, for its full time.
    run(cargo().args([
        "test",
        "--workspace",
        "--exclude",
        "memplay-e2e",
        "--",
        "--skip",
        FUZZ_TEST,
    ]))?;
    run(cargo().args([
        "test",
        "-p",
        "memplay-sim",
        "--test",
        "reference",
        "--test",
        "occupancy_reference",
        "--test",
        "timing_reference",
        "--",
        "--nocapture",
    ]))?;
    // The fuzz target for two minutes; it prints its seed and how many cases it ran.
    run(cargo()
        .args([
            "test",
            "-p",
            "memplay-sim",
            "--test",
            "fuzz",
            "--",
            FUZZ_TEST,
            "--exact",
            "--nocapture",
        ])
        .env("MEMPLAY_FUZZ_SECONDS", TEST_FUZZ_SECONDS))?;
    // The one wasm build: the same release bundle that `serve` produces, checked by the browser tests.
    build_dist()?;
    check_bundle_size()?;
    run(cargo()
        .args(["test", "-p", "memplay-e2e", "--", "--test-threads=1"])
        .env("MEMPLAY_DIST", project_root().join("dist"))
        .env("MEMPLAY_AXE", axe))?;
    println!("xtask: all tests passed");
    Ok(())
}

/// `--minutes N` (required) and `--seed S` of `cargo xtask fuzz`.
fn fuzz_options(args: &[String]) -> Result<(f64, Option<u64>)> {
    let mut minutes = None;
    let mut seed = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let value = rest.next().ok_or_else(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--minutes" => {
                minutes = Some(
                    value
                        .parse::<f64>()
                        .ok()
                        .filter(|m| m.is_finite() && *m > 0.0)
                        .ok_or_else(|| format!("--minutes {value}: expected a positive number"))?,
                );
            }
            "--seed" => {
                seed = Some(
                    value
                        .parse::<u64>()
                        .map_err(|_| format!("--seed {value}: expected a whole number"))?,
                );
            }
            _ => {
                return Err(format!(
                    "unknown option {arg} (usage: cargo xtask fuzz --minutes N [--seed S])"
                ))
            }
        }
    }
    let minutes = minutes.ok_or("usage: cargo xtask fuzz --minutes N [--seed S]")?;
    Ok((minutes, seed))
}

/// Runs the fuzz loop for `minutes`, saving findings into the regressions folder; a child that
/// dies mid-case leaves its case in `current.cu`, which is kept and fuzzing goes on.
fn fuzz(minutes: f64, seed: Option<u64>) -> Result {
    let sim = project_root().join("crates/sim");
    let regressions = sim.join("tests/fuzz/regressions");
    let current = regressions.join("current.cu");
    let exe = build_fuzz_test()?;
    let end = Instant::now() + Duration::from_secs_f64(minutes * 60.0);
    let mut cases: u64 = 0;
    let mut findings: Vec<String> = Vec::new();
    let mut runs: u64 = 0;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left < Duration::from_secs(1) {
            break;
        }
        let _ = std::fs::remove_file(&current);
        let mut command = Command::new(&exe);
        command
            .args([FUZZ_TEST, "--exact", "--nocapture", "--test-threads=1"])
            .current_dir(&sim)
            .env("MEMPLAY_FUZZ_SECONDS", format!("{:.0}", left.as_secs_f64()))
            .env("MEMPLAY_FUZZ_SAVE", &regressions)
            .stdout(Stdio::piped());
        if let Some(seed) = seed {
            // A restart after a crash must not replay the same sequence into the same crash.
            command.env("MEMPLAY_FUZZ_SEED", seed.wrapping_add(runs).to_string());
        }
        runs += 1;
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        let mut summary = None;
        let mut progress = 0;
        if let Some(stdout) = child.stdout.take() {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                println!("{line}");
                // The harness may have written "test NAME ... " on the same line first.
                let after = |marker: &str| line.find(marker).map(|at| &line[at + marker.len()..]);
                if let Some(rest) = after("memplay-fuzz: summary ") {
                    summary = field(rest, "cases");
                } else if let Some(rest) = after("memplay-fuzz: progress ") {
                    progress = field(rest, "cases").unwrap_or(progress);
                } else if let Some(path) = after("memplay-fuzz: finding saved ") {
                    findings.push(path.to_string());
                }
            }
        }
        let status = child
            .wait()
            .map_err(|e| format!("cannot wait for {}: {e}", exe.display()))?;
        if let Some(n) = summary {
            cases += n;
            break;
        }
        cases += progress;
        if !current.exists() {
            return Err(format!(
                "the fuzz test ended ({status}) without a summary and without a case in progress"
            ));
        }
        let text = std::fs::read(&current)
            .map_err(|e| format!("cannot read {}: {e}", current.display()))?;
        let saved = regressions.join(format!("{}.cu", fnv1a_hex(&text)));
        std::fs::rename(&current, &saved).map_err(|e| {
            format!(
                "cannot move {} to {}: {e}",
                current.display(),
                saved.display()
            )
        })?;
        println!(
            "xtask: the fuzz test died ({status}) running a case; saved it as {}",
            saved.display()
        );
        findings.push(saved.display().to_string());
    }
    let _ = std::fs::remove_file(&current);
    println!(
        "xtask: fuzzed {cases} cases in {runs} run(s) over {minutes} minute(s); {} finding(s)",
        findings.len()
    );
    for finding in &findings {
        println!("xtask:   {finding}");
    }
    if findings.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} finding(s), saved in {}; `cargo test -p memplay-sim --test fuzz` replays them",
            findings.len(),
            regressions.display()
        ))
    }
}

/// The number after `name=` in a line of `name=value` fields.
fn field(line: &str, name: &str) -> Option<u64> {
    line.split_whitespace()
        .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
}

/// Builds the fuzz test (the test profile optimises memplay-sim) and returns its executable, so
/// that it runs as a direct child whose death by a signal is seen as such.
fn build_fuzz_test() -> Result<PathBuf> {
    let out = cargo()
        .args([
            "test",
            "-p",
            "memplay-sim",
            "--test",
            "fuzz",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("building the fuzz test failed with {}", out.status));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .filter(|l| {
            l.contains("\"reason\":\"compiler-artifact\"") && l.contains("\"name\":\"fuzz\"")
        })
        .find_map(|l| {
            let start = l.find("\"executable\":\"")? + "\"executable\":\"".len();
            let end = start + l[start..].find('"')?;
            Some(PathBuf::from(&l[start..end]))
        })
        .ok_or_else(|| "cargo did not name the fuzz test's executable".to_string())
}

/// FNV-1a (64 bits) in hex: the content-hash names the fuzz test gives its findings.
fn fnv1a_hex(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

fn build_dist() -> Result {
    fetch()?;
    run(Command::new(trunk()).args(["build", "--release"]))
}

/// The most the page's module may weigh (the wasm and JS files of dist/, gzipped at level 9):
/// `cargo xtask test` fails above it, so a change that grows the download is noticed when it is
/// made. The module weighs 679,440 bytes; this limit is that figure and about 2 KB of room.
/// Lower it as cuts land, to the new figure plus about 2 KB.
///
/// It stands above BUNDLE_CEILING_GZIP_BYTES: the front end of the C++ that students bring costs
/// some 115 KB of gzip (declarations, `switch`, casts and vector types 24 KB; structs and classes,
/// references, host code read past with its launches, and templates 57 KB; the sanitizer, the
/// warp primitives, cooperative groups, half precision and the intrinsics 25 KB; `printf`,
/// `assert`, the clock, the integer intrinsics, the 16-bit atomics, the run-time and coalesced
/// groups and the special function unit 22 KB; the toolkit headers (`cuComplex.h`,
/// `curand_kernel.h`, `helper_math.h`), the rest of the math library and its casting and rounded
/// intrinsics, range-based `for`, `static_assert`, barriers that vote, overloading and the
/// parameters passed as structs 26 KB; BENCHMARKS.md, "Bundle size"), of which the cuts so far,
/// the lessons fetched at run time the largest, have won back 25 KB.
const BUNDLE_LIMIT_GZIP_BYTES: u64 = 681_500;

/// The ceiling the page was given (5 % under the 566,067 bytes it weighed when the ceiling was
/// set). `cargo xtask dist` reports whether the module meets it.
const BUNDLE_CEILING_GZIP_BYTES: u64 = 539_263;

/// What the module should come down to: 450 KB gzip, where it still shows its first screen
/// quickly on a slow connection. Meeting it is reported, not required.
const BUNDLE_GOAL_GZIP_BYTES: u64 = 450_000;

/// Where the module's gzip size stands against BUNDLE_LIMIT_GZIP_BYTES and BUNDLE_GOAL_GZIP_BYTES.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BundleVerdict {
    /// At or under the goal.
    GoalMet,
    /// Over the goal but within the limit: the tests pass.
    WithinLimit,
    /// Over the limit: the tests fail.
    OverLimit,
}

fn bundle_verdict(gzip_bytes: u64, limit: u64, goal: u64) -> BundleVerdict {
    if gzip_bytes > limit {
        BundleVerdict::OverLimit
    } else if gzip_bytes > goal {
        BundleVerdict::WithinLimit
    } else {
        BundleVerdict::GoalMet
    }
}

/// Prints the bundle's sizes (`report_bundle_size`) and fails when the module is over
/// BUNDLE_LIMIT_GZIP_BYTES.
fn check_bundle_size() -> Result {
    let gzip_bytes = report_bundle_size()?;
    match bundle_verdict(gzip_bytes, BUNDLE_LIMIT_GZIP_BYTES, BUNDLE_GOAL_GZIP_BYTES) {
        BundleVerdict::OverLimit => Err(format!(
            "the page's module is {gzip_bytes} bytes gzip, over the limit of \
             {BUNDLE_LIMIT_GZIP_BYTES} (BUNDLE_LIMIT_GZIP_BYTES in xtask/src/main.rs)"
        )),
        BundleVerdict::WithinLimit | BundleVerdict::GoalMet => Ok(()),
    }
}

/// Prints each file of dist/ raw, gzipped and brotli-compressed (the sizes a server sends), and the
/// wasm and JS together against BUNDLE_LIMIT_GZIP_BYTES and BUNDLE_GOAL_GZIP_BYTES, and returns
/// that gzip total. Node's zlib does the compression (Node is installed for wasm-opt anyway), so
/// xtask needs no compression crates.
fn report_bundle_size() -> Result<u64> {
    const SIZES: &str = r#"
const fs = require("fs"), zlib = require("zlib"), path = require("path");
for (const file of process.argv.slice(1)) {
  const raw = fs.readFileSync(file);
  const gzip = zlib.gzipSync(raw, { level: 9 }).length;
  const brotli = zlib.brotliCompressSync(raw, { params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length } }).length;
  console.log(`${raw.length} ${gzip} ${brotli} ${path.basename(file)}`);
}"#;
    let dist = project_root().join("dist");
    let entries =
        std::fs::read_dir(&dist).map_err(|e| format!("cannot read {}: {e}", dist.display()))?;
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|ext| matches!(ext, "wasm" | "js" | "css" | "html" | "svg"))
        })
        .collect();
    files.sort();
    let sizes = output(Command::new("node").args(["-e", SIZES]).args(&files))
        .ok_or("node could not compress the bundle's files")?;
    println!("xtask: bundle      raw bytes     gzip   brotli  file");
    let (mut code_gzip, mut code_brotli) = (0, 0);
    for line in sizes.lines() {
        let fields: Vec<&str> = line.splitn(4, ' ').collect();
        let [raw, gzip, brotli, name] = fields[..] else {
            return Err(format!("unexpected line from the size script: {line}"));
        };
        let number = |text: &str| text.parse::<u64>().unwrap_or(0);
        if name.ends_with(".wasm") || name.ends_with(".js") {
            code_gzip += number(gzip);
            code_brotli += number(brotli);
        }
        println!("xtask: bundle {raw:>13} {gzip:>8} {brotli:>8}  {name}");
    }
    let standing = match bundle_verdict(code_gzip, BUNDLE_LIMIT_GZIP_BYTES, BUNDLE_GOAL_GZIP_BYTES)
    {
        BundleVerdict::GoalMet => "goal met",
        BundleVerdict::WithinLimit => "within the limit, goal not met",
        BundleVerdict::OverLimit => "OVER THE LIMIT",
    };
    println!(
        "xtask: bundle wasm + js: {code_gzip} bytes gzip, {code_brotli} brotli (limit {BUNDLE_LIMIT_GZIP_BYTES}, ceiling {BUNDLE_CEILING_GZIP_BYTES}{}, goal {BUNDLE_GOAL_GZIP_BYTES} gzip: {standing})",
        if code_gzip <= BUNDLE_CEILING_GZIP_BYTES { " met" } else { " not met" }
    );
    Ok(code_gzip)
}

/// Writes the site's service worker: `www/sw.js` with `BUILD` set to a hash of every file of the
/// site and `FILES` to their names. Trunk's post-build hook (Trunk.toml) runs this on the folder
/// it is building (`TRUNK_STAGING_DIR`), so every build, `serve`'s included, has a service worker
/// that knows exactly its files; run by hand, it writes into dist/.
fn write_service_worker() -> Result {
    const BUILD_LINE: &str = "const BUILD = \"development\";";
    const FILES_LINE: &str = "const FILES = [];";
    let site = env::var_os("TRUNK_STAGING_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| project_root().join("dist"));
    let template_path = project_root().join("www/sw.js");
    let template = std::fs::read_to_string(&template_path)
        .map_err(|e| format!("cannot read {}: {e}", template_path.display()))?;
    if !template.contains(BUILD_LINE) || !template.contains(FILES_LINE) {
        return Err(format!(
            "{} must contain the lines `{BUILD_LINE}` and `{FILES_LINE}`",
            template_path.display()
        ));
    }
    let mut files = Vec::new();
    site_files(&site, &site, &mut files)?;
    files.retain(|(name, _)| name != "sw.js");
    files.sort();
    // FNV-1a over every name and content: a new build of any file is a new BUILD, and so a new
    // sw.js, which is how the browser learns of a new deploy.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, content) in &files {
        for byte in name.bytes().chain([0]).chain(content.iter().copied()) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    let mut names = Vec::new();
    for (name, _) in &files {
        // The names go into a JS string literal as they are; Trunk's names need no escaping.
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/'))
        {
            return Err(format!(
                "the site file {name:?} has a name sw.js cannot list"
            ));
        }
        names.push(format!("\"{name}\""));
    }
    let service_worker = template
        .replace(BUILD_LINE, &format!("const BUILD = \"{hash:016x}\";"))
        .replace(
            FILES_LINE,
            &format!("const FILES = [{}];", names.join(", ")),
        );
    let target = site.join("sw.js");
    std::fs::write(&target, service_worker)
        .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
    println!(
        "xtask: service worker for build {hash:016x} of {} files",
        files.len()
    );
    Ok(())
}

/// Every file under `folder`, named relative to `site` with `/` between folders, with its content.
fn site_files(site: &Path, folder: &Path, files: &mut Vec<(String, Vec<u8>)>) -> Result {
    let entries =
        std::fs::read_dir(folder).map_err(|e| format!("cannot read {}: {e}", folder.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            site_files(site, &path, files)?;
        } else {
            let name = path
                .strip_prefix(site)
                .map_err(|e| e.to_string())?
                .components()
                .map(|part| part.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let content =
                std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            files.push((name, content));
        }
    }
    Ok(())
}

/// Trunk runs cargo with --offline, so every crate must be in the local registry first.
fn fetch() -> Result {
    run(cargo().arg("fetch"))
}

fn ensure_web_tools() -> Result {
    ensure_wasm_target()?;
    let wasm_bindgen = wasm_bindgen_version_in_lock()?;
    ensure_installed(
        &trunk(),
        &format!("trunk {TRUNK_VERSION}"),
        "trunk",
        TRUNK_VERSION,
    )?;
    ensure_installed(
        &cargo_bin("wasm-bindgen"),
        &format!("wasm-bindgen {wasm_bindgen}"),
        "wasm-bindgen-cli",
        &wasm_bindgen,
    )?;
    ensure_wasm_opt()
}

/// The project's own tools folder, ignored by git with the rest of target/.
fn tools_dir() -> PathBuf {
    project_root().join("target").join("tools")
}

/// Where npm puts the binaries of the packages installed into tools_dir().
fn tools_bin() -> PathBuf {
    tools_dir().join("node_modules").join(".bin")
}

/// Installs wasm-opt (npm's binaryen at BINARYEN_VERSION) into target/tools/ unless the one there
/// is that version. It is binaryen compiled to wasm and run by Node: no C++ build on the machine.
fn ensure_wasm_opt() -> Result {
    if let Some(found) = output(Command::new(tools_bin().join("wasm-opt")).arg("--version")) {
        if found.trim().starts_with(WASM_OPT_VERSION) {
            return Ok(());
        }
        println!("xtask: found '{}', want '{WASM_OPT_VERSION}'", found.trim());
    }
    ensure_npm()?;
    println!(
        "xtask: installing wasm-opt (npm package binaryen {BINARYEN_VERSION}) into target/tools"
    );
    npm_install(&tools_dir(), &format!("binaryen@{BINARYEN_VERSION}"))
}

/// Installs one npm package at an exact version into `folder` (its node_modules/).
fn npm_install(folder: &Path, package: &str) -> Result {
    std::fs::create_dir_all(folder)
        .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    // --no-save: no package.json or lock file to keep; the exact version is the pin.
    run(Command::new("npm")
        .args([
            "install",
            "--no-save",
            "--no-audit",
            "--no-fund",
            "--prefix",
        ])
        .arg(folder)
        .arg(package))
}

/// Node and npm, from apt-get if they are missing: npm installs binaryen and axe-core.
fn ensure_npm() -> Result {
    if output(Command::new("npm").arg("--version")).is_some() {
        return Ok(());
    }
    println!("xtask: installing Debian's nodejs and npm");
    apt_install(&["nodejs", "npm"])
}

/// Where axe-core is installed: a folder of its own under tools_dir(), because `npm install
/// --no-save` removes from a folder every package its command line does not name, so axe-core and
/// binaryen in one folder would uninstall each other.
fn axe_dir() -> PathBuf {
    tools_dir().join("axe-core")
}

/// Installs axe-core at AXE_CORE_VERSION into axe_dir() unless the `axe.min.js` there is that
/// version, and returns that file's path for the browser tests.
fn ensure_axe() -> Result<PathBuf> {
    let script = axe_dir()
        .join("node_modules")
        .join("axe-core")
        .join("axe.min.js");
    // The file starts with its version, as in "/*! axe v4.14.1".
    let banner = format!("/*! axe v{AXE_CORE_VERSION}\n");
    let installed = |script: &Path| {
        std::fs::read(script).is_ok_and(|bytes| bytes.starts_with(banner.as_bytes()))
    };
    if installed(&script) {
        return Ok(script);
    }
    ensure_npm()?;
    println!(
        "xtask: installing the npm package axe-core {AXE_CORE_VERSION} into target/tools/axe-core"
    );
    npm_install(&axe_dir(), &format!("axe-core@{AXE_CORE_VERSION}"))?;
    if installed(&script) {
        Ok(script)
    } else {
        Err(format!(
            "npm installed axe-core, but {} is not version {AXE_CORE_VERSION}",
            script.display()
        ))
    }
}

fn ensure_wasm_target() -> Result {
    let installed =
        output(Command::new("rustup").args(["target", "list", "--installed"])).unwrap_or_default();
    if installed.lines().any(|line| line.trim() == WASM_TARGET) {
        return Ok(());
    }
    println!("xtask: installing the {WASM_TARGET} target");
    run(Command::new("rustup").args(["target", "add", WASM_TARGET]))
}

/// Installs `package` at `version` with `cargo install --locked` unless `binary --version` already
/// starts with `expected`.
fn ensure_installed(binary: &Path, expected: &str, package: &str, version: &str) -> Result {
    if let Some(found) = output(Command::new(binary).arg("--version")) {
        if found.trim().starts_with(expected) {
            return Ok(());
        }
        println!("xtask: found '{}', want '{expected}'", found.trim());
    }
    println!("xtask: installing {package} {version} (cargo install --locked; this takes a few minutes once)");
    run(cargo().args(["install", package, "--version", version, "--locked"]))
}

fn ensure_browser() -> Result {
    let chromium = Path::new("/usr/bin/chromium").exists();
    let driver = Path::new("/usr/bin/chromedriver").exists();
    if chromium && driver {
        return Ok(());
    }
    println!("xtask: installing Debian's chromium and chromium-driver");
    apt_install(&["chromium", "chromium-driver"])
}

/// `apt-get update` and `apt-get install` of `packages`, through sudo unless xtask runs as root.
fn apt_install(packages: &[&str]) -> Result {
    let as_root = output(Command::new("id").arg("-u"))
        .map(|uid| uid.trim() == "0")
        .unwrap_or(false);
    let apt = |args: &[&str]| {
        let mut command = if as_root {
            Command::new("apt-get")
        } else {
            let mut sudo = Command::new("sudo");
            sudo.arg("apt-get");
            sudo
        };
        command.args(args).env("DEBIAN_FRONTEND", "noninteractive");
        run(&mut command)
    };
    apt(&["update"])?;
    let mut install = vec!["install", "-y", "--no-install-recommends"];
    install.extend_from_slice(packages);
    apt(&install)
}

/// The exact wasm-bindgen version Cargo.lock resolved: wasm-bindgen-cli must match it.
fn wasm_bindgen_version_in_lock() -> Result<String> {
    let lock_path = project_root().join("Cargo.lock");
    let lock = std::fs::read_to_string(&lock_path)
        .map_err(|e| format!("cannot read {}: {e}", lock_path.display()))?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"wasm-bindgen\"" {
            if let Some(version) = lines
                .next()
                .and_then(|v| v.trim().strip_prefix("version = \""))
            {
                return Ok(version.trim_end_matches('"').to_string());
            }
        }
    }
    Err("Cargo.lock has no wasm-bindgen package".to_string())
}

fn cargo() -> Command {
    let mut command = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(project_root());
    command
}

fn cargo_home_bin() -> PathBuf {
    env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from(".cargo"))
        .join("bin")
}

/// A tool installed by `cargo install`: run it from cargo's bin directory so a PATH without it works.
fn cargo_bin(name: &str) -> PathBuf {
    let path = cargo_home_bin().join(name);
    if path.exists() {
        path
    } else {
        PathBuf::from(name)
    }
}

fn trunk() -> PathBuf {
    cargo_bin("trunk")
}

fn output(command: &mut Command) -> Option<String> {
    let out = command.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn run(command: &mut Command) -> Result {
    command.current_dir(project_root());
    // Trunk finds wasm-bindgen and wasm-opt on PATH; put cargo's bin directory and the project's
    // tools (ahead of any other wasm-opt, such as Debian's) first on it.
    let path = env::var_os("PATH").unwrap_or_default();
    let mut paths: Vec<PathBuf> = env::split_paths(&path).collect();
    paths.insert(0, cargo_home_bin());
    paths.insert(0, tools_bin());
    if let Ok(joined) = env::join_paths(paths) {
        command.env("PATH", joined);
    }
    let status = command
        .status()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed with {status}"))
    }
}

/// How long `wasm-timing` waits for the worker's figures: it simulates each launch eighteen times.
const WASM_TIMING_LIMIT: Duration = Duration::from_secs(300);

/// Builds `tests/wasm-timing` for wasm32 with the page's profile (`web`), serves it and its page
/// (`tests/wasm-timing/www/`) on a local port, opens the page in headless Chromium and prints
/// what the page's worker measured, which the page sends back as a POST to `/result`.
fn wasm_timing() -> Result {
    ensure_wasm_target()?;
    ensure_browser()?;
    run(cargo().args([
        "build",
        "-p",
        "memplay-wasm-timing",
        "--target",
        WASM_TARGET,
        "--profile",
        "web",
    ]))?;
    let target_dir = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_relative() {
                project_root().join(dir)
            } else {
                dir
            }
        })
        .unwrap_or_else(|| project_root().join("target"));
    let wasm = target_dir
        .join(WASM_TARGET)
        .join("web")
        .join("memplay_wasm_timing.wasm");
    let www = project_root().join("tests").join("wasm-timing").join("www");
    let read = |path: &Path| {
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let files: Vec<(&str, &str, Vec<u8>)> = vec![
        ("/index.html", "text/html", read(&www.join("index.html"))?),
        (
            "/worker.js",
            "text/javascript",
            read(&www.join("worker.js"))?,
        ),
        (
            "/memplay_wasm_timing.wasm",
            "application/wasm",
            read(&wasm)?,
        ),
    ];
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot listen: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("no local address: {e}"))?
        .port();
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot poll the port: {e}"))?;
    let profile = env::temp_dir().join(format!("memplay-wasm-timing-{}", std::process::id()));
    let mut chromium = Command::new("/usr/bin/chromium")
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("http://127.0.0.1:{port}/index.html"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start chromium: {e}"))?;
    println!("xtask: timing the simulator in Chromium (eighteen runs of each launch)");
    let started = Instant::now();
    let mut result = None;
    while result.is_none() && started.elapsed() < WASM_TIMING_LIMIT {
        match listener.accept() {
            Ok((stream, _)) => result = answer(stream, &files),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(format!("cannot accept a connection: {e}")),
        }
    }
    let _ = chromium.kill();
    let _ = chromium.wait();
    let _ = std::fs::remove_dir_all(&profile);
    let table = result.ok_or("the page sent no figures within five minutes")?;
    print!("{table}");
    if table.contains("error") {
        return Err("the timing page reported an error".to_string());
    }
    Ok(())
}

/// Serves one HTTP request of the timing page: a file of `files`, or the figures the page posts
/// to `/result`, which it returns.
fn answer(mut stream: TcpStream, files: &[(&str, &str, Vec<u8>)]) -> Option<String> {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let mut length = 0;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut parts = request_line.split_whitespace();
    let (method, path) = (parts.next()?, parts.next()?);
    if method == "POST" && path == "/result" {
        let mut body = vec![0; length];
        reader.read_exact(&mut body).ok()?;
        let _ = stream.write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
        return Some(String::from_utf8_lossy(&body).into_owned());
    }
    match files.iter().find(|(name, _, _)| *name == path) {
        Some((_, kind, bytes)) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                bytes.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(bytes);
        }
        None => {
            let _ = stream.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_over_the_limit_fails() {
        assert_eq!(
            bundle_verdict(539_264, 539_263, 450_000),
            BundleVerdict::OverLimit
        );
    }

    #[test]
    fn a_module_exactly_at_the_limit_passes() {
        assert_eq!(
            bundle_verdict(539_263, 539_263, 450_000),
            BundleVerdict::WithinLimit
        );
    }

    #[test]
    fn a_module_between_the_goal_and_the_limit_passes_without_meeting_the_goal() {
        assert_eq!(
            bundle_verdict(500_000, 539_263, 450_000),
            BundleVerdict::WithinLimit
        );
    }

    #[test]
    fn a_module_at_or_under_the_goal_meets_it() {
        assert_eq!(
            bundle_verdict(450_000, 539_263, 450_000),
            BundleVerdict::GoalMet
        );
        assert_eq!(
            bundle_verdict(300_000, 539_263, 450_000),
            BundleVerdict::GoalMet
        );
    }
}
