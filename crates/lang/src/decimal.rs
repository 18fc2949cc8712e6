//! Decimal text to the nearest `f64`: the same value as `str::parse::<f64>`, from a smaller program.
//!
//! The kernel's floating-point literals and the numbers a student types are read here. The
//! standard library's parser is fast because it looks powers of five up in a table of 1,302
//! 128-bit numbers (the Eisel-Lemire algorithm); that table is about 16 KB of the page's gzip
//! bundle, more than every lesson's words together. This module instead uses the "simple decimal
//! conversion" of Go's `strconv` (`decimal.go`, `atof.go`; described by Nigel Tao, "The Simple
//! Decimal Conversion Algorithm", 2020): the digits are kept as a decimal number of at most
//! `MAX_DIGITS` digits and shifted by powers of two until they lie in [1, 2), which gives the
//! binary exponent; a shift by 53 more bits and a rounding to the nearest integer give the
//! mantissa. Every step is exact except the dropping of digits beyond `MAX_DIGITS`, which only
//! ever decides a tie (`truncated`), so the result is correctly rounded, ties to even: the same
//! bits as the standard library's, which the tests check on edge cases and random text.
//!
//! A literal that the standard library reads without a table walk (at most 15 digits and a power
//! of ten up to 22) is read the same fast way here (Clinger's fast path), so the common
//! `0.5f` or `1e-3` costs one multiplication or division.

/// Digits kept of a decimal number: enough for every `f64` to be rounded exactly (the longest
/// exact decimal expansion of a double's halfway point has 767 significant digits).
const MAX_DIGITS: usize = 800;

/// The largest shift by a power of two done in one pass: a digit (at most 9) times `2^60` plus a
/// carry stays below `2^64`.
const MAX_SHIFT: u32 = 60;

/// Bits of a double's stored mantissa.
const MANTISSA_BITS: u32 = 52;

/// The exponent bias of a double: a stored exponent `e` means `2^(e - 1023)`.
const EXPONENT_BIAS: i32 = 1023;

/// The powers of ten a double holds exactly.
const EXACT_POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The power of two to shift by to move a decimal point `decimal_point` places closer to the
/// digits, without overshooting (Go's `powtab`): `2^n` has `n * log10(2)` digits.
const SHIFT_FOR_DECIMAL_POINT: [u32; 9] = [1, 3, 6, 9, 13, 16, 19, 23, 26];

/// The shift for a decimal point nine or more places away: `2^27` has 8.1 digits, so it moves the
/// point by eight places and never past the digits.
const SHIFT_FOR_FAR_DECIMAL_POINT: u32 = 27;

/// Reads `text` as `str::parse::<f64>` does: an optional sign, then `inf`, `infinity` or `nan` (in
/// any case) or decimal digits with an optional point and an optional exponent (`e` or `E`, an
/// optional sign, digits), with a digit before or after the point. Anything else is `None`.
pub fn parse_f64(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let (negative, rest) = match bytes.first() {
        Some(b'-') => (true, &bytes[1..]),
        Some(b'+') => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    let magnitude = match rest {
        _ if rest.eq_ignore_ascii_case(b"inf") || rest.eq_ignore_ascii_case(b"infinity") => {
            f64::INFINITY
        }
        _ if rest.eq_ignore_ascii_case(b"nan") => f64::NAN,
        _ => Decimal::read(rest)?.into_f64(),
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// A non-negative decimal number: `0.d1 d2 d3 ... x 10^decimal_point`, digits without trailing
/// zeros (and without leading ones once read).
struct Decimal {
    digits: Vec<u8>,
    /// Where the point sits, counted in digits from the left of `digits`.
    decimal_point: i32,
    /// Whether nonzero digits were dropped beyond `MAX_DIGITS`.
    truncated: bool,
}

impl Decimal {
    /// Reads digits with an optional point and exponent; `None` unless the text is exactly that.
    fn read(text: &[u8]) -> Option<Decimal> {
        let mut decimal = Decimal {
            digits: Vec::new(),
            decimal_point: 0,
            truncated: false,
        };
        let mut index = 0;
        let mut seen_digit = false;
        let mut seen_point = false;
        while let Some(&byte) = text.get(index) {
            match byte {
                b'0'..=b'9' => {
                    seen_digit = true;
                    if byte == b'0' && decimal.digits.is_empty() {
                        // A leading zero adds no digit; after the point it moves the point.
                        if seen_point {
                            decimal.decimal_point -= 1;
                        }
                    } else if decimal.digits.len() < MAX_DIGITS {
                        decimal.digits.push(byte - b'0');
                        if !seen_point {
                            decimal.decimal_point += 1;
                        }
                    } else {
                        decimal.truncated |= byte != b'0';
                        if !seen_point {
                            decimal.decimal_point += 1;
                        }
                    }
                }
                b'.' if !seen_point => seen_point = true,
                _ => break,
            }
            index += 1;
        }
        if !seen_digit {
            return None;
        }
        if let Some(b'e' | b'E') = text.get(index) {
            index += 1;
            let negative = match text.get(index) {
                Some(b'-') => {
                    index += 1;
                    true
                }
                Some(b'+') => {
                    index += 1;
                    false
                }
                _ => false,
            };
            let start = index;
            let mut exponent: i32 = 0;
            while let Some(&byte @ b'0'..=b'9') = text.get(index) {
                // Beyond 10^5 the value is zero or infinite whatever the digits say.
                exponent = (exponent * 10 + i32::from(byte - b'0')).min(100_000);
                index += 1;
            }
            if index == start {
                return None;
            }
            decimal.decimal_point += if negative { -exponent } else { exponent };
        }
        if index != text.len() {
            return None;
        }
        decimal.trim();
        Some(decimal)
    }

    /// Drops trailing zeros, which carry no value.
    fn trim(&mut self) {
        while self.digits.last() == Some(&0) {
            self.digits.pop();
        }
        if self.digits.is_empty() {
            self.decimal_point = 0;
        }
    }

    /// The nearest double, ties to even.
    fn into_f64(mut self) -> f64 {
        if self.digits.is_empty() {
            return 0.0;
        }
        if let Some(value) = self.exactly_from_one_product() {
            return value;
        }
        // Far out of range either way, whatever the digits.
        if self.decimal_point > 310 {
            return f64::INFINITY;
        }
        if self.decimal_point < -330 {
            return 0.0;
        }
        // Shift into [0.5, 1), counting the powers of two.
        let mut exponent: i32 = 0;
        while self.decimal_point > 0 {
            let shift = shift_for(self.decimal_point);
            self.shift_right(shift);
            exponent += shift as i32;
        }
        while self.decimal_point < 0 || (self.decimal_point == 0 && self.digits[0] < 5) {
            let shift = shift_for(-self.decimal_point);
            self.shift_left(shift);
            exponent -= shift as i32;
        }
        // [0.5, 1) is [1, 2) times 2^-1.
        exponent -= 1;
        // Below the smallest normal exponent the number is subnormal: shift it there.
        let smallest = 1 - EXPONENT_BIAS;
        if exponent < smallest {
            let shift = (smallest - exponent) as u32;
            self.shift_right_by(shift);
            exponent = smallest;
        }
        if exponent + EXPONENT_BIAS >= 0x7ff {
            return f64::INFINITY;
        }
        self.shift_left_by(MANTISSA_BITS + 1);
        let mut mantissa = self.rounded_integer();
        if mantissa == 2 << MANTISSA_BITS {
            // Rounding carried into a new bit.
            mantissa >>= 1;
            exponent += 1;
            if exponent + EXPONENT_BIAS >= 0x7ff {
                return f64::INFINITY;
            }
        }
        let stored_exponent = if mantissa & (1 << MANTISSA_BITS) == 0 {
            // Subnormal: the stored exponent is 0.
            0
        } else {
            (exponent + EXPONENT_BIAS) as u64
        };
        f64::from_bits((mantissa & ((1 << MANTISSA_BITS) - 1)) | (stored_exponent << MANTISSA_BITS))
    }

    /// Clinger's fast path: a value of at most 15 digits times or over a power of ten up to 22 is
    /// one correctly rounded operation on two exact doubles.
    fn exactly_from_one_product(&self) -> Option<f64> {
        if self.truncated || self.digits.len() > 15 {
            return None;
        }
        let integer = self
            .digits
            .iter()
            .fold(0u64, |value, &digit| value * 10 + u64::from(digit));
        let power = self.decimal_point - self.digits.len() as i32;
        let mantissa = integer as f64;
        match power {
            0..=22 => Some(mantissa * EXACT_POWERS_OF_TEN[power as usize]),
            -22..=-1 => Some(mantissa / EXACT_POWERS_OF_TEN[(-power) as usize]),
            _ => None,
        }
    }

    /// Multiplies by `2^shift`, in passes of at most `MAX_SHIFT`.
    fn shift_left_by(&mut self, mut shift: u32) {
        while shift > 0 {
            let step = shift.min(MAX_SHIFT);
            self.shift_left(step);
            shift -= step;
        }
    }

    /// Divides by `2^shift`, in passes of at most `MAX_SHIFT`.
    fn shift_right_by(&mut self, mut shift: u32) {
        while shift > 0 {
            let step = shift.min(MAX_SHIFT);
            self.shift_right(step);
            shift -= step;
        }
    }

    /// Multiplies by `2^shift` (`shift <= MAX_SHIFT`), from the last digit up, exactly; digits
    /// beyond `MAX_DIGITS` are dropped into `truncated`.
    fn shift_left(&mut self, shift: u32) {
        let mut product = Vec::with_capacity(self.digits.len() + 20);
        let mut carry: u64 = 0;
        for &digit in self.digits.iter().rev() {
            let value = (u64::from(digit) << shift) + carry;
            product.push((value % 10) as u8);
            carry = value / 10;
        }
        while carry > 0 {
            product.push((carry % 10) as u8);
            carry /= 10;
        }
        product.reverse();
        self.decimal_point += (product.len() - self.digits.len()) as i32;
        if product.len() > MAX_DIGITS {
            self.truncated |= product[MAX_DIGITS..].iter().any(|&digit| digit != 0);
            product.truncate(MAX_DIGITS);
        }
        self.digits = product;
        self.trim();
    }

    /// Divides by `2^shift` (`shift <= MAX_SHIFT`) by long division from the first digit;
    /// digits of the quotient beyond `MAX_DIGITS` are dropped into `truncated`.
    fn shift_right(&mut self, shift: u32) {
        let mask = (1u64 << shift) - 1;
        let mut read = 0;
        let mut remainder: u64 = 0;
        // Take digits until the first quotient digit is nonzero.
        while remainder >> shift == 0 {
            if read < self.digits.len() {
                remainder = remainder * 10 + u64::from(self.digits[read]);
            } else if remainder == 0 {
                self.digits.clear();
                self.decimal_point = 0;
                return;
            } else {
                remainder *= 10;
            }
            read += 1;
        }
        self.decimal_point -= read as i32 - 1;
        let mut quotient = Vec::with_capacity(self.digits.len() + 20);
        while read < self.digits.len() {
            quotient.push((remainder >> shift) as u8);
            remainder = (remainder & mask) * 10 + u64::from(self.digits[read]);
            read += 1;
        }
        while remainder > 0 {
            let digit = (remainder >> shift) as u8;
            if quotient.len() < MAX_DIGITS {
                quotient.push(digit);
            } else if digit > 0 {
                self.truncated = true;
            }
            remainder = (remainder & mask) * 10;
        }
        self.digits = quotient;
        self.trim();
    }

    /// The integer part, rounded to nearest, ties to even (a tie with dropped digits rounds up).
    fn rounded_integer(&self) -> u64 {
        // Below 0.1 the nearest integer is 0: the first digit is not the one after the point.
        if self.decimal_point < 0 {
            return 0;
        }
        let point = self.decimal_point as usize;
        let mut integer: u64 = 0;
        for index in 0..point {
            integer = integer * 10 + u64::from(self.digits.get(index).copied().unwrap_or(0));
        }
        let rounds_up = match self.digits.get(point) {
            None => false,
            Some(&5) if point + 1 == self.digits.len() => {
                self.truncated || (point > 0 && self.digits[point - 1] % 2 == 1)
            }
            Some(&digit) => digit >= 5,
        };
        integer + u64::from(rounds_up)
    }
}

/// The shift by a power of two that moves the decimal point `places` places without overshooting.
fn shift_for(places: i32) -> u32 {
    SHIFT_FOR_DECIMAL_POINT
        .get(places as usize)
        .copied()
        .unwrap_or(SHIFT_FOR_FAR_DECIMAL_POINT)
}

#[cfg(test)]
mod tests {
    use super::parse_f64;
    use proptest::prelude::*;

    /// Asserts that `parse_f64` reads `text` as the standard library does, to the bit.
    fn reads_as_std(text: &str) {
        let ours = parse_f64(text);
        let std = text.parse::<f64>().ok();
        match (ours, std) {
            (Some(a), Some(b)) if a.is_nan() && b.is_nan() => {}
            (Some(a), Some(b)) => assert_eq!(a.to_bits(), b.to_bits(), "{text}: {a:e} vs {b:e}"),
            (a, b) => assert_eq!(a.is_some(), b.is_some(), "{text}: {a:?} vs {b:?}"),
        }
    }

    #[test]
    fn literals_a_kernel_writes_read_as_the_standard_library_reads_them() {
        for text in [
            "0",
            "0.0",
            "1",
            "1.0",
            "0.5",
            "0.1",
            "1e-3",
            "3.14159265358979",
            "2.5e10",
            "1e22",
            "1e23",
            "123456789012345678",
            "0.000001",
            "6.02214076e23",
            "1.",
            ".5",
            "00.500",
        ] {
            reads_as_std(text);
        }
    }

    #[test]
    fn the_edges_of_the_double_range_read_as_the_standard_library_reads_them() {
        for text in [
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "1.8e308",
            "2.2250738585072014e-308",
            "2.2250738585072011e-308",
            "2.2250738585072012e-308",
            "4.9406564584124654e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "5e-324",
            "1e-400",
            "1e400",
            "1e99999999999",
            "1e-99999999999",
            "9007199254740993",
            "9007199254740992.5",
            "9007199254740993.0000000000000000000000000000001",
            "0.1e-99999",
            "0e99999",
        ] {
            reads_as_std(text);
        }
    }

    #[test]
    fn a_tie_decided_only_by_a_digit_beyond_eight_hundred_reads_as_the_standard_library_reads_it() {
        // 2^53 + 1 is halfway between two doubles; a 1 far beyond the digits kept breaks the tie.
        let mut text = String::from("9007199254740993.");
        text.push_str(&"0".repeat(900));
        reads_as_std(&text);
        text.push('1');
        reads_as_std(&text);
    }

    #[test]
    fn signs_infinities_and_malformed_text_read_as_the_standard_library_reads_them() {
        for text in [
            "-1.5",
            "+2",
            "-0",
            "inf",
            "-Infinity",
            "NaN",
            "nan",
            "",
            "-",
            ".",
            "e5",
            "1e",
            "1e+",
            "1.2.3",
            "1f",
            " 1",
            "1 ",
            "0x10",
            "--1",
            "1e-",
            "infinite",
        ] {
            reads_as_std(text);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn random_decimal_text_reads_as_the_standard_library_reads_it(
            integer in "[0-9]{0,25}",
            fraction in proptest::option::of("[0-9]{0,25}"),
            exponent in proptest::option::of(-340i32..320),
        ) {
            let mut text = integer;
            if let Some(fraction) = fraction {
                text.push('.');
                text.push_str(&fraction);
            }
            if let Some(exponent) = exponent {
                text.push_str(&format!("e{exponent}"));
            }
            reads_as_std(&text);
        }

        #[test]
        fn the_shortest_text_of_any_double_reads_back_as_that_double(bits in any::<u64>()) {
            let value = f64::from_bits(bits);
            if value.is_finite() {
                let text = format!("{value:e}");
                prop_assert_eq!(parse_f64(&text).map(f64::to_bits), Some(bits), "{}", text);
                let halfway = format!("{:.25e}", value);
                reads_as_std(&halfway);
            }
        }
    }
}
