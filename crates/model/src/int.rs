//! Integers as the proto3 JSON mapping writes them: a JSON number or a decimal string.
//!
//! The API encodes 64-bit integers as strings (`"8"`) and 32-bit ones as numbers; readers must
//! accept both for every integer field. We always write numbers.

use std::fmt;

use serde::{Deserializer, de};

/// Reads an optional integer from a number, a decimal string, or `null`.
///
/// A visitor rather than an untagged enum: an untagged enum buffers every value and builds an
/// error for each variant that does not match, which is most of the cost of a List page's
/// 64-bit integers (they arrive as strings).
pub(crate) fn option<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    deserializer.deserialize_any(OptionalInteger)
}

struct OptionalInteger;

impl<'de> de::Visitor<'de> for OptionalInteger {
    type Value = Option<i64>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer, as a number or a decimal string")
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
        Ok(Some(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
        i64::try_from(n)
            .map(Some)
            .map_err(|_| E::custom(format!("expected an integer, found {n}")))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Self::Value, E> {
        Err(E::custom(format!("expected an integer, found {n:?}")))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        text.trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| E::custom(format!("expected an integer, found \"{text}\"")))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
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
        let err = read(r#"{"n": 8.0}"#).unwrap_err().to_string();
        assert!(err.contains("found 8.0"), "{err}");
        let err = read(r#"{"n": 9223372036854775808}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("9223372036854775808"), "{err}");
        let err = read(r#"{"n": true}"#).unwrap_err().to_string();
        assert!(err.contains("a decimal string"), "{err}");
    }

    #[test]
    fn reads_the_same_from_a_json_value() {
        let held = |value: serde_json::Value| {
            serde_json::from_value::<Holder>(serde_json::json!({ "n": value })).map(|h| h.n)
        };
        assert_eq!(held(serde_json::json!("12")).unwrap(), Some(12));
        assert_eq!(held(serde_json::json!(-4)).unwrap(), Some(-4));
        assert_eq!(held(serde_json::Value::Null).unwrap(), None);
        assert!(held(serde_json::json!([1])).is_err());
    }
}
