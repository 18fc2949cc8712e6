//! The lines a launch's kernel prints with `printf` (CUDA C++ Programming Guide, "Formatted
//! Output"), bounded as a student's screen needs: the first `MAX_PRINTF_LINES` lines, at most
//! `MAX_PRINTF_BYTES` bytes, in the launch order of the simulated blocks, and a count of the
//! lines not shown.
//!
//! On a GPU the order of lines from different blocks is whatever order the blocks ran in; memplay
//! gives them in block order (x fastest, as `blockIdx` counts), and within a block in the order
//! it runs the warps: each warp up to its next `__syncthreads()`, warp 0 first, and within one
//! `printf` the active lanes in lane order. A block's text is cut into lines at each `\n`; text
//! left without one at the block's end is a line of its own. Only the blocks the launch simulates
//! print: under block sampling, the ones its report names.

use crate::kernel::limits::{MAX_PRINTF_BYTES, MAX_PRINTF_LINES};
use serde::{Deserialize, Serialize};

/// What a launch printed: the lines kept, and how many more it printed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrintfOutput {
    pub lines: Vec<String>,
    pub lines_not_shown: u64,
}

/// Gathers the text of the blocks as they run, keeping no more than the output can show.
#[derive(Clone, Debug, Default)]
pub struct PrintfCollector {
    /// The running block's place in launch order.
    block: u64,
    /// The running block's text so far, up to the bounds, and the line ends in it.
    text: String,
    kept_newlines: usize,
    /// Line ends the running block printed, kept or not, and whether its text ends inside a line.
    newlines: u64,
    ends_inside_a_line: bool,
    /// Lines of finished blocks, with each block's place in launch order.
    lines: Vec<(u64, String)>,
    lines_not_shown: u64,
}

impl PrintfCollector {
    pub fn begin_block(&mut self, block: u64) {
        self.block = block;
        self.text.clear();
        self.kept_newlines = 0;
        self.newlines = 0;
        self.ends_inside_a_line = false;
    }

    /// Adds one `printf`'s text to the running block's.
    pub fn print(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let newlines = text.bytes().filter(|&byte| byte == b'\n').count();
        if self.text.len() < MAX_PRINTF_BYTES && self.kept_newlines < MAX_PRINTF_LINES {
            self.text.push_str(text);
            self.kept_newlines += newlines;
        }
        self.newlines += newlines as u64;
        self.ends_inside_a_line = !text.ends_with('\n');
    }

    /// Cuts the running block's text into lines and keeps the earliest blocks' lines, up to the
    /// bounds; the rest are counted.
    pub fn end_block(&mut self) {
        let printed = self.newlines + u64::from(self.ends_inside_a_line);
        let mut kept = 0;
        for line in self.text.split_terminator('\n') {
            if kept == MAX_PRINTF_LINES {
                break;
            }
            self.lines.push((self.block, line.to_string()));
            kept += 1;
        }
        self.lines_not_shown += printed.saturating_sub(kept as u64);
        self.text.clear();
        self.kept_newlines = 0;
        if self.lines.len() > MAX_PRINTF_LINES {
            // Blocks may run out of launch order (block classes); a stable sort keeps each
            // block's own order.
            crate::sorting::sort_by_key(&mut self.lines, |(block, _)| *block);
            self.lines_not_shown += (self.lines.len() - MAX_PRINTF_LINES) as u64;
            self.lines.truncate(MAX_PRINTF_LINES);
        }
    }

    pub fn finish(mut self) -> PrintfOutput {
        crate::sorting::sort_by_key(&mut self.lines, |(block, _)| *block);
        let mut output = PrintfOutput {
            lines: Vec::new(),
            lines_not_shown: self.lines_not_shown,
        };
        let mut bytes = 0;
        for (_, line) in self.lines {
            bytes += line.len() + 1;
            if bytes > MAX_PRINTF_BYTES {
                output.lines_not_shown += 1;
            } else {
                output.lines.push(line);
            }
        }
        output
    }
}

#[cfg(test)]
mod tests {
    use super::PrintfCollector;
    use crate::kernel::limits::MAX_PRINTF_LINES;

    #[test]
    fn lines_come_in_block_order_whatever_order_the_blocks_ran_in() {
        let mut collector = PrintfCollector::default();
        for (block, text) in [(2, "two\n"), (0, "zero\n"), (1, "one")] {
            collector.begin_block(block);
            collector.print(text);
            collector.end_block();
        }
        let output = collector.finish();
        assert_eq!(output.lines, ["zero", "one", "two"]);
        assert_eq!(output.lines_not_shown, 0);
    }

    #[test]
    fn a_line_printed_in_pieces_is_one_line() {
        let mut collector = PrintfCollector::default();
        collector.begin_block(0);
        for piece in ["a = ", "1", "\nb = 2\n"] {
            collector.print(piece);
        }
        collector.end_block();
        assert_eq!(collector.finish().lines, ["a = 1", "b = 2"]);
    }

    #[test]
    fn past_the_bound_the_lines_are_counted_not_kept() {
        let mut collector = PrintfCollector::default();
        for block in 0..3 {
            collector.begin_block(block);
            for thread in 0..40 {
                collector.print(&format!("block {block} thread {thread}\n"));
            }
            collector.end_block();
        }
        let output = collector.finish();
        assert_eq!(output.lines.len(), MAX_PRINTF_LINES);
        assert_eq!(output.lines[40], "block 1 thread 0");
        assert_eq!(output.lines_not_shown, 3 * 40 - 64);
    }
}
