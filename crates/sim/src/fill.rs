//! What a launch's buffers hold before the kernel runs.
//!
//! Most lecture kernels make the same accesses whatever their data, but some do not: a histogram's
//! `atomicAdd(&bins[data[i] & 15], 1)` lands on as many words as `data` holds distinct values, and
//! an index read from a buffer goes wherever its contents say. A launch therefore says, buffer by
//! buffer, what each pointer parameter's buffer starts out holding:
//!
//! - `small` (the default): small pseudo-random values, integers from 0 to 15 (a `bool` 0 or 1)
//!   and floats in [0, 1). Every buffer held these before a launch could choose, so a launch that
//!   names no fill simulates exactly as it always did.
//! - `random`: pseudo-random values over the whole type: every bit pattern of an integer equally
//!   likely (uniform 32-bit words for an `int` buffer), floats uniform in [-1, 1).
//! - `iota`: element i holds i, converted to the element type as C converts it (an `unsigned char`
//!   buffer wraps at 256, a `float` buffer rounds above 2^24).
//! - `zeros`: every byte zero.
//!
//! The pseudo-random fills derive from the launch's seed (`SimulationInput::seed`) and the
//! buffer's place among the parameters, so a launch fills the same way on every run and a fill
//! of one buffer leaves the others as they were. An element is one scalar: a `float4` buffer's
//! `iota` counts its components, and a buffer of a type without a scalar element (`void*`) counts
//! bytes. A buffer of pointers holds null pointers whatever its fill, as no fill can name an
//! object for them to point into. `kernel::memory` materialises the contents page by page.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What one buffer holds before the kernel runs (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fill {
    /// Integers from 0 to 15, floats in [0, 1): the contents every buffer had before fills.
    #[default]
    Small,
    /// Every integer bit pattern equally likely, floats uniform in [-1, 1).
    Random,
    /// Element i holds i.
    Iota,
    /// Every byte zero.
    Zeros,
}

impl Fill {
    /// Every fill, in the order messages and help list them.
    pub const ALL: [Fill; 4] = [Fill::Small, Fill::Random, Fill::Iota, Fill::Zeros];

    /// The fill's name, as the JSON launch and the command line write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Fill::Small => "small",
            Fill::Random => "random",
            Fill::Iota => "iota",
            Fill::Zeros => "zeros",
        }
    }
}

impl fmt::Display for Fill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Fill {
    type Err = FillError;
    fn from_str(s: &str) -> Result<Fill, FillError> {
        Fill::ALL
            .into_iter()
            .find(|fill| fill.as_str() == s)
            .ok_or_else(|| FillError::UnknownFill(s.to_string()))
    }
}

/// Why a fill or a launch's fills cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FillError {
    /// The text names none of the fills.
    UnknownFill(String),
    /// A fill names a buffer the launch does not give; `buffers` are the ones it gives.
    NoSuchBuffer { name: String, buffers: Vec<String> },
    /// The launch fills one buffer twice.
    Twice(String),
}

impl fmt::Display for FillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FillError::UnknownFill(text) => {
                let names: Vec<&str> = Fill::ALL.iter().map(|fill| fill.as_str()).collect();
                write!(
                    f,
                    "unknown fill '{text}' (expected one of {})",
                    names.join(", ")
                )
            }
            FillError::NoSuchBuffer { name, buffers } if buffers.is_empty() => write!(
                f,
                "the launch fills a buffer '{name}', but it gives no buffers"
            ),
            FillError::NoSuchBuffer { name, buffers } => write!(
                f,
                "the launch fills a buffer '{name}', but its buffers are {}",
                buffers.join(", ")
            ),
            FillError::Twice(name) => write!(f, "the launch fills the buffer '{name}' twice"),
        }
    }
}

impl std::error::Error for FillError {}

/// Checks that every fill names one of the launch's `buffers` (name and size), and no buffer
/// twice, so that a misspelt name is an error rather than a fill that silently does nothing.
pub(crate) fn check_fills(
    fills: &[(String, Fill)],
    buffers: &[(String, u64)],
) -> Result<(), FillError> {
    for (index, (name, _)) in fills.iter().enumerate() {
        if !buffers.iter().any(|(buffer, _)| buffer == name) {
            return Err(FillError::NoSuchBuffer {
                name: name.clone(),
                buffers: buffers.iter().map(|(buffer, _)| buffer.clone()).collect(),
            });
        }
        if fills[..index].iter().any(|(earlier, _)| earlier == name) {
            return Err(FillError::Twice(name.clone()));
        }
    }
    Ok(())
}

/// The fill `fills` gives the buffer `name`: `Fill::Small` when it names none.
pub(crate) fn fill_of(fills: &[(String, Fill)], name: &str) -> Fill {
    fills
        .iter()
        .find(|(filled, _)| filled == name)
        .map(|&(_, fill)| fill)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::h100;
    use crate::kernel::{compile, Dim3, Launch, Simulation};
    use crate::simulate::{simulate, SimulationError, SimulationInput};

    fn buffers() -> Vec<(String, u64)> {
        vec![("data".to_string(), 4096), ("bins".to_string(), 64)]
    }

    /// Elements in each of the two buffers below: 40,000 bytes, so that they span three pages.
    const ELEMENTS: usize = 10_000;

    /// The contents of an `int` and a `float` buffer of `ELEMENTS` each under `fills` and `seed`,
    /// before the kernel runs.
    fn contents(fills: &[(&str, Fill)], seed: u64) -> (Vec<i32>, Vec<f32>) {
        let program = compile("__global__ void k(int* ints, float* floats) { }", &[])
            .expect("the kernel compiles");
        let bytes = 4 * ELEMENTS as u64;
        let launch = Launch {
            grid: Dim3::new(1, 1, 1),
            block: Dim3::new(32, 1, 1),
            dyn_smem: 0,
            args: vec![],
            buffers: vec![("ints".to_string(), bytes), ("floats".to_string(), bytes)],
            fills: fills
                .iter()
                .map(|(name, fill)| (name.to_string(), *fill))
                .collect(),
            pointers: vec![],
        };
        let mut sim = Simulation::new(&program, "k", &launch, seed).expect("the launch is good");
        let ints = sim.read_i32s("ints").expect("a buffer 'ints'");
        let floats = sim.read_f32s("floats").expect("a buffer 'floats'");
        (ints, floats)
    }

    fn both(fill: Fill) -> [(&'static str, Fill); 2] {
        [("ints", fill), ("floats", fill)]
    }

    #[test]
    fn small_is_what_a_launch_without_fills_holds_integers_to_15_and_floats_below_1() {
        let (ints, floats) = contents(&both(Fill::Small), 1);
        assert_eq!((ints.clone(), floats.clone()), contents(&[], 1));
        // The first values under seed 1, as every launch has had them since buffers were seeded.
        assert_eq!(ints[..8], [8, 5, 4, 14, 11, 10, 13, 0]);
        assert_eq!(floats[..3], [0.194_790_12, 0.615_788_64, 0.946_048_4]);
        assert!(ints.iter().all(|v| (0..16).contains(v)));
        assert!(floats.iter().all(|v| (0.0..1.0).contains(v)));
    }

    #[test]
    fn random_fills_ints_with_whole_words_and_floats_between_minus_one_and_one() {
        let (ints, floats) = contents(&both(Fill::Random), 1);
        // Of 10,000 uniform 32-bit words, about a quarter lie beyond each of +-2^30.
        let beyond = |v: &&i32| v.unsigned_abs() >= 1 << 30;
        let (negative, positive): (Vec<i32>, Vec<i32>) = ints.iter().partition(|v| **v < 0);
        assert!(negative.iter().filter(beyond).count() > 2000);
        assert!(positive.iter().filter(beyond).count() > 2000);
        assert!(floats.iter().all(|v| (-1.0..1.0).contains(v)));
        assert!(floats.iter().filter(|v| **v < -0.5).count() > 2000);
        assert!(floats.iter().filter(|v| **v >= 0.5).count() > 2000);
    }

    #[test]
    fn random_is_the_same_for_one_seed_and_differs_between_seeds() {
        let first = contents(&both(Fill::Random), 7);
        assert_eq!(first, contents(&both(Fill::Random), 7));
        let other = contents(&both(Fill::Random), 8);
        assert_ne!(first.0, other.0);
        assert_ne!(first.1, other.1);
    }

    #[test]
    fn iota_puts_i_in_element_i() {
        let (ints, floats) = contents(&both(Fill::Iota), 1);
        assert_eq!(ints, (0..ELEMENTS as i32).collect::<Vec<_>>());
        assert_eq!(floats, (0..ELEMENTS).map(|i| i as f32).collect::<Vec<_>>());
    }

    #[test]
    fn zeros_clears_every_element() {
        let (ints, floats) = contents(&both(Fill::Zeros), 1);
        assert_eq!(ints, vec![0; ELEMENTS]);
        assert_eq!(floats, vec![0.0; ELEMENTS]);
    }

    #[test]
    fn filling_one_buffer_leaves_the_other_as_it_was() {
        let (_, small) = contents(&[], 3);
        let (zeros, floats) = contents(&[("ints", Fill::Zeros)], 3);
        assert_eq!(zeros, vec![0; ELEMENTS]);
        assert_eq!(floats, small);
    }

    /// A histogram of `data & 15` over 16 blocks of 256 threads.
    fn histogram(fills: Vec<(String, Fill)>) -> SimulationInput {
        let source = "__global__ void histogram(const int* data, int* bins, int n) {\n\
                      \x20 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
                      \x20 if (i < n) atomicAdd(&bins[data[i] & 15], 1);\n\
                      }";
        let mut input = SimulationInput::new(source, "histogram", h100());
        input.grid = Dim3::new(16, 1, 1);
        input.block = Dim3::new(256, 1, 1);
        input.args = vec![("n".to_string(), crate::kernel::Value::Int(4096))];
        input.buffers = vec![("data".to_string(), 4 * 4096), ("bins".to_string(), 64)];
        input.fills = fills;
        input
    }

    #[test]
    fn zeroed_data_puts_every_update_of_a_histogram_on_one_bin() {
        let lanes = |fills| {
            let report = simulate(&histogram(fills)).expect("the histogram simulates");
            report.memory.hottest_address_lanes
        };
        // 4096 updates over 16 bins of small random values: a few hundred on the busiest...
        let small = lanes(vec![]);
        assert!((256.0..512.0).contains(&small), "{small}");
        // ... every one on bins[0] when data is zero, and exactly 256 a bin for iota.
        assert_eq!(lanes(vec![("data".to_string(), Fill::Zeros)]), 4096.0);
        assert_eq!(lanes(vec![("data".to_string(), Fill::Iota)]), 256.0);
        // The bins' own contents do not move an update.
        assert_eq!(lanes(vec![("bins".to_string(), Fill::Zeros)]), small);
    }

    #[test]
    fn a_fill_naming_no_buffer_of_the_launch_is_an_error_at_the_kernel_not_a_panic() {
        let input = histogram(vec![("bin".to_string(), Fill::Zeros)]);
        let error = simulate(&input).expect_err("there is no buffer 'bin'");
        assert!(matches!(error, SimulationError::Kernel(_)), "{error:?}");
        assert_eq!(
            error.to_string(),
            "1:17: the launch fills a buffer 'bin', but its buffers are data, bins"
        );
    }

    #[test]
    fn fills_are_written_and_read_as_lowercase_names() {
        for (fill, name) in [
            (Fill::Small, "small"),
            (Fill::Random, "random"),
            (Fill::Iota, "iota"),
            (Fill::Zeros, "zeros"),
        ] {
            assert_eq!(fill.as_str(), name);
            assert_eq!(name.parse::<Fill>(), Ok(fill));
            let json = serde_json::to_string(&fill).expect("a fill serializes");
            assert_eq!(json, format!("\"{name}\""));
            let back: Fill = serde_json::from_str(&json).expect("and reads back");
            assert_eq!(back, fill);
        }
        assert_eq!(Fill::default(), Fill::Small);
    }

    #[test]
    fn an_unknown_fill_lists_the_fills() {
        let error = "ones".parse::<Fill>().expect_err("there is no fill 'ones'");
        assert_eq!(
            error.to_string(),
            "unknown fill 'ones' (expected one of small, random, iota, zeros)"
        );
    }

    #[test]
    fn fills_of_the_launch_s_buffers_pass_the_check() {
        let fills = vec![
            ("bins".to_string(), Fill::Zeros),
            ("data".to_string(), Fill::Iota),
        ];
        assert_eq!(check_fills(&fills, &buffers()), Ok(()));
        assert_eq!(fill_of(&fills, "data"), Fill::Iota);
        assert_eq!(fill_of(&fills, "out"), Fill::Small);
    }

    #[test]
    fn a_fill_of_a_buffer_the_launch_does_not_give_is_an_error_naming_the_buffers() {
        let fills = vec![("bin".to_string(), Fill::Zeros)];
        let error = check_fills(&fills, &buffers()).expect_err("there is no buffer 'bin'");
        assert_eq!(
            error.to_string(),
            "the launch fills a buffer 'bin', but its buffers are data, bins"
        );
        let error = check_fills(&fills, &[]).expect_err("there are no buffers");
        assert_eq!(
            error.to_string(),
            "the launch fills a buffer 'bin', but it gives no buffers"
        );
    }

    #[test]
    fn filling_a_buffer_twice_is_an_error() {
        let fills = vec![
            ("data".to_string(), Fill::Zeros),
            ("data".to_string(), Fill::Iota),
        ];
        assert_eq!(
            check_fills(&fills, &buffers()),
            Err(FillError::Twice("data".to_string()))
        );
    }
}
