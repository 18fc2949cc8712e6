//! The timing model and the counters against the H100 probes.
//!
//! `tests/reference/probes/` holds 162 launches of 40 small kernels, each isolating one mechanism
//! of the hardware (groups A to O, see its README and the comment of each group in `probe.cu`),
//! timed with CUDA events (`time.jsonl`) and measured with Nsight Compute (`ncu_join.jsonl`). This
//! test simulates every launch on the H100 preset, prints a table per group and checks the
//! counters and times against the measurements. Nothing measured is copied into the model: the
//! numbers are read here and only compared.
//!
//! Group B (a dependent pointer chase) is simulated but left out of the time goals: the chain is
//! laid out by the host program, which memplay does not run, so the simulated chase stays in one
//! line; its latencies are the hardware numbers the presets cite.

mod common;

use common::{
    input_from_spec_in, measured_launches, median, memory_counters_off, occupancy_limits_off,
    read_lines, MeasuredLaunch,
};
use memplay_sim::simulate;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

/// The probe group a kernel belongs to (the README's table).
fn group_of(kernel: &str) -> char {
    match kernel {
        "p_empty" | "p_copy" | "p_copy4" => 'A',
        "p_chase" => 'B',
        k if k.starts_with("p_mlp") => 'C',
        k if k.starts_with("p_walk") => 'D',
        "p_lane_rows" => 'E',
        "p_atom_global" | "p_atom_seq" | "p_atom_ret" => 'F',
        "p_atom_shared" => 'G',
        k if k.starts_with("p_pred_") => 'H',
        "p_branch" => 'I',
        k if k.starts_with("p_int_") => 'J',
        "p_barrier" | "p_nobarrier" => 'K',
        k if k.starts_with("p_smem_alu") => 'L',
        "p_scatter_st" | "p_scatter_st4" | "p_row_st" => 'M',
        k if k.starts_with("p_carveout") => 'N',
        k if k.starts_with("p_ld_") => 'O',
        _ => '?',
    }
}

/// Every launch memplay runs, simulated and predicted once for all the tests of this file.
fn probes() -> &'static [MeasuredLaunch] {
    static PROBES: OnceLock<Vec<MeasuredLaunch>> = OnceLock::new();
    PROBES.get_or_init(|| measured_launches("probes", "probes/ncu_join.jsonl"))
}

#[test]
fn probe_times_are_predicted_by_mechanism() {
    let probes = probes();
    assert_eq!(probes.len(), 162, "the probes hold 162 launches");
    let mut table = String::new();
    let _ = writeln!(
        table,
        "{:<58} {:>10} {:>10} {:>7}  {:<9}",
        "launch", "measured", "predicted", "err %", "bound"
    );
    let mut groups: BTreeMap<char, Vec<f64>> = BTreeMap::new();
    for probe in probes {
        let _ = writeln!(
            table,
            "{} {:<56} {:>10.4} {:>10.4} {:>+7.1}  {:?}",
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
    let timed: Vec<f64> = probes
        .iter()
        .filter(|p| group_of(&p.kernel) != 'B')
        .map(|p| p.error().abs())
        .collect();
    let within = timed.iter().filter(|e| **e <= 0.25).count();
    for (group, errors) in &groups {
        let _ = writeln!(
            table,
            "group {group}: {:>3} launches, median |error| {:>6.1}%, {:>3} within 25%",
            errors.len(),
            100.0 * median(errors.clone()),
            errors.iter().filter(|e| **e <= 0.25).count()
        );
    }
    let _ = writeln!(
        table,
        "outside group B: {within} of {} within 25%, median |error| {:.1}%, mean {:.1}%",
        timed.len(),
        100.0 * median(timed.clone()),
        100.0 * timed.iter().sum::<f64>() / timed.len() as f64
    );
    println!("{table}");

    // The goal: 90% within 25% (154 of 158 are).
    assert!(
        within as f64 >= 0.9 * timed.len() as f64,
        "only {within} of {} probe launches within 25%",
        timed.len()
    );
    // Each group whose mechanism the model has: the launch floor and block dispatcher (A),
    // unrolled loads in flight (D), global atomics per L2 slice (F), shared atomics per bank (G),
    // short launches (H, N), divergent branches on the FP32 pipe (I), integer and shared work
    // against issue (J, L), barriers (K), loads across atomics (O), launches that move on to new
    // lines each time (C), partial-sector stores in the L2 and DRAM (M), the L1's passes for
    // requests of many lines (E): every group but B, whose chain memplay cannot build.
    for group in [
        'A', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O',
    ] {
        let errors = groups.get(&group).cloned().unwrap_or_default();
        assert!(!errors.is_empty(), "group {group} has no launches");
        let m = median(errors);
        assert!(m <= 0.25, "group {group}: median |error| {:.1}%", 100.0 * m);
    }
}

#[test]
fn issued_instructions_follow_the_sass_of_loops() {
    // `smsp__inst_executed` counts what nvcc's code issues: loops unrolled 16, 4, 2 or 1 times,
    // `%` and `/` expanded, loop-invariant work hoisted, a prologue per warp. The estimate of
    // `kernel::issue` comes within 25% of it for every kernel whose time is its loops (groups C,
    // D, I, J, K, L); it is per source operation, so not exact.
    let mut table = String::new();
    let mut worst = (0.0f64, String::new());
    for probe in probes()
        .iter()
        .filter(|p| "CDIJKL".contains(group_of(&p.kernel)))
    {
        let measured = probe.ncu["smsp__inst_executed.sum"]
            .as_f64()
            .unwrap_or_else(|| panic!("{} has no smsp__inst_executed.sum", probe.id));
        let estimated = probe.report.counters.inst_executed;
        let ratio = estimated / measured;
        let _ = writeln!(table, "{:<58} {ratio:>6.2}", probe.id);
        if (ratio - 1.0).abs() > worst.0 {
            worst = ((ratio - 1.0).abs(), probe.id.clone());
        }
    }
    println!("{table}");
    assert!(
        worst.0 <= 0.25,
        "{}: estimated instructions {:.0}% off Nsight Compute's",
        worst.1,
        100.0 * worst.0
    );
}

#[test]
fn a_load_that_needs_the_last_loads_data_waits_a_round_trip_and_unrolled_loads_share_one() {
    // Probe group D: the same walk of 4,096 independent loads a thread, one load in flight
    // (`#pragma unroll 1`, 1.56 ms) against nvcc's sixteen-fold unrolling (0.16 ms). Group C:
    // `p_mlp1`'s next address needs the load's data, so each of its 256 loads is a round trip,
    // while `p_mlp16` issues sixteen independent loads a round.
    let walk =
        |kernel: &str| predicted_ms(&format!("{kernel} grid=132 block=64 count=4096 jump=12288"));
    let (one, sixteen) = (walk("p_walk_u1"), walk("p_walk"));
    assert!(
        one > 8.0 * sixteen,
        "one load in flight {one} ms, sixteen {sixteen} ms"
    );
    let round_trips = |kernel: &str| {
        probes()
            .iter()
            .find(|p| p.id.starts_with(&format!("{kernel} grid=132 block=32")))
            .map(|p| {
                p.report.memory.missing_round_trips_per_block
                    + p.report.memory.hitting_round_trips_per_block
            })
            .unwrap_or_else(|| panic!("no {kernel} launch"))
    };
    // Each warp also loads its position (`state[w]`) once, a round trip of its own.
    assert_eq!(round_trips("p_mlp1"), 257.0);
    assert_eq!(round_trips("p_mlp16"), 257.0);
}

/// The predicted time of the probe launch whose id is `id`.
fn predicted_ms(id: &str) -> f64 {
    probes()
        .iter()
        .find(|p| p.id == id)
        .map(|p| p.prediction.time_ms)
        .unwrap_or_else(|| panic!("no probe launch '{id}'"))
}

#[test]
fn bins_in_one_l2_slice_serialize_and_bins_in_two_take_half_as_long() {
    // Probe group F: eight bins 32 bytes apart (one 512-byte slice granule) take 3.03 ms, as
    // long as one bin; 128 bytes apart (two granules) 1.60 ms; packed into one sector 0.48 ms.
    let launch = |mask: u32, stride: u32| {
        predicted_ms(&format!(
            "p_atom_global grid=16384 block=256 n=4194304 mask={mask} stride={stride}"
        ))
    };
    let (one_word, one_granule, two_granules, one_sector) =
        (launch(0, 1), launch(7, 8), launch(7, 32), launch(7, 1));
    assert!(
        (one_granule / one_word - 1.0).abs() < 0.1,
        "{one_granule} vs {one_word}"
    );
    assert!(
        (two_granules / one_granule - 0.5).abs() < 0.1,
        "{two_granules} vs {one_granule}"
    );
    assert!(
        one_sector < 0.25 * one_granule,
        "{one_sector} vs {one_granule}"
    );
}

#[test]
fn a_divergent_branch_costs_both_paths_and_a_warp_uniform_one_does_not() {
    // Probe group I: splitting every warp (sel 1 or 16) takes 1.87 times as long as no split
    // (sel 0) or a split between whole warps (sel 32).
    let sel = |s: u32| predicted_ms(&format!("p_branch grid=1056 block=256 iters=4096 sel={s}"));
    let ratio = sel(1) / sel(0);
    assert!(
        (1.6..=2.0).contains(&ratio),
        "divergent / uniform {ratio:.2}"
    );
    assert!((sel(16) / sel(1) - 1.0).abs() < 0.05);
    assert!((sel(32) / sel(0) - 1.0).abs() < 0.05);
}

#[test]
fn shared_atomics_cost_one_pass_per_lane_in_the_busiest_bank() {
    // Probe group G: Nsight's atomic wavefronts per instruction are the most lanes in one bank:
    // 1, 2, 4, 8 and 32 for distinct banks and 2- to 32-way conflicts, 32 for one word.
    let ways = [
        (1, 1.0),
        (2, 2.0),
        (4, 4.0),
        (8, 8.0),
        (32, 32.0),
        (0, 32.0),
    ];
    for (mul, expected) in ways {
        let probe = probes()
            .iter()
            .find(|p| {
                p.id.contains(&format!(
                    "p_atom_shared grid=528 block=256 iters=256 mul={mul} "
                ))
            })
            .unwrap_or_else(|| panic!("no p_atom_shared launch with mul={mul}"));
        let c = &probe.report.counters;
        let passes = probe.report.memory.shared_atomic_passes / c.shared_atomic_instructions;
        let measured = probe.ncu["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"]
            .as_f64()
            .unwrap_or(f64::NAN)
            / probe.ncu["smsp__inst_executed_op_shared_atom.sum"]
                .as_f64()
                .unwrap_or(f64::NAN);
        assert_eq!(passes, expected, "mul={mul}");
        assert_eq!(measured, expected, "mul={mul}: the measurement");
    }
}

#[test]
fn memory_counters_match_nsight_and_predicated_bodies_count_for_every_warp() {
    // Every probe launch's eight memory counters within 10% of Nsight Compute's; for the
    // predication group (H) the instruction and request counts exactly, since if-converted bodies
    // are issued by every warp that reaches them (`p_pred_st`: two shared stores a warp whatever
    // `k`) while a branching body (`p_pred_long`) is issued only by warps with a lane in it.
    let off: Vec<String> = probes()
        .iter()
        .flat_map(|probe| {
            memory_counters_off(&probe.id, &probe.report, &probe.ncu, |name| {
                let exact = group_of(&probe.kernel) == 'H' && !name.contains("wavefronts");
                if exact {
                    0.0
                } else {
                    0.10
                }
            })
        })
        .collect();
    assert!(off.is_empty(), "{}", off.join("\n"));
}

#[test]
fn without_if_conversion_only_warps_with_a_lane_in_the_body_issue_it() {
    // `p_pred_st` with k = 0: no lane stores in the guarded body. As compiled, each of the 8,448
    // warps issues the predicated store besides its own (16,896, as Nsight Compute counts); as
    // written, only the unconditional one counts.
    let row = read_lines("probes/time.jsonl")
        .into_iter()
        .find(|row| row["id"].as_str() == Some("p_pred_st grid=1056 block=256 k=0"))
        .expect("the probes have p_pred_st k=0");
    let mut input = input_from_spec_in(&row["spec"], "probes").expect("the spec reads");
    let stores = |input: &memplay_sim::SimulationInput| {
        let report = simulate(input).expect("the launch simulates");
        (
            report.counters.shared_st_instructions,
            report.counters.predicated_off_warp_instructions,
        )
    };
    assert_eq!(stores(&input), (16_896.0, 2.0 * 8_448.0));
    input.compile = memplay_sim::compile_effects::CompileEffects::AS_WRITTEN;
    assert_eq!(stores(&input), (8_448.0, 0.0));
}

#[test]
fn occupancy_limits_of_registers_warps_and_blocks_match_nsight() {
    // Nsight Compute's `launch__occupancy_limit_*` for every probe launch, exactly: the register,
    // warp and block limits (the H100 gives a thread at least 16 registers: `p_row_st`, compiled
    // to 8, is launched with 16), and the shared-memory limit, which follows the carveout the
    // driver picks (`occupancy::driver_carveout`: room for two or four times the resident blocks).
    let mut off = Vec::new();
    for probe in probes() {
        off.extend(occupancy_limits_off(&probe.id, &probe.report, &probe.ncu));
        let shared_limit = probe.ncu["launch__occupancy_limit_shared_mem"]
            .as_f64()
            .unwrap_or_else(|| panic!("{} has no shared-memory limit", probe.id));
        let modelled = f64::from(probe.report.occupancy.limit_shared_mem);
        if modelled != shared_limit {
            off.push(format!(
                "{}: shared-memory limit {modelled}, Nsight {shared_limit}",
                probe.id
            ));
        }
    }
    assert!(off.is_empty(), "{}", off.join("\n"));
}

#[test]
fn active_lanes_per_instruction_match_nsight_and_a_split_warp_runs_half_empty() {
    // `smsp__thread_inst_executed` over `smsp__inst_executed`: the lanes active in the average
    // warp instruction. A branch on odd and even lanes (group I, `sel=1`) or on half-warps
    // (`sel=16`) runs both paths with 16 lanes each; one on whole warps (`sel=32`) keeps all 32.
    // Within one lane for every probe but the predicated bodies that some of a warp's lanes
    // take (group H): there nvcc sometimes lets the other lanes exit instead of predicating
    // them off (`p_pred_gst k=1`: 26.8 measured, 32 modelled), which the model does not follow.
    let mut table = String::new();
    let mut worst = (0.0f64, String::new());
    for probe in probes() {
        let lanes = |warp: f64, thread: f64| if warp > 0.0 { thread / warp } else { 0.0 };
        let measured = lanes(
            probe.ncu["smsp__inst_executed.sum"].as_f64().unwrap_or(0.0),
            probe.ncu["smsp__thread_inst_executed.sum"]
                .as_f64()
                .unwrap_or_else(|| panic!("{} has no smsp__thread_inst_executed.sum", probe.id)),
        );
        let counters = &probe.report.counters;
        let modelled = lanes(counters.inst_executed, counters.thread_inst_executed);
        let _ = writeln!(table, "{:<58} {measured:>6.2} {modelled:>6.2}", probe.id);
        let allowed = if group_of(&probe.kernel) == 'H' {
            6.0
        } else {
            1.0
        };
        if (modelled - measured).abs() / allowed > worst.0 {
            worst = ((modelled - measured).abs() / allowed, probe.id.clone());
        }
    }
    println!("active lanes per warp instruction, measured and modelled\n{table}");
    assert!(
        worst.0 <= 1.0,
        "{}: active lanes off by more than allowed",
        worst.1
    );
    let lanes_of = |id: &str| {
        let probe = probes().iter().find(|p| p.id == id).expect("a probe");
        probe.report.counters.thread_inst_executed / probe.report.counters.inst_executed
    };
    assert!((lanes_of("p_branch grid=1056 block=256 iters=4096 sel=1") - 16.0).abs() < 0.5);
    assert!((lanes_of("p_branch grid=1056 block=256 iters=4096 sel=32") - 32.0).abs() < 0.01);
}
