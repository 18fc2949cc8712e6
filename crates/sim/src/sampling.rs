//! Block sampling: which blocks of a grid to simulate, and how their counters scale to the grid.
//!
//! A 4096x4096 matmul launches 65,536 blocks of 256 threads; simulating each would take seconds.
//! The lecture kernels behave alike in every block except at the edges of the grid, where bounds
//! checks (`if (i < n)`, `if (i > 0)`) switch lanes off. So the grid is split, dimension by
//! dimension, into its first index, its last index and the interior between them; a block's class is
//! the combination of those positions (at most 3 x 3 x 3 = 27 classes). One representative block of
//! each class is simulated (the interior one taken from the middle of the grid), and its counters
//! count for every block of its class. Where the blocks of a class are alike, as they are in the
//! lecture kernels, the extrapolated totals are exact.
//!
//! Some kernels break that premise: a Mandelbrot row's iterations, a triangular loop's trip count
//! or a branch on `blockIdx` give each block of the interior its own work, and the middle block
//! then speaks for none of the others (the middle row of the Mandelbrot set is its deepest). Such
//! kernels show it against the first and the last block of the same row or column: the middle
//! block issues another number of instructions than both, where a lecture kernel's differs from
//! one end at most (a bounds check cuts the last block short, `i > 0` idles a lane of the first).
//! When the representative of a class with an interior position shows it (`simulate` compares
//! them; `classes` lists both ends before the interior), the class is split into `strata` along its interior dimensions
//! (at most `MAX_STRATA` of them, each a run of consecutive blocks) and one block of each is
//! simulated for the blocks of its stratum: stratified sampling (Cochran, "Sampling
//! Techniques", 1977, chapter 5), which follows work that changes smoothly across the grid.
//!
//! Many kernels need fewer runs still: where `kernel::block_shift` proves that every block does
//! the same work at addresses shifted by a fixed amount per block, a class whose shift is a whole
//! number of 128-byte lines reuses another class's run (`simulate`), and a 1024-wide tiled matmul
//! in 32 x 32 tiles runs one block for its nine classes.

use serde::{Deserialize, Serialize};

/// Where a block index lies along one grid dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgePosition {
    /// The dimension has a single block.
    Only,
    First,
    Interior,
    Last,
}

/// All blocks that share their edge positions, represented by one simulated block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BlockClass {
    pub position: [EdgePosition; 3],
    /// The block that is simulated for the class.
    pub representative: [u32; 3],
    /// How many blocks of the grid belong to the class.
    pub n_blocks: u64,
}

/// The most strata one class is split into; its blocks' counters then cost that many blocks' runs.
pub const MAX_STRATA: u32 = 16;

/// Splits `class`'s interior dimensions of `grid` into consecutive runs of blocks, at most
/// `MAX_STRATA` strata in all, shared out so that a short dimension keeps each of its blocks and
/// the rest go to the longer ones. A stratum is represented by its middle block, except the one
/// holding `class.representative`, which keeps it (it has run already). A class with no interior
/// dimension comes back alone.
pub fn strata(class: &BlockClass, grid: [u32; 3]) -> Vec<BlockClass> {
    // Per dimension: the runs of block indices (start, end) and which one holds the representative.
    let mut dims: Vec<(usize, u32)> = (0..3)
        .filter(|&d| class.position[d] == EdgePosition::Interior)
        .map(|d| (d, grid[d].max(1).saturating_sub(2)))
        .collect();
    if dims.is_empty() {
        return vec![class.clone()];
    }
    crate::sorting::sort_by_key(&mut dims, |&(_, interior)| interior);
    let mut runs: [Vec<(u32, u32)>; 3] = class.representative.map(|index| vec![(index, index + 1)]);
    let mut budget = MAX_STRATA;
    let mut left = dims.len() as u32;
    for &(d, interior) in &dims {
        // An even share of what is left of the budget: the integer root of it.
        let share = (1..=budget)
            .rev()
            .find(|k| k.pow(left) <= budget)
            .unwrap_or(1);
        let count = share.min(interior).max(1);
        budget /= count;
        left -= 1;
        runs[d] = (0..count)
            .map(|j| {
                let start = 1 + (u64::from(j) * u64::from(interior) / u64::from(count)) as u32;
                let end = 1 + (u64::from(j + 1) * u64::from(interior) / u64::from(count)) as u32;
                (start, end)
            })
            .collect();
    }
    let mut out = Vec::new();
    for &(x0, x1) in &runs[0] {
        for &(y0, y1) in &runs[1] {
            for &(z0, z1) in &runs[2] {
                let ranges = [(x0, x1), (y0, y1), (z0, z1)];
                let holds_representative =
                    (0..3).all(|d| (ranges[d].0..ranges[d].1).contains(&class.representative[d]));
                let representative = if holds_representative {
                    class.representative
                } else {
                    [0, 1, 2].map(|d| ranges[d].0 + (ranges[d].1 - ranges[d].0) / 2)
                };
                let n_blocks = ranges
                    .iter()
                    .map(|&(start, end)| u64::from(end - start))
                    .fold(1u64, u64::saturating_mul);
                out.push(BlockClass {
                    position: class.position,
                    representative,
                    n_blocks,
                });
            }
        }
    }
    out
}

/// Splits `grid` into its edge classes. Dimensions of 0 are treated as 1. A class's block count
/// saturates at `u64::MAX` rather than wrap; no grid within a device's launch limits
/// (`Device::check_launch`) comes near it.
pub fn classes(grid: [u32; 3]) -> Vec<BlockClass> {
    let per_dimension: Vec<Vec<(EdgePosition, u32, u64)>> =
        grid.iter().map(|&extent| positions(extent)).collect();
    let mut out = Vec::new();
    for &(px, ix, nx) in &per_dimension[0] {
        for &(py, iy, ny) in &per_dimension[1] {
            for &(pz, iz, nz) in &per_dimension[2] {
                out.push(BlockClass {
                    position: [px, py, pz],
                    representative: [ix, iy, iz],
                    n_blocks: nx.saturating_mul(ny).saturating_mul(nz),
                });
            }
        }
    }
    out
}

/// The positions along one dimension: (position, representative index, number of blocks).
fn positions(extent: u32) -> Vec<(EdgePosition, u32, u64)> {
    match extent {
        0 | 1 => vec![(EdgePosition::Only, 0, 1)],
        2 => vec![(EdgePosition::First, 0, 1), (EdgePosition::Last, 1, 1)],
        // The interior comes last, so that `simulate` can compare its block with both ends.
        n => vec![
            (EdgePosition::First, 0, 1),
            (EdgePosition::Last, n - 1, 1),
            (EdgePosition::Interior, n / 2, u64::from(n - 2)),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(grid: [u32; 3], expected_classes: usize, expected_representatives: &[[u32; 3]]) {
        let found = classes(grid);
        assert_eq!(found.len(), expected_classes);
        let total: u64 = found.iter().map(|class| class.n_blocks).sum();
        let grid_blocks: u64 = grid.iter().map(|&e| u64::from(e.max(1))).product();
        assert_eq!(
            total, grid_blocks,
            "the classes cover the grid exactly once"
        );
        for representative in expected_representatives {
            assert!(
                found
                    .iter()
                    .any(|class| &class.representative == representative),
                "{representative:?} is simulated"
            );
        }
    }

    #[test]
    fn a_one_dimensional_grid_has_a_first_an_interior_and_a_last_block() {
        check([16384, 1, 1], 3, &[[0, 0, 0], [8192, 0, 0], [16383, 0, 0]]);
    }

    #[test]
    fn a_matmul_grid_has_nine_classes_with_the_corners_simulated() {
        check(
            [64, 64, 1],
            9,
            &[[0, 0, 0], [63, 63, 0], [32, 32, 0], [0, 32, 0]],
        );
    }

    #[test]
    fn a_single_block_is_simulated_alone() {
        check([1, 1, 1], 1, &[[0, 0, 0]]);
    }

    #[test]
    fn a_grid_of_two_is_simulated_in_full() {
        check([2, 1, 1], 2, &[[0, 0, 0], [1, 0, 0]]);
    }

    #[test]
    fn the_interior_of_an_impossible_grid_saturates_instead_of_wrapping() {
        let found = classes([u32::MAX; 3]);
        assert_eq!(found.len(), 27);
        let interior = found
            .iter()
            .find(|class| class.position == [EdgePosition::Interior; 3])
            .map(|class| class.n_blocks);
        assert_eq!(interior, Some(u64::MAX));
    }

    /// The strata of the class at `position` of `grid`: their count, their blocks in all, and the
    /// representatives expected among them.
    fn check_strata(
        grid: [u32; 3],
        position: [EdgePosition; 3],
        expected_strata: usize,
        expected_representatives: &[[u32; 3]],
    ) {
        let class = classes(grid)
            .into_iter()
            .find(|class| class.position == position)
            .expect("the class exists");
        let found = strata(&class, grid);
        assert_eq!(found.len(), expected_strata);
        assert_eq!(
            found.iter().map(|s| s.n_blocks).sum::<u64>(),
            class.n_blocks,
            "the strata cover the class exactly once"
        );
        for representative in expected_representatives {
            assert!(
                found.iter().any(|s| &s.representative == representative),
                "{representative:?} is simulated"
            );
        }
    }

    #[test]
    fn mandelbrot_rows_split_into_sixteen_runs_of_rows_and_keep_the_middle_one() {
        use EdgePosition::*;
        // 1,022 interior rows in 16 runs of 63 or 64; the middle row 512 keeps speaking for its own.
        check_strata(
            [4, 1024, 1],
            [First, Interior, Only],
            16,
            &[[0, 512, 0], [0, 32, 0]],
        );
        // Two interior columns keep one stratum each; the rows share the other 8.
        check_strata([4, 1024, 1], [Interior, Interior, Only], 16, &[[2, 512, 0]]);
    }

    #[test]
    fn a_class_without_an_interior_dimension_is_its_own_stratum() {
        use EdgePosition::*;
        check_strata([64, 64, 1], [First, Last, Only], 1, &[[0, 63, 0]]);
        check_strata([3, 1, 1], [Interior, Only, Only], 1, &[[1, 0, 0]]);
    }

    #[test]
    fn a_zero_extent_is_treated_as_one() {
        check([0, 5, 1], 3, &[[0, 2, 0]]);
    }
}
