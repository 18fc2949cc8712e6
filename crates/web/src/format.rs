//! How the page writes numbers and quotes what a student typed: one place, so a number reads the
//! same in every view and a question's choice reads as the simulator's answer.

/// A time in milliseconds with three significant digits: "0.268 ms", "3.18 ms", "41.9 ms", and
/// below a tenth of a millisecond in microseconds: "24.3 µs", "5.83 µs".
pub fn format_time(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else if ms >= 1.0 {
        format!("{ms:.2} ms")
    } else if ms >= 0.1 {
        format!("{ms:.3} ms")
    } else if ms >= 0.01 {
        format!("{:.1} µs", ms * 1000.0)
    } else {
        format!("{:.2} µs", ms * 1000.0)
    }
}

/// A GFLOP/s or byte count with thousands separators; below 1000 one decimal is kept where
/// there is one, so the lectures' 86.4 GB/s and 346.5 GFLOP/s read as they do on the slides.
pub fn format_number(value: f64) -> String {
    if !value.is_finite() {
        return "–".to_string();
    }
    if value.abs() < 1000.0 {
        let text = format!("{value:.1}");
        return text.strip_suffix(".0").map(str::to_string).unwrap_or(text);
    }
    let rounded = value.round() as i64;
    let digits = rounded.unsigned_abs().to_string();
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    if rounded < 0 {
        format!("-{grouped}")
    } else {
        grouped
    }
}

/// An arithmetic intensity in FLOP/B: `0.25`, `4`, `4.01`, `18.5`, `256`.
pub fn format_intensity(value: f64) -> String {
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else if value >= 1.0 {
        2
    } else {
        3
    };
    trimmed(value, decimals)
}

/// A number with three significant digits, trailing zeros dropped, and thousands commas from
/// 1,000 on: `0.25`, `36.5`, `4`, `16,064`. A choice of a question is written the same way, so
/// the simulator's number and the answer read alike.
pub fn format_significant(value: f64) -> String {
    if !value.is_finite() {
        return "–".to_string();
    }
    if value.abs() >= 1000.0 || value == 0.0 {
        return format_number(value.round());
    }
    let magnitude = value.abs().log10().floor() as i32;
    trimmed(value, (2 - magnitude).clamp(0, 6) as usize)
}

/// `value` to `decimals` places, with the zeros a fraction ends in (and a bare point) dropped.
fn trimmed(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// A value quoted in a note is cut to this many characters, so a junk link cannot flood the page.
const QUOTE_LIMIT: usize = 32;

/// The value as typed, shortened if it is long. The page shows it as text, never as HTML.
pub fn quote(value: &str) -> String {
    if value.chars().count() > QUOTE_LIMIT {
        let cut: String = value.chars().take(QUOTE_LIMIT).collect();
        format!("{cut}…")
    } else {
        value.to_string()
    }
}
