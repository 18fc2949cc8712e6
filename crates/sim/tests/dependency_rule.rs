//! memplay-sim is the pure core: it must not depend, even indirectly, on anything that knows the
//! web, wasm, the DOM, timers or the operating system's randomness (ARCHITECTURE.md, "Invariants").
//! The kernel language it is built on, memplay-lang, is in that tree and held to the same rule.
//! This test asks cargo for the crate's resolved dependency tree (normal and build dependencies,
//! not the dev-dependencies the tests themselves use) and fails if a forbidden crate appears.

use std::process::Command;

const FORBIDDEN: [&str; 9] = [
    "yew",
    "web-sys",
    "wasm-bindgen",
    "js-sys",
    "gloo",
    "rand",
    "getrandom",
    "tokio",
    "reqwest",
];

/// The names of every package in memplay-sim's resolved normal and build dependency tree.
fn dependency_names() -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-p",
            "memplay-sim",
            "-e",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// A crate is forbidden if it is one of the list or one of its sub-crates (`gloo-timers`,
/// `wasm-bindgen-macro`, `yew-macro`).
fn is_forbidden(name: &str) -> bool {
    FORBIDDEN
        .iter()
        .any(|bad| name == *bad || name.starts_with(&format!("{bad}-")))
}

#[test]
fn the_simulator_depends_on_no_web_wasm_or_random_crate() {
    let names = dependency_names();
    assert!(
        names.iter().any(|name| name == "memplay-sim"),
        "the tree names the crate itself: {names:?}"
    );
    let bad: Vec<&String> = names.iter().filter(|name| is_forbidden(name)).collect();
    assert!(
        bad.is_empty(),
        "memplay-sim must stay pure, but depends on {bad:?}"
    );
}

#[test]
fn the_rule_recognises_the_crates_it_forbids() {
    // The rule itself must be able to fail: these are the names the web crate pulls in.
    for name in [
        "yew",
        "yew-macro",
        "web-sys",
        "wasm-bindgen-macro",
        "gloo-timers",
        "getrandom",
    ] {
        assert!(is_forbidden(name), "{name}");
    }
    for name in ["serde", "serde_derive", "memplay-sim", "proc-macro2"] {
        assert!(!is_forbidden(name), "{name}");
    }
}
