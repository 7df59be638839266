//! What errors and logs show of endpoints and URLs: never a password, a key or a token.

/// An endpoint as errors show it: without its user name and password ([`redact_userinfo`])
/// and without its query and fragment, which are refused for endpoints and may carry a key
/// (`?key=…`, `#access_token=…`).
pub fn redact_endpoint(endpoint: &str) -> String {
    let redacted = redact_userinfo(endpoint);
    match redacted.find(['?', '#']) {
        Some(cut) => format!("{}{}***", &redacted[..cut], &redacted[cut..=cut]),
        None => redacted,
    }
}

/// `text` with the user name and password of every `scheme://user:password@host` in it
/// replaced by `***`: an endpoint or URL may carry a password, and errors and logs must not.
pub fn redact_userinfo(text: &str) -> String {
    let mut redacted = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(scheme_end) = rest.find("://") {
        let authority_start = scheme_end + 3;
        redacted.push_str(&rest[..authority_start]);
        rest = &rest[authority_start..];
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        if let Some(at) = rest[..authority_end].rfind('@') {
            redacted.push_str("***");
            rest = &rest[at..];
        }
    }
    redacted.push_str(rest);
    redacted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_is_redacted_wherever_a_url_appears() {
        assert_eq!(
            redact_userinfo("GET https://u:p@h/x and http://a@b:1?q=c@d"),
            "GET https://***@h/x and http://***@b:1?q=c@d"
        );
        for unchanged in ["https://h/path@x", "http://h?a=b@c", "no url here", "x://"] {
            assert_eq!(redact_userinfo(unchanged), unchanged);
        }
    }

    #[test]
    fn an_endpoint_is_shown_without_its_query_or_fragment() {
        assert_eq!(
            redact_endpoint("https://u:p@host/x?key=s3cret#frag"),
            "https://***@host/x?***"
        );
        assert_eq!(
            redact_endpoint("https://host/x#access_token=t"),
            "https://host/x#***"
        );
        assert_eq!(redact_endpoint("https://host/x"), "https://host/x");
    }
}
