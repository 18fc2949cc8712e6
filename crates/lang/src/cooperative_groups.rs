//! Cooperative groups (CUDA C++ Programming Guide, "Cooperative Groups"): the thread block
//! (`this_thread_block()`, `sync()`, `thread_rank()`, `size()`, `group_index()`, ...), its tiles
//! (`tiled_partition<N>(block)` with `shfl`, `shfl_down`, `shfl_up`, `shfl_xor`, `any`, `all`,
//! `ballot`, `sync()`, `thread_rank()`, `meta_group_rank()`), the run-time tiles of
//! `tiled_partition(block, n)` (`thread_group`: ranks, size and `sync()`), the coalesced group of
//! `coalesced_threads()` (the lanes that run the call, ranked by lane, with its shuffles, votes
//! and ballot) and `cg::reduce` with `cg::plus`, `cg::less`, `cg::greater` and the bitwise
//! operations.
//!
//! They are a header written in the language memplay simulates (`cooperative_groups.cu`): a tile
//! is a struct whose members call the warp primitives with the tile's lanes as the mask and its
//! size as the width, so a tile counts and times as the shuffles nvcc emits for it
//! (tests/reference/warp_probes: `cg::reduce` over a tile of 32 is five `SHFL.BFLY` for a float).
//! The header is read before a file that names `cooperative_groups`, each of its tokens placed
//! at that name, so what it does is shown on that line. A grid-wide group is refused by name: it
//! needs a cooperative launch.

use crate::lexer::{lex, Token};
use crate::span::Diagnostic;

const HEADER: &str = include_str!("cooperative_groups.cu");

/// `tokens` with memplay's cooperative groups header before them, where they name
/// `cooperative_groups`.
pub(crate) fn with_header(tokens: Vec<Token>) -> Result<Vec<Token>, Diagnostic> {
    let Some(at) = tokens
        .iter()
        .find(|t| t.ident() == Some("cooperative_groups"))
        .map(|t| t.span)
    else {
        return Ok(tokens);
    };
    let mut header = crate::preprocess::preprocess(lex(HEADER)?, &[])?;
    for token in &mut header {
        token.span = at;
    }
    header.extend(tokens);
    Ok(header)
}
