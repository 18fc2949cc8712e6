//! The timing model and the counters against the warp-level probes.
//!
//! `tests/reference/warp_probes/` holds 36 launches of 32 kernels, each isolating one kind of
//! instruction that students' kernels use and the lecture kernels do not: shuffles, votes and
//! `MATCH` (groups S, V), cooperative groups' `reduce` (C), the cache-hint loads (L), 16-bit
//! elements (H), the special function unit and the math library (F), an all-pairs n-body loop
//! plain and tiled (N), and the newer atomics (A). They were timed with CUDA events
//! (`time.jsonl`) and measured with Nsight Compute (`ncu_join.jsonl`) on an H200, whose SM is the
//! H100's: the arithmetic-bound groups (S, V, C, F, N) carry over to the H100 preset as measured,
//! and the memory-bound ones (L, H, A) ran on the H200's faster memory, so they are held to the
//! same 25 % with the H100 preset's memory. Nothing measured enters the model: the numbers are
//! read here and only compared. `GROUPS_HELD` says which groups the model meets and why the
//! others are printed only.

mod common;

use common::{measured_launches, median, MeasuredLaunch, GLOBAL_COUNTERS};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

/// The group a kernel belongs to (the header comment of `warp_probes.cu`).
fn group_of(kernel: &str) -> char {
    match kernel {
        "w_shfl_xor" | "w_shfl_idx" | "w_shfl_down_reduce" => 'S',
        "w_ballot" | "w_any" | "w_match_any" | "w_reduce_add" => 'V',
        k if k.starts_with("w_cg_") => 'C',
        "w_copy" | "w_ldg_copy" | "w_ldcs_copy" | "w_ldcg_stcs_copy" => 'L',
        "w_half_copy" | "w_bf16_copy" | "w_half2_axpy" => 'H',
        k if k.starts_with("w_nbody") => 'N',
        k if k.starts_with("w_atomic") => 'A',
        _ => 'F',
    }
}

/// Every launch memplay runs, simulated and predicted once for all the tests of this file.
fn probes() -> &'static [MeasuredLaunch] {
    static PROBES: OnceLock<Vec<MeasuredLaunch>> = OnceLock::new();
    PROBES.get_or_init(|| measured_launches("warp_probes", "warp_probes/ncu_join.jsonl"))
}

/// The groups whose median the model holds to 25 %: shuffles (S), hinted loads (L), 16-bit
/// elements (H), atomics (A), the math library and FMA chains (F), set by the special function
/// unit's rate and the instructions each function expands to, votes, `MATCH` and `REDUX` (V),
/// set by the special function unit that `__popc` takes and the unit that matches and reduces a
/// warp, and the ALU pipe that takes the votes, logic and shifts (`w_any`), and cooperative groups' `reduce` (C), whose helper calls end in a `return` nvcc inlines
/// away; their other work is still counted as written (74 instructions a warp where nvcc's code
/// issues 36), so C is held on its time, not its count. The n-body loops (N): the tiled one is
/// one block of dependent chains an SM; the plain one waits for an L2 round trip per pair of
/// broadcast `float4` loads, as the register target lets ptxas keep only two of the four
/// unrolled copies' loads in flight (`memplay_lang::registers`).
const GROUPS_HELD: [char; 8] = ['S', 'L', 'H', 'A', 'F', 'C', 'V', 'N'];

#[test]
fn warp_probe_times_are_within_a_quarter_in_the_groups_the_model_holds() {
    let probes = probes();
    assert_eq!(probes.len(), 36);
    let mut table = String::new();
    let mut groups: BTreeMap<char, Vec<f64>> = BTreeMap::new();
    for probe in probes {
        let _ = writeln!(
            table,
            "{} {:<44} {:>9.4} {:>9.4} {:>+7.1}  {:?}",
            group_of(&probe.kernel),
            probe.id,
            probe.measured_ms,
            probe.prediction.time_ms,
            100.0 * probe.error(),
            probe.prediction.bottleneck
        );
        groups
            .entry(group_of(&probe.kernel))
            .or_default()
            .push(probe.error().abs());
    }
    for (group, errors) in &groups {
        let _ = writeln!(
            table,
            "group {group}: {:>2} launches, median |error| {:>5.1}%, {:>2} within 25%",
            errors.len(),
            100.0 * median(errors.clone()),
            errors.iter().filter(|e| **e <= 0.25).count()
        );
    }
    println!("{table}");
    for group in GROUPS_HELD {
        let errors = groups.get(&group).cloned().unwrap_or_default();
        assert!(!errors.is_empty(), "group {group} has no launches");
        let m = median(errors);
        assert!(m <= 0.25, "group {group}: median |error| {:.1}%", 100.0 * m);
    }
}

#[test]
fn warp_probe_global_requests_and_sectors_match_nsight() {
    // The global load and store requests and sectors of every launch within 10% of Nsight
    // Compute's: a hint changes the caching, not the count, and a 2-byte element is half the
    // sectors of a 4-byte one.
    let mut off = Vec::new();
    for probe in probes() {
        for name in GLOBAL_COUNTERS {
            let measured = probe.ncu[name].as_f64().unwrap_or(f64::NAN);
            let simulated = probe.report.counters.get(name).unwrap_or(f64::NAN);
            if !((simulated - measured).abs() <= 0.10 * measured.max(1.0)) {
                off.push(format!(
                    "{} {name}: {simulated} against {measured}",
                    probe.id
                ));
            }
        }
    }
    assert!(off.is_empty(), "{}", off.join("\n"));
}

#[test]
fn special_function_unit_instructions_match_nsight_for_the_math_vote_and_n_body_probes() {
    // One `MUFU` per call of each function of group F (two for `tanhf`), one `MUFU.RSQ` per
    // pair of bodies in group N and one `POPC` per `__popc` of a ballot in group V, as Nsight
    // Compute counts on the xu pipe.
    let mut off = Vec::new();
    for probe in probes() {
        let group = group_of(&probe.kernel);
        if !matches!(group, 'F' | 'N' | 'V') {
            continue;
        }
        let name = "smsp__inst_executed_pipe_xu.sum";
        let measured = probe.ncu[name].as_f64().unwrap_or(f64::NAN);
        let simulated = probe.report.counters.sfu_instructions;
        if !((simulated - measured).abs() <= 0.10 * measured.max(1.0)) {
            off.push(format!(
                "{} {name}: {simulated} against {measured}",
                probe.id
            ));
        }
    }
    assert!(off.is_empty(), "{}", off.join("\n"));
}

#[test]
fn alu_pipe_instructions_match_nsight_where_the_alu_pipe_could_set_the_time() {
    // The launches where Nsight Compute counts at least a third of the instructions on the ALU
    // pipe (the votes, `MATCH` and `REDUX` loops: logic, shifts, comparisons and votes), the
    // only ones whose time that pipe, at half the issue rate, could set. The adds and moves
    // ptxas also gives it are not counted (`memplay_lang::issue`), hence the wider tolerance.
    let mut off = Vec::new();
    let mut held = 0;
    for probe in probes() {
        let name = "smsp__inst_executed_pipe_alu.sum";
        let measured = probe.ncu[name].as_f64().unwrap_or(f64::NAN);
        let issued = probe.ncu["smsp__inst_executed.sum"]
            .as_f64()
            .unwrap_or(f64::NAN);
        if !(measured >= issued / 3.0) {
            continue;
        }
        held += 1;
        let simulated = probe.report.counters.alu_instructions;
        if !((simulated - measured).abs() <= 0.25 * measured) {
            off.push(format!(
                "{} {name}: {simulated} against {measured}",
                probe.id
            ));
        }
    }
    assert_eq!(held, 4, "the ALU-heavy launches");
    assert!(off.is_empty(), "{}", off.join("\n"));
}
