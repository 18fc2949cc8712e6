//! The pitch model against a real H100: every `"exp": "pitch"` row of
//! `tests/reference/h100.json` (`cudaMallocPitch` of 64 rows, the width in bytes and the pitch it
//! returned) must be what `pitch::pitch_bytes` gives on the H100 preset.

mod common;

use memplay_sim::device::h100;
use memplay_sim::pitch::pitch_bytes;

#[test]
fn the_h100_pitches_of_cuda_malloc_pitch_are_the_model_s() {
    let reference = common::read_json("h100.json");
    let rows: Vec<_> = reference["time"]
        .as_array()
        .expect("h100.json has a \"time\" list")
        .iter()
        .filter(|row| row["exp"] == "pitch")
        .collect();
    assert!(
        rows.len() >= 3,
        "h100.json should hold the measured pitches, found {} rows",
        rows.len()
    );
    let device = h100();
    for row in rows {
        let width = row["width_bytes"]
            .as_u64()
            .and_then(|width| u32::try_from(width).ok())
            .unwrap_or_else(|| panic!("a pitch row without a width: {row}"));
        let measured = row["pitch"]
            .as_u64()
            .unwrap_or_else(|| panic!("a pitch row without a pitch: {row}"));
        println!(
            "width {width:>5} B: measured pitch {measured:>5}, model {}",
            pitch_bytes(&device, width)
        );
        assert_eq!(pitch_bytes(&device, width), measured, "width {width} bytes");
    }
}
