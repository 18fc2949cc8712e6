//! The jumps of cuRAND's XORWOW generator (Marsaglia, "Xorshift RNGs", J. Stat. Softw. 8(14),
//! 2003; cuRAND documentation, "Device API Overview"): `curand_init`'s subsequences of 2^67
//! draws, and `skipahead`'s offsets, for memplay's `curand_kernel.h`.
//!
//! The xorshift part of a draw is linear over GF(2) on the state's 160 bits `v[0..5]` (the Weyl
//! counter `d` is added apart), so `n` draws are the 160 x 160 bit matrix `M` of one draw raised
//! to the `n`th power. cuRAND reads precomputed powers from global memory; memplay computes the
//! same powers `M^(2^p)` by squaring, once per process (`OnceLock`), and the header applies them
//! two bits of `n` at a time as cuRAND's loop does (`__memplay_xorwow_power`), so the state after
//! a jump is cuRAND's bit for bit.

use super::machine::Machine;
use crate::access::WARP_LANES;
use crate::kernel::ir::Ex;
use crate::kernel::span::Diagnostic;
use std::sync::OnceLock;

/// The powers `M^(2^p)` for `p` below this: subsequences start at 2^67, and both `n` are 64 bits.
const POWERS: usize = 67 + 64;

/// A 160 x 160 bit matrix as its 160 columns, each the image of one state bit.
type Matrix = Vec<[u32; 5]>;

/// The xorshift of one draw, on the five words alone.
fn xorshift(v: [u32; 5]) -> [u32; 5] {
    let t = v[0] ^ (v[0] >> 2);
    let next = (v[4] ^ (v[4] << 4)) ^ (t ^ (t << 1));
    [v[1], v[2], v[3], v[4], next]
}

/// `m` times `v`: the sum (exclusive or) of the columns of the bits set in `v`.
fn apply(m: &[[u32; 5]], v: [u32; 5]) -> [u32; 5] {
    let mut out = [0u32; 5];
    for (bit, column) in m.iter().enumerate() {
        if v[bit / 32] >> (bit % 32) & 1 != 0 {
            for (o, c) in out.iter_mut().zip(column) {
                *o ^= c;
            }
        }
    }
    out
}

/// `M^(2^p)` for every `p` below `POWERS`.
fn powers() -> &'static [Matrix] {
    static POWERS_OF_M: OnceLock<Vec<Matrix>> = OnceLock::new();
    POWERS_OF_M.get_or_init(|| {
        let unit = |bit: usize| {
            let mut v = [0u32; 5];
            v[bit / 32] = 1 << (bit % 32);
            v
        };
        let mut all: Vec<Matrix> = vec![(0..160).map(|bit| xorshift(unit(bit))).collect()];
        while all.len() < POWERS {
            let last = &all[all.len() - 1];
            let square = last.iter().map(|&column| apply(last, column)).collect();
            all.push(square);
        }
        all
    })
}

/// Word `word` of the state `v` after `2^p` draws (`p` below `POWERS`, `word` below 5; others
/// give 0).
pub(crate) fn power_word(p: u64, word: u64, v: [u32; 5]) -> u32 {
    match (usize::try_from(p), usize::try_from(word)) {
        (Ok(p), Ok(word)) if p < POWERS && word < 5 => apply(&powers()[p], v)[word],
        _ => 0,
    }
}

impl Machine<'_, '_> {
    /// `__memplay_xorwow_power(p, word, v0, v1, v2, v3, v4)` for the lanes in `mask`.
    #[inline(never)]
    pub(super) fn xorwow_power(
        &mut self,
        args: &[Ex],
        mask: u32,
        dst: usize,
    ) -> Result<usize, Diagnostic> {
        let mut registers = [0usize; 7];
        for (register, arg) in registers.iter_mut().zip(args) {
            *register = self.eval(arg, mask)?;
        }
        self.instructions += 1;
        for lane in 0..WARP_LANES {
            if mask >> lane & 1 == 0 {
                continue;
            }
            let at = |k: usize| self.regs[registers[k]][lane];
            let v = [at(2), at(3), at(4), at(5), at(6)].map(|word| word as u32);
            let value = power_word(at(0), at(1), v);
            self.regs[dst][lane] = u64::from(value);
        }
        Ok(dst)
    }
}

#[cfg(test)]
mod tests {
    use super::{power_word, xorshift};

    /// The state after `n` draws taken one at a time.
    fn stepped(mut v: [u32; 5], n: u32) -> [u32; 5] {
        for _ in 0..n {
            v = xorshift(v);
        }
        v
    }

    #[test]
    fn a_power_of_two_draws_is_that_many_draws_taken_one_at_a_time() {
        let v = [123_456_789, 362_436_069, 521_288_629, 88_675_123, 5_783_321];
        for p in 0..10u64 {
            let expected = stepped(v, 1 << p);
            let jumped: Vec<u32> = (0..5).map(|w| power_word(p, w, v)).collect();
            assert_eq!(jumped, expected, "2^{p} draws");
        }
    }

    #[test]
    fn a_word_or_power_out_of_range_gives_zero() {
        assert_eq!(power_word(0, 5, [1, 2, 3, 4, 5]), 0);
        assert_eq!(power_word(131, 0, [1, 2, 3, 4, 5]), 0);
    }
}
