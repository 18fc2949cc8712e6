//! Measured beside predicted: under the kernel card's prediction, the time a real H100 took
//! for the same launch and how far the prediction is from it, or one quiet line saying that
//! this launch was not measured; and on every card, measured or not, one sentence on why a
//! prediction can differ from a measurement, with the model's error on kernels it was not built
//! from.
//!
//! The measurements are the lecture kernels' of `tests/reference/` (an H100 measured once; its
//! README says how) and the divergence lesson's, shipped with the page by `build.rs` and matched
//! in `measured`. The counters' measured column is part of the counters table (`kernel_view`).
//! `measured_statements` is every sentence these lines show, and the view writes them from it.

use crate::format::format_time;
use crate::measured::{
    difference_text, prediction_note, Comparison, Counted, Timed, MEASURED_ON, MODEL_ERROR,
};
use crate::statements::Statement;
use yew::prelude::*;

/// The part of the page these statements belong to.
const VIEW: &str = "measured";

/// The words before the measured time, which the page sets apart in bold.
const MEASURED_LEAD: &str = "Measured on a real H100: ";

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

/// Every sentence the lines under the prediction show for `comparison`, in order: the measured
/// time (a figure, in ms) and where it comes from, or why there is no measurement; then the
/// sentence on the model's error, which every card prints.
pub fn measured_statements(comparison: Comparison, predicted_ms: Option<f64>) -> Vec<Statement> {
    let mut statements = Vec::new();
    match comparison {
        Comparison::Measured { timed, counted } => {
            if let Some(timed) = timed {
                let (ms, rest) = time_parts(timed.ms, predicted_ms);
                statements.push(Statement::figure(
                    VIEW,
                    "measured time (ms)",
                    timed.ms,
                    format!("{MEASURED_LEAD}{ms}{rest}"),
                ));
            }
            statements.push(Statement::words(VIEW, source_note(timed, counted)));
        }
        Comparison::Unmeasured(why) => statements.push(Statement::words(VIEW, why.text())),
    }
    statements.push(Statement::words(VIEW, prediction_note(MODEL_ERROR)));
    statements
}

/// The lines that go under the prediction for `comparison`; `predicted_ms` is the prediction's
/// time, when the run has one. They are `measured_statements`' words.
pub fn measured_lines(comparison: Comparison, predicted_ms: Option<f64>) -> Html {
    let mut statements = measured_statements(comparison, predicted_ms).into_iter();
    let first = match comparison {
        Comparison::Measured {
            timed: Some(timed), ..
        } => {
            statements.next();
            // The same words as the statement, with the time set apart.
            let (ms, rest) = time_parts(timed.ms, predicted_ms);
            html! {
                <p class="measured-line" data-testid="measured-time">
                    { MEASURED_LEAD }<strong>{ ms }</strong>{ rest }
                </p>
            }
        }
        Comparison::Measured { timed: None, .. } => Html::default(),
        Comparison::Unmeasured(_) => {
            let why = statements.next().map(|s| s.text).unwrap_or_default();
            html! { <p class="measured-note" data-testid="no-measurement">{ why }</p> }
        }
    };
    let rest: Vec<String> = statements.map(|s| s.text).collect();
    let (note, sources) = rest
        .split_last()
        .map_or((None, &[][..]), |(n, s)| (Some(n), s));
    html! {
        <>
            { first }
            { for sources.iter().map(|text| html! { <p class="measured-note">{ text.clone() }</p> }) }
            if let Some(note) = note {
                <p class="measured-note" data-testid="prediction-note">{ note.clone() }</p>
            }
        </>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measured::{compare, Unmeasured, COUNTED, TIMED};
    use crate::state::State;
    use crate::statements::Claim;
    use memplay_sim::simulate::simulate;
    use memplay_sim::timing::predict;
    use memplay_sim::DeviceId;

    /// The statements under the prediction of `state`'s launch, as the card shows them.
    fn statements_of(state: &State) -> Vec<Statement> {
        let input = state.launch();
        let report = simulate(&input).expect("the lesson runs");
        let prediction = predict(&report);
        measured_statements(compare(&input, &report), Some(prediction.time_ms))
    }

    #[test]
    fn the_divergence_card_shows_the_h100_s_measured_time_beside_the_prediction() {
        for (variant, shown) in [
            (
                crate::lessons::variant("warp-divergence", "divergent"),
                "90.4 µs",
            ),
            (
                crate::lessons::variant("warp-divergence", "uniform"),
                "48.2 µs",
            ),
        ] {
            let statements = statements_of(&State {
                variant,
                ..State::default()
            });
            let time = statements
                .iter()
                .find(|s| matches!(s.claim, Claim::Figure { .. }))
                .unwrap_or_else(|| panic!("{variant:?} has no measured time: {statements:?}"));
            assert!(
                time.text
                    .starts_with(&format!("Measured on a real H100: {shown} ")),
                "{}",
                time.text
            );
            assert!(statements[1].text.contains("the counters in the table"));
        }
    }

    #[test]
    fn every_card_ends_with_the_sentence_on_prediction_error_measured_or_not() {
        let note = prediction_note(MODEL_ERROR);
        for state in [
            State::default(),
            State {
                device: DeviceId::G80,
                ..State::default()
            },
            State {
                variant: crate::lessons::variant("boundary-checks", "guarded"),
                ..State::default()
            },
        ] {
            let statements = statements_of(&state);
            assert_eq!(statements.last().map(|s| &s.text), Some(&note), "{state:?}");
        }
        assert_eq!(
            measured_statements(Comparison::Unmeasured(Unmeasured::OtherDevice), None).len(),
            2
        );
    }

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
        assert_eq!(time_parts(0.0117, Some(0.0111)).0, "11.7 µs");
        assert_eq!(time_parts(0.0042, None).0, "4.20 µs");
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
