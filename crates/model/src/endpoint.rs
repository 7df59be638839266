//! Where the API is when it is not Google's regional endpoint: the built-in emulator
//! (`local`) or a base URL. The provider's `endpoint`, `--endpoint` and
//! `CLUSTERFORM_ENDPOINT` are read into an [`Endpoint`] where they are parsed, so no other
//! code compares text with `"local"`. Which URLs may carry credentials (https, or plain http
//! to loopback only) is the executor's transport rule, checked when a client is built.

use std::fmt;
use std::str::FromStr;

/// An API endpoint override.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// `local`: the built-in emulator, in this process.
    Local,
    /// An http(s) base URL.
    Url(EndpointUrl),
}

/// An http(s) URL that parses, kept as it was written: requests join their paths to it and
/// a saved plan records it as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointUrl(String);

impl EndpointUrl {
    /// The URL as it was written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Text that is not an endpoint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// Neither `local` nor a URL with an http(s) scheme.
    #[error("endpoint `{0}` is neither \"local\" nor an http(s) URL")]
    Neither(String),
    /// An http(s) URL that does not parse.
    #[error("endpoint `{text}` is not a valid URL: {reason}")]
    Malformed {
        /// The endpoint as written.
        text: String,
        /// What the URL parser said.
        reason: String,
    },
}

impl Endpoint {
    /// The spelling of [`Endpoint::Local`].
    pub const LOCAL: &'static str = "local";

    /// Whether it is the built-in emulator.
    pub fn is_local(&self) -> bool {
        matches!(self, Self::Local)
    }

    /// `local`, or the URL as written.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Local => Self::LOCAL,
            Self::Url(url) => url.as_str(),
        }
    }
}

impl EndpointUrl {
    /// Whether it names this machine (`localhost`, `127.0.0.0/8`, `[::1]`): an emulator's,
    /// most likely, which takes any token.
    pub fn is_loopback(&self) -> bool {
        match url::Url::parse(&self.0)
            .ok()
            .and_then(|url| url.host().map(|h| h.to_owned()))
        {
            Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(address)) => address.is_loopback(),
            Some(url::Host::Ipv6(address)) => address.is_loopback(),
            None => false,
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Endpoint {
    type Err = EndpointError;

    fn from_str(text: &str) -> Result<Self, EndpointError> {
        if text == Self::LOCAL {
            return Ok(Self::Local);
        }
        match url::Url::parse(text) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => {
                Ok(Self::Url(EndpointUrl(text.to_owned())))
            }
            Ok(_) => Err(EndpointError::Neither(text.to_owned())),
            Err(error) if has_http_scheme(text) => Err(EndpointError::Malformed {
                text: text.to_owned(),
                reason: error.to_string(),
            }),
            Err(_) => Err(EndpointError::Neither(text.to_owned())),
        }
    }
}

/// Whether `text` starts like an http(s) URL, so that a parse failure is a broken URL rather
/// than something else.
fn has_http_scheme(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_and_http_urls_are_endpoints_kept_as_written() {
        assert_eq!("local".parse(), Ok(Endpoint::Local));
        for text in [
            "http://127.0.0.1:8089",
            "https://api.example/v1/",
            "HTTPS://API.example",
        ] {
            let endpoint: Endpoint = text.parse().unwrap();
            assert!(!endpoint.is_local());
            assert_eq!(endpoint.to_string(), text);
        }
    }

    #[test]
    fn a_url_on_this_machine_is_loopback() {
        let loopback = |text: &str| match text.parse::<Endpoint>().unwrap() {
            Endpoint::Url(url) => url.is_loopback(),
            Endpoint::Local => unreachable!(),
        };
        for text in [
            "http://127.0.0.1:8089",
            "http://localhost:1",
            "http://[::1]:9",
            "http://127.8.0.1",
        ] {
            assert!(loopback(text), "{text}");
        }
        for text in ["https://aiplatform.googleapis.com", "http://10.0.0.1:8089"] {
            assert!(!loopback(text), "{text}");
        }
    }

    #[test]
    fn anything_else_is_refused_with_what_is_wrong() {
        for text in ["lokal", "ftp://x", "", "Local", "127.0.0.1:8089"] {
            assert_eq!(
                text.parse::<Endpoint>(),
                Err(EndpointError::Neither(text.to_owned())),
                "{text}"
            );
        }
        let broken = "https://".parse::<Endpoint>().unwrap_err();
        assert_eq!(
            broken.to_string(),
            "endpoint `https://` is not a valid URL: empty host"
        );
    }
}
