//! Two launches side by side: what the page's launch is compared with, and the table and sentence
//! that say how they differ.
//!
//! The lectures teach by comparison: the naive against the tiled matmul (seed 003), a padded
//! against an unpadded tile (seed 001), the GT200 against a current GPU, the kernel as written
//! against nvcc's fused loads. `CompareWith` names the comparison (`compare=` in the link), and
//! `State::compare_launch` makes the second launch, which the worker runs after the first. Pure:
//! the rows, ratios and sentence are tested on the host.

use crate::format::format_significant;
use crate::state::State;
#[cfg(test)]
use crate::statements::{printed_number, Claim, Statement};
use memplay_sim::compile_effects::CompileEffects;
use memplay_sim::simulate::{SimulationInput, SimulationReport};
use memplay_sim::timing::Prediction;
use memplay_sim::DeviceId;

pub use crate::settings::CompareWith;

impl State {
    /// The launch the page's launch is compared with, and its name in the table; `None` when
    /// nothing is compared or the lesson has no other kernel.
    pub fn compare_launch(&self) -> Option<(String, SimulationInput)> {
        let mut other = self.clone();
        let label = match self.compare {
            CompareWith::Nothing => return None,
            CompareWith::Variant => {
                let variants = self.variant.lesson().variants();
                let here = variants
                    .iter()
                    .position(|&variant| variant == self.variant)?;
                let partner = *variants.get((here + 1) % variants.len())?;
                if partner == self.variant {
                    return None;
                }
                // The other kernel runs from its own file: the edit belongs to this one.
                other.variant = partner;
                other.edited_source = None;
                partner.kernel().to_string()
            }
            CompareWith::Padding => {
                other.pad = if self.pad == 0 { 1 } else { 0 };
                format!("PAD={}", other.pad)
            }
            CompareWith::Compile => {
                other.compile = if self.compile == CompileEffects::AS_COMPILED {
                    CompileEffects::AS_WRITTEN
                } else {
                    CompileEffects::AS_COMPILED
                };
                compile_label(other.compile).to_string()
            }
            CompareWith::OtherEnd => {
                other.device = if self.device == DeviceId::H100 {
                    DeviceId::Gt200
                } else {
                    DeviceId::H100
                };
                other.device.label().to_string()
            }
            CompareWith::Device(device) => {
                if device == self.device {
                    return None;
                }
                other.device = device;
                device.label().to_string()
            }
        };
        Some((label, other.launch()))
    }

    /// The name of the page's own launch in the comparison's table.
    pub fn compare_own_label(&self) -> String {
        match self.compare {
            CompareWith::Nothing | CompareWith::Variant => self.variant.kernel().to_string(),
            CompareWith::Padding => format!("PAD={}", self.pad),
            CompareWith::Compile => compile_label(self.compile).to_string(),
            CompareWith::OtherEnd | CompareWith::Device(_) => self.device.label().to_string(),
        }
    }
}

/// The name of a way of counting in the comparison's table.
fn compile_label(compile: CompileEffects) -> &'static str {
    if compile == CompileEffects::AS_WRITTEN {
        "as written"
    } else {
        "as compiled"
    }
}

/// One row of the comparison: a quantity of both launches and their ratio (other / own).
#[derive(Clone, Debug, PartialEq)]
pub struct CompareRow {
    pub name: &'static str,
    pub own: f64,
    pub other: f64,
    /// A time in milliseconds, printed as the page prints times (µs where small), or a count.
    pub time: bool,
}

impl CompareRow {
    /// other / own; `None` where own is 0 (a quantity one launch does not have).
    pub fn ratio(&self) -> Option<f64> {
        (self.own > 0.0).then(|| self.other / self.own)
    }

    /// The row's three cells as the page prints them: own, other and the ratio. A time keeps
    /// three significant digits however small ("5.83 µs"), and the ratio three too ("1.04×"),
    /// so two launches a few percent apart never read "0 0 1×".
    pub fn cells(&self) -> (String, String, String) {
        let value = |value: f64| {
            if self.time {
                crate::format::format_time(value)
            } else {
                crate::format::format_number(value)
            }
        };
        let ratio = self
            .ratio()
            .map(|ratio| format!("{}×", format_significant(ratio)))
            .unwrap_or_else(|| "–".to_string());
        (value(self.own), value(self.other), ratio)
    }
}

/// What the comparison shows, as statements: each row's ratio recomputes from the two cells
/// printed beside it.
#[cfg(test)]
pub fn compare_statements(
    own_label: &str,
    other_label: &str,
    rows: &[CompareRow],
) -> Vec<Statement> {
    let mut statements = vec![Statement::words(
        "compare",
        sentence(own_label, other_label, rows),
    )];
    for row in rows {
        let (own, other, ratio) = row.cells();
        let text = format!("{}: {own} | {other} | {ratio}", row.name);
        // The cells as printed, read back: a time's unit is the same in both where both are
        // printed in µs or both in ms; otherwise the exact values stand in.
        let read = |cell: &str, exact: f64| {
            let number = cell.split_whitespace().next().and_then(printed_number);
            match (number, cell.ends_with("µs")) {
                (Some(number), true) => number / 1000.0,
                (Some(number), false) => number,
                (None, _) => exact,
            }
        };
        match (row.ratio(), printed_number(ratio.trim_end_matches('×'))) {
            (Some(_), Some(shown)) if read(&own, row.own) > 0.0 => statements.push(Statement {
                view: "compare",
                text,
                claim: Claim::Formula {
                    shown,
                    recomputed: read(&other, row.other) / read(&own, row.own),
                    // Three significant digits in each cell and in the ratio.
                    tolerance: 0.02,
                },
            }),
            _ => statements.push(Statement::words("compare", text)),
        }
    }
    statements
}

/// The counters the comparison shows, with their names in the lectures' words.
const COUNTERS: [(&str, &str); 6] = [
    (
        "global load requests",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    ),
    (
        "global load sectors",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    ),
    (
        "global store sectors",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    ),
    (
        "shared load wavefronts",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    ),
    (
        "shared load instructions",
        "smsp__inst_executed_op_shared_ld.sum",
    ),
    (
        "global atomic requests",
        "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    ),
];

/// The rows of two launches that ran: the predicted time, then each counter either has.
pub fn rows(
    own: (&SimulationReport, &Prediction),
    other: (&SimulationReport, &Prediction),
) -> Vec<CompareRow> {
    let mut rows = vec![CompareRow {
        name: "predicted time",
        own: own.1.time_ms,
        other: other.1.time_ms,
        time: true,
    }];
    for (name, counter) in COUNTERS {
        let own = own.0.counters.get(counter).unwrap_or(0.0);
        let other = other.0.counters.get(counter).unwrap_or(0.0);
        if own > 0.0 || other > 0.0 {
            rows.push(CompareRow {
                name,
                own,
                other,
                time: false,
            });
        }
    }
    rows
}

/// One sentence on the biggest difference: the counter whose ratio is furthest from 1, and the
/// time's ratio beside it.
pub fn sentence(own_label: &str, other_label: &str, rows: &[CompareRow]) -> String {
    let times = |ratio: f64| format!("{}×", format_significant(ratio));
    let time = rows.first().and_then(CompareRow::ratio);
    let biggest = rows
        .iter()
        .skip(1)
        .filter_map(|row| Some((row, row.ratio()?)))
        .filter(|(_, ratio)| *ratio > 0.0)
        .max_by(|a, b| a.1.ln().abs().total_cmp(&b.1.ln().abs()));
    let counter = match biggest {
        Some((row, ratio)) if ratio >= 1.01 => format!(
            "{other_label} makes {} the {} of {own_label}",
            times(ratio),
            row.name
        ),
        Some((row, ratio)) if ratio <= 0.99 => format!(
            "{other_label} makes {} fewer {} than {own_label}",
            times(1.0 / ratio),
            row.name
        ),
        _ => format!("{other_label} and {own_label} make the same memory accesses"),
    };
    match time {
        // Within 1% the two times are the same as the page prints them.
        Some(time) if (0.99..=1.01).contains(&time) => {
            format!("{counter}, and takes the same time within 1%.")
        }
        Some(time) if time > 1.0 => format!("{counter}, and takes {} as long.", times(time)),
        Some(time) if time > 0.0 => format!("{counter}, and is {} faster.", times(1.0 / time)),
        _ => format!("{counter}."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memplay_sim::simulate::simulate;
    use memplay_sim::timing::predict;

    fn check(state: State, expected_sentence: &str) {
        let (label, other) = state.compare_launch().expect("something to compare with");
        let own_input = state.launch();
        let own = simulate(&own_input).expect("the page's launch runs");
        let other_report = simulate(&other).expect("the compared launch runs");
        let rows = rows(
            (&own, &predict(&own)),
            (&other_report, &predict(&other_report)),
        );
        let said = sentence(&state.compare_own_label(), &label, &rows);
        assert!(
            said.starts_with(expected_sentence),
            "said {said:?}, expected it to start with {expected_sentence:?}"
        );
    }

    #[test]
    fn the_naive_matmul_makes_sixteen_times_the_global_loads_of_the_tiled_one() {
        check(
            State {
                compare: CompareWith::Variant,
                ..State::default()
            },
            "mm_naive makes 16× the global load requests of mm_tiled",
        );
    }

    #[test]
    fn one_word_of_padding_takes_the_row_per_thread_read_from_32_wavefronts_to_1() {
        check(
            State {
                variant: crate::lessons::variant("bank-conflicts", "row-per-thread"),
                compile: CompileEffects::AS_WRITTEN,
                compare: CompareWith::Padding,
                ..State::default()
            },
            "PAD=1 makes 32× fewer shared load wavefronts than PAD=0",
        );
    }

    #[test]
    fn small_times_are_compared_with_their_digits_and_a_ratio_that_recomputes() {
        // The row-per-thread kernel takes microseconds: its times once read "0 0 1×" and its
        // sentence "PAD=1 ... is 1× faster".
        for (variant, compile) in [
            (
                crate::lessons::variant("bank-conflicts", "row-per-thread"),
                CompileEffects::default(),
            ),
            (
                crate::lessons::variant("bank-conflicts", "row-per-thread"),
                CompileEffects::AS_WRITTEN,
            ),
            (
                crate::lessons::variant("bank-conflicts", "transpose"),
                CompileEffects::default(),
            ),
        ] {
            let state = State {
                variant,
                compile,
                compare: CompareWith::Padding,
                ..State::default()
            };
            let (label, other) = state.compare_launch().expect("the other padding");
            let own = simulate(&state.launch()).expect("runs");
            let other = simulate(&other).expect("runs");
            let rows = rows((&own, &predict(&own)), (&other, &predict(&other)));
            let (own_time, other_time, ratio) = rows[0].cells();
            assert_ne!(own_time, "0", "{variant:?}");
            assert!(
                own_time.ends_with("µs") || own_time.ends_with("ms"),
                "{own_time}"
            );
            assert_ne!(ratio, "1×", "{variant:?}: {own_time} against {other_time}");
            let said = sentence(&state.compare_own_label(), &label, &rows);
            assert!(!said.contains(" 1× "), "{said}");
            for statement in compare_statements(&state.compare_own_label(), &label, &rows) {
                if let Claim::Formula {
                    shown,
                    recomputed,
                    tolerance,
                } = statement.claim
                {
                    assert!(
                        (shown - recomputed).abs() <= tolerance * recomputed.abs(),
                        "{}: {shown} against {recomputed}",
                        statement.text
                    );
                }
            }
        }
    }

    #[test]
    fn nothing_to_compare_gives_no_second_launch() {
        assert_eq!(State::default().compare_launch(), None);
        let only_one = State {
            variant: crate::lessons::variant("occupancy", "tiled"),
            compare: CompareWith::Variant,
            ..State::default()
        };
        assert_eq!(only_one.compare_launch(), None);
    }

    #[test]
    fn the_device_comparison_pairs_the_h100_with_the_gt200_and_any_other_with_the_h100() {
        let on = |device| State {
            device,
            compare: CompareWith::OtherEnd,
            ..State::default()
        };
        let (label, input) = on(DeviceId::H100).compare_launch().expect("a comparison");
        assert_eq!(
            (label.as_str(), input.device.name.as_ref()),
            ("GT200", DeviceId::Gt200.device().name.as_ref())
        );
        let (label, _) = on(DeviceId::G80).compare_launch().expect("a comparison");
        assert_eq!(label, "H100");
    }

    #[test]
    fn any_device_can_be_compared_with_and_the_same_device_is_nothing_to_compare() {
        let on_h100 = State {
            compare: CompareWith::Device(DeviceId::V100),
            ..State::default()
        };
        let (label, input) = on_h100.compare_launch().expect("another device");
        assert_eq!(label, "V100");
        assert_eq!(input.device.name, DeviceId::V100.device().name);
        let same = State {
            compare: CompareWith::Device(DeviceId::H100),
            ..State::default()
        };
        assert_eq!(same.compare_launch(), None);
        assert_eq!(CompareWith::Device(DeviceId::G80).key(), "g80");
    }
}
