//! How many unrolled copies of a loop's loads nvcc keeps in flight together: as many as the
//! registers allow.
//!
//! nvcc unrolls a loop (`issue::unroll_by_size`) so that the copies' loads can be issued together
//! and wait for memory once. Each load in flight holds its destination registers until its data
//! is used, and ptxas, without `__launch_bounds__` or `-maxrregcount`, schedules an sm_90 kernel
//! within 32 registers a thread when it can: the count at which an SM holds its full 2,048
//! threads (65,536 registers). Every probe whose loop hoists loads and most lecture kernels use
//! exactly 32 (`tests/reference/probes/ptxas.txt`: `p_walk`, `p_walk_u16`, `p_mlp16`;
//! `tests/reference/warp_probes/ptxas.txt`: `w_nbody`, `w_nbody_tiled`; `h100.json`: the naive
//! and tiled matmuls); a kernel goes above 32 only when its live values alone need more (the
//! students' `matmul_register_tile`, 39).
//!
//! So where the copies' loads do not fit beside the loop's live values, ptxas issues them in
//! groups: `w_nbody`'s loop, unrolled four times, holds 21 registers of live values (its
//! position, the three sums, the body's temporaries, a `float4` being loaded) and loads a
//! 4-register `float4` per copy; three copies would fit, so the four are issued as two pairs
//! (`tests/reference/warp_probes/warp_probes.sass`: two `LDG.E.128`, the first body, two more).
//! A group cannot span two passes of the unrolled loop (ptxas does not move loads across the
//! loop's back edge), so four copies with room for three still take two groups, of two.
//!
//! The count is an estimate from the source: a variable takes its registers (two for 64-bit
//! values and pointers) if the loop reads or writes it, if a loop around it does, or if it is set
//! before the loop and read after it; the temporaries inside one expression are not counted.

use crate::ast::Type;
use crate::ir::{Elem, Ex, ExKind, FunctionIr, Op, Place, Reg, REG_GRID_DIM, SPECIAL_REGS};
use crate::reg_set::RegSet;
use std::collections::HashMap;

/// The registers a thread of an sm_90 kernel is scheduled within when nothing else bounds them:
/// 65,536 registers of an SM over its 2,048 threads (module doc).
pub const REGISTER_TARGET: u32 = 32;

/// How many executions of each load of the loop between `begin` (its `LoopBegin`) and `end` (its
/// `LoopEnd`) a warp keeps in flight, when nvcc makes `copies` copies of its body; `enclosing`
/// are the ranges of the loops around it. At least 1, at most `copies`, and `copies` divided
/// into equal groups.
pub fn loads_in_flight(
    function: &FunctionIr,
    begin: usize,
    end: usize,
    enclosing: &[(usize, usize)],
    copies: u32,
) -> u32 {
    let code = &function.code;
    let per_copy = load_registers_per_copy(&code[begin..=end]);
    if per_copy == 0 || copies <= 1 {
        return copies.max(1);
    }
    let widths = register_widths(function);
    let width = |reg: &Reg| widths.get(reg).copied().unwrap_or(1);
    let mut live = referenced_registers(&code[begin..=end]);
    for &(outer_begin, outer_end) in enclosing {
        live.extend(
            referenced_registers(&code[outer_begin..=outer_end])
                .iter()
                .copied(),
        );
    }
    let set_before = written_registers(&code[..begin]);
    let read_after = referenced_registers(&code[end + 1..]);
    live.extend(
        set_before
            .iter()
            .filter(|reg| read_after.contains(reg))
            .copied(),
    );
    let live_registers: u32 = live
        .iter()
        .filter(|&&reg| !(REG_SPECIAL_READ_END..SPECIAL_REGS).contains(&reg))
        .map(width)
        .sum();
    let room = REGISTER_TARGET.saturating_sub(live_registers);
    let fitting = (1 + room / per_copy).clamp(1, copies);
    let groups = copies.div_ceil(fitting);
    copies.div_ceil(groups)
}

/// `threadIdx`, `blockIdx` and `blockDim` read in a loop are kept in registers; `gridDim` and the
/// other special values below `SPECIAL_REGS` are constant-bank operands.
const REG_SPECIAL_READ_END: Reg = REG_GRID_DIM;

/// The destination registers one copy of the loop's body loads into: every load and
/// read-modify-write of memory outside the loops nested in it (those keep their own loads in
/// flight).
fn load_registers_per_copy(ops: &[Op]) -> u32 {
    let mut depth = 0usize;
    let mut registers = 0;
    for (index, op) in ops.iter().enumerate() {
        match op {
            Op::LoopBegin { .. } if index > 0 => depth += 1,
            Op::LoopEnd if index + 1 < ops.len() => depth = depth.saturating_sub(1),
            _ if depth == 0 => for_each_expression(op, &mut |e| {
                let elem = match &e.kind {
                    ExKind::Load { elem, .. } => *elem,
                    ExKind::Compound {
                        place: Place::Mem { elem, .. },
                        ..
                    }
                    | ExKind::IncDec {
                        place: Place::Mem { elem, .. },
                        ..
                    } => *elem,
                    _ => return,
                };
                registers += elem.bytes().div_ceil(4);
            }),
            _ => {}
        }
    }
    registers
}

/// The 32-bit registers each variable takes: two for a 64-bit scalar or a pointer parameter.
fn register_widths(function: &FunctionIr) -> HashMap<Reg, u32> {
    let mut widths = HashMap::new();
    for param in &function.params {
        let bytes = match &param.ty {
            Type::Pointer { .. } => 8,
            ty => ty.size(),
        };
        widths.insert(param.reg, (bytes as u32).div_ceil(4).max(1));
    }
    for op in &function.code {
        for_each_expression(op, &mut |e| {
            if let Some((reg, elem)) = assigned_place(e) {
                let per_element = elem.scalar.size().div_ceil(4).max(1);
                for part in reg..reg + Reg::from(elem.n.max(1)) {
                    widths.insert(part, per_element);
                }
            }
        });
    }
    widths
}

/// The variables (registers) that `ops` assign.
pub(crate) fn written_registers(ops: &[Op]) -> RegSet {
    let mut written = RegSet::new();
    for op in ops {
        for_each_expression(op, &mut |e| {
            if let Some((reg, elem)) = assigned_place(e) {
                written.extend(reg..reg + Reg::from(elem.n.max(1)));
            }
        });
    }
    written
}

/// Calls `f` on every expression node of `op`, parents before children.
pub(crate) fn for_each_expression(op: &Op, f: &mut dyn FnMut(&Ex)) {
    fn walk(e: &Ex, f: &mut dyn FnMut(&Ex)) {
        f(e);
        for child in e.children() {
            walk(child, f);
        }
    }
    match op {
        Op::Eval(e) | Op::If { cond: e, .. } | Op::LoopCond { cond: e, .. } => walk(e, f),
        Op::Return(Some(e)) => walk(e, f),
        _ => {}
    }
}

/// The register variable an expression node assigns, with its layout.
fn assigned_place(e: &Ex) -> Option<(Reg, Elem)> {
    match &e.kind {
        ExKind::Assign {
            place: Place::Reg { reg, elem },
            ..
        }
        | ExKind::Compound {
            place: Place::Reg { reg, elem },
            ..
        }
        | ExKind::IncDec {
            place: Place::Reg { reg, elem },
            ..
        } => Some((*reg, *elem)),
        _ => None,
    }
}

/// The variables `ops` read or assign.
fn referenced_registers(ops: &[Op]) -> RegSet {
    let mut referenced = written_registers(ops);
    for op in ops {
        for_each_expression(op, &mut |e| {
            if let ExKind::Reg(reg) = e.kind {
                referenced.insert(reg);
            }
        });
    }
    referenced
}

#[cfg(test)]
mod tests {
    use crate::compile;
    use crate::ir::{Ex, ExKind, Op};

    /// The loads in flight at each source line of the first kernel that loads from memory.
    fn in_flight_by_line(source: &str) -> Vec<(u32, u32)> {
        fn loads(e: &Ex) -> bool {
            matches!(e.kind, ExKind::Load { .. }) || e.children().into_iter().any(loads)
        }
        let program = compile(source, &[]).expect("the test kernel compiles");
        let function = &program.functions[0];
        function
            .code
            .iter()
            .enumerate()
            .filter(|(_, op)| match op {
                Op::Eval(e) => loads(e),
                _ => false,
            })
            .map(|(pc, _)| (function.spans[pc].line, function.loads_in_flight[pc]))
            .collect()
    }

    #[test]
    fn an_n_body_loop_unrolled_four_times_loads_its_float4s_in_two_pairs() {
        let source = "__global__ void nbody(const float4* pos, float4* acc, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            float4 p = pos[i];
            float ax = 0.0f, ay = 0.0f, az = 0.0f;
            for (int j = 0; j < n; ++j) {
                float4 q = pos[j];
                float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
                float d2 = dx * dx + dy * dy + dz * dz + 1e-9f;
                float inv = rsqrtf(d2);
                float inv3 = inv * inv * inv * q.w;
                ax += dx * inv3;
                ay += dy * inv3;
                az += dz * inv3;
            }
            acc[i] = make_float4(ax, ay, az, 0.0f);
        }";
        // 21 registers of live values leave 11: two more float4s fit beside the first, so the
        // four copies go as two groups of two, as in the probe's SASS.
        assert_eq!(in_flight_by_line(source), vec![(3, 4), (6, 2)]);
    }

    #[test]
    fn a_small_walk_keeps_all_sixteen_copies_loads_in_flight() {
        let source = "__global__ void walk(const float* a, float* out, int count, int jump) {
            int c = blockIdx.x * blockDim.x + threadIdx.x;
            int q = c;
            float s = 0.0f;
            for (int t = 0; t < count; ++t) {
                s += a[q];
                q += jump;
            }
            out[c] = s;
        }";
        // Eight registers of live values and one a copy: the sixteen copies take 23.
        assert_eq!(in_flight_by_line(source), vec![(6, 16)]);
    }

    #[test]
    fn a_loop_whose_live_values_fill_the_registers_keeps_one_copy_in_flight() {
        let source = "__global__ void wide(const double4* a, double* out, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0;
            for (int k = 0; k < n; ++k) {
                double4 v = a[k * 64 + i];
                s0 += v.x * v.y;
                s1 += v.y * v.z;
                s2 += v.z * v.w;
                s3 += v.w * v.x;
                s4 += v.x * v.z;
                s5 += v.y * v.w;
            }
            out[i] = s0 + s1 + s2 + s3 + s4 + s5;
        }";
        // Six doubles, a double4, the pointer, the index and the bounds take 25 registers:
        // another copy's eight do not fit.
        assert_eq!(in_flight_by_line(source), vec![(5, 1)]);
    }
}
