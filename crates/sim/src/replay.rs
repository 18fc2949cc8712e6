//! A launch as a file: what the playground exports ("Download the launch") and `memplay replay`
//! runs, so that a student's or an instructor's launch can be rerun, checked and shared exactly.
//!
//! The file is one JSON object, a small envelope around the plain `SimulationInput` the page
//! simulated and the results the page showed for it:
//!
//! ```json
//! {
//!   "memplay_launch": 1,
//!   "input": { "source": "...", "kernel": "mm_tiled", "grid": {"x": 64, "y": 64, "z": 1}, ... },
//!   "expected": {
//!     "counters": { "smsp__inst_executed_op_shared_ld.sum": 41943040.0, ... },
//!     "time_ms": 0.26758327591110026
//!   }
//! }
//! ```
//!
//! `memplay_launch` is the envelope's version (`LAUNCH_FILE_VERSION`); `input` is
//! `SimulationInput` as serde writes it (the whole device preset included, so a file replays the
//! same on a later version whose presets moved). Its `fills` say what each named buffer starts out
//! holding (`fill`); a file written before fills existed lacks the field and reads as filling
//! nothing, so it replays as it did.
//!
//! Version 2 adds the input's `pointers`, the pointer parameters that point into a buffer past its
//! start (`pointer_argument`), each as `{"parameter": "in", "buffer": "d_in", "offset": 3}`, the
//! offset in elements of the parameter's pointee. A launch without one is written as version 1,
//! with an empty `pointers` list that a memplay predating offsets ignores, so that it still
//! replays it; a version 1 file reads as pointing every parameter at the start of its own buffer,
//! as it always did. `expected` is what the page computed: the counters under
//! Nsight Compute's names and the predicted time in milliseconds.
//! `LaunchFile::differences` compares a rerun with it: the counters exactly (they are counts, and
//! the simulation is deterministic), the time within `TIME_RELATIVE_TOLERANCE`, since a float
//! printed and read back, or summed in another order by another build, may move in its last bits.
//!
//! This module only defines the data; the page and the command line serialize it with serde_json.

use crate::counters::Counters;
use crate::simulate::SimulationInput;
use serde::{Deserialize, Serialize};

/// The envelope's version, written as `memplay_launch` for a launch with pointer arguments. A
/// reader reads it and every earlier version, and refuses later ones.
pub const LAUNCH_FILE_VERSION: u32 = 2;

/// The version written for a launch without pointer arguments, which a reader of version 1 reads.
const FIRST_VERSION: u32 = 1;

/// How far a replayed time may be from the expected one, relative to the expected one.
pub const TIME_RELATIVE_TOLERANCE: f64 = 1e-9;

/// One launch and the results to check a rerun against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaunchFile {
    /// The envelope's version: `LAUNCH_FILE_VERSION`, or 1 for a launch that version 1 can say.
    pub memplay_launch: u32,
    /// The launch exactly as it was simulated.
    pub input: SimulationInput,
    /// What the simulation gave when the file was written.
    pub expected: Expected,
}

/// The results a launch file expects a rerun to reproduce.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expected {
    /// The whole launch's counters, under Nsight Compute's names.
    pub counters: Counters,
    /// The timing model's predicted time, in milliseconds.
    pub time_ms: f64,
}

impl LaunchFile {
    /// The file of a launch that ran, with its counters and predicted time.
    pub fn new(input: SimulationInput, counters: Counters, time_ms: f64) -> LaunchFile {
        let memplay_launch = if input.pointers.is_empty() {
            FIRST_VERSION
        } else {
            LAUNCH_FILE_VERSION
        };
        LaunchFile {
            memplay_launch,
            input,
            expected: Expected { counters, time_ms },
        }
    }

    /// Refuses an envelope of a later version, whose fields may mean something else, and a
    /// version 1 envelope with pointer arguments, which that version cannot have.
    pub fn check_version(&self) -> Result<(), String> {
        let version = self.memplay_launch;
        if !(FIRST_VERSION..=LAUNCH_FILE_VERSION).contains(&version) {
            return Err(format!(
                "the launch file is version {version}; this memplay reads versions \
                 {FIRST_VERSION} to {LAUNCH_FILE_VERSION}"
            ));
        }
        if version == FIRST_VERSION && !self.input.pointers.is_empty() {
            return Err("the launch file is version 1, which has no pointer arguments".to_string());
        }
        Ok(())
    }

    /// How a rerun's counters and time differ from the expected ones, one line per difference;
    /// empty when they agree (counters exactly, the time within `TIME_RELATIVE_TOLERANCE`).
    pub fn differences(&self, counters: &Counters, time_ms: f64) -> Vec<String> {
        let mut differences: Vec<String> = self
            .expected
            .counters
            .nsight()
            .into_iter()
            .zip(counters.nsight())
            .filter(|((_, expected), (_, actual))| expected != actual)
            .map(|((name, expected), (_, actual))| {
                format!("{name}: expected {expected}, replayed {actual}")
            })
            .collect();
        let expected_ms = self.expected.time_ms;
        let tolerance = TIME_RELATIVE_TOLERANCE * expected_ms.abs();
        // A NaN on either side compares false, so it counts as a difference.
        let within = (time_ms - expected_ms).abs() <= tolerance;
        if !within {
            differences.push(format!(
                "time_ms: expected {expected_ms}, replayed {time_ms}"
            ));
        }
        differences
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::h100;
    use crate::fill::Fill;
    use crate::pointer_argument::PointerArgument;

    fn file() -> LaunchFile {
        let counters = Counters {
            global_ld_requests: 64.0,
            global_ld_sectors: 256.0,
            ..Counters::default()
        };
        LaunchFile::new(SimulationInput::new("", "k", h100()), counters, 0.25)
    }

    #[test]
    fn a_launch_file_reads_back_as_it_was_written() {
        let file = file();
        let json = serde_json::to_string_pretty(&file).expect("a launch file serializes");
        assert!(json.contains("\"memplay_launch\": 1"), "{json}");
        let read: LaunchFile = serde_json::from_str(&json).expect("and reads back");
        assert_eq!(read, file);
        assert_eq!(read.check_version(), Ok(()));
    }

    #[test]
    fn a_launch_file_keeps_its_buffers_fills() {
        let mut file = file();
        file.input.fills = vec![
            ("data".to_string(), Fill::Zeros),
            ("bins".to_string(), Fill::Iota),
        ];
        let json = serde_json::to_value(&file).expect("a launch file serializes");
        assert_eq!(
            json["input"]["fills"],
            serde_json::json!([["data", "zeros"], ["bins", "iota"]])
        );
        let read: LaunchFile = serde_json::from_value(json).expect("and reads back");
        assert_eq!(read, file);
    }

    #[test]
    fn a_launch_file_written_before_fills_reads_as_filling_nothing() {
        let file = file();
        let mut json = serde_json::to_value(&file).expect("a launch file serializes");
        let input = json["input"]
            .as_object_mut()
            .expect("the input is an object");
        assert_eq!(input.remove("fills"), Some(serde_json::json!([])));
        let read: LaunchFile = serde_json::from_value(json).expect("an older file reads");
        assert!(read.input.fills.is_empty());
        assert_eq!(read, file);
    }

    #[test]
    fn a_rerun_differs_by_any_counter_or_by_more_than_the_time_tolerance() {
        let file = file();
        let same = file.expected.counters;
        assert!(file.differences(&same, 0.25 * (1.0 + 1e-12)).is_empty());
        let mut other = same;
        other.global_ld_sectors = 257.0;
        assert_eq!(
            file.differences(&other, 0.26),
            vec![
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum: expected 256, replayed 257"
                    .to_string(),
                "time_ms: expected 0.25, replayed 0.26".to_string(),
            ]
        );
        assert_eq!(file.differences(&same, f64::NAN).len(), 1);
    }

    #[test]
    fn a_later_version_is_refused() {
        let mut file = file();
        file.memplay_launch = 3;
        assert_eq!(
            file.check_version(),
            Err("the launch file is version 3; this memplay reads versions 1 to 2".to_string())
        );
        file.memplay_launch = 0;
        assert!(file.check_version().is_err());
    }

    #[test]
    fn a_launch_with_a_pointer_argument_is_version_2_and_one_without_is_version_1() {
        let plain = file();
        assert_eq!(plain.memplay_launch, 1);
        let json = serde_json::to_value(&plain).expect("a launch file serializes");
        assert_eq!(json["input"]["pointers"], serde_json::json!([]), "{json}");

        let mut input = plain.input.clone();
        input.pointers = vec![PointerArgument {
            parameter: "in".to_string(),
            buffer: "d_in".to_string(),
            offset: 3,
        }];
        let moved = LaunchFile::new(input, plain.expected.counters, 0.25);
        assert_eq!(moved.memplay_launch, 2);
        let json = serde_json::to_value(&moved).expect("a launch file serializes");
        assert_eq!(
            json["input"]["pointers"],
            serde_json::json!([{"parameter": "in", "buffer": "d_in", "offset": 3}])
        );
        let read: LaunchFile = serde_json::from_value(json).expect("and reads back");
        assert_eq!(read, moved);
        assert_eq!(read.check_version(), Ok(()));

        let mut mislabelled = moved;
        mislabelled.memplay_launch = 1;
        assert!(mislabelled.check_version().is_err());
    }
}
