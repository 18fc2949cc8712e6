//! The sanitizer against NVIDIA's compute-sanitizer on the planted bugs of
//! `tests/reference/sanitizer/` (`planted.cu`, run on an H200; `reports.txt` holds what each tool
//! printed). Where racecheck reports errors between warps, memplay finds the race, of the same
//! kind; where it reports nothing, memplay is silent too. synccheck reports nothing on sm_90 and
//! initcheck watches only global memory: for those kernels memplay follows the Programming
//! Guide's rules (the README says why), and this test names what it reports instead.

mod common;

use common::{h100_launch, reference_dir};
use memplay_sim::sanitizer::{Hazard, SanitizerConfig};
use memplay_sim::simulate;
use std::collections::BTreeSet;

/// The hazards memplay finds in `kernel` of planted.cu, launched as its host program does.
fn hazards(source: &str, kernel: &str) -> BTreeSet<Hazard> {
    let (grid, block, args): ([u32; 2], [u32; 2], &[(&str, i64)]) = match kernel {
        k if k.starts_with("tiled") => ([4, 4], [16, 16], &[("n", 64)]),
        "block_sync_in_branch" => ([1, 1], [128, 1], &[]),
        "warp_shfl_in_branch" | "warp_sync_in_branch" => ([1, 1], [32, 1], &[]),
        "warp_reduce" => ([4, 1], [128, 1], &[]),
        "reduce_past_written" | "reduce_padded" => ([4, 1], [96, 1], &[]),
        _ => ([1, 1], [256, 1], &[]),
    };
    let bytes = 64 * 64 * 4;
    let names: &[&str] = match kernel {
        k if k.starts_with("tiled") => &["a", "b", "c"],
        k if k.ends_with("_in_branch") => &["out"],
        _ => &["in", "out"],
    };
    let buffers: Vec<(&str, u64)> = names.iter().map(|&name| (name, bytes)).collect();
    let mut input = h100_launch(source, kernel, grid, block, &buffers, args);
    input.sanitizer = SanitizerConfig::ALL;
    let report = simulate(&input).unwrap_or_else(|e| panic!("{kernel}: {e}"));
    let findings = report.sanitizer.map(|s| s.findings).unwrap_or_default();
    findings.iter().map(|f| f.hazard).collect()
}

/// compute-sanitizer's racecheck summary line for `kernel`: its error count.
fn racecheck_errors(reports: &str, kernel: &str) -> u64 {
    let line = reports
        .lines()
        .find(|l| l.starts_with(&format!("racecheck {kernel}:")))
        .unwrap_or_else(|| panic!("no racecheck line for {kernel}"));
    let errors = line
        .split('(')
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok());
    errors.unwrap_or_else(|| panic!("no error count in {line}"))
}

#[test]
fn the_sanitizer_finds_the_races_compute_sanitizer_finds_and_the_guides_sync_rules() {
    let folder = reference_dir().join("sanitizer");
    let source = std::fs::read_to_string(folder.join("planted.cu")).expect("planted.cu");
    let reports = std::fs::read_to_string(folder.join("reports.txt")).expect("reports.txt");
    let race = |set: &BTreeSet<Hazard>| {
        set.iter().any(|h| {
            matches!(
                h,
                Hazard::ReadAfterWrite | Hazard::WriteAfterRead | Hazard::WriteAfterWrite
            )
        })
    };
    for kernel in [
        "tiled_matmul",
        "tiled_no_second_sync",
        "tiled_no_first_sync",
        "block_sync_in_branch",
        "warp_reduce",
        "reduce_padded",
    ] {
        let found = hazards(&source, kernel);
        let measured = racecheck_errors(&reports, kernel);
        assert_eq!(
            race(&found),
            measured > 0,
            "{kernel}: memplay {found:?}, racecheck {measured} errors"
        );
    }
    // The kinds: the next tile's store over a read (write after read), a read before the
    // tile is written (read after write), as racecheck names them.
    assert!(hazards(&source, "tiled_no_second_sync").contains(&Hazard::WriteAfterRead));
    assert!(hazards(&source, "tiled_no_first_sync").contains(&Hazard::ReadAfterWrite));
    // The barrier that warps 0 and 1 reach and warps 2 and 3 skip on their way out: exited
    // threads count as arrived, so what shows is the race above, as in racecheck. What synccheck
    // leaves to the Guide on sm_90 (a full mask in a branch half the warp takes), and initcheck
    // to shared memory:
    let masks = [Hazard::InvalidWarpMask]
        .into_iter()
        .collect::<BTreeSet<_>>();
    assert_eq!(hazards(&source, "warp_shfl_in_branch"), masks);
    assert_eq!(
        hazards(&source, "warp_sync_in_branch").contains(&Hazard::InvalidWarpMask),
        true
    );
    assert!(hazards(&source, "reduce_past_written").contains(&Hazard::UninitializedShared));
    assert!(hazards(&source, "reduce_padded").is_empty());
}
