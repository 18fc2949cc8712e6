//! What the page says, as plain data: each sentence or figure a view shows a student, with what
//! makes it checkable (a formula's result against the terms printed beside it, a bound called
//! "at most" against the prediction, the labels of one access against each other).
//!
//! Views build their words from these values, so the host tests (`lesson_checks`) read exactly
//! what the student reads: every lesson, at every variant, on every device preset.

/// One thing the page shows, in words, and what it claims.
#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    /// The part of the page that shows it ("latency-hiding", "roofline", "lesson").
    pub view: &'static str,
    /// The words exactly as the page shows them.
    pub text: String,
    pub claim: Claim,
}

/// What a statement claims beyond its words.
#[derive(Clone, Debug, PartialEq)]
pub enum Claim {
    /// Words only (checked for the names of files, probe groups and notes a student never sees).
    Words,
    /// A figure the page shows, named by its label: the lesson's controls must move some of them.
    Figure { label: String, value: f64 },
    /// A formula printed with its terms: `recomputed` is the formula evaluated on the terms as
    /// printed (rounded as the page rounds them), `shown` the result as printed. They agree within
    /// `tolerance`, relative, which the printed rounding explains.
    Formula {
        shown: f64,
        recomputed: f64,
        tolerance: f64,
    },
    /// A bound the words call "at most", printed beside the prediction of the same quantity.
    AtMost { bound: f64, predicted: f64 },
    /// The labels of one access: the conflict degree its words name (1 = none) and the wavefronts
    /// per instruction shown for it. Where nvcc's fusion changes the count, `per_fused_load` says
    /// how many of the source's loads one executed load serves.
    #[cfg(test)]
    Access {
        site: String,
        degree_in_words: u32,
        wavefronts_per_instruction: f64,
        per_fused_load: u32,
    },
}

impl Statement {
    pub fn words(view: &'static str, text: impl Into<String>) -> Statement {
        Statement {
            view,
            text: text.into(),
            claim: Claim::Words,
        }
    }

    pub fn figure(
        view: &'static str,
        label: impl Into<String>,
        value: f64,
        text: impl Into<String>,
    ) -> Statement {
        Statement {
            view,
            text: text.into(),
            claim: Claim::Figure {
                label: label.into(),
                value,
            },
        }
    }
}

/// A number as the page prints it, read back: digits with thousands commas, a fraction, an
/// optional sign and percent sign. The formula checks recompute from these.
pub fn printed_number(text: &str) -> Option<f64> {
    let cleaned: String = text
        .trim()
        .trim_end_matches('%')
        .chars()
        .filter(|c| *c != ',')
        .collect();
    memplay_sim::decimal::parse_f64(&cleaned.replace('\u{2212}', "-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_printed_number_reads_back_with_its_commas_and_percent_sign() {
        assert_eq!(printed_number("1,024"), Some(1024.0));
        assert_eq!(printed_number("63%"), Some(63.0));
        assert_eq!(printed_number("\u{2212}4.5"), Some(-4.5));
        assert_eq!(printed_number("about"), None);
    }
}
