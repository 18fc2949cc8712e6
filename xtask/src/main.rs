//! Project automation in the xtask pattern (https://github.com/matklad/cargo-xtask).
//!
//! `cargo xtask serve` and `cargo xtask test` are the two commands a fresh machine needs. Both install
//! what is missing first, and only what is missing, so a warm machine skips straight to the work:
//! the wasm32 target (rustup), Trunk and wasm-bindgen-cli (`cargo install --locked`, wasm-bindgen-cli
//! pinned to the version in Cargo.lock), and for tests Debian's chromium and chromium-driver (apt-get).
//! Nothing is downloaded from outside the package registries: Trunk runs with `offline = true`.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const TRUNK_VERSION: &str = "0.21.14";
const WASM_TARGET: &str = "wasm32-unknown-unknown";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("serve") => serve(),
        Some("test") => test(),
        Some("dist") => ensure_web_tools().and_then(|()| build_dist()),
        _ => {
            eprintln!("usage: cargo xtask <serve|test|dist>");
            eprintln!("  serve  install what is missing, build, and serve the playground on http://127.0.0.1:8080");
            eprintln!("  test   install what is missing and run every test (unit, golden, wasm build, browser)");
            eprintln!("  dist   build the static site into dist/");
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
    Path::new(env!("CARGO_MANIFEST_DIR"))
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
    fetch()?;
    // Unit, property, golden and CLI tests of the native crates. The comparisons with the H100
    // (counters, occupancy, timing) then run again with --nocapture, so their tables are printed.
    run(cargo().args(["test", "--workspace", "--exclude", "memplay-e2e"]))?;
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
    // The one wasm build: the same release bundle that `serve` produces, checked by the browser tests.
    build_dist()?;
    report_bundle_size()?;
    run(cargo()
        .args(["test", "-p", "memplay-e2e", "--", "--test-threads=1"])
        .env("MEMPLAY_DIST", project_root().join("dist")))?;
    println!("xtask: all tests passed");
    Ok(())
}

fn build_dist() -> Result {
    fetch()?;
    run(Command::new(trunk()).args(["build", "--release"]))
}

fn report_bundle_size() -> Result {
    let dist = project_root().join("dist");
    let entries =
        std::fs::read_dir(&dist).map_err(|e| format!("cannot read {}: {e}", dist.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if let Some(ext) = path.extension().and_then(|e| e.to_str()) {
            if matches!(ext, "wasm" | "js" | "css" | "html") {
                let bytes = entry.metadata().map(|m| m.len()).unwrap_or(0);
                println!(
                    "xtask: bundle {:>9} bytes  {}",
                    bytes,
                    path.file_name().unwrap_or_default().to_string_lossy()
                );
            }
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
    )
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
    apt(&[
        "install",
        "-y",
        "--no-install-recommends",
        "chromium",
        "chromium-driver",
    ])
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
    // Trunk finds wasm-bindgen on PATH; make sure cargo's bin directory is on it.
    let path = env::var_os("PATH").unwrap_or_default();
    let mut paths: Vec<PathBuf> = env::split_paths(&path).collect();
    paths.insert(0, cargo_home_bin());
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
