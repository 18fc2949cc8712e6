//! The warp-level primitives lane by lane: shuffles (with `width`), votes, `__match_any_sync` and
//! `__reduce_*_sync`, against results worked out by hand from the CUDA C++ Programming Guide's
//! definitions; the capability a preset needs for each; and the sanitizer's report of a mask that
//! names lanes that do not run the call.

mod common;

use common::{f32s, h100_launch, i32s, one_warp_buffers};
use memplay_sim::device::g80;
use memplay_sim::sanitizer::{Hazard, SanitizerConfig};
use memplay_sim::simulate;

/// Each lane's value of `out` after one warp of 32 runs `kernel`.
fn lanes(source: &str, kernel: &str) -> Vec<i32> {
    i32s(&one_warp_buffers(source, kernel, &[("out", 128)])[0])
}

#[test]
fn a_shuffle_down_reduction_sums_the_warp_into_lane_0_step_by_step() {
    let source = "__global__ void first_step(int* out) {
  int v = threadIdx.x;
  v += __shfl_down_sync(0xffffffff, v, 16);
  out[threadIdx.x] = v;
}
__global__ void all_steps(int* out) {
  int v = threadIdx.x;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  out[threadIdx.x] = v;
}
";
    // Lanes 0-15 add lane + 16; lanes 16-31 have no lane 16 above and add their own value.
    let expected: Vec<i32> = (0..32)
        .map(|l| if l < 16 { 2 * l + 16 } else { 2 * l })
        .collect();
    assert_eq!(lanes(source, "first_step"), expected);
    // 0 + 1 + ... + 31 = 496 in lane 0.
    assert_eq!(lanes(source, "all_steps")[0], 496);
}

#[test]
fn a_butterfly_gives_every_lane_the_sum_and_an_up_scan_the_prefix_sums() {
    let source = "__global__ void butterfly(int* out) {
  int v = threadIdx.x;
  for (int m = 16; m > 0; m /= 2) v += __shfl_xor_sync(0xffffffff, v, m);
  out[threadIdx.x] = v;
}
__global__ void scan(int* out) {
  int v = threadIdx.x + 1;
  for (int d = 1; d < 32; d *= 2) {
    int t = __shfl_up_sync(0xffffffff, v, d);
    if (threadIdx.x >= d) v += t;
  }
  out[threadIdx.x] = v;
}
";
    assert_eq!(lanes(source, "butterfly"), vec![496; 32]);
    // 1 + 2 + ... + (l + 1).
    let prefix: Vec<i32> = (0..32).map(|l| (l + 1) * (l + 2) / 2).collect();
    assert_eq!(lanes(source, "scan"), prefix);
}

#[test]
fn a_width_of_8_shuffles_within_each_eighth_of_the_warp() {
    let source = "__global__ void k(int* out) {
  out[threadIdx.x] = __shfl_sync(0xffffffff, (int)threadIdx.x, 9, 8) * 100
      + __shfl_down_sync(0xffffffff, (int)threadIdx.x, 6, 8);
}
";
    // Source lane 9 in a segment of 8 is its lane 1; down by 6 leaves the segment past lane 1.
    let expected: Vec<i32> = (0..32)
        .map(|l| {
            let start = l & !7;
            let down = if l - start + 6 < 8 { l + 6 } else { l };
            (start + 1) * 100 + down
        })
        .collect();
    assert_eq!(lanes(source, "k"), expected);
}

#[test]
fn a_ballot_sets_the_bits_of_the_lanes_whose_predicate_holds_and_votes_follow() {
    let source = "__global__ void k(int* out) {
  unsigned bits = __ballot_sync(0xffffffff, threadIdx.x % 3 == 0);
  int any = __any_sync(0xffffffff, threadIdx.x == 31);
  int all = __all_sync(0xffffffff, threadIdx.x < 31);
  out[threadIdx.x] = threadIdx.x == 0 ? (int)bits : any * 10 + all;
}
";
    // Lanes 0, 3, ..., 30: bits 0x49249249.
    let out = lanes(source, "k");
    assert_eq!(out[0] as u32, 0x4924_9249);
    assert_eq!(out[1], 10);
}

#[test]
fn match_any_groups_equal_values_and_reduce_add_sums_them() {
    let source = "__global__ void k(int* out) {
  unsigned same = __match_any_sync(0xffffffff, threadIdx.x % 4);
  out[threadIdx.x] = (int)(same == (0x11111111u << (threadIdx.x % 4)))
      + 10 * (int)__reduce_add_sync(0xffffffff, threadIdx.x)
      + 100000 * __reduce_max_sync(0xffffffff, (int)threadIdx.x - 40);
}
";
    // Lanes l, l + 4, ... share l % 4: bits 0x11111111 << (l % 4). The sum is 496; the largest
    // of lane - 40 is -9.
    assert_eq!(lanes(source, "k"), vec![1 + 4960 - 900_000; 32]);
}

#[test]
fn sixty_four_bit_and_double_values_shuffle_whole() {
    let source = "__global__ void k(float* out) {
  long long wide = (long long)threadIdx.x << 33;
  double d = 1.5 * threadIdx.x;
  long long up = __shfl_down_sync(0xffffffff, wide, 1);
  double x = __shfl_xor_sync(0xffffffff, d, 1);
  out[threadIdx.x] = (float)(up >> 33) * 1000.0f + (float)x;
}
";
    let out = f32s(&one_warp_buffers(source, "k", &[("out", 128)])[0]);
    let expected: Vec<f32> = (0..32)
        .map(|l: u32| {
            let down = if l < 31 { l + 1 } else { l };
            down as f32 * 1000.0 + 1.5 * (l ^ 1) as f32
        })
        .collect();
    assert_eq!(out, expected);
}

#[test]
fn a_g80_refuses_a_shuffle_and_names_the_capability_it_needs() {
    let source =
        "__global__ void k(int* out) { out[threadIdx.x] = __shfl_sync(0xffffffff, 1, 0); }";
    let mut input = h100_launch(source, "k", [1, 1], [32, 1], &[("out", 128)], &[]);
    assert!(simulate(&input).is_ok());
    input.device = g80();
    let error = simulate(&input)
        .expect_err("a G80 has no shuffles")
        .to_string();
    assert!(error.contains("__shfl_sync"), "{error}");
    assert!(error.contains("3.0"), "{error}");
}

#[test]
fn a_full_mask_shuffle_inside_a_branch_half_the_warp_takes_names_the_other_half() {
    let source = "__global__ void k(float* out) {
  float v = threadIdx.x;
  if (threadIdx.x % 32 < 16) v += __shfl_down_sync(0xffffffff, v, 8);
  out[threadIdx.x] = v;
}
";
    let mut input = h100_launch(source, "k", [1, 1], [32, 1], &[("out", 128)], &[]);
    input.sanitizer = SanitizerConfig::ALL;
    let report = simulate(&input).expect("simulates");
    let findings = report.sanitizer.expect("the sanitizer ran").findings;
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].hazard, Hazard::InvalidWarpMask);
    assert_eq!(findings[0].lanes, 0xffff_0000);
    assert_eq!(findings[0].span.line, 3);
}

#[test]
fn a_cooperative_groups_tile_reduces_scans_and_syncs_like_the_primitives() {
    let source = "#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void k(int* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<8> tile = cg::tiled_partition<8>(block);
  int v = block.thread_rank();
  int sum = cg::reduce(tile, v, cg::plus<int>());
  int top = cg::reduce(tile, v, cg::greater<int>());
  int up = tile.shfl_up(v, 1);
  block.sync();
  tile.sync();
  out[block.thread_rank()] = sum * 10000 + top * 100 + (int)tile.meta_group_rank() * 10
      + (tile.thread_rank() == 0 ? 0 : v - up);
}
";
    // Tile t holds lanes 8t to 8t + 7: their sum is 64t + 28 and their largest 8t + 7; each
    // lane but the first reads the lane below it, one less than its own.
    let expected: Vec<i32> = (0..32)
        .map(|l| {
            let t = l / 8;
            (64 * t + 28) * 10000 + (8 * t + 7) * 100 + t * 10 + i32::from(l % 8 != 0)
        })
        .collect();
    assert_eq!(lanes(source, "k"), expected);
}

#[test]
fn a_shuffle_takes_its_lane_or_delta_from_the_low_five_bits_as_ptx_does() {
    let source = "__global__ void k(int* out) {
  out[threadIdx.x] = __shfl_down_sync(0xffffffff, (int)threadIdx.x, 33) * 100
      + __shfl_up_sync(0xffffffff, (int)threadIdx.x, 34, 16);
}
";
    // 33 is 1 in its low five bits: lane l reads lane l + 1, and lane 31 its own value. 34 is 2:
    // within each half of the warp, lanes 2 to 15 read the lane two below, 0 and 1 their own.
    let expected: Vec<i32> = (0..32)
        .map(|l| {
            let down = if l < 31 { l + 1 } else { l };
            let up = if l % 16 >= 2 { l - 2 } else { l };
            down * 100 + up
        })
        .collect();
    assert_eq!(lanes(source, "k"), expected);
}

#[test]
fn coalesced_threads_rank_the_lanes_that_run_the_call_and_aggregate_their_atomic() {
    let source = "#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* out) {
  __shared__ int counter;
  if (threadIdx.x == 0) counter = 100;
  __syncwarp();
  int v = -1;
  if (threadIdx.x % 3 == 0) {
    cg::coalesced_group active = cg::coalesced_threads();
    int base = 0;
    if (active.thread_rank() == 0) base = atomicAdd(&counter, (int)active.size());
    base = active.shfl(base, 0);
    unsigned odd = active.ballot(threadIdx.x % 2);
    v = (base + active.thread_rank()) * 10000 + (int)(odd & 0xff) * 10
        + active.shfl_down((int)active.thread_rank(), 1) - (int)active.thread_rank();
  }
  out[threadIdx.x] = v;
}
";
    // Lanes 0, 3, ..., 30 run the call: 11 members, ranked 0 to 10 by lane. The first adds 11 to
    // the counter and every member gets 100 back, plus its rank. Member k is lane 3k, odd for odd
    // k: ballot bits 1, 3, 5, 7 of the first byte, 0xaa. A member reads the next rank's rank (one
    // more), and the last, rank 10, its own.
    let expected: Vec<i32> = (0..32)
        .map(|l| {
            if l % 3 != 0 {
                return -1;
            }
            let rank = l / 3;
            (100 + rank) * 10000 + 0xaa * 10 + i32::from(rank < 10)
        })
        .collect();
    assert_eq!(lanes(source, "k"), expected);
}

#[test]
fn a_run_time_tile_ranks_its_threads_and_syncs_within_or_across_warps() {
    let source = "#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(int* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_group tile = cg::tiled_partition(block, 8);
  __shared__ int s[32];
  s[threadIdx.x] = tile.thread_rank();
  tile.sync();
  cg::thread_group whole = cg::tiled_partition(block, 64);
  whole.sync();
  out[threadIdx.x] = s[threadIdx.x ^ 1] + 100 * (int)tile.meta_group_rank()
      + 1000 * (int)whole.size();
}
";
    // Tile t holds threads 8t to 8t + 7; thread l reads the rank of its neighbour l ^ 1.
    let expected: Vec<i32> = (0..32)
        .map(|l| ((l ^ 1) % 8) + 100 * (l / 8) + 64_000)
        .collect();
    assert_eq!(lanes(source, "k"), expected);
}
