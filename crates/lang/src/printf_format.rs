//! Device `printf`'s format strings: read at compile time into text and conversions, so that an
//! argument of the wrong kind (`%d` given a `float`) is an error where nvcc warns, and formatted
//! at run time as C's `printf` formats them (C11 7.21.6.1, "The fprintf function").
//!
//! CUDA's device `printf` (CUDA C++ Programming Guide, "Formatted Output") accepts C's
//! conversions, flags, field widths, precisions and length modifiers; arguments undergo C's
//! default argument promotions, so a `float` arrives as a `double` and a `char` as an `int`.
//! The conversions read here are `d i u x X o c s f F e E g G p %` with the flags `- + space # 0`
//! and the length modifiers `hh h l ll z`; a width or precision given as `*` is refused, since
//! nvcc's students almost never write it and it would need an argument of its own.

use crate::limits::MAX_PRINTF_ARGUMENTS;

/// What kind of argument a conversion reads, after the default argument promotions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrintfArgument {
    /// `%d`, `%i`, `%c`: a signed integer (a `char` or `bool` promoted to `int` reads here too).
    SignedInteger,
    /// `%u`, `%x`, `%X`, `%o`: an unsigned integer (a signed one prints its bits, as C does).
    UnsignedInteger,
    /// `%f`, `%e`, `%g` and their capitals: a `double` (a `float` promoted).
    Floating,
    /// `%s`: a string literal.
    String,
    /// `%p`: a pointer.
    Pointer,
}

/// How wide the integer a conversion reads is: `int` unless a length modifier says `long`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrintfLength {
    /// No modifier, or `hh`/`h`, which still read an `int`.
    Int,
    /// `l`, `ll` or `z`: 64 bits on the 64-bit device.
    Long,
}

/// One conversion specification: `%-08.3lf` read into its parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrintfConversion {
    /// The `-` flag: the value is left-justified in its field.
    pub left_justify: bool,
    /// The `+` flag: a non-negative signed value starts with `+`.
    pub plus_sign: bool,
    /// The space flag: a non-negative signed value starts with a space.
    pub space_sign: bool,
    /// The `#` flag: `0x` before a hexadecimal value, a leading `0` in octal, trailing zeros kept by `%g`.
    pub alternate_form: bool,
    /// The `0` flag: the field is padded with zeros after the sign.
    pub zero_pad: bool,
    /// The minimum field width.
    pub width: usize,
    /// The precision, where one is written (`.` alone is precision 0).
    pub precision: Option<usize>,
    pub length: PrintfLength,
    /// The conversion letter (`d`, `x`, `f`, ...).
    pub letter: u8,
}

/// A piece of a format string: text printed as it is, or a conversion of the next argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrintfPiece {
    Text(String),
    Conversion(PrintfConversion),
}

/// An argument's value as the formatter reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum PrintfValue {
    /// An integer or pointer as its 64 bits (an `int` sign-extended).
    Integer(i64),
    Floating(f64),
    String(String),
}

impl PrintfConversion {
    /// What kind of argument the conversion reads.
    pub fn argument(&self) -> PrintfArgument {
        match self.letter {
            b'd' | b'i' | b'c' => PrintfArgument::SignedInteger,
            b'u' | b'x' | b'X' | b'o' => PrintfArgument::UnsignedInteger,
            b's' => PrintfArgument::String,
            b'p' => PrintfArgument::Pointer,
            _ => PrintfArgument::Floating,
        }
    }
}

/// Reads a format string into its pieces; the error says in words what in it is not read.
pub fn parse_format(format: &str) -> Result<Vec<PrintfPiece>, String> {
    let bytes = format.as_bytes();
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut conversions = 0;
    let mut at = 0;
    while at < bytes.len() {
        let Some(offset) = format[at..].find('%') else {
            text.push_str(&format[at..]);
            break;
        };
        text.push_str(&format[at..at + offset]);
        at += offset + 1;
        if bytes.get(at) == Some(&b'%') {
            text.push('%');
            at += 1;
            continue;
        }
        let mut conversion = PrintfConversion {
            left_justify: false,
            plus_sign: false,
            space_sign: false,
            alternate_form: false,
            zero_pad: false,
            width: 0,
            precision: None,
            length: PrintfLength::Int,
            letter: 0,
        };
        while let Some(&flag) = bytes.get(at) {
            match flag {
                b'-' => conversion.left_justify = true,
                b'+' => conversion.plus_sign = true,
                b' ' => conversion.space_sign = true,
                b'#' => conversion.alternate_form = true,
                b'0' => conversion.zero_pad = true,
                _ => break,
            }
            at += 1;
        }
        conversion.width = read_number(bytes, &mut at);
        if bytes.get(at) == Some(&b'.') {
            at += 1;
            conversion.precision = Some(read_number(bytes, &mut at));
        }
        if bytes.get(at) == Some(&b'*') {
            return Err("a `*` width or precision in a printf format is not simulated".into());
        }
        while let Some(&modifier) = bytes.get(at) {
            match modifier {
                b'h' => {}
                b'l' | b'z' | b'j' | b't' => conversion.length = PrintfLength::Long,
                _ => break,
            }
            at += 1;
        }
        let letter = bytes.get(at).copied().unwrap_or(0);
        if !b"diuxXocsfFeEgGp".contains(&letter) {
            return Err(match letter {
                0 => "a printf format ends inside a `%` conversion".into(),
                b'n' => "printf's `%n` conversion is not simulated".into(),
                b'a' | b'A' => "printf's hexadecimal float conversion `%a` is not simulated".into(),
                _ => format!(
                    "`%{}` is not a printf conversion",
                    char::from(letter).escape_default()
                ),
            });
        }
        at += 1;
        conversion.letter = letter;
        conversions += 1;
        if conversions > MAX_PRINTF_ARGUMENTS {
            return Err(format!(
                "a device printf takes at most {MAX_PRINTF_ARGUMENTS} arguments after its format"
            ));
        }
        if !text.is_empty() {
            pieces.push(PrintfPiece::Text(std::mem::take(&mut text)));
        }
        pieces.push(PrintfPiece::Conversion(conversion));
    }
    if !text.is_empty() {
        pieces.push(PrintfPiece::Text(text));
    }
    Ok(pieces)
}

/// Reads a run of decimal digits at `at` (none reads as 0), saturating far above any width a
/// line could hold.
fn read_number(bytes: &[u8], at: &mut usize) -> usize {
    let mut number: usize = 0;
    while let Some(digit) = bytes.get(*at).filter(|byte| byte.is_ascii_digit()) {
        number = (number * 10 + usize::from(digit - b'0')).min(1 << 16);
        *at += 1;
    }
    number
}

/// Formats one argument by its conversion and appends it to `out`, as C's `printf` does. A value
/// of the wrong kind (which the compile-time check keeps out) prints as its nearest reading.
pub fn format_conversion(conversion: &PrintfConversion, value: &PrintfValue, out: &mut String) {
    let c = conversion;
    let integer = match value {
        PrintfValue::Integer(bits) => *bits,
        PrintfValue::Floating(number) => *number as i64,
        PrintfValue::String(_) => 0,
    };
    // The sign (or `0x`) goes before zero padding; `digits` is the rest of the field.
    let (prefix, digits, numeric): (&str, String, bool) = match c.letter {
        b'c' => ("", char::from(integer as u8).to_string(), false),
        b's' => {
            let text = match value {
                PrintfValue::String(text) => text.as_str(),
                _ => "",
            };
            let kept = match c.precision {
                Some(precision) => text
                    .char_indices()
                    .nth(precision)
                    .map_or(text, |(end, _)| &text[..end]),
                None => text,
            };
            ("", kept.to_string(), false)
        }
        b'd' | b'i' => {
            let signed = if c.length == PrintfLength::Int {
                i64::from(integer as i32)
            } else {
                integer
            };
            let digits = integer_digits(signed.unsigned_abs(), 10, false, c.precision);
            (sign_of(signed < 0, c), digits, true)
        }
        b'u' | b'x' | b'X' | b'o' | b'p' => {
            let unsigned = if c.length == PrintfLength::Int && c.letter != b'p' {
                u64::from(integer as u32)
            } else {
                integer as u64
            };
            let radix = match c.letter {
                b'o' => 8,
                b'u' => 10,
                _ => 16,
            };
            let mut digits = integer_digits(unsigned, radix, c.letter == b'X', c.precision);
            if c.letter == b'o' && c.alternate_form && !digits.starts_with('0') {
                digits.insert(0, '0');
            }
            let prefix = match c.letter {
                b'p' => "0x",
                b'x' if c.alternate_form && unsigned != 0 => "0x",
                b'X' if c.alternate_form && unsigned != 0 => "0X",
                _ => "",
            };
            (prefix, digits, true)
        }
        _ => {
            let number = match value {
                PrintfValue::Floating(number) => *number,
                _ => integer as f64,
            };
            let (digits, finite) = float_digits(number.abs(), c);
            (
                sign_of(number.is_sign_negative() && !number.is_nan(), c),
                digits,
                finite,
            )
        }
    };
    // C ignores the `0` flag with `-`, and for integers when a precision is given.
    let zero_pad = c.zero_pad
        && !c.left_justify
        && numeric
        && !(c.precision.is_some() && b"diuxXop".contains(&c.letter));
    let length = prefix.len() + digits.chars().count();
    let padding = c.width.saturating_sub(length);
    if c.left_justify {
        out.push_str(prefix);
        out.push_str(&digits);
        out.extend(std::iter::repeat_n(' ', padding));
    } else if zero_pad {
        out.push_str(prefix);
        out.extend(std::iter::repeat_n('0', padding));
        out.push_str(&digits);
    } else {
        out.extend(std::iter::repeat_n(' ', padding));
        out.push_str(prefix);
        out.push_str(&digits);
    }
}

/// The sign a signed conversion prints before its digits.
fn sign_of(negative: bool, conversion: &PrintfConversion) -> &'static str {
    match () {
        _ if negative => "-",
        _ if conversion.plus_sign => "+",
        _ if conversion.space_sign => " ",
        _ => "",
    }
}

/// An integer's digits in `radix`, with at least `precision` of them (C's precision for
/// integers is the minimum number of digits; precision 0 prints 0 as nothing).
fn integer_digits(value: u64, radix: u64, upper: bool, precision: Option<usize>) -> String {
    let mut digits = Vec::new();
    let mut rest = value;
    while rest > 0 {
        let digit = (rest % radix) as u8;
        digits.push(match digit {
            0..=9 => b'0' + digit,
            _ if upper => b'A' + digit - 10,
            _ => b'a' + digit - 10,
        });
        rest /= radix;
    }
    let minimum = precision.unwrap_or(1).min(1 << 12);
    while digits.len() < minimum {
        digits.push(b'0');
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

/// A non-negative double's digits by `%f`, `%e` or `%g` (capitals print `INF`, `NAN` and `E`),
/// and whether it was finite (infinities and NaNs are never zero-padded).
fn float_digits(number: f64, conversion: &PrintfConversion) -> (String, bool) {
    let upper = conversion.letter.is_ascii_uppercase();
    if !number.is_finite() {
        let word = if number.is_nan() { "nan" } else { "inf" };
        return (
            if upper {
                word.to_uppercase()
            } else {
                word.to_string()
            },
            false,
        );
    }
    let precision = conversion.precision.unwrap_or(6).min(1 << 9);
    let mut digits = match conversion.letter.to_ascii_lowercase() {
        b'f' => fixed(number, precision, conversion.alternate_form),
        b'e' => exponential(number, precision, conversion.alternate_form),
        _ => {
            // C11 7.21.6.1p8: with P the precision (1 if 0) and X the exponent `%e` would
            // print, P > X >= -4 prints `%f` with precision P - 1 - X, else `%e` with P - 1;
            // trailing zeros (and a trailing point) go unless `#` is given.
            let significant = precision.max(1);
            let exponent = exponent_of(number, significant - 1);
            let mut text = if (-4..significant as i32).contains(&exponent) {
                fixed(
                    number,
                    (significant as i32 - 1 - exponent) as usize,
                    conversion.alternate_form,
                )
            } else {
                exponential(number, significant - 1, conversion.alternate_form)
            };
            if !conversion.alternate_form {
                let mantissa_end = text.find('e').unwrap_or(text.len());
                let (mantissa, tail) = text.split_at(mantissa_end);
                if mantissa.contains('.') {
                    let trimmed = mantissa.trim_end_matches('0').trim_end_matches('.');
                    text = format!("{trimmed}{tail}");
                }
            }
            text
        }
    };
    if upper {
        digits = digits.to_uppercase();
    }
    (digits, true)
}

/// `%f`'s digits: Rust rounds the double's exact value to nearest, ties to even, as glibc does.
fn fixed(number: f64, precision: usize, point_always: bool) -> String {
    let mut text = format!("{number:.precision$}");
    if point_always && precision == 0 {
        text.push('.');
    }
    text
}

/// `%e`'s digits: one digit, the point, `precision` digits, `e`, a sign and at least two exponent digits.
fn exponential(number: f64, precision: usize, point_always: bool) -> String {
    let text = format!("{number:.precision$e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let point = if point_always && precision == 0 {
        "."
    } else {
        ""
    };
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}{point}e{sign}{:02}", exponent.unsigned_abs())
}

/// The decimal exponent `%e` prints for `number` at `precision` (after its rounding).
fn exponent_of(number: f64, precision: usize) -> i32 {
    let text = format!("{number:.precision$e}");
    text.split_once('e')
        .and_then(|(_, exponent)| exponent.parse().ok())
        .unwrap_or(0)
}

/// Formats a whole format string with its arguments, as one `printf` call prints it; missing
/// arguments print nothing (the compile-time check counts them).
pub fn format_line(pieces: &[PrintfPiece], values: &[PrintfValue]) -> String {
    let mut out = String::new();
    let mut values = values.iter();
    for piece in pieces {
        match piece {
            PrintfPiece::Text(text) => out.push_str(text),
            PrintfPiece::Conversion(conversion) => {
                if let Some(value) = values.next() {
                    format_conversion(conversion, value, &mut out);
                }
            }
        }
    }
    out
}

// The cases print 3.14159, the value a student types, not the constant PI.
#[cfg(test)]
#[allow(clippy::approx_constant)]
mod tests {
    use super::{format_line, parse_format, PrintfArgument, PrintfPiece, PrintfValue};

    /// Formats `format` with `values` as one printf call prints it.
    fn printed(format: &str, values: &[PrintfValue]) -> String {
        format_line(&parse_format(format).unwrap(), values)
    }

    fn int(value: i64) -> PrintfValue {
        PrintfValue::Integer(value)
    }

    fn float(value: f64) -> PrintfValue {
        PrintfValue::Floating(value)
    }

    #[test]
    fn a_width_and_precision_round_a_float_in_its_field() {
        assert_eq!(printed("%5.2f", &[float(3.14159)]), " 3.14");
        assert_eq!(printed("%f", &[float(-0.0)]), "-0.000000");
        // 2.5 and 3.5 are exact doubles: C rounds the tie to even.
        assert_eq!(printed("%.0f %.0f", &[float(2.5), float(3.5)]), "2 4");
    }

    #[test]
    fn hexadecimal_and_octal_print_the_bits_with_their_flags() {
        assert_eq!(
            printed("%x %X %#x %08x", &[int(255), int(255), int(255), int(255)]),
            "ff FF 0xff 000000ff"
        );
        assert_eq!(printed("%o %#o", &[int(8), int(8)]), "10 010");
    }

    #[test]
    fn integers_print_their_sign_width_and_minimum_digits() {
        assert_eq!(printed("%lld", &[int(-1)]), "-1");
        assert_eq!(printed("%u", &[int(-1)]), "4294967295");
        assert_eq!(printed("%llu", &[int(-1)]), "18446744073709551615");
        assert_eq!(printed("%-4d|", &[int(7)]), "7   |");
        assert_eq!(
            printed("%+d % d %05d", &[int(5), int(5), int(-42)]),
            "+5  5 -0042"
        );
        assert_eq!(printed("%.3d|%5.3d", &[int(7), int(7)]), "007|  007");
    }

    #[test]
    fn characters_strings_pointers_and_a_percent_sign_print_as_c_prints_them() {
        assert_eq!(printed("%c", &[int(65)]), "A");
        let hi = || PrintfValue::String("hi".into());
        assert_eq!(
            printed("[%s] [%.1s] [%5s]", &[hi(), hi(), hi()]),
            "[hi] [h] [   hi]"
        );
        assert_eq!(printed("%p", &[int(0x1000)]), "0x1000");
        assert_eq!(printed("100%%", &[]), "100%");
    }

    #[test]
    fn exponential_form_has_a_signed_two_digit_exponent() {
        assert_eq!(printed("%e", &[float(12345.678)]), "1.234568e+04");
        assert_eq!(printed("%E", &[float(0.000123)]), "1.230000E-04");
    }

    #[test]
    fn general_form_chooses_fixed_or_exponential_and_drops_trailing_zeros() {
        assert_eq!(
            printed(
                "%g %g %g",
                &[float(0.0001), float(100000.0), float(1000000.0)]
            ),
            "0.0001 100000 1e+06"
        );
        assert_eq!(
            printed(
                "%g %g %.3g",
                &[float(3.14159), float(0.00001), float(3.14159)]
            ),
            "3.14159 1e-05 3.14"
        );
        assert_eq!(printed("%#g", &[float(1.0)]), "1.00000");
    }

    #[test]
    fn infinities_and_nans_print_as_words() {
        assert_eq!(
            printed(
                "%f %F %05f",
                &[
                    float(f64::INFINITY),
                    float(f64::NAN),
                    float(f64::NEG_INFINITY)
                ]
            ),
            "inf NAN  -inf"
        );
    }

    #[test]
    fn each_conversion_names_the_kind_of_argument_it_reads() {
        let kinds: Vec<PrintfArgument> = parse_format("%d %lu %f %s %p %c")
            .unwrap()
            .iter()
            .filter_map(|piece| match piece {
                PrintfPiece::Conversion(conversion) => Some(conversion.argument()),
                PrintfPiece::Text(_) => None,
            })
            .collect();
        use PrintfArgument::{Floating, Pointer, SignedInteger, String, UnsignedInteger};
        assert_eq!(
            kinds,
            [
                SignedInteger,
                UnsignedInteger,
                Floating,
                String,
                Pointer,
                SignedInteger
            ]
        );
    }

    #[test]
    fn formats_printf_cannot_read_are_errors_in_words() {
        assert!(parse_format("%n").unwrap_err().contains("`%n`"));
        assert!(parse_format("%*d").unwrap_err().contains("`*` width"));
        assert!(parse_format("50%").unwrap_err().contains("ends inside"));
        assert!(parse_format("%q")
            .unwrap_err()
            .contains("`%q` is not a printf conversion"));
        assert!(parse_format(&"%d".repeat(33))
            .unwrap_err()
            .contains("at most 32"));
    }
}
