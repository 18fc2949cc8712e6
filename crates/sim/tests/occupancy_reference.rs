//! The occupancy calculation against a real H100: every `"exp": "attrs"` row of
//! `tests/reference/h100.json` is `cudaOccupancyMaxActiveBlocksPerMultiprocessor` for one
//! kernel (its registers and static shared memory from `cudaFuncGetAttributes`), block size and
//! dynamic shared memory. The simulator must give the same number of blocks, exactly.

mod common;

use common::read_json;
use memplay_sim::occupancy::{calculate, BlockResources};
use memplay_sim::DeviceId;
use serde_json::Value;

fn field(row: &Value, name: &str) -> u32 {
    row[name]
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or_else(|| panic!("row {row} has no whole number {name}"))
}

#[test]
fn every_attrs_row_of_the_h100_gets_the_measured_blocks_per_sm() {
    let reference = read_json("h100.json");
    let rows: Vec<&Value> = reference["time"]
        .as_array()
        .expect("a time array")
        .iter()
        .filter(|row| row["exp"] == "attrs")
        .collect();
    assert!(rows.len() >= 10, "h100.json has its attrs rows");
    let h100 = DeviceId::H100.device();
    let mut mismatches = Vec::new();
    println!(
        "{:<16} {:>5} {:>5} {:>7} {:>7} {:>9} {:>10}",
        "kernel", "block", "regs", "static", "dynamic", "measured", "simulated"
    );
    for row in rows {
        let block = BlockResources {
            threads_per_block: field(row, "block"),
            regs_per_thread: field(row, "regs"),
            smem_per_block: field(row, "static_smem") + field(row, "dyn_smem"),
        };
        let measured = field(row, "max_blocks_per_sm");
        let simulated = calculate(&h100, block).map(|r| r.active_blocks_per_sm);
        println!(
            "{:<16} {:>5} {:>5} {:>7} {:>7} {:>9} {:>10}",
            row["kernel"].as_str().unwrap_or("?"),
            block.threads_per_block,
            block.regs_per_thread,
            field(row, "static_smem"),
            field(row, "dyn_smem"),
            measured,
            simulated.map_or_else(|e| e.to_string(), |b| b.to_string())
        );
        if simulated != Ok(measured) {
            mismatches.push((row.clone(), simulated));
        }
    }
    assert!(
        mismatches.is_empty(),
        "occupancy differs from the H100: {mismatches:?}"
    );
}
