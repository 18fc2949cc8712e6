//! The global accesses of vector elements against the sm_90 measurements of
//! `tests/reference/vector_loads/`.
//!
//! Each launch there copies or reads 2,097,152 elements of one vector type, one a thread: a
//! `float3` is three 4-byte loads of 12 sectors a request, a `float4` reached through
//! `reinterpret_cast` one 16-byte load, an `int4` read from a `char` array too. memplay must make
//! the loads nvcc makes, so the global requests and sectors must match Nsight Compute's exactly.
//! The kernels of 12- and 16-byte structs are compared too: a whole `struct {float a, b, c;}` is
//! three 4-byte loads, the same aligned to 16 one 16-byte load, and one member of either is one
//! load at the struct's stride. Nothing measured is copied into the model; the numbers are only
//! compared.

mod common;

use common::{input_from_spec_in, read_lines};
use memplay_sim::simulate;

/// Nsight Compute's global request and sector counts, which memplay counts the same way.
const GLOBAL_COUNTERS: [&str; 4] = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
];

#[test]
fn vector_element_accesses_match_the_h100s_requests_and_sectors() {
    let mut compared = 0;
    let mut off = Vec::new();
    for row in read_lines("vector_loads/ncu_join.jsonl") {
        let id = row["id"].as_str().unwrap_or("?");
        let spec = &row["spec"];
        let input = input_from_spec_in(spec, "vector_loads")
            .unwrap_or_else(|e| panic!("{id}: bad spec: {e}"));
        let report = simulate(&input).unwrap_or_else(|e| panic!("{id}: does not simulate: {e}"));
        let measured = &row["measured"];
        for name in GLOBAL_COUNTERS {
            let measured = measured[name].as_f64().unwrap_or(f64::NAN);
            let simulated = report.counters.get(name).unwrap_or(f64::NAN);
            println!("{id:24} {name:52} {simulated:>12} {measured:>12}");
            if simulated != measured {
                off.push(format!("{id} {name}: {simulated} against {measured}"));
            }
        }
        compared += 1;
    }
    // v_float, v_float2, v_float3, v_float3_x, v_float4, v_int4_bytes, v_uchar4, v_s12,
    // v_s12_b, v_s16 and v_s16_b.
    assert_eq!(compared, 11);
    assert!(off.is_empty(), "{}", off.join("\n"));
}
