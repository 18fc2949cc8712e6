//! Memory accesses: a warp's addresses, their objects and bounds, loads, stores and atomics, and the records they make.

use super::lanes::{atomic_value, canon, read_le, write_le, Lanes, Offsets, FULL};
use super::launch::{stamp, MemRecord, Storage};
use super::machine::Machine;
use crate::access::{AccessKind, AccessWidth, Space, WarpAccess, WARP_LANES};
use crate::kernel::ast::Scalar;
use crate::kernel::ir::{AtomicOp, Elem, Ex, ExKind, Place, Term};
use crate::kernel::memory::{
    address_add, decode, encode, pointer, pointer_address, pointer_object, ADDRESS_MASK,
};
use crate::kernel::span::{Diagnostic, Span};
use crate::sanitizer::Touch;

/// The addresses of a memory instruction, per lane.
pub(super) enum Target {
    /// Tagged pointers (see `memory`).
    Pointers(Lanes),
    /// Addresses in the space of one object that every lane's access was computed from, and
    /// what `Machine::fast_object` needs to know of their offsets in it.
    Object(usize, Lanes, OffsetSummary),
}

/// The offsets from an object's base of the lanes in `mask`, summed up while they are computed:
/// the largest, and all of them or-ed (whose low bits tell the alignment). The bounds and
/// alignment check of an access then needs no pass over the lanes of its own.
#[derive(Clone, Copy)]
pub(super) struct OffsetSummary {
    pub(super) mask: u32,
    pub(super) highest: u64,
    pub(super) bits: u64,
}

impl Target {
    /// A placeholder for `Machine::resolve` to fill.
    pub(super) const EMPTY: Target = Target::Pointers([0; WARP_LANES]);

    pub(super) fn pointers(&self) -> Lanes {
        match self {
            Target::Pointers(p) => *p,
            Target::Object(id, addresses, _) => {
                let mut out = [0u64; WARP_LANES];
                for (slot, &a) in out.iter_mut().zip(addresses) {
                    *slot = pointer(*id, a);
                }
                out
            }
        }
    }
}

/// Where one lane's access goes.
#[derive(Clone, Copy)]
pub(super) struct Location {
    pub(super) object: usize,
    /// The address in the object's space (shared, local and constant addresses start at 0).
    pub(super) address: u64,
}

impl Machine<'_, '_> {
    /// Evaluates an address. The common form, an offset from a named object (`tile[ty][k]`,
    /// `partial`, a `__constant__` array), is computed directly as addresses in that object,
    /// without the object's address and the sum going through registers.
    ///
    /// The lanes are written into the caller's `target` rather than returned: a `Target` is 264
    /// bytes, and moving it out through a `Result` cost two copies per memory access.
    pub(super) fn resolve(
        &mut self,
        addr: &Ex,
        mask: u32,
        target: &mut Target,
    ) -> Result<(), Diagnostic> {
        let (id, terms, elem_size): (usize, &[Term], u32) = match &addr.kind {
            ExKind::AddrOf(id) => (*id, &[], 1),
            ExKind::Offset {
                base,
                terms,
                elem_size,
            } => match base.kind {
                ExKind::AddrOf(id) => (id, terms, *elem_size),
                _ => {
                    let r = self.eval(addr, mask)?;
                    *target = Target::Pointers(self.regs[r]);
                    return Ok(());
                }
            },
            _ => {
                let r = self.eval(addr, mask)?;
                *target = Target::Pointers(self.regs[r]);
                return Ok(());
            }
        };
        self.step(addr.span)?;
        let base = self.objects[id].base;
        let mut summary = OffsetSummary {
            mask,
            highest: 0,
            bits: 0,
        };
        if terms.is_empty() {
            *target = Target::Object(id, [base; WARP_LANES], summary);
            return Ok(());
        }
        // The offsets are summed exactly; the addresses are the base plus them, summarised on
        // the way. An active lane whose address does not exist is out of bounds.
        let mut offsets = Offsets::new();
        self.add_terms(terms, mask, &mut offsets)?;
        let mut bad = offsets.overflow;
        let mut out = [0u64; WARP_LANES];
        for (l, (slot, &by)) in out.iter_mut().zip(&offsets.by).enumerate() {
            match address_add(base as i64, by) {
                Some(a) => *slot = a as u64,
                None => bad |= 1 << l,
            }
            let on = 0u64.wrapping_sub(u64::from(mask >> l & 1));
            let offset = (by as u64) & on;
            summary.highest = summary.highest.max(offset);
            summary.bits |= offset;
        }
        bad &= mask;
        if bad != 0 {
            let l = bad.trailing_zeros() as usize;
            let p = pointer(id, base);
            return Err(self.out_of_bounds(p, offsets.exact(l), elem_size, addr.span));
        }
        *target = Target::Object(id, out, summary);
        Ok(())
    }

    /// Finds the object and address of one lane's access of `width` bytes that must start at a
    /// multiple of `align` bytes, or the error that explains why not.
    pub(super) fn locate(
        &self,
        p: u64,
        width: u32,
        align: u32,
        span: Span,
    ) -> Result<Location, Diagnostic> {
        let Some(object) = pointer_object(p) else {
            return Err(Diagnostic::new(span, "the pointer is null"));
        };
        let Some(obj) = self.objects.get(object) else {
            return Err(Diagnostic::new(
                span,
                "the pointer does not point into any memory",
            ));
        };
        // Addresses are exact (pointer arithmetic is checked), so the offset is the true one.
        let offset = i128::from(pointer_address(p)) - i128::from(obj.base);
        if offset < 0 || offset + i128::from(width) > i128::from(obj.size) {
            return Err(self.out_of_bounds(p, 0, width, span));
        }
        let address = obj.base + offset as u64;
        // CUDA faults on a misaligned access ("misaligned address"); the simulator names it.
        if align > 1 && !address.is_multiple_of(u64::from(align)) {
            return Err(Diagnostic::new(
                span,
                format!(
                    "the {width}-byte access at byte {} of '{}' is misaligned: it must start at \
                     a multiple of {align} bytes",
                    address - obj.base,
                    obj.name
                ),
            ));
        }
        Ok(Location { object, address })
    }

    /// The physical byte of local memory for byte `logical` of thread `tid`'s frame.
    pub(super) fn local_physical(&self, logical: u64, tid: u32) -> u64 {
        ((logical / 4) * u64::from(self.threads) + u64::from(tid)) * 4 + logical % 4
    }

    /// The address a record shows for a location.
    pub(super) fn record_address(&self, loc: Location, lane: usize) -> u64 {
        match self.objects[loc.object].storage {
            Storage::Local => self.local_physical(loc.address, self.lane_tid[lane]),
            _ => loc.address,
        }
    }

    pub(super) fn read_bytes(&mut self, loc: Location, lane: usize, out: &mut [u8]) {
        let obj = &self.objects[loc.object];
        match obj.storage {
            Storage::Global(m) => {
                let offset = loc.address - obj.base;
                self.memory[m].read(offset, out);
            }
            Storage::Shared => {
                let at = loc.address as usize;
                if let Some(src) = self.shared.get(at..at + out.len()) {
                    out.copy_from_slice(src);
                }
            }
            Storage::Local => {
                let tid = self.lane_tid[lane];
                for (k, byte) in out.iter_mut().enumerate() {
                    let phys = self.local_physical(loc.address + k as u64, tid);
                    let mut one = [0u8; 1];
                    self.local.read(phys, &mut one);
                    *byte = one[0];
                }
            }
        }
    }

    pub(super) fn write_bytes(&mut self, loc: Location, lane: usize, data: &[u8]) {
        let obj = &self.objects[loc.object];
        match obj.storage {
            Storage::Global(m) => {
                let offset = loc.address - obj.base;
                self.memory[m].write(offset, data);
            }
            Storage::Shared => {
                let at = loc.address as usize;
                if let Some(dst) = self.shared.get_mut(at..at + data.len()) {
                    dst.copy_from_slice(data);
                }
            }
            Storage::Local => {
                let tid = self.lane_tid[lane];
                for (k, byte) in data.iter().enumerate() {
                    let phys = self.local_physical(loc.address + k as u64, tid);
                    self.local.write(phys, &[*byte]);
                }
            }
        }
    }

    /// Emits the records of one instruction: one per memory space its lanes touched.
    /// The object every active lane accesses, when they agree, are in bounds and aligned, and the
    /// object is global or shared memory: the common case, which `load_uniform` and
    /// `store_uniform` serve without per-lane lookups. Anything else takes the general path,
    /// which also finds the lane to blame for an error.
    pub(super) fn uniform_object(&self, ptrs: &Lanes, mask: u32, width: u32) -> Option<usize> {
        if mask == 0 {
            return None;
        }
        let first = ptrs[mask.trailing_zeros() as usize];
        let id = pointer_object(first)?;
        let obj = self.objects.get(id)?;
        if !matches!(obj.storage, Storage::Global(_) | Storage::Shared) {
            return None;
        }
        let tag = first >> 48;
        // Branch-free over all lanes: any lane with another object, outside the object or
        // misaligned sends the access to the general path.
        let limit = obj.size.checked_sub(u64::from(width))?;
        let align = u64::from(width.min(16)) - 1;
        let mut bad = 0u64;
        for (l, &p) in ptrs.iter().enumerate() {
            let on = u64::from(mask >> l & 1);
            let offset = (p & ADDRESS_MASK).wrapping_sub(obj.base);
            let wrong = ((p >> 48) ^ tag) | u64::from(offset > limit) | (offset & align);
            bad |= wrong * on;
        }
        (bad == 0).then_some(id)
    }

    /// The object and addresses of an access that the fast paths can serve: one object for all
    /// active lanes, in bounds, aligned, in global or shared memory.
    pub(super) fn fast_object<'t>(
        &self,
        target: &'t Target,
        mask: u32,
        width: u32,
    ) -> Option<(usize, &'t Lanes)> {
        match target {
            Target::Pointers(ptrs) => self.uniform_object(ptrs, mask, width).map(|id| (id, ptrs)),
            Target::Object(id, addresses, summary) => {
                let obj = self.objects.get(*id)?;
                if mask == 0 || !matches!(obj.storage, Storage::Global(_) | Storage::Shared) {
                    return None;
                }
                let limit = obj.size.checked_sub(u64::from(width))?;
                let align = u64::from(width.min(16)) - 1;
                let mut bad = 0u64;
                if summary.mask == mask {
                    // Every active offset is at most the highest, and has no bit the or lacks.
                    bad = u64::from(summary.highest > limit) | (summary.bits & align);
                } else {
                    for (l, &a) in addresses.iter().enumerate() {
                        let on = u64::from(mask >> l & 1);
                        let offset = a.wrapping_sub(obj.base);
                        bad |= (u64::from(offset > limit) | (offset & align)) * on;
                    }
                }
                (bad == 0).then_some((*id, addresses))
            }
        }
    }

    pub(super) fn load_uniform(
        &mut self,
        id: usize,
        ptrs: &Lanes,
        mask: u32,
        scalar: Scalar,
        dst: usize,
        span: Span,
    ) {
        let obj = &self.objects[id];
        let (storage, base, size) = (obj.storage, obj.base, scalar.size() as usize);
        let out = &mut self.regs[dst];
        let mut m = mask;
        match storage {
            Storage::Shared if size == 4 => {
                // 32-bit words, the lessons' common case: no per-lane dispatch on the type.
                let signed = scalar == Scalar::I32;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let a = (ptrs[l] & ADDRESS_MASK) as usize;
                    if let Some(b) = self.shared.get(a..a + 4) {
                        let raw = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                        out[l] = if signed {
                            raw as i32 as i64 as u64
                        } else {
                            u64::from(raw)
                        };
                    }
                }
            }
            Storage::Shared => {
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let a = (ptrs[l] & ADDRESS_MASK) as usize;
                    let raw = self.shared.get(a..a + size).map(read_le).unwrap_or(0);
                    out[l] = canon(raw, scalar);
                }
            }
            Storage::Global(index) => {
                let buffer = &mut self.memory[index];
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let raw = buffer.read_le((ptrs[l] & ADDRESS_MASK) - base, size);
                    out[l] = canon(raw, scalar);
                }
            }
            Storage::Local => {}
        }
        self.emit_uniform(id, ptrs, mask, AccessKind::Load, scalar.size(), span);
    }

    pub(super) fn store_uniform(
        &mut self,
        id: usize,
        ptrs: &Lanes,
        mask: u32,
        scalar: Scalar,
        src: usize,
        span: Span,
    ) {
        let obj = &self.objects[id];
        let (storage, base, size) = (obj.storage, obj.base, scalar.size() as usize);
        let values = self.regs[src];
        let mut m = mask;
        match storage {
            Storage::Shared => {
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let a = (ptrs[l] & ADDRESS_MASK) as usize;
                    if let Some(slot) = self.shared.get_mut(a..a + size) {
                        write_le(slot, values[l]);
                    }
                }
            }
            Storage::Global(index) => {
                let buffer = &mut self.memory[index];
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    buffer.write(
                        (ptrs[l] & ADDRESS_MASK) - base,
                        &values[l].to_le_bytes()[..size],
                    );
                }
            }
            Storage::Local => {}
        }
        self.emit_uniform(id, ptrs, mask, AccessKind::Store, scalar.size(), span);
    }

    pub(super) fn emit_uniform(
        &mut self,
        id: usize,
        ptrs: &Lanes,
        mask: u32,
        kind: AccessKind,
        width: u32,
        span: Span,
    ) {
        let obj = &self.objects[id];
        if !obj.records {
            return;
        }
        let Ok(width) = AccessWidth::new(width) else {
            return;
        };
        // The machine's one record is overwritten in place: building a fresh 560-byte record
        // per access and moving it cost a copy each time.
        let record = &mut self.record;
        record.access.space = obj.space;
        record.access.kind = kind;
        record.access.width = width;
        record.span = span;
        record.block = self.block;
        record.warp = self.warp;
        record.order = stamp(
            &mut self.dependence,
            self.load_waits_for,
            self.in_flight,
            obj.space,
            kind,
        );
        record.fences_passed = self.dependence.fences;
        for (l, slot) in record.access.lanes.iter_mut().enumerate() {
            *slot = (mask >> l & 1 != 0).then_some(ptrs[l] & ADDRESS_MASK);
        }
        self.sink.record(&self.record);
        self.reuse.note_handed(1);
        if self.reuse.capturing {
            let record = self.record;
            self.capture(&record);
        }
    }

    pub(super) fn emit_records(
        &mut self,
        locations: &[Option<Location>; WARP_LANES],
        kind: AccessKind,
        width: u32,
        span: Span,
    ) {
        let Ok(width) = AccessWidth::new(width) else {
            return;
        };
        let mut done_spaces: [Option<Space>; 4] = [None; 4];
        for first in locations.iter().flatten() {
            let obj = &self.objects[first.object];
            if !obj.records {
                continue;
            }
            let space = obj.space;
            if done_spaces.contains(&Some(space)) {
                continue;
            }
            if let Some(slot) = done_spaces.iter_mut().find(|s| s.is_none()) {
                *slot = Some(space);
            }
            let mut lanes = [None; WARP_LANES];
            for (l, loc) in locations.iter().enumerate() {
                if let Some(loc) = loc {
                    let o = &self.objects[loc.object];
                    if o.space == space && o.records {
                        lanes[l] = Some(self.record_address(*loc, l));
                    }
                }
            }
            let record = MemRecord {
                access: WarpAccess {
                    space,
                    kind,
                    width,
                    lanes,
                },
                span,
                block: self.block,
                warp: self.warp,
                order: stamp(
                    &mut self.dependence,
                    self.load_waits_for,
                    self.in_flight,
                    space,
                    kind,
                ),
                fences_passed: self.dependence.fences,
            };
            self.sink.record(&record);
            self.reuse.note_handed(1);
            if self.reuse.capturing {
                self.capture(&record);
            }
        }
    }

    pub(super) fn locate_all(
        &self,
        ptrs: &Lanes,
        mask: u32,
        (width, align): (u32, u32),
        span: Span,
    ) -> Result<[Option<Location>; WARP_LANES], Diagnostic> {
        let mut locations = [None; WARP_LANES];
        for l in 0..WARP_LANES {
            if mask >> l & 1 != 0 {
                locations[l] = Some(self.locate(ptrs[l], width, align, span)?);
            }
        }
        Ok(locations)
    }

    /// The records of a load or store of `elem` at `locations`: one instruction, or where nvcc
    /// splits the value into accesses of its alignment (`Elem::access_bytes`: a `float3` is
    /// three 4-byte accesses), one per part, each at its own offset.
    fn emit_parts(
        &mut self,
        locations: &[Option<Location>; WARP_LANES],
        kind: AccessKind,
        elem: Elem,
        span: Span,
    ) {
        let part = elem.access_bytes();
        if part == elem.bytes() {
            self.emit_records(locations, kind, part, span);
            return;
        }
        for k in 0..elem.accesses() {
            let moved = locations.map(|at| {
                at.map(|at| Location {
                    address: at.address + u64::from(k * part),
                    ..at
                })
            });
            self.emit_records(&moved, kind, part, span);
        }
    }

    pub(super) fn load(
        &mut self,
        target: &Target,
        mask: u32,
        elem: Elem,
        dst: usize,
        addr_span: Span,
        span: Span,
    ) -> Result<(), Diagnostic> {
        self.step_access(mask, span)?;
        let width = elem.bytes();
        if self.sanitizer.is_some() {
            self.sanitize_access(&target.pointers(), mask, width, Touch::Read, span);
        }
        if elem.n == 1 {
            if let Some((id, addresses)) = self.fast_object(target, mask, width) {
                self.load_uniform(id, addresses, mask, elem.scalar, dst, span);
                return Ok(());
            }
        }
        let ptrs = &target.pointers();
        let locations = self.locate_all(ptrs, mask, (width, elem.access_bytes()), addr_span)?;
        let size = elem.scalar.size() as usize;
        let mut buf = [0u8; 32];
        for (l, loc) in locations.iter().enumerate() {
            let Some(loc) = loc else { continue };
            let bytes = &mut buf[..width as usize];
            self.read_bytes(*loc, l, bytes);
            for k in 0..usize::from(elem.n) {
                self.regs[dst + k][l] = decode(&buf[k * size..(k + 1) * size], elem.scalar);
            }
        }
        self.emit_parts(&locations, AccessKind::Load, elem, span);
        Ok(())
    }

    pub(super) fn store(
        &mut self,
        target: &Target,
        mask: u32,
        elem: Elem,
        src: usize,
        addr_span: Span,
        span: Span,
    ) -> Result<(), Diagnostic> {
        self.step_access(mask, span)?;
        let width = elem.bytes();
        if self.sanitizer.is_some() {
            self.sanitize_access(&target.pointers(), mask, width, Touch::Write, span);
        }
        if elem.n == 1 {
            if let Some((id, addresses)) = self.fast_object(target, mask, width) {
                self.store_uniform(id, addresses, mask, elem.scalar, src, span);
                return Ok(());
            }
        }
        let ptrs = &target.pointers();
        let locations = self.locate_all(ptrs, mask, (width, elem.access_bytes()), addr_span)?;
        let size = elem.scalar.size() as usize;
        let mut buf = [0u8; 32];
        for (l, loc) in locations.iter().enumerate() {
            let Some(loc) = loc else { continue };
            for k in 0..usize::from(elem.n) {
                encode(
                    self.regs[src + k][l],
                    elem.scalar,
                    &mut buf[k * size..(k + 1) * size],
                );
            }
            self.write_bytes(*loc, l, &buf[..width as usize]);
        }
        self.emit_parts(&locations, AccessKind::Store, elem, span);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn atomic(
        &mut self,
        ptrs: &Lanes,
        mask: u32,
        op: AtomicOp,
        ty: Scalar,
        v: usize,
        v2: Option<usize>,
        dst: usize,
        addr_span: Span,
        span: Span,
    ) -> Result<(), Diagnostic> {
        self.step_access(mask, span)?;
        // A pair of 16-bit floats is one access of four bytes, each half its own register.
        let parts = if op == AtomicOp::AddPair { 2 } else { 1 };
        let size = ty.size() as usize;
        let width = (size * parts) as u32;
        if self.sanitizer.is_some() {
            self.sanitize_access(ptrs, mask, width, Touch::Atomic, span);
        }
        let locations = self.locate_all(ptrs, mask, (width, width), addr_span)?;
        let mut buf = [0u8; 8];
        // The hardware serialises conflicting atomics in some order; lane order is one of them.
        for (l, loc) in locations.iter().enumerate() {
            let Some(loc) = loc else { continue };
            self.read_bytes(*loc, l, &mut buf[..width as usize]);
            let second = v2.map(|r| self.regs[r][l]).unwrap_or(0);
            for k in 0..parts {
                let bytes = &mut buf[k * size..(k + 1) * size];
                let old = decode(bytes, ty);
                let new = atomic_value(op, ty, old, self.regs[v + k][l], second);
                encode(new, ty, bytes);
                self.regs[dst + k][l] = old;
            }
            self.write_bytes(*loc, l, &buf[..width as usize]);
        }
        self.emit_records(&locations, AccessKind::Atomic, width, span);
        Ok(())
    }

    #[inline(never)]
    pub(super) fn eval_load(
        &mut self,
        addr: &Ex,
        elem: Elem,
        mask: u32,
        dst: usize,
        span: Span,
    ) -> Result<usize, Diagnostic> {
        let outer = std::mem::take(&mut self.depends_on);
        let mut target = Target::EMPTY;
        self.resolve(addr, mask, &mut target)?;
        self.instructions += 1;
        // The load waits for what its address was computed from and for what the warp's
        // branches so far waited for; its value depends on the load itself if it went to global
        // or local memory (a round trip), otherwise on what its address did.
        let waits_for = self.depends_on.max(self.dependence.control);
        self.load_waits_for = waits_for;
        let loads_before = self.dependence.loads;
        let loaded = self.load(&target, mask, elem, dst, addr.span, span);
        self.load_waits_for = 0;
        loaded?;
        let value = if self.dependence.loads > loads_before {
            self.dependence.loads
        } else {
            waits_for
        };
        self.depends_on = outer.max(value);
        Ok(dst)
    }

    #[inline(never)]
    pub(super) fn assign(
        &mut self,
        place: &Place,
        value: &Ex,
        mask: u32,
        span: Span,
    ) -> Result<usize, Diagnostic> {
        match place {
            Place::Reg { reg, elem } => {
                let outer = std::mem::take(&mut self.depends_on);
                let v = self.eval(value, mask)?;
                self.instructions += 1;
                let value_depends_on = self.depends_on;
                for k in 0..usize::from(elem.n) {
                    self.copy_masked(v + k, *reg as usize + k, mask);
                    if let Some(tag) = self.tags.get_mut(*reg as usize + k) {
                        // Lanes left out keep their value, and what it depended on.
                        *tag = if mask == FULL {
                            value_depends_on
                        } else {
                            (*tag).max(value_depends_on)
                        };
                    }
                }
                self.depends_on = outer.max(value_depends_on);
                Ok(*reg as usize)
            }
            Place::Mem { addr, elem } => {
                let mut target = Target::EMPTY;
                self.resolve(addr, mask, &mut target)?;
                let v = self.eval(value, mask)?;
                self.instructions += 1;
                self.store(&target, mask, *elem, v, addr.span, span)?;
                Ok(v)
            }
        }
    }

    /// Reads a place for a read-modify-write: its value goes to `dst` (memory) or stays in its
    /// register; returns that register and, for memory, the span of the address whose lanes
    /// `target` now holds, to write back to. The target is only made for memory: a register
    /// place (`r += ...`, `++k`), the common case, needs none.
    pub(super) fn read_place(
        &mut self,
        place: &Place,
        mask: u32,
        dst: usize,
        span: Span,
        target: &mut Option<Target>,
    ) -> Result<(usize, Option<Span>), Diagnostic> {
        match place {
            Place::Reg { reg, .. } => Ok((*reg as usize, None)),
            Place::Mem { addr, elem } => {
                let target = target.insert(Target::EMPTY);
                self.resolve(addr, mask, target)?;
                self.instructions += 1;
                self.load(target, mask, *elem, dst, addr.span, span)?;
                Ok((dst, Some(addr.span)))
            }
        }
    }

    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn eval_atomic(
        &mut self,
        op: AtomicOp,
        ty: Scalar,
        addr: &Ex,
        value: &Ex,
        value2: Option<&Ex>,
        mask: u32,
        dst: usize,
        span: Span,
    ) -> Result<usize, Diagnostic> {
        let mut target = Target::EMPTY;
        self.resolve(addr, mask, &mut target)?;
        let v = self.eval(value, mask)?;
        let v2 = match value2 {
            Some(x) => Some(self.eval(x, mask)?),
            None => None,
        };
        self.instructions += 1;
        self.atomic(
            &target.pointers(),
            mask,
            op,
            ty,
            v,
            v2,
            dst,
            addr.span,
            span,
        )?;
        Ok(dst)
    }
}
