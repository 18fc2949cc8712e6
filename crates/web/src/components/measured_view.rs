//! Measured beside predicted: under the kernel card's prediction, the time a real H100 took
//! for the same launch and how far the prediction is from it, or one quiet line saying that
//! this launch was not measured.
//!
//! The measurements are the lecture kernels' of `tests/reference/` (an H100 measured once; its
//! README says how), shipped with the page by `build.rs` and matched in `measured`. The
//! counters' measured column is part of the counters table (`kernel_view`).

use crate::measured::{difference_text, Comparison, Counted, Timed, MEASURED_ON};
use crate::model::format_time;
use yew::prelude::*;

/// The measured time as the page writes it, and the rest of its line: how it was measured and,
/// when there is a prediction, the signed difference of the prediction from it.
pub fn time_parts(measured_ms: f64, predicted_ms: Option<f64>) -> (String, String) {
    let mut rest = " (median of timed runs)".to_string();
    if let Some(predicted) = predicted_ms {
        rest.push_str(&format!(
            " · the prediction differs by {}",
            difference_text(predicted, measured_ms)
        ));
    }
    (format_time(measured_ms), rest)
}

/// Where the figures come from: the machine, once, and which of time and counters were taken.
pub fn source_note(timed: Option<&Timed>, counted: Option<&Counted>) -> String {
    match (timed.is_some(), counted.is_some()) {
        (true, true) => format!(
            "Measured once on {MEASURED_ON}, on random data: the time with CUDA events, the \
             counters in the table by Nsight Compute over one launch."
        ),
        (true, false) => format!(
            "Timed once on {MEASURED_ON}, on random data, with CUDA events; Nsight Compute did \
             not count this launch."
        ),
        (false, _) => format!(
            "Counted once by Nsight Compute on {MEASURED_ON}, on random data (the table's \
             measured column); this launch was not among the timed ones."
        ),
    }
}

/// The lines that go under the prediction for `comparison`; `predicted_ms` is the prediction's
/// time, when the run has one.
pub fn measured_lines(comparison: Comparison, predicted_ms: Option<f64>) -> Html {
    match comparison {
        Comparison::Measured { timed, counted } => {
            let time = timed.map(|timed| {
                let (ms, rest) = time_parts(timed.ms, predicted_ms);
                html! {
                    <p class="measured-line" data-testid="measured-time">
                        { "Measured on a real H100: " }<strong>{ ms }</strong>{ rest }
                    </p>
                }
            });
            html! {
                <>
                    { for time }
                    <p class="measured-note">{ source_note(timed, counted) }</p>
                </>
            }
        }
        Comparison::Unmeasured(why) => html! {
            <p class="measured-note" data-testid="no-measurement">{ why.text() }</p>
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measured::{COUNTED, TIMED};

    #[test]
    fn the_measured_time_reads_with_the_prediction_s_signed_difference() {
        assert_eq!(
            time_parts(0.25, Some(0.3)),
            (
                "0.250 ms".to_string(),
                " (median of timed runs) · the prediction differs by +20.0%".to_string()
            )
        );
        assert_eq!(
            time_parts(0.0117, Some(0.0111)).1,
            " (median of timed runs) · the prediction differs by \u{2212}5.1%"
        );
        assert_eq!(time_parts(0.0117, Some(0.0111)).0, "0.012 ms");
        assert_eq!(time_parts(0.0042, None).0, "4.2 µs");
        assert_eq!(time_parts(2.0, None).1, " (median of timed runs)");
    }

    #[test]
    fn the_source_note_says_which_of_time_and_counters_were_measured() {
        let timed = TIMED.first();
        let counted = COUNTED.first();
        assert!(source_note(timed, counted).contains("the counters in the table"));
        assert!(source_note(timed, None).contains("did not count this launch"));
        assert!(source_note(None, counted).contains("not among the timed ones"));
        for note in [
            source_note(timed, counted),
            source_note(timed, None),
            source_note(None, counted),
        ] {
            assert!(note.contains("driver 580.159.04, CUDA 13.0"), "{note}");
        }
    }
}
