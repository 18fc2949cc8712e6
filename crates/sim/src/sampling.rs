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
        n => vec![
            (EdgePosition::First, 0, 1),
            (EdgePosition::Interior, n / 2, u64::from(n - 2)),
            (EdgePosition::Last, n - 1, 1),
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

    #[test]
    fn a_zero_extent_is_treated_as_one() {
        check([0, 5, 1], 3, &[[0, 2, 0]]);
    }
}
