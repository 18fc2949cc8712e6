//! The sanitizer (`memplay_sim::sanitizer`) on planted bugs it must find, and its silence on the
//! kernels of the lessons, the probes and the students' launches, which have none.

mod common;

use common::{h100_launch, input_from_spec, input_from_spec_in, read_json, read_lines};
use memplay_sim::device::h100;
use memplay_sim::kernel::{Dim3, Value};
use memplay_sim::lesson_kernels::{matmul_launch, BOUNDARY, DIVERGENCE, SWIZZLE};
use memplay_sim::sanitizer::{Finding, Hazard, SanitizerConfig};
use memplay_sim::{simulate, SimulationInput};

/// A tiled matmul of 16 x 16 tiles whose `__syncthreads()` are `FIRST` and `SECOND`, defined
/// empty to leave one out.
const MATMUL: &str = "
#define T 16
__global__ void mm(const float* a, const float* b, float* c, int n) {
    __shared__ float as[T][T];
    __shared__ float bs[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float sum = 0.0f;
    for (int k0 = 0; k0 < n; k0 += T) {
        as[ty][tx] = a[row * n + k0 + tx];
        bs[ty][tx] = b[(k0 + ty) * n + col];
        FIRST;
        for (int k = 0; k < T; ++k)
            sum += as[ty][k] * bs[k][tx];
        SECOND;
    }
    c[row * n + col] = sum;
}
";

fn matmul(first: &str, second: &str) -> SimulationInput {
    let n = 64u64;
    let mut input = h100_launch(
        MATMUL,
        "mm",
        [4, 4],
        [16, 16],
        &[("a", n * n * 4), ("b", n * n * 4), ("c", n * n * 4)],
        &[("n", n as i64)],
    );
    input.defines = vec![
        ("FIRST".to_string(), first.to_string()),
        ("SECOND".to_string(), second.to_string()),
    ];
    input
}

fn findings(mut input: SimulationInput) -> Vec<Finding> {
    input.sanitizer = SanitizerConfig::ALL;
    let report = simulate(&input).unwrap_or_else(|e| panic!("{}: {e}", input.kernel));
    report.sanitizer.expect("a report was asked for").findings
}

fn of(findings: &[Finding], hazard: Hazard) -> Vec<Finding> {
    findings
        .iter()
        .filter(|f| f.hazard == hazard)
        .copied()
        .collect()
}

#[test]
fn the_matmul_with_both_barriers_is_silent() {
    assert_eq!(findings(matmul("__syncthreads()", "__syncthreads()")), []);
}

#[test]
fn the_matmul_without_its_second_barrier_overwrites_a_tile_another_warp_still_reads() {
    let found = findings(matmul("__syncthreads()", ""));
    // Warp 0 reads all of `bs` in the products of the first tile, then writes rows 0 and 1 of
    // the second tile; warp 1, run next in the same interval, writes rows 2 and 3 over what
    // warp 0 read. Warp 1 is one that reuse would not run: it is shown alike to warp 0.
    let war = of(&found, Hazard::WriteAfterRead);
    assert!(!war.is_empty(), "{found:?}");
    assert_eq!(war[0].span.line, 11);
    assert_eq!(war[0].warp, 1);
    assert_eq!(
        war[0].other.map(|(span, warp)| (span.line, warp)),
        Some((14, 0))
    );
    assert_eq!(war[0].block, [0, 0, 0]);
    assert!(of(&found, Hazard::UninitializedShared).is_empty());
    assert!(of(&found, Hazard::DivergentSyncthreads).is_empty());
}

#[test]
fn the_matmul_without_its_first_barrier_reads_a_tile_before_other_warps_wrote_it() {
    let found = findings(matmul("", "__syncthreads()"));
    // Warp 1 reads rows 0 and 1 of `bs`, which warp 0 wrote in the same interval.
    let raw = of(&found, Hazard::ReadAfterWrite);
    assert!(!raw.is_empty(), "{found:?}");
    assert_eq!(raw[0].span.line, 14);
    assert_eq!(raw[0].warp, 1);
    assert_eq!(
        raw[0].other.map(|(span, warp)| (span.line, warp)),
        Some((11, 0))
    );
    // And warp 0 reads rows 2 to 15 of the first tile, which no warp has written yet.
    let uninitialized = of(&found, Hazard::UninitializedShared);
    assert_eq!(uninitialized.len(), 1);
    assert_eq!(uninitialized[0].warp, 0);
    assert_eq!(uninitialized[0].span.line, 14);
}

#[test]
fn the_sanitizer_changes_no_counter() {
    for (first, second) in [("__syncthreads()", ""), ("", "__syncthreads()")] {
        let input = matmul(first, second);
        let plain = simulate(&input).unwrap_or_else(|e| panic!("{e}"));
        let mut checked = input.clone();
        checked.sanitizer = SanitizerConfig::ALL;
        let checked = simulate(&checked).unwrap_or_else(|e| panic!("{e}"));
        // Without the sanitizer, warp 1 and the others take warp 0's records; with it, every
        // warp runs, and the counters are the same.
        assert!(plain
            .sampled_blocks
            .iter()
            .all(|b| b.warps_shown_alike == 7));
        assert!(checked
            .sampled_blocks
            .iter()
            .all(|b| b.warps_shown_alike == 0));
        assert_eq!(plain.counters, checked.counters);
        assert_eq!(plain.lines, checked.lines);
        assert_eq!(plain.sanitizer, None);
    }
}

#[test]
fn a_syncthreads_in_a_branch_half_the_block_takes_is_divergent() {
    let source = "
__global__ void k(float* out) {
    __shared__ float s[32];
    s[threadIdx.x] = threadIdx.x;
    if (threadIdx.x < 16) {
        __syncthreads();
    }
    out[threadIdx.x] = s[31 - threadIdx.x];
}
";
    let found = findings(h100_launch(
        source,
        "k",
        [1, 1],
        [32, 1],
        &[("out", 128)],
        &[],
    ));
    let divergent = of(&found, Hazard::DivergentSyncthreads);
    assert_eq!(divergent.len(), 1, "{found:?}");
    assert_eq!(divergent[0].span.line, 6);
    assert_eq!(divergent[0].lanes, 0x0000_ffff);
    // Without the sanitizer it is the error it always was.
    let plain = h100_launch(source, "k", [1, 1], [32, 1], &[("out", 128)], &[]);
    assert!(simulate(&plain).is_err());
}

#[test]
fn a_full_syncwarp_mask_in_a_branch_half_the_warp_takes_names_the_other_half() {
    let source = "
__global__ void k(float* out) {
    float v = threadIdx.x;
    if (threadIdx.x < 16) {
        __syncwarp(0xffffffff);
        v = 2.0f * v;
    }
    __syncwarp();
    out[threadIdx.x] = v;
}
";
    let found = findings(h100_launch(
        source,
        "k",
        [1, 1],
        [32, 1],
        &[("out", 128)],
        &[],
    ));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].hazard, Hazard::InvalidWarpMask);
    assert_eq!(found[0].span.line, 5);
    assert_eq!(found[0].lanes, 0xffff_0000);
}

const REDUCTION: &str = "
__global__ void sum(const float* in, float* out) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (int stride = 32; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
";

#[test]
fn a_reduction_over_48_threads_reads_the_16_words_nobody_wrote() {
    let launch = |threads: u32| {
        h100_launch(
            REDUCTION,
            "sum",
            [2, 1],
            [threads, 1],
            &[("in", 2 * 4 * u64::from(threads)), ("out", 8)],
            &[],
        )
    };
    assert_eq!(findings(launch(64)), []);
    let found = findings(launch(48));
    assert_eq!(found.len(), 1, "{found:?}");
    // With stride 32, lanes 16 to 31 of warp 0 read s[48] to s[63]: bytes 192 onwards.
    assert_eq!(found[0].hazard, Hazard::UninitializedShared);
    assert_eq!(found[0].span.line, 9);
    assert_eq!(found[0].warp, 0);
    assert_eq!(found[0].lanes, 0xffff_0000);
    assert_eq!(found[0].address, Some(192));
}

/// The sanitizer's findings on every launch of a reference file, by id.
fn findings_in(file: &str, folder: &str) -> Vec<(String, Vec<Finding>)> {
    read_lines(file)
        .into_iter()
        .filter(|row| row["spec"].is_object())
        .map(|row| {
            let id = row["id"].as_str().unwrap_or("?").to_string();
            let input = input_from_spec_in(&row["spec"], folder)
                .unwrap_or_else(|e| panic!("{id}: bad spec: {e}"));
            let found = findings(input);
            (id, found)
        })
        .filter(|(_, found)| !found.is_empty())
        .collect()
}

#[test]
fn the_probes_have_no_finding_but_the_one_that_races_on_purpose() {
    // `p_nobarrier` measures its loop's cost without barriers: each thread reads its neighbour's
    // word while the neighbour's warp may be writing it, and nothing uses what it read. Warp 1
    // lane 0 writes s[32], which warp 0 lane 31 read; warp 7 lane 31 reads s[0], which warp 0
    // wrote.
    let found = findings_in("probes/time.jsonl", "probes");
    let ids: Vec<&str> = found.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["p_nobarrier grid=1056 block=256 iters=512"]);
    let hazards: Vec<(Hazard, u32, u32, Option<u64>)> = found[0]
        .1
        .iter()
        .map(|f| (f.hazard, f.warp, f.lanes, f.address))
        .collect();
    assert_eq!(
        hazards,
        [
            (Hazard::WriteAfterRead, 1, 1, Some(128)),
            (Hazard::ReadAfterWrite, 7, 1 << 31, Some(0)),
        ]
    );
}

#[test]
fn the_warp_probes_have_no_finding() {
    // Shuffles, votes, cooperative groups' tiles and the n-body tiles: every mask names the
    // lanes that run the call, and the tiled loop waits at both barriers.
    assert_eq!(findings_in("warp_probes/time.jsonl", "warp_probes"), []);
}

#[test]
fn the_students_launches_have_no_finding() {
    assert_eq!(findings_in("students/time.jsonl", "students"), []);
}

#[test]
fn the_lecture_kernels_measured_have_no_finding() {
    let reference = read_json("h100.json");
    let mut noisy = Vec::new();
    for run in reference["ncu"].as_array().into_iter().flatten() {
        let Ok(input) = input_from_spec(&run["launch_spec"]) else {
            continue;
        };
        let found = findings(input);
        if !found.is_empty() {
            noisy.push((run["launch_spec"]["kernel"].clone(), found));
        }
    }
    assert_eq!(noisy, []);
}

#[test]
fn the_lesson_kernels_not_measured_have_no_finding() {
    let boundary = matmul_launch(BOUNDARY, "mm_tiled_guarded", 100, 16, h100());
    let mut swizzle = h100_launch(
        SWIZZLE,
        "tr_swizzle",
        [4, 4],
        [32, 8],
        &[("out", 128 * 128 * 4), ("in", 128 * 128 * 4)],
        &[("n", 128)],
    );
    swizzle.block = Dim3::new(32, 8, 1);
    let mut divergence = h100_launch(
        DIVERGENCE,
        "branch",
        [2, 1],
        [256, 1],
        &[("out", 2048)],
        &[],
    );
    divergence.args = vec![
        ("iters".to_string(), Value::Int(16)),
        ("split".to_string(), Value::Int(16)),
    ];
    for input in [boundary, swizzle, divergence] {
        assert_eq!(findings(input.clone()), [], "{}", input.kernel);
    }
}
