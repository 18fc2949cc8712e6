//! What a kernel says outside its memory, run over a warp's lanes: `printf`'s lines, the
//! simulated clock, and `assert` (CUDA C++ Programming Guide, "Formatted Output", "Time
//! Function", "Assertion").
//!
//! memplay's clock is simulated, not measured: `clock()` and `clock64()` read the SASS
//! instructions the block has issued so far (`issue`), as if its SM issued one per cycle. Two
//! readings in one warp with no `__syncthreads()` between them differ by the instructions that
//! warp issued between them, since the interpreter runs a warp alone up to its next barrier; a
//! real SM takes at least that many cycles, and more where warps wait on memory or share its
//! schedulers.

use super::machine::Machine;
use crate::access::WARP_LANES;
use crate::kernel::ast::Scalar;
use crate::kernel::ir::{Ex, OutputKind, PrintfCall, PrintfSlot, REG_THREAD_IDX};
use crate::kernel::issue::ISSUE_SCALE;
use crate::kernel::memory::pointer_address;
use crate::kernel::printf_format::{format_line, PrintfValue};
use crate::kernel::span::{Diagnostic, DiagnosticKind, Span};

impl Machine<'_, '_> {
    /// Evaluates an output node's operands for the lanes in `mask`, then prints, reads the clock
    /// or checks the assertion.
    #[inline(never)]
    pub(super) fn output(
        &mut self,
        kind: &OutputKind,
        args: &[Ex],
        mask: u32,
        dst: usize,
        span: Span,
    ) -> Result<usize, Diagnostic> {
        let mut registers = Vec::with_capacity(args.len());
        for arg in args {
            registers.push(self.eval(arg, mask)?);
        }
        self.instructions += 1;
        match kind {
            OutputKind::Printf(call) => {
                if self.printf.is_some() {
                    self.print(call, &registers, mask);
                }
                Ok(self.splat(registers.len() as u64, dst))
            }
            OutputKind::Clock => Ok(self.splat(self.issued / u64::from(ISSUE_SCALE), dst)),
            OutputKind::Assert => {
                let failing = mask & !self.true_lanes(registers[0]);
                if failing == 0 {
                    return Ok(dst);
                }
                let lane = failing.trailing_zeros() as usize;
                let thread: Vec<String> = (0..3)
                    .map(|axis| self.regs[REG_THREAD_IDX as usize + axis][lane].to_string())
                    .collect();
                let block = self.block;
                Err(Diagnostic::of_kind(
                    DiagnosticKind::AssertionFailed,
                    span,
                    format!(
                        "the assertion failed in block ({}, {}, {}), thread ({})",
                        block[0],
                        block[1],
                        block[2],
                        thread.join(", ")
                    ),
                ))
            }
        }
    }

    /// Formats one `printf` per active lane, in lane order, into the launch's output.
    fn print(&mut self, call: &PrintfCall, registers: &[usize], mask: u32) {
        for lane in 0..WARP_LANES {
            if mask >> lane & 1 == 0 {
                continue;
            }
            let mut next = registers.iter();
            let values: Vec<PrintfValue> = call
                .slots
                .iter()
                .map(|slot| {
                    let bits = match slot {
                        PrintfSlot::Text(text) => return PrintfValue::String(text.clone()),
                        _ => next.next().map_or(0, |&r| self.regs[r][lane]),
                    };
                    match slot {
                        PrintfSlot::Value(Scalar::I32) => {
                            PrintfValue::Integer(bits as u32 as i32 as i64)
                        }
                        PrintfSlot::Value(Scalar::U32) => PrintfValue::Integer(bits as u32 as i64),
                        PrintfSlot::Value(Scalar::F64) => {
                            PrintfValue::Floating(f64::from_bits(bits))
                        }
                        PrintfSlot::Pointer => PrintfValue::Integer(pointer_address(bits)),
                        _ => PrintfValue::Integer(bits as i64),
                    }
                })
                .collect();
            let line = format_line(&call.pieces, &values);
            if let Some(printf) = self.printf.as_deref_mut() {
                printf.print(&line);
            }
        }
    }
}
