//! Protobuf durations (`"604800s"`, `"3.5s"`) and the human spellings users write (`"7d"`,
//! `"90m"`, `"1h30m"`), normalised to whole seconds so that spellings compare equal.

use std::fmt;

/// A duration string that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Neither a protobuf duration nor a human one.
    #[error(
        "`{0}` is not a duration; write it as seconds (\"3600s\") or with units (\"90m\", \"2h\", \"7d\")"
    )]
    NotADuration(String),
    /// A duration, but more seconds than can be counted.
    #[error("`{0}` is too long a duration (at most {max} seconds)", max = u64::MAX)]
    TooLarge(String),
}

/// A duration in whole seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Seconds(pub u64);

impl Seconds {
    /// The protobuf JSON spelling, e.g. `"3600s"`.
    pub fn to_proto(self) -> String {
        format!("{}s", self.0)
    }
}

/// Units from the largest, as durations are written (`7d`, `1h30m`).
const UNITS: [(u64, &str); 4] = [(86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")];

impl Seconds {
    /// The `count` largest units from the first that is not zero, zeros left out: `5h2m` for
    /// 5 h 2 min 3 s and `5h` for 5 h 0 min 3 s with `count` 2 — for tables and messages,
    /// where more precision is noise.
    pub fn to_units(self, count: usize) -> String {
        let parts: Vec<String> = UNITS
            .iter()
            .scan(self.0, |left, &(size, unit)| {
                let whole = *left / size;
                *left %= size;
                Some((whole, unit))
            })
            .skip_while(|(whole, _)| *whole == 0)
            .take(count)
            .filter(|(whole, _)| *whole > 0)
            .map(|(whole, unit)| format!("{whole}{unit}"))
            .collect();
        if parts.is_empty() {
            "0s".to_owned()
        } else {
            parts.concat()
        }
    }
}

impl From<std::time::Duration> for Seconds {
    /// Whole seconds (fractions are dropped).
    fn from(duration: std::time::Duration) -> Self {
        Self(duration.as_secs())
    }
}

/// Every unit, in the spelling [`parse`] reads back: `7d`, `1h30m`, `1m1s`, `0s`.
impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_units(UNITS.len()))
    }
}

/// Parses `"604800s"`, `"3.5s"` (fractions are truncated), `"90m"`, `"1h30m"`, `"7d"` or `"2w"`.
pub fn parse(input: &str) -> Result<Seconds, DurationError> {
    let error = || DurationError::NotADuration(input.to_owned());
    let too_large = || DurationError::TooLarge(input.to_owned());
    let text = input.trim();
    if text.is_empty() {
        return Err(error());
    }
    let mut total: u64 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(error)?;
        if digits == 0 {
            return Err(error());
        }
        let (number, tail) = rest.split_at(digits);
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        let scale = match unit {
            "s" => 1,
            "m" => 60,
            "h" => 3_600,
            "d" => 86_400,
            "w" => 604_800,
            _ => return Err(error()),
        };
        let whole = number.split('.').next().unwrap_or_default();
        if number.matches('.').count() > 1 || whole.is_empty() {
            return Err(error());
        }
        // Only digits are left, so a number that does not parse is too large.
        let value: u64 = whole.parse().map_err(|_| too_large())?;
        total = value
            .checked_mul(scale)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(too_large)?;
        rest = next;
    }
    Ok(Seconds(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proto_and_human_spellings() {
        assert_eq!(parse("604800s"), Ok(Seconds(604_800)));
        assert_eq!(parse("7d"), Ok(Seconds(604_800)));
        assert_eq!(parse("1w"), Ok(Seconds(604_800)));
        assert_eq!(parse("1h30m"), Ok(Seconds(5_400)));
        assert_eq!(parse("3.5s"), Ok(Seconds(3)));
        assert_eq!(parse("90m"), Ok(Seconds(5_400)));
    }

    #[test]
    fn a_duration_too_long_to_count_says_so() {
        for long in [
            "99999999999999999999h",
            "18446744073709551615m",
            "307445734561825861w",
        ] {
            assert!(
                matches!(parse(long), Err(DurationError::TooLarge(_))),
                "{long}"
            );
            assert!(parse(long).unwrap_err().to_string().contains("too long"));
        }
        assert!(matches!(parse("7x"), Err(DurationError::NotADuration(_))));
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "s",
            "10",
            "10x",
            "1..5s",
            "-5s",
            "99999999999999999999d",
        ] {
            assert!(parse(bad).is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn displays_every_unit_in_the_spelling_it_parses() {
        assert_eq!(Seconds(604_800).to_string(), "7d");
        assert_eq!(Seconds(5_400).to_string(), "1h30m");
        assert_eq!(Seconds(61).to_string(), "1m1s");
        assert_eq!(Seconds(0).to_string(), "0s");
        for seconds in [0, 1, 59, 61, 3_599, 5_400, 90_061, 604_800] {
            assert_eq!(parse(&Seconds(seconds).to_string()), Ok(Seconds(seconds)));
        }
        assert_eq!(Seconds(18_123).to_units(2), "5h2m");
        assert_eq!(Seconds(30).to_units(2), "30s");
        assert_eq!(Seconds(18_003).to_units(2), "5h");
        assert_eq!(Seconds(3_600).to_proto(), "3600s");
    }
}
