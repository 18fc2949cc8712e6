//! Whole CUDA programs, host code and all, read as nvcc's device pass reads them: `__CUDACC__`
//! and `__CUDA_ARCH__` defined, host functions and variables read past.

use memplay_lang::ast::Item;
use memplay_lang::launches::{find_launches, ArgumentValue, HostValue};
use memplay_lang::parse;
use std::path::Path;

/// The defines of nvcc's device pass for cc 9.0.
fn device_pass() -> Vec<(String, String)> {
    vec![
        ("__CUDACC__".to_string(), "1".to_string()),
        ("__CUDA_ARCH__".to_string(), "900".to_string()),
    ]
}

fn reference(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/reference")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_measured_programs_parse_with_their_host_code_in_view() {
    // warp_probes.cu keeps kernels memplay cannot read yet (cooperative groups, 16-bit types)
    // under `#ifdef __CUDACC__`, so it is not among them.
    let files = [
        "carveout/carve.cu",
        "dram_mix/dram_mix.cu",
        "l1_shapes/l1.cu",
        "probes/probe.cu",
        "students/students.cu",
        "vector_loads/vector_loads.cu",
    ];
    let defines = device_pass();
    let mut failed = Vec::new();
    for file in files {
        match parse(&reference(file), &defines) {
            Ok(unit) => {
                let host = unit
                    .items
                    .iter()
                    .filter(|i| matches!(i, Item::Host(_)))
                    .count();
                if !unit
                    .items
                    .iter()
                    .any(|i| matches!(i, Item::Host(h) if h.name == "main"))
                {
                    failed.push(format!("{file}: no main among {host} host items"));
                }
            }
            Err(error) => failed.push(format!("{file}: {error}")),
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn the_vector_loads_program_launches_each_kernel_on_its_two_buffers() {
    // n = 2^21 elements, 256 threads a block: 8192 blocks; each buffer is 16 n bytes, 32 MiB.
    let launches = find_launches(&reference("vector_loads/vector_loads.cu"), &[])
        .unwrap_or_else(|d| panic!("{d}"));
    let kernels: Vec<&str> = launches.iter().map(|l| l.kernel.as_str()).collect();
    assert_eq!(
        kernels,
        [
            "v_float",
            "v_float2",
            "v_float3",
            "v_float3_x",
            "v_float4",
            "v_int4_bytes",
            "v_uchar4",
            "v_s12",
            "v_s12_b",
            "v_s16",
            "v_s16_b"
        ]
    );
    for launch in &launches {
        let known = |d: &[HostValue; 3]| d.iter().map(HostValue::known).collect::<Vec<_>>();
        assert_eq!(
            known(&launch.grid),
            [Some(8192), Some(1), Some(1)],
            "{}",
            launch.kernel
        );
        assert_eq!(
            known(&launch.block),
            [Some(256), Some(1), Some(1)],
            "{}",
            launch.kernel
        );
        let buffers: Vec<(String, Option<i64>)> = launch
            .args
            .iter()
            .filter_map(|a| match &a.value {
                ArgumentValue::Buffer(b) => Some((b.buffer.clone(), b.bytes.known())),
                _ => None,
            })
            .collect();
        let size = Some(16 << 21);
        assert_eq!(
            buffers,
            [("d_b".to_string(), size), ("d_a".to_string(), size)],
            "{}",
            launch.kernel
        );
        assert_eq!(launch.args[2].value, ArgumentValue::Integer(1 << 21));
    }
}
