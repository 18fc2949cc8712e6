//! Counters: the totals of a launch, named as Nsight Compute names them.
//!
//! Every warp-level memory instruction the interpreter records goes through the bank analysis
//! (shared memory) or the coalescing analysis (global and local memory) and adds to these sums.
//! The names of `Counters::nsight` are Nsight Compute's metric names (Nsight Compute "Kernel
//! Profiling Guide", sections "Metrics Reference" and "Memory Tables"), so a test can compare them
//! with `tests/reference/h100.json` key by key. Atomics are kept apart from loads and stores, as
//! Nsight Compute does (`_op_atom` / `_op_red`), which is why a `sum_global_atomic` launch shows no
//! global stores.

use crate::access::{AccessKind, Space, WarpAccess};
use crate::banks;
use crate::coalescing::{self, SECTOR_BYTES, SHAPE_MOVE_BYTES};
use crate::device::{Device, GlobalCoalescing};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::fmt;

/// Sums over a launch (or one block). Fields are `f64` because totals are extrapolated from sampled
/// blocks; every per-block value is a whole number and stays exact below 2^53.
///
/// It serializes as a map from the names of `Counters::NAMES` (Nsight Compute's where it has one)
/// to the values, so JSON output reads like an Nsight Compute report.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counters {
    pub shared_ld_instructions: f64,
    pub shared_st_instructions: f64,
    pub shared_ld_wavefronts: f64,
    pub shared_st_wavefronts: f64,
    pub shared_ld_bank_conflicts: f64,
    pub shared_st_bank_conflicts: f64,
    pub shared_atomic_instructions: f64,
    pub global_ld_requests: f64,
    pub global_ld_sectors: f64,
    pub global_st_requests: f64,
    pub global_st_sectors: f64,
    pub global_atomic_requests: f64,
    pub global_atomic_sectors: f64,
    pub local_ld_requests: f64,
    pub local_ld_sectors: f64,
    pub local_st_requests: f64,
    pub local_st_sectors: f64,
    pub constant_requests: f64,
    /// Serialized constant-cache accesses: one per distinct address a warp reads (seed 002).
    pub constant_serialized_accesses: f64,
    /// Bytes the active lanes moved between registers and shared memory (loads, stores, atomics).
    pub shared_bytes_requested: f64,
    /// Bytes the active lanes asked of global memory (loads, stores and atomics).
    pub global_bytes_requested: f64,
    /// Bytes the sectors of global accesses move between L1 and L2.
    pub global_bytes_moved: f64,
    /// FP32 operations: an add, subtract or multiply is one per active lane, an FMA two.
    pub fp32_flops: f64,
    /// Warp-level instructions, as the interpreter counts them (about one per operation; not SASS).
    pub warp_instructions: f64,
    /// FP32 operations as the pipe performs them, for whole warps (`fp32_flops` counts the active
    /// lanes only): 64 per warp-level FMA and 32 per add or multiply.
    pub fp32_issued_flops: f64,
    /// Warp-level `__syncthreads()`, once per warp that reaches one.
    pub barrier_warp_instructions: f64,
    /// Warp-level SASS instructions, as nvcc's code would issue them (`kernel::issue`): what
    /// issue is charged for.
    pub inst_executed: f64,
    /// Warp-level instructions of if-converted bodies that warps issued with every lane
    /// predicated off (counted in `inst_executed` and in the memory instruction counts too).
    pub predicated_off_warp_instructions: f64,
    /// Thread-level SASS instructions: each warp instruction of `inst_executed` counted once per
    /// lane active in it, predicated on or off (Nsight Compute's `smsp__thread_inst_executed`).
    /// Over `inst_executed` it is the mean of active lanes per instruction, which a branch that
    /// splits warps lowers (seed 001, "Control-Flow Divergence").
    pub thread_inst_executed: f64,
    /// Warp-level instructions of the special function unit (`MUFU`: a reciprocal, a square
    /// root, an exponential, a sine; `kernel::issue::sfu_passes`), Nsight Compute's
    /// `smsp__inst_executed_pipe_xu`. Counters written before the field existed read as 0.
    pub sfu_instructions: f64,
    /// Warp-level instructions that only the ALU pipe executes (logical operations, shifts,
    /// comparisons, minimum and maximum, selections, votes: `kernel::issue::Annotation::alu`),
    /// Nsight Compute's `smsp__inst_executed_pipe_alu` less the adds and moves ptxas may give
    /// it. Counters written before the field existed read as 0.
    pub alu_instructions: f64,
    /// Passes through the unit that takes a warp's `MATCH` (two) and `REDUX` (one)
    /// (`tests/reference/warp_probes`: one every 16 and about every 8 clocks per SM
    /// sub-partition, counted on Nsight Compute's adu pipe).
    pub warp_unit_passes: f64,
}

/// What one warp-level memory instruction added to the counters, for the per-line view: the
/// shared wavefronts and bank conflicts of a shared load or store, the requests and sectors of a
/// global or local access, zero where the access has none of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccessCost {
    pub wavefronts: u32,
    pub bank_conflicts: u32,
    pub requests: u32,
    pub sectors: u32,
}

/// What one warp-level access adds to the counters, measured once (`Counters::add_measure`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccessMeasure {
    pub cost: AccessCost,
    n_active: u32,
    bytes_requested: u64,
    bytes_moved: u64,
    /// For a constant access: the distinct addresses, which the constant cache serializes.
    distinct_addresses: u32,
}

impl AccessMeasure {
    /// The measure of `access` on `device`; `None` for an access with no active lane.
    pub fn of(access: &WarpAccess, device: &Device) -> Option<AccessMeasure> {
        let n_active = access.n_active();
        if n_active == 0 {
            return None;
        }
        let mut measure = AccessMeasure {
            n_active,
            ..AccessMeasure::default()
        };
        let cost = &mut measure.cost;
        match access.space {
            Space::Shared => {
                if access.kind != AccessKind::Atomic {
                    let report = banks::wavefronts(access, device);
                    cost.wavefronts = report.wavefronts;
                    cost.bank_conflicts = report.bank_conflicts;
                }
            }
            Space::Global | Space::Local => {
                let report = coalescing::count(access, device);
                measure.bytes_requested = report.bytes_requested;
                measure.bytes_moved = report.bytes_moved;
                cost.requests = report.requests;
                cost.sectors = report.sectors;
            }
            Space::Constant => {
                // Distinct addresses, counted without allocating: a lane's address counts if no
                // lower lane has it (at most 32 lanes, so the pairwise check stays small).
                let mut seen = [0u64; crate::access::WARP_LANES];
                let mut distinct = 0;
                for (_, address) in access.active_lanes() {
                    if !seen[..distinct].contains(&address) {
                        seen[distinct] = address;
                        distinct += 1;
                    }
                }
                measure.distinct_addresses = distinct as u32;
            }
        }
        Some(measure)
    }

    /// The moves of `access` under which it still adds the measure taken of it on `device` are
    /// the multiples of this many bytes: a shared access moved by whole rows of banks keeps
    /// every lane in its bank, so it makes the same wavefronts and conflicts; on devices that
    /// count sectors (cc >= 2.0) a global or local access moved by whole sectors makes one
    /// request and as many distinct sectors, however they fall into lines; and any access moved
    /// by whole `coalescing::SHAPE_MOVE_BYTES` (the widest alignment a cc 1.x coalescing rule
    /// looks at) makes the same requests and sectors. (The n = 1000 guarded matmul's warps are
    /// 8,000 bytes apart: 250 sectors, 31.25 times 256 bytes.)
    pub(crate) fn move_unit(access: &WarpAccess, device: &Device) -> i64 {
        match (access.space, device.global_coalescing) {
            (Space::Shared, _) => {
                i64::from(device.n_banks.max(1)) * i64::from(device.bank_width_bytes.max(1))
            }
            (Space::Global | Space::Local, GlobalCoalescing::Sectors) => SECTOR_BYTES as i64,
            (Space::Global | Space::Local | Space::Constant, _) => SHAPE_MOVE_BYTES,
        }
    }
}

/// How many values a `Counters` holds.
const N_COUNTERS: usize = 32;

impl Counters {
    /// The name of each value, in the order of `values`. Names with two underscores are Nsight
    /// Compute metric names (Kernel Profiling Guide, "Metrics Reference"); the others are memplay's
    /// own, for quantities Nsight Compute has no single metric for.
    pub const NAMES: [&'static str; N_COUNTERS] = [
        "smsp__inst_executed_op_shared_ld.sum",
        "smsp__inst_executed_op_shared_st.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "smsp__inst_executed_op_shared_atom.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
        "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
        "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
        "constant_requests",
        "constant_serialized_accesses",
        "shared_bytes_requested",
        "global_bytes_requested",
        "global_bytes_moved",
        "fp32_flops",
        "warp_instructions",
        "fp32_issued_flops",
        "barrier_warp_instructions",
        "smsp__inst_executed.sum",
        "predicated_off_warp_instructions",
        "smsp__thread_inst_executed.sum",
        "smsp__inst_executed_pipe_xu.sum",
        "smsp__inst_executed_pipe_alu.sum",
        "warp_unit_passes",
    ];

    /// Adds one warp-level memory instruction.
    pub fn record(&mut self, access: &WarpAccess, device: &Device) {
        self.record_cost(access, device);
    }

    /// Adds one warp-level memory instruction and says what it added: the per-line view
    /// (`trace`) sums these per source line, so that it needs no second analysis of the access
    /// and its lines add up to these counters exactly. `None` for an access with no active lane,
    /// which counts nothing.
    pub(crate) fn record_cost(
        &mut self,
        access: &WarpAccess,
        device: &Device,
    ) -> Option<AccessCost> {
        let measure = AccessMeasure::of(access, device)?;
        self.add_measure(access, &measure);
        Some(measure.cost)
    }

    /// Adds an access that `measure` measured: `access` itself, or the same access moved
    /// by a multiple of `AccessMeasure::move_unit` (its space, kind and width are what count).
    pub(crate) fn add_measure(&mut self, access: &WarpAccess, measure: &AccessMeasure) {
        self.add_measure_times(access, measure, 1);
    }

    /// Adds `times` accesses that `measure` measured (the iterations of a loop skipped alike,
    /// `simulate`). Every count is a whole number, which a double holds exactly below 2^53, so
    /// this adds the same as `times` calls of `add_measure`.
    pub(crate) fn add_measure_times(
        &mut self,
        access: &WarpAccess,
        measure: &AccessMeasure,
        times: u64,
    ) {
        let t = times as f64;
        let cost = &measure.cost;
        let requests = f64::from(cost.requests) * t;
        let sectors = f64::from(cost.sectors) * t;
        match access.space {
            Space::Shared => {
                self.shared_bytes_requested +=
                    f64::from(measure.n_active) * f64::from(access.width.bytes()) * t;
                match access.kind {
                    AccessKind::Load => {
                        self.shared_ld_instructions += t;
                        self.shared_ld_wavefronts += f64::from(cost.wavefronts) * t;
                        self.shared_ld_bank_conflicts += f64::from(cost.bank_conflicts) * t;
                    }
                    AccessKind::Store => {
                        self.shared_st_instructions += t;
                        self.shared_st_wavefronts += f64::from(cost.wavefronts) * t;
                        self.shared_st_bank_conflicts += f64::from(cost.bank_conflicts) * t;
                    }
                    // Shared atomics are counted apart, as Nsight Compute does; their wavefronts
                    // are not part of the load and store counters.
                    AccessKind::Atomic => self.shared_atomic_instructions += t,
                }
            }
            Space::Global => {
                self.global_bytes_requested += measure.bytes_requested as f64 * t;
                self.global_bytes_moved += measure.bytes_moved as f64 * t;
                match access.kind {
                    AccessKind::Load => {
                        self.global_ld_requests += requests;
                        self.global_ld_sectors += sectors;
                    }
                    AccessKind::Store => {
                        self.global_st_requests += requests;
                        self.global_st_sectors += sectors;
                    }
                    AccessKind::Atomic => {
                        self.global_atomic_requests += requests;
                        self.global_atomic_sectors += sectors;
                    }
                }
            }
            Space::Local => match access.kind {
                AccessKind::Load => {
                    self.local_ld_requests += requests;
                    self.local_ld_sectors += sectors;
                }
                // Local memory is private to a thread, so an atomic on it is a store.
                AccessKind::Store | AccessKind::Atomic => {
                    self.local_st_requests += requests;
                    self.local_st_sectors += sectors;
                }
            },
            Space::Constant => {
                self.constant_requests += t;
                self.constant_serialized_accesses += f64::from(measure.distinct_addresses) * t;
            }
        }
    }

    /// `self + other * times`: adds `times` copies of a block's counters.
    pub(crate) fn add_scaled(&mut self, other: &Counters, times: f64) {
        for (mine, theirs) in self.values_mut().into_iter().zip(other.values()) {
            *mine += theirs * times;
        }
    }

    /// The values in the order of `NAMES`.
    pub fn values(&self) -> [f64; N_COUNTERS] {
        [
            self.shared_ld_instructions,
            self.shared_st_instructions,
            self.shared_ld_wavefronts,
            self.shared_st_wavefronts,
            self.shared_ld_bank_conflicts,
            self.shared_st_bank_conflicts,
            self.shared_atomic_instructions,
            self.global_ld_requests,
            self.global_ld_sectors,
            self.global_st_requests,
            self.global_st_sectors,
            self.global_atomic_requests,
            self.global_atomic_sectors,
            self.local_ld_requests,
            self.local_ld_sectors,
            self.local_st_requests,
            self.local_st_sectors,
            self.constant_requests,
            self.constant_serialized_accesses,
            self.shared_bytes_requested,
            self.global_bytes_requested,
            self.global_bytes_moved,
            self.fp32_flops,
            self.warp_instructions,
            self.fp32_issued_flops,
            self.barrier_warp_instructions,
            self.inst_executed,
            self.predicated_off_warp_instructions,
            self.thread_inst_executed,
            self.sfu_instructions,
            self.alu_instructions,
            self.warp_unit_passes,
        ]
    }

    fn values_mut(&mut self) -> [&mut f64; N_COUNTERS] {
        [
            &mut self.shared_ld_instructions,
            &mut self.shared_st_instructions,
            &mut self.shared_ld_wavefronts,
            &mut self.shared_st_wavefronts,
            &mut self.shared_ld_bank_conflicts,
            &mut self.shared_st_bank_conflicts,
            &mut self.shared_atomic_instructions,
            &mut self.global_ld_requests,
            &mut self.global_ld_sectors,
            &mut self.global_st_requests,
            &mut self.global_st_sectors,
            &mut self.global_atomic_requests,
            &mut self.global_atomic_sectors,
            &mut self.local_ld_requests,
            &mut self.local_ld_sectors,
            &mut self.local_st_requests,
            &mut self.local_st_sectors,
            &mut self.constant_requests,
            &mut self.constant_serialized_accesses,
            &mut self.shared_bytes_requested,
            &mut self.global_bytes_requested,
            &mut self.global_bytes_moved,
            &mut self.fp32_flops,
            &mut self.warp_instructions,
            &mut self.fp32_issued_flops,
            &mut self.barrier_warp_instructions,
            &mut self.inst_executed,
            &mut self.predicated_off_warp_instructions,
            &mut self.thread_inst_executed,
            &mut self.sfu_instructions,
            &mut self.alu_instructions,
            &mut self.warp_unit_passes,
        ]
    }

    /// The counters under their names, in a fixed order.
    pub fn nsight(&self) -> Vec<(&'static str, f64)> {
        Counters::NAMES.into_iter().zip(self.values()).collect()
    }

    /// One counter by its name, `None` for a name this model does not count.
    pub fn get(&self, name: &str) -> Option<f64> {
        Counters::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|index| self.values()[index])
    }
}

impl Serialize for Counters {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(N_COUNTERS))?;
        for (name, value) in Counters::NAMES.iter().zip(self.values()) {
            map.serialize_entry(name, &value)?;
        }
        map.end()
    }
}

/// Reads the map `Serialize` writes: every name of `Counters::NAMES` once, with its value. A
/// missing name reads as 0; an unknown one is an error, so data from another model is not taken
/// for this one's.
impl<'de> Deserialize<'de> for Counters {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Counters, D::Error> {
        struct CountersVisitor;

        impl<'de> Visitor<'de> for CountersVisitor {
            type Value = Counters;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map from counter names to numbers")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Counters, A::Error> {
                let mut counters = Counters::default();
                while let Some(name) = map.next_key::<String>()? {
                    let Some(index) = Counters::NAMES.iter().position(|n| *n == name) else {
                        return Err(serde::de::Error::unknown_field(&name, &Counters::NAMES));
                    };
                    *counters.values_mut()[index] = map.next_value()?;
                }
                Ok(counters)
            }
        }

        deserializer.deserialize_map(CountersVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::AccessWidth;
    use crate::device::h100;

    fn check(accesses: &[WarpAccess], expected: &[(&str, f64)]) {
        let device = h100();
        let mut counters = Counters::default();
        for access in accesses {
            counters.record(access, &device);
        }
        let named = counters.nsight();
        for (name, value) in expected {
            let found = named.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
            assert_eq!(found, Some(*value), "{name}");
        }
    }

    fn warp(space: Space, kind: AccessKind, address: impl FnMut(u32) -> Option<u64>) -> WarpAccess {
        WarpAccess::from_fn(space, kind, AccessWidth::FOUR, address)
    }

    #[test]
    fn thirty_two_floats_in_a_row_are_one_request_of_four_sectors() {
        let load = warp(Space::Global, AccessKind::Load, |lane| {
            Some(4 * u64::from(lane))
        });
        check(
            &[load],
            &[
                ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", 1.0),
                ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", 4.0),
                ("global_bytes_requested", 128.0),
            ],
        );
    }

    #[test]
    fn column_read_of_a_32_by_32_tile_is_32_wavefronts_and_31_conflicts() {
        let load = warp(Space::Shared, AccessKind::Load, |lane| {
            Some(128 * u64::from(lane))
        });
        check(
            &[load],
            &[
                ("smsp__inst_executed_op_shared_ld.sum", 1.0),
                ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 32.0),
                (
                    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                    31.0,
                ),
            ],
        );
    }

    #[test]
    fn global_atomics_are_not_stores() {
        let atomic = warp(Space::Global, AccessKind::Atomic, |_| Some(0));
        check(
            &[atomic],
            &[
                ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", 0.0),
                ("l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", 1.0),
            ],
        );
    }

    #[test]
    fn constant_reads_serialize_over_distinct_addresses() {
        let same = warp(Space::Constant, AccessKind::Load, |_| Some(64));
        let four = warp(Space::Constant, AccessKind::Load, |lane| {
            Some(4 * u64::from(lane % 4))
        });
        check(
            &[same, four],
            &[
                ("constant_requests", 2.0),
                ("constant_serialized_accesses", 5.0),
            ],
        );
    }

    #[test]
    fn an_inactive_warp_counts_nothing() {
        let nothing = warp(Space::Shared, AccessKind::Load, |_| None);
        check(&[nothing], &[("smsp__inst_executed_op_shared_ld.sum", 0.0)]);
    }

    #[test]
    fn scaling_adds_copies_of_a_block() {
        let block = Counters {
            global_ld_requests: 3.0,
            ..Counters::default()
        };
        let mut total = Counters::default();
        total.add_scaled(&block, 4094.0);
        assert_eq!(total.global_ld_requests, 12282.0);
    }

    #[test]
    fn a_128_bit_row_read_shared_by_the_whole_warp_is_two_wavefronts_without_conflicts() {
        // mm_tiled TILE=32 as compiled: every lane reads sa[ty][k..k+3], the same 16 bytes.
        let load = WarpAccess::from_fn(
            Space::Shared,
            AccessKind::Load,
            AccessWidth::SIXTEEN,
            |_| Some(256),
        );
        check(
            &[load],
            &[
                ("smsp__inst_executed_op_shared_ld.sum", 1.0),
                ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 2.0),
                (
                    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                    0.0,
                ),
                ("shared_bytes_requested", 512.0),
            ],
        );
    }

    #[test]
    fn counters_serialize_under_their_nsight_names() {
        let counters = Counters {
            shared_ld_wavefronts: 7.0,
            ..Counters::default()
        };
        let json = serde_json::to_value(counters).expect("counters serialize");
        assert_eq!(
            json["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"],
            serde_json::json!(7.0)
        );
        assert_eq!(
            counters.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
            Some(7.0)
        );
        assert_eq!(counters.get("dram__bytes_read.sum"), None);
    }

    #[test]
    fn counters_read_back_from_their_nsight_names_are_the_same_counters() {
        let counters = Counters {
            shared_ld_wavefronts: 7.0,
            global_ld_sectors: 4096.0,
            warp_instructions: 123_456.0,
            ..Counters::default()
        };
        let json = serde_json::to_string(&counters).expect("counters serialize");
        let back: Counters = serde_json::from_str(&json).expect("counters deserialize");
        assert_eq!(back, counters);
    }

    #[test]
    fn a_counter_name_this_model_does_not_know_is_refused() {
        let result = serde_json::from_str::<Counters>(r#"{"dram__bytes_read.sum": 1.0}"#);
        assert!(result.is_err(), "{result:?}");
    }
}
