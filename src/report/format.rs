//! Number formatting shared by leaderboard.md and summary.json, matching what the Python
//! reference printed (`%.1f`, `{:,}`, `repr(float)`, `round(x, 2)`), so reports stay comparable.

use serde_json::Value;

/// `x` with `digits` decimals, rounded half-to-even on the exact binary value, like Python's
/// `%.Nf` (Rust's formatter rounds the same way).
pub(crate) fn fixed(x: f64, digits: usize) -> String {
    format!("{x:.digits$}")
}

/// Python's `round(x, 2)`: the nearest float to `x` written with two decimals.
pub(crate) fn round2(x: f64) -> f64 {
    fixed(x, 2).parse().unwrap_or(x)
}

/// An integer with thousands separators: `1,234,567`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A JSON value as the breakdown shows it: integers without decimals, floats as Python's
/// `repr` (`3.5`, `3.0`, `1e+20`), anything else as JSON.
pub(crate) fn number_text(value: &Value) -> String {
    match value {
        Value::Number(n) if n.is_f64() => n.as_f64().map_or_else(|| n.to_string(), python_float),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// Python's `repr(float)`: shortest round-trip digits, `.0` on whole numbers, exponent form
/// below 1e-4 and from 1e16 on.
pub(crate) fn python_float(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let scientific = format!("{x:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if x != 0.0 && !(-4..16).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs());
    }
    let plain = format!("{x}");
    if plain.contains('.') {
        plain
    } else {
        format!("{plain}.0")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn floats_print_like_python_repr() {
        let cases = [
            (3.5, "3.5"),
            (3.0, "3.0"),
            (-0.0, "-0.0"),
            (0.1, "0.1"),
            (1e20, "1e+20"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (1e16, "1e+16"),
            (1234.5, "1234.5"),
        ];
        for (x, text) in cases {
            assert_eq!(python_float(x), text);
        }
    }

    #[test]
    fn json_numbers_keep_integers_whole() {
        assert_eq!(number_text(&json!(4)), "4");
        assert_eq!(number_text(&json!(4.0)), "4.0");
        assert_eq!(number_text(&json!(true)), "true");
    }

    #[test]
    fn rounding_matches_python() {
        // Python: round(2.675, 2) == 2.67 (binary value is below the tie), '%.1f' % 0.25 == '0.2'.
        assert_eq!(round2(2.675).to_string(), "2.67");
        assert_eq!(round2(66.666_666).to_string(), "66.67");
        assert_eq!(fixed(0.25, 1), "0.2");
        assert_eq!(fixed(0.0123, 4), "0.0123");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1234), "1,234");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
