//! Reading environment variables without ever panicking on one that is not UTF-8.
//! `std::env::vars()` panics on the first such variable, even one clusterform never reads,
//! so the environment is walked with `vars_os()`: a variable clusterform does not read is
//! skipped whatever it holds, and one it reads is an error naming the variable (never its
//! value, which may be a token).

use std::collections::BTreeMap;
use std::ffi::OsString;

use crate::error::CliError;

/// The prefix of the variables that set configuration variables (`CLUSTERFORM_VAR_name`).
const VARIABLE_PREFIX: &str = "CLUSTERFORM_VAR_";

/// The variables that hold an access token.
pub const TOKEN_VARIABLES: &[&str] = &["CLUSTERFORM_ACCESS_TOKEN", "GOOGLE_OAUTH_ACCESS_TOKEN"];

/// A variable's value; `None` when it is unset.
pub fn var(name: &str) -> Result<Option<String>, CliError> {
    std::env::var_os(name)
        .map(|value| unicode(name, value))
        .transpose()
}

/// Fails if any of `names` is set to something that is not UTF-8.
pub fn require_unicode(names: &[&str]) -> Result<(), CliError> {
    names.iter().try_for_each(|name| var(name).map(drop))
}

/// The configuration variables set by `CLUSTERFORM_VAR_name`, by name.
pub fn configuration_variables() -> Result<BTreeMap<String, String>, CliError> {
    with_prefix(std::env::vars_os(), VARIABLE_PREFIX)
}

/// The variables of `environment` whose names start with `prefix`, by the rest of their names.
fn with_prefix(
    environment: impl IntoIterator<Item = (OsString, OsString)>,
    prefix: &str,
) -> Result<BTreeMap<String, String>, CliError> {
    let mut found = BTreeMap::new();
    for (key, value) in environment {
        if !key.as_encoded_bytes().starts_with(prefix.as_bytes()) {
            continue;
        }
        let key = key
            .into_string()
            .map_err(|key| CliError::NonUnicodeVariable(key.to_string_lossy().into_owned()))?;
        let value = unicode(&key, value)?;
        if let Some(name) = key.strip_prefix(prefix) {
            found.insert(name.to_owned(), value);
        }
    }
    Ok(found)
}

fn unicode(name: &str, value: OsString) -> Result<String, CliError> {
    value
        .into_string()
        .map_err(|_| CliError::NonUnicodeVariable(name.to_owned()))
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::ffi::OsStringExt as _;

    use super::*;

    fn os(bytes: &[u8]) -> OsString {
        OsString::from_vec(bytes.to_vec())
    }

    #[test]
    fn variables_outside_the_prefix_are_skipped_whatever_they_hold() {
        let environment = [
            (os(b"X"), os(b"caf\xe9")),
            (os(b"caf\xe9"), os(b"value")),
            (os(b"CLUSTERFORM_VAR_region"), os(b"us-central1")),
        ];
        let found = with_prefix(environment, VARIABLE_PREFIX).unwrap();
        assert_eq!(
            found,
            BTreeMap::from([("region".to_owned(), "us-central1".to_owned())])
        );
    }

    #[test]
    fn a_non_unicode_value_names_the_variable_and_hides_the_value() {
        let environment = [(os(b"CLUSTERFORM_VAR_secret"), os(b"hunter\xe9"))];
        let error = with_prefix(environment, VARIABLE_PREFIX)
            .unwrap_err()
            .to_string();
        assert!(error.contains("CLUSTERFORM_VAR_secret"), "{error}");
        assert!(!error.contains("hunter"), "{error}");
    }

    #[test]
    fn a_non_unicode_name_with_the_prefix_is_an_error() {
        let environment = [(os(b"CLUSTERFORM_VAR_caf\xe9"), os(b"x"))];
        let error = with_prefix(environment, VARIABLE_PREFIX)
            .unwrap_err()
            .to_string();
        assert!(error.contains("CLUSTERFORM_VAR_caf"), "{error}");
    }
}
