//! Access tokens: where they come from and how they are kept out of sight.
//!
//! A [`TokenSource`] hands the client a bearer [`Token`] for every request. The default chain
//! ([`default_token_source`]) is: `CLUSTERFORM_ACCESS_TOKEN`, then Terraform's
//! `GOOGLE_OAUTH_ACCESS_TOKEN`, then `gcp_auth`'s provider chain. A credentials file named by
//! `GOOGLE_APPLICATION_CREDENTIALS` that `gcp_auth` cannot read (anything but a service-account
//! key, e.g. `external_account` or `impersonated_service_account`) is handed to the `gcloud`
//! CLI instead, with a note saying so. Every type that holds a token redacts it in `Debug` and
//! `Display`, so a token cannot reach a log line, an error or a file by accident.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The OAuth scope every call needs.
const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// How long a token printed by `gcloud` is reused. gcloud's tokens live an hour; refreshing
/// well before that keeps a long apply from sending an expired one.
const GCLOUD_TOKEN_REUSE: Duration = Duration::from_secs(30 * 60);

/// Why no token could be had.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AuthError {
    /// An environment variable holds something that is not a token.
    #[error("{variable} is set but empty")]
    EmptyVariable {
        /// The variable.
        variable: &'static str,
    },
    /// The credentials file could not be read.
    #[error("cannot read the credentials file {path}: {reason}")]
    CredentialsFile {
        /// The file named by `GOOGLE_APPLICATION_CREDENTIALS`.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// `gcp_auth` found no usable credentials or could not get a token.
    #[error("no Google credentials found: {0}")]
    Provider(String),
    /// `gcloud auth print-access-token` failed.
    #[error("`gcloud auth print-access-token` failed: {0}")]
    Gcloud(String),
}

/// A bearer token. `Debug` and `Display` never show it; only [`Token::secret`] does.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// Wraps a token.
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }

    /// The token itself, for the `Authorization` header only.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Something that can hand out a bearer token, called before every request.
#[async_trait::async_trait]
pub trait TokenSource: Send + Sync + fmt::Debug {
    /// A currently valid token. Sources cache tokens themselves.
    async fn token(&self) -> Result<Token, AuthError>;
}

/// A fixed token, from an environment variable or a test.
#[derive(Debug, Clone)]
pub struct StaticToken(Token);

impl StaticToken {
    /// Wraps a token string.
    pub fn new(secret: impl Into<String>) -> Self {
        Self(Token::new(secret))
    }
}

#[async_trait::async_trait]
impl TokenSource for StaticToken {
    async fn token(&self) -> Result<Token, AuthError> {
        Ok(self.0.clone())
    }
}

/// Tokens from `gcloud auth print-access-token`, reused for half an hour.
pub struct GcloudCli {
    /// `PATH` for finding `gcloud`; `None` inherits the process's.
    search_path: Option<OsString>,
    cached: Mutex<Option<(Token, Instant)>>,
}

impl GcloudCli {
    /// Runs the `gcloud` found on `search_path` (or on the process's `PATH` when `None`).
    pub fn new(search_path: Option<OsString>) -> Self {
        Self {
            search_path,
            cached: Mutex::new(None),
        }
    }

    fn cached_token(&self) -> Option<Token> {
        let cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        cached
            .as_ref()
            .filter(|(_, fetched)| fetched.elapsed() < GCLOUD_TOKEN_REUSE)
            .map(|(token, _)| token.clone())
    }

    fn print_access_token(search_path: Option<OsString>) -> Result<Token, AuthError> {
        let mut command = Command::new("gcloud");
        command.args(["auth", "print-access-token", "--quiet"]);
        if let Some(path) = search_path {
            command.env("PATH", path);
        }
        let output = command
            .output()
            .map_err(|e| AuthError::Gcloud(format!("cannot run gcloud: {e}")))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(AuthError::Gcloud(format!(
                "{}: {}",
                output.status,
                stderr.trim()
            )));
        }
        let token = String::from_utf8(output.stdout)
            .map_err(|_| AuthError::Gcloud("its output is not UTF-8".to_owned()))?;
        let token = token.trim();
        if token.is_empty() {
            return Err(AuthError::Gcloud("it printed no token".to_owned()));
        }
        Ok(Token::new(token))
    }
}

impl fmt::Debug for GcloudCli {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GcloudCli").finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl TokenSource for GcloudCli {
    async fn token(&self) -> Result<Token, AuthError> {
        if let Some(token) = self.cached_token() {
            return Ok(token);
        }
        let search_path = self.search_path.clone();
        let token = tokio::task::spawn_blocking(move || Self::print_access_token(search_path))
            .await
            .map_err(|e| AuthError::Gcloud(format!("the gcloud task failed: {e}")))??;
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        *cached = Some((token.clone(), Instant::now()));
        Ok(token)
    }
}

/// Tokens from one of `gcp_auth`'s providers (service account key, application-default
/// credentials, metadata server, gcloud), which cache and refresh them.
struct GcpAuth(Arc<dyn gcp_auth::TokenProvider>);

impl fmt::Debug for GcpAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GcpAuth").finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl TokenSource for GcpAuth {
    async fn token(&self) -> Result<Token, AuthError> {
        let token = self
            .0
            .token(&[CLOUD_PLATFORM_SCOPE])
            .await
            .map_err(|e| AuthError::Provider(e.to_string()))?;
        Ok(Token::new(token.as_str()))
    }
}

/// The chosen token source, with a note for the user when the choice is not the obvious one.
#[derive(Debug, Clone)]
pub struct ResolvedTokenSource {
    /// The source.
    pub source: Arc<dyn TokenSource>,
    /// Said to the user by the caller (libraries do not print), e.g. why gcloud is used.
    pub note: Option<TokenNote>,
}

/// Why the chosen token source is not the obvious one, for the caller to word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenNote {
    /// `GOOGLE_APPLICATION_CREDENTIALS` names credentials of a type read only through
    /// `gcloud auth print-access-token`.
    GcloudInstead {
        /// The credentials' `type`.
        kind: String,
        /// The credentials file.
        credentials: PathBuf,
    },
}

/// The environment variables the default chain reads, captured so tests can supply their own.
#[derive(Debug, Clone, Default)]
pub struct AuthEnvironment {
    /// `CLUSTERFORM_ACCESS_TOKEN`.
    pub clusterform_access_token: Option<String>,
    /// `GOOGLE_OAUTH_ACCESS_TOKEN`.
    pub google_oauth_access_token: Option<String>,
    /// `GOOGLE_APPLICATION_CREDENTIALS`.
    pub application_credentials: Option<PathBuf>,
    /// `PATH`, for finding `gcloud`; `None` inherits the process's.
    pub search_path: Option<OsString>,
}

impl AuthEnvironment {
    /// Reads the variables from this process's environment.
    pub fn from_process() -> Self {
        Self {
            clusterform_access_token: std::env::var("CLUSTERFORM_ACCESS_TOKEN").ok(),
            google_oauth_access_token: std::env::var("GOOGLE_OAUTH_ACCESS_TOKEN").ok(),
            application_credentials: std::env::var_os("GOOGLE_APPLICATION_CREDENTIALS")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            search_path: None,
        }
    }
}

/// The default chain, read from this process's environment.
pub async fn default_token_source() -> Result<ResolvedTokenSource, AuthError> {
    resolve_token_source(&AuthEnvironment::from_process()).await
}

/// The default chain over an explicit environment.
pub async fn resolve_token_source(env: &AuthEnvironment) -> Result<ResolvedTokenSource, AuthError> {
    let variables = [
        ("CLUSTERFORM_ACCESS_TOKEN", &env.clusterform_access_token),
        ("GOOGLE_OAUTH_ACCESS_TOKEN", &env.google_oauth_access_token),
    ];
    for (variable, value) in variables {
        if let Some(value) = value {
            if value.trim().is_empty() {
                return Err(AuthError::EmptyVariable { variable });
            }
            return Ok(ResolvedTokenSource {
                source: Arc::new(StaticToken::new(value.trim())),
                note: None,
            });
        }
    }
    if let Some(path) = &env.application_credentials {
        let kind = credentials_type(path)?;
        if kind != "service_account" {
            return Ok(ResolvedTokenSource {
                source: Arc::new(GcloudCli::new(env.search_path.clone())),
                note: Some(TokenNote::GcloudInstead {
                    kind,
                    credentials: path.clone(),
                }),
            });
        }
    }
    let provider = gcp_auth::provider()
        .await
        .map_err(|e| AuthError::Provider(describe_gcp_auth_error(&e)))?;
    Ok(ResolvedTokenSource {
        source: Arc::new(GcpAuth(provider)),
        note: None,
    })
}

/// The `type` field of a credentials JSON file.
fn credentials_type(path: &Path) -> Result<String, AuthError> {
    let fail = |reason: String| AuthError::CredentialsFile {
        path: path.to_owned(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| fail(format!("not JSON: {e}")))?;
    json.get("type")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| fail("it has no `type` field".to_owned()))
}

/// gcp_auth's top-level error says only "no available authentication method found"; the
/// causes it wraps say why each method failed.
fn describe_gcp_auth_error(error: &gcp_auth::Error) -> String {
    match error {
        gcp_auth::Error::NoAuthMethod(gcloud, metadata, user) => format!(
            "application-default credentials: {user}; metadata server: {metadata}; gcloud: {gcloud}. \
             Run `gcloud auth application-default login` or set CLUSTERFORM_ACCESS_TOKEN"
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_redacted() {
        let token = Token::new("ya29.secret");
        assert_eq!(format!("{token:?}"), "Token(***)");
        assert_eq!(token.to_string(), "***");
        assert_eq!(token.secret(), "ya29.secret");
        let source = StaticToken::new("ya29.secret");
        assert!(!format!("{source:?}").contains("secret"));
    }

    #[tokio::test]
    async fn clusterform_variable_wins_over_terraform_one() {
        let env = AuthEnvironment {
            clusterform_access_token: Some("first".to_owned()),
            google_oauth_access_token: Some("second".to_owned()),
            ..AuthEnvironment::default()
        };
        let resolved = resolve_token_source(&env).await.unwrap();
        assert_eq!(resolved.source.token().await.unwrap().secret(), "first");
        assert!(resolved.note.is_none());
    }

    #[tokio::test]
    async fn terraform_variable_is_read() {
        let env = AuthEnvironment {
            google_oauth_access_token: Some("tf-token\n".to_owned()),
            ..AuthEnvironment::default()
        };
        let resolved = resolve_token_source(&env).await.unwrap();
        assert_eq!(resolved.source.token().await.unwrap().secret(), "tf-token");
    }

    #[tokio::test]
    async fn empty_variable_is_an_error() {
        let env = AuthEnvironment {
            clusterform_access_token: Some(" ".to_owned()),
            ..AuthEnvironment::default()
        };
        let err = resolve_token_source(&env).await.unwrap_err();
        assert!(
            err.to_string().contains("CLUSTERFORM_ACCESS_TOKEN"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn unreadable_credentials_file_names_it() {
        let env = AuthEnvironment {
            application_credentials: Some(PathBuf::from("/nonexistent/creds.json")),
            ..AuthEnvironment::default()
        };
        let err = resolve_token_source(&env).await.unwrap_err();
        assert!(err.to_string().contains("/nonexistent/creds.json"), "{err}");
    }
}
