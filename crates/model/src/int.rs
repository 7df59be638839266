//! Integers as the proto3 JSON mapping writes them: a JSON number or a decimal string.
//!
//! The API encodes 64-bit integers as strings (`"8"`) and 32-bit ones as numbers; readers must
//! accept both for every integer field. We always write numbers.

use serde::{Deserialize, Deserializer, de};

#[derive(Deserialize)]
#[serde(untagged)]
enum NumberOrString {
    Number(serde_json::Number),
    String(String),
}

/// Reads an optional integer from a number, a decimal string, or `null`.
pub(crate) fn option<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    let Some(raw) = Option::<NumberOrString>::deserialize(deserializer)? else {
        return Ok(None);
    };
    match raw {
        NumberOrString::Number(n) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| de::Error::custom(format!("expected an integer, found {n}"))),
        NumberOrString::String(s) => s
            .trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| de::Error::custom(format!("expected an integer, found \"{s}\""))),
    }
}

/// Reads an integer that must be present, from a number or a decimal string.
pub(crate) fn required<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    option(deserializer)?.ok_or_else(|| de::Error::custom("expected an integer, found null"))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Deserialize, Debug, PartialEq)]
    struct Holder {
        #[serde(default, deserialize_with = "super::option")]
        n: Option<i64>,
    }

    fn read(json: &str) -> Result<Holder, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn reads_numbers_strings_and_null() {
        assert_eq!(read(r#"{"n": 8}"#).unwrap().n, Some(8));
        assert_eq!(read(r#"{"n": "8"}"#).unwrap().n, Some(8));
        assert_eq!(read(r#"{"n": "-3"}"#).unwrap().n, Some(-3));
        assert_eq!(read(r#"{"n": null}"#).unwrap().n, None);
        assert_eq!(read(r#"{}"#).unwrap().n, None);
    }

    #[test]
    fn rejects_non_integers_with_the_value() {
        let err = read(r#"{"n": "eight"}"#).unwrap_err().to_string();
        assert!(err.contains("\"eight\""), "{err}");
        let err = read(r#"{"n": 1.5}"#).unwrap_err().to_string();
        assert!(err.contains("1.5"), "{err}");
    }
}
