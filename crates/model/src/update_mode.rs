//! The `updateMode` of a PATCH: which fields the service applies. Serialised as the API's
//! strings, parsed from them (the configuration and the `--update-mode` flag use the same
//! spelling).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// `updateMode` of a cluster update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum UpdateMode {
    /// `UPDATE_MODE_UNSPECIFIED`: the service picks.
    #[serde(rename = "UPDATE_MODE_UNSPECIFIED")]
    Unspecified,
    /// `USER_ONLY`: only the fields the request sets.
    #[serde(rename = "USER_ONLY")]
    UserOnly,
    /// `USER_AND_SERVICE`: the request's fields, and the service may refresh the fields it
    /// manages (startup, prolog and epilog scripts).
    #[serde(rename = "USER_AND_SERVICE")]
    UserAndService,
}

impl UpdateMode {
    /// Every mode, in the API's order.
    pub const ALL: [Self; 3] = [Self::Unspecified, Self::UserOnly, Self::UserAndService];

    /// The API spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unspecified => "UPDATE_MODE_UNSPECIFIED",
            Self::UserOnly => "USER_ONLY",
            Self::UserAndService => "USER_AND_SERVICE",
        }
    }
}

impl fmt::Display for UpdateMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not one of the API's update modes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not an update mode (expected UPDATE_MODE_UNSPECIFIED, USER_ONLY or USER_AND_SERVICE)"
)]
pub struct UnknownUpdateMode(pub String);

impl FromStr for UpdateMode {
    type Err = UnknownUpdateMode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|mode| mode.as_str() == text)
            .ok_or_else(|| UnknownUpdateMode(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::UPDATE_MODES;

    #[test]
    fn parses_and_prints_the_api_spelling() {
        for mode in UpdateMode::ALL {
            assert_eq!(mode.as_str().parse::<UpdateMode>(), Ok(mode));
            assert_eq!(mode.to_string(), mode.as_str());
        }
        assert!("user_only".parse::<UpdateMode>().is_err());
        assert_eq!(
            UpdateMode::ALL.map(UpdateMode::as_str).as_slice(),
            UPDATE_MODES
        );
    }

    #[test]
    fn serialises_as_the_api_string() {
        assert_eq!(
            serde_json::to_value(UpdateMode::UserAndService).unwrap(),
            serde_json::json!("USER_AND_SERVICE")
        );
        assert_eq!(
            serde_json::from_value::<UpdateMode>(serde_json::json!("USER_ONLY")).unwrap(),
            UpdateMode::UserOnly
        );
    }
}
