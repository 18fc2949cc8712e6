//! C++11's range-based `for` and `static_assert`, file-scope `__shared__` variables and the
//! counting barriers `__syncthreads_count`, `__syncthreads_and` and `__syncthreads_or`, run
//! against values worked out by hand.

mod common;

use common::{f32s, h100_launch, i32s, one_warp_buffers};
use memplay_sim::device::g80;
use memplay_sim::kernel::{compile, Dim3, Launch, Simulation, Value};
use memplay_sim::sanitizer::{Hazard, SanitizerConfig};
use memplay_sim::simulate;

/// Runs block `block` of a launch of `kernel` with `grid` blocks of `threads` threads over the
/// buffers `buffers` (name, bytes) and returns what each buffer holds then, in the order given.
fn block_buffers(
    source: &str,
    kernel: &str,
    [grid, threads]: [u32; 2],
    blocks: &[u32],
    buffers: &[(&str, u64)],
) -> Vec<Vec<u8>> {
    let program = compile(source, &[]).unwrap_or_else(|d| panic!("{d}"));
    let launch = Launch {
        grid: Dim3::new(grid, 1, 1),
        block: Dim3::new(threads, 1, 1),
        dyn_smem: 0,
        args: Vec::<(String, Value)>::new(),
        buffers: buffers.iter().map(|&(n, b)| (n.to_string(), b)).collect(),
        fills: vec![],
        pointers: vec![],
    };
    let mut sim = Simulation::new(&program, kernel, &launch, 7).unwrap_or_else(|d| panic!("{d}"));
    for &block in blocks {
        sim.run_block([block, 0, 0], 1_000_000)
            .unwrap_or_else(|d| panic!("{d}"));
    }
    buffers
        .iter()
        .map(|(name, _)| sim.read_buffer(name).unwrap_or_default())
        .collect()
}

#[test]
fn a_range_for_sums_an_array_and_doubles_it_through_a_reference() {
    let source = "struct Particle { float x, m; };
__global__ void k(float* out) {
  static_assert(sizeof(Particle) == 8, \"two floats\");
  float v[4] = {1, 2, 3, 4};
  float sum = 0;
  for (float a : v) sum += a;
  for (auto& a : v) a *= 2;
  float doubled = 0;
  for (const float& a : v) doubled += a;
  __shared__ Particle ps[3];
  if (threadIdx.x < 3) { ps[threadIdx.x].x = threadIdx.x; ps[threadIdx.x].m = 2; }
  __syncthreads();
  float moment = 0;
  for (const auto& p : ps) moment += p.x * p.m;
  out[threadIdx.x] = sum + 100 * doubled + 10000 * moment;
}
";
    let out = f32s(&one_warp_buffers(source, "k", &[("out", 128)])[0]);
    // 1 + 2 + 3 + 4 = 10; doubled, 20; the moment 0*2 + 1*2 + 2*2 = 6.
    assert_eq!(out, vec![10.0 + 2000.0 + 60000.0; 32]);
}

#[test]
fn syncthreads_count_and_and_or_vote_over_every_thread_of_the_block() {
    let source = "__global__ void k(int* out) {
  int every_third = __syncthreads_count(threadIdx.x % 3 == 0);
  int all_below = __syncthreads_and(threadIdx.x < 256);
  int all_but_one = __syncthreads_and(threadIdx.x != 200);
  int any_last = 0;
  if (__syncthreads_or(threadIdx.x == 255)) any_last = 1;
  int none = __syncthreads_or(0);
  out[threadIdx.x] = every_third + 1000 * all_below + 10000 * all_but_one + 100000 * any_last
                     + 1000000 * none;
}
";
    let out = i32s(&block_buffers(source, "k", [1, 256], &[0], &[("out", 1024)])[0]);
    // 0, 3, ..., 255: 256 / 3 rounded up is 86 threads; every thread is below 256; thread 200
    // is not other than 200; thread 255 is the last; no thread votes for 0.
    assert_eq!(out, vec![86 + 1000 + 100_000; 256]);
}

#[test]
fn a_vote_in_a_loop_counts_the_threads_still_working_at_each_barrier() {
    // Thread t works t % 5 rounds; the loop stops at the first round where none works.
    let source = "__global__ void k(int* out) {
  int rounds = 0, total = 0, working;
  do {
    working = __syncthreads_count(threadIdx.x % 5 > rounds);
    total += working;
    rounds++;
  } while (working > 0);
  out[threadIdx.x] = rounds * 1000 + total;
}
";
    let out = i32s(&block_buffers(source, "k", [1, 64], &[0], &[("out", 256)])[0]);
    // Of 0..63, residues 0 to 3 hold 13 threads each and residue 4 holds 12. Round 0: residues
    // 1 to 4 work, 13 * 3 + 12 = 51; round 1: 13 * 2 + 12 = 38; round 2: 13 + 12 = 25; round 3:
    // 12; round 4: none. Five rounds, 51 + 38 + 25 + 12 = 126 in all.
    assert_eq!(out, vec![5 * 1000 + 126; 64]);
}

#[test]
fn a_barrier_that_votes_is_one_barrier_and_issues_its_vote_and_its_result() {
    let voting =
        "__global__ void k(int* out) { out[threadIdx.x] = __syncthreads_or(threadIdx.x); }";
    let plain = "__global__ void k(int* out) {
  int vote = threadIdx.x != 0;
  __syncthreads();
  out[threadIdx.x] = vote;
}";
    let counters = |source: &str| {
        let input = h100_launch(source, "k", [1, 1], [64, 1], &[("out", 256)], &[]);
        let report = simulate(&input).unwrap_or_else(|e| panic!("{e}"));
        ["barrier_warp_instructions", "warp_instructions"]
            .map(|name| report.counters.get(name).unwrap_or(f64::NAN))
    };
    let [voting_barriers, voting_instructions] = counters(voting);
    let [plain_barriers, plain_instructions] = counters(plain);
    // Two warps wait at one barrier either way. Besides the barrier and the store, the voting
    // kernel issues three instructions per warp (the predicate made a bool, the vote, its
    // result), the plain one two (the comparison, its value made an int): one more per warp.
    assert_eq!([voting_barriers, plain_barriers], [2.0, 2.0]);
    assert_eq!(voting_instructions - plain_instructions, 2.0);
}

#[test]
fn a_g80_refuses_a_barrier_that_votes_and_names_compute_capability_2_0() {
    let source = "__global__ void k(int* out) { out[threadIdx.x] = __syncthreads_or(1); }";
    let mut input = h100_launch(source, "k", [1, 1], [64, 1], &[("out", 256)], &[]);
    assert!(simulate(&input).is_ok());
    input.device = g80();
    let error = simulate(&input)
        .expect_err("a G80 has no barrier that votes")
        .to_string();
    assert!(error.contains("__syncthreads_or"), "{error}");
    assert!(error.contains("2.0"), "{error}");
}

/// The Programming Guide's last-block sum ("Memory Fence Functions"), with a file-scope
/// `__shared__` flag: every block writes its partial sum, and the block that finds itself last
/// by `atomicInc` on a file-scope counter adds the partial sums.
const LAST_BLOCK_SUM: &str = "__device__ unsigned int count = 0;
__shared__ bool isLastBlockDone;
__shared__ float partial[32];

__device__ float block_sum(const float* values) {
  partial[threadIdx.x] = values[threadIdx.x];
  __syncthreads();
  for (int stride = 16; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  return partial[0];
}

__global__ void sum(const float* array, volatile float* result, float* total) {
  float partialSum = block_sum(array + blockIdx.x * 32);
  if (threadIdx.x == 0) {
    result[blockIdx.x] = partialSum;
    __threadfence();
    unsigned int value = atomicInc(&count, gridDim.x);
    isLastBlockDone = (value == (gridDim.x - 1));
  }
  __syncthreads();
  if (isLastBlockDone) {
    float totalSum = 0;
    if (threadIdx.x < gridDim.x) totalSum = result[threadIdx.x];
    partial[threadIdx.x] = totalSum;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int b = 1; b < gridDim.x; b++) totalSum += partial[b];
      total[0] = totalSum;
      count = 0;
    }
  }
}

__global__ void flag_only(int* out) {
  if (threadIdx.x == 0) isLastBlockDone = blockIdx.x == 1;
  __syncthreads();
  out[blockIdx.x * 32 + threadIdx.x] = isLastBlockDone;
}

__global__ void neither(int* out) { out[threadIdx.x] = 1; }
";

#[test]
fn the_last_of_eight_blocks_sums_their_partial_sums_through_a_file_scope_shared_flag() {
    // Element i of the array is i: block b sums 32b to 32b + 31, 1024b + 496; eight blocks sum
    // 0 to 255, 32640.
    let array: Vec<u8> = (0..256).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let program = compile(LAST_BLOCK_SUM, &[]).unwrap_or_else(|d| panic!("{d}"));
    let launch = Launch {
        grid: Dim3::new(8, 1, 1),
        block: Dim3::new(32, 1, 1),
        dyn_smem: 0,
        args: Vec::<(String, Value)>::new(),
        buffers: vec![
            ("array".to_string(), 1024),
            ("result".to_string(), 32),
            ("total".to_string(), 4),
        ],
        fills: vec![],
        pointers: vec![],
    };
    let mut sim = Simulation::new(&program, "sum", &launch, 7).unwrap_or_else(|d| panic!("{d}"));
    assert!(sim.write_buffer("array", &array));
    for block in 0..8 {
        sim.run_block([block, 0, 0], 1_000_000)
            .unwrap_or_else(|d| panic!("{d}"));
    }
    let result = f32s(&sim.read_buffer("result").unwrap_or_default());
    let expected: Vec<f32> = (0..8).map(|b| (1024 * b + 496) as f32).collect();
    assert_eq!(result, expected);
    assert_eq!(
        f32s(&sim.read_buffer("total").unwrap_or_default()),
        [32640.0]
    );
}

#[test]
fn a_file_scope_shared_variable_counts_only_in_the_kernels_that_name_it() {
    let shared_bytes = |kernel: &str, buffers: &[(&str, u64)]| {
        let input = h100_launch(LAST_BLOCK_SUM, kernel, [2, 1], [32, 1], buffers, &[]);
        simulate(&input)
            .unwrap_or_else(|e| panic!("{kernel}: {e}"))
            .shared_bytes_per_block
    };
    // `sum` names the flag itself and the 32 floats through `block_sum`: 1 byte, then 128 at
    // the next multiple of 4 (4 to 132); `flag_only` the flag; `neither` nothing.
    let sum_buffers = [("array", 256), ("result", 8), ("total", 4)];
    assert_eq!(shared_bytes("sum", &sum_buffers), 132);
    assert_eq!(shared_bytes("flag_only", &[("out", 256)]), 1);
    assert_eq!(shared_bytes("neither", &[("out", 256)]), 0);
    let out = i32s(
        &block_buffers(
            LAST_BLOCK_SUM,
            "flag_only",
            [2, 32],
            &[0, 1],
            &[("out", 256)],
        )[0],
    );
    // Each block has its own flag: block 0's is false, block 1's true.
    assert_eq!(out, [vec![0; 32], vec![1; 32]].concat());
}

#[test]
fn the_sanitizer_names_a_barrier_that_votes_inside_a_branch_half_the_warp_takes() {
    let source = "__global__ void k(int* out) {
  int n = 0;
  if (threadIdx.x < 16) n = __syncthreads_count(1);
  out[threadIdx.x] = n;
}";
    let mut input = h100_launch(source, "k", [1, 1], [32, 1], &[("out", 128)], &[]);
    input.sanitizer = SanitizerConfig::ALL;
    let report = simulate(&input).unwrap_or_else(|e| panic!("{e}"));
    let findings = report.sanitizer.expect("a report was asked for").findings;
    // Line 3, where the call waits; lanes 0 to 15 of the one warp.
    assert!(
        findings
            .iter()
            .any(|f| f.hazard == Hazard::DivergentSyncthreads
                && f.span.line == 3
                && f.lanes == 0xFFFF),
        "{findings:?}"
    );
}
