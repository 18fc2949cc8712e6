//! The shared-memory carveout the driver picks on the H100, against `occupancy::calculate`:
//! `tests/reference/carveout/alone.jsonl` holds 84 launches of one kernel, each alone in its
//! process under Nsight Compute (blocks of 32 to 1,024 threads, 0 to 48 KB of dynamic shared
//! memory, and a 12 KB static array), with the carveout the driver configured and the limits
//! Nsight reported.

use memplay_sim::occupancy::{self, BlockResources};
use memplay_sim::DeviceId;
use serde_json::Value;

fn launches() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/reference/carveout/alone.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("tests/reference/carveout/alone.jsonl");
    text.lines()
        .map(|line| serde_json::from_str(line).expect("a launch"))
        .collect()
}

#[test]
fn every_launch_alone_gets_the_carveout_and_limits_nsight_reports() {
    let h100 = DeviceId::H100.device();
    let launches = launches();
    assert_eq!(launches.len(), 84);
    let mut off = Vec::new();
    for launch in &launches {
        let field = |key: &str| launch[key].as_u64().expect(key) as u32;
        let report = occupancy::calculate(
            &h100,
            BlockResources {
                threads_per_block: field("threads"),
                regs_per_thread: field("registers"),
                smem_per_block: field("static_bytes") + field("dynamic_bytes"),
            },
        )
        .expect("the launch fits");
        let modelled = (
            report.shared_carveout_bytes,
            report.limit_shared_mem,
            report.limit_registers,
            report.limit_warps,
            report.limit_blocks,
        );
        let measured = (
            field("config_bytes"),
            field("limit_shared_mem"),
            field("limit_registers"),
            field("limit_warps"),
            field("limit_blocks"),
        );
        if modelled != measured {
            off.push(format!(
                "{launch}: modelled {modelled:?}, measured {measured:?}"
            ));
        }
    }
    assert!(off.is_empty(), "{}", off.join("\n"));
}
