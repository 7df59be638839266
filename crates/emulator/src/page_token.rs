//! List page tokens. A token is the hex encoding of the last cluster name of
//! the previous page: opaque to clients, stable when clusters are added or
//! deleted between pages (the next page starts after that name), and bound to
//! the collection it was issued for.

use crate::api_error::ApiError;

/// The token that continues a listing after `last_name`.
pub(crate) fn encode(last_name: &str) -> String {
    last_name
        .bytes()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The cluster name a token continues after; it must lie under `collection_prefix`.
pub(crate) fn decode(token: &str, collection_prefix: &str) -> Result<String, ApiError> {
    let invalid = || ApiError::invalid_argument(format!("Invalid pageToken `{token}`."));
    if !token.len().is_multiple_of(2) || !token.is_ascii() {
        return Err(invalid());
    }
    let bytes = (0..token.len())
        .step_by(2)
        .map(|start| u8::from_str_radix(&token[start..start + 2], 16))
        .collect::<Result<Vec<u8>, _>>()
        .map_err(|_| invalid())?;
    let name = String::from_utf8(bytes).map_err(|_| invalid())?;
    if name.starts_with(collection_prefix) {
        Ok(name)
    } else {
        Err(invalid())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PREFIX: &str = "projects/p/locations/r/modelDevelopmentClusters/";

    #[test]
    fn tokens_round_trip() {
        let name = format!("{PREFIX}c7");
        assert_eq!(decode(&encode(&name), PREFIX).unwrap(), name);
    }

    #[test]
    fn foreign_or_garbled_tokens_are_refused() {
        let other = encode("projects/q/locations/r/modelDevelopmentClusters/c7");
        for token in ["abc", "zz", "ff", other.as_str(), "é1"] {
            let error = decode(token, PREFIX).unwrap_err();
            assert_eq!(error.message, format!("Invalid pageToken `{token}`."));
        }
    }
}
