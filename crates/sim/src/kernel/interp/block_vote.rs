//! The vote of a barrier that votes (`__syncthreads_count`, `__syncthreads_and`,
//! `__syncthreads_or`; CUDA C++ Programming Guide, "Synchronization Functions"): each warp adds
//! its lanes' predicates as it arrives at the barrier (`WarpOp::BlockVote`), the block loop
//! releases the barrier once every warp has arrived (`Simulation::run_warps`), and each warp
//! reads the released vote as it goes on (`WarpOp::BlockVoteResult`). The value is known only
//! then, which is why a kernel that votes runs every warp (`Feature::makes_output`).

use crate::kernel::ir::BinOp;

/// The threads that arrived at the open barrier and how many of them voted true, and the same
/// of the barrier last released.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct BlockVotes {
    arrived: u32,
    true_votes: u32,
    released_arrived: u32,
    released_true_votes: u32,
}

impl BlockVotes {
    /// The lanes of `mask` arrive, each voting true where its `values` lane is not zero.
    pub(super) fn vote(&mut self, mask: u32, values: &[u64]) {
        self.arrived += mask.count_ones();
        let trues = values
            .iter()
            .enumerate()
            .filter(|&(lane, &value)| mask >> lane & 1 != 0 && value != 0)
            .count();
        self.true_votes += trues as u32;
    }

    /// Every warp has arrived: the vote is released and the next barrier's begins.
    pub(super) fn release(&mut self) {
        self.released_arrived = std::mem::take(&mut self.arrived);
        self.released_true_votes = std::mem::take(&mut self.true_votes);
    }

    /// The released vote: the count of true votes (`Add`), 1 if every arrived thread voted true
    /// (`BitAnd`), or 1 if any did (`BitOr`).
    pub(super) fn result(&self, reduce: BinOp) -> u64 {
        match reduce {
            BinOp::Add => u64::from(self.released_true_votes),
            BinOp::BitAnd => u64::from(self.released_true_votes == self.released_arrived),
            _ => u64::from(self.released_true_votes > 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BlockVotes;
    use crate::kernel::ir::BinOp;

    #[test]
    fn a_released_vote_counts_and_ands_and_ors_the_arrived_lanes_only() {
        let mut votes = BlockVotes::default();
        let mut values = [0u64; 32];
        values[0] = 1;
        values[5] = 7;
        values[9] = 1;
        // Lane 9 votes true but has not arrived: two true votes of eight threads.
        votes.vote(0xFF, &values);
        assert_eq!(votes.result(BinOp::Add), 0, "nothing released yet");
        votes.release();
        assert_eq!(votes.result(BinOp::Add), 2);
        assert_eq!(votes.result(BinOp::BitAnd), 0);
        assert_eq!(votes.result(BinOp::BitOr), 1);
        votes.vote(0b11, &[1; 32]);
        votes.release();
        assert_eq!(votes.result(BinOp::BitAnd), 1);
    }
}
