//! What most commands share: loading the configuration (asking for missing variables on a
//! terminal), and connecting to the API or the local emulator.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use clusterform_config::{
    Config, Diagnostic, Provider, Redaction, RemoteState, StackOrigin, VariableInputs,
};
use std::collections::BTreeMap;

use clusterform::format::notes::Note;
use clusterform_executor::{
    ApiClient, ClientOptions, PreflightClient, PreflightEndpointError, RetryPolicy, StackObjects,
    StateError, StaticToken, StorageClient, TokenSource,
};
use clusterform_model::preflight::PreflightApi;
use clusterform_model::pricing::PriceList;
use clusterform_model::{Endpoint, EndpointUrl};
use clusterform_planner::PlanEndpoint;

use crate::arguments::Variables;
use crate::diagnostics;
use crate::environment;
use crate::error::CliError;
use crate::local_emulator::LocalEmulator;
use crate::printer::Tell;
use crate::prompt;

/// The variable that overrides the Cloud Storage endpoint (below the lock block's `endpoint`).
pub const STORAGE_ENDPOINT_VARIABLE: &str = "CLUSTERFORM_STORAGE_ENDPOINT";

/// Loads and validates the configuration in `dir` on a blocking thread (its decode takes every
/// core for a large one) and tells its warnings (`tell`: the command's view, or its printer).
/// On a terminal, variables without a value are asked for (once each) and the load is
/// repeated. Nothing leaves the machine before it is known valid.
pub async fn load_config(
    dir: &Path,
    inputs: VariableInputs,
    tell: &dyn Tell,
) -> Result<Config, CliError> {
    let load_dir = dir.to_path_buf();
    let loaded = tokio::task::spawn_blocking(move || load_located(&load_dir, inputs))
        .await
        .unwrap_or_else(|ended| std::panic::resume_unwind(ended.into_panic()))?;
    Ok(loaded.tell_warnings(tell))
}

/// A loaded configuration whose warnings, located, are not told yet: a load on a blocking
/// thread leaves the telling to the command, in its order.
#[derive(Debug)]
struct LoadedConfig {
    config: Config,
    warnings: Vec<Diagnostic>,
    secrets: Redaction,
}

impl LoadedConfig {
    /// Hides its sensitive values from all the run prints from now on, tells the warnings
    /// and hands over the configuration.
    fn tell_warnings(self, tell: &dyn Tell) -> Config {
        crate::printer::hide_from_now_on(self.secrets);
        for warning in &self.warnings {
            tell.configuration_warning(warning);
        }
        self.config
    }
}

/// Loads and validates the configuration without printing: on a terminal, variables without a
/// value are asked for (once each) and the load is repeated. Blocks: async callers run it on a
/// blocking thread.
fn load_located(dir: &Path, mut inputs: VariableInputs) -> Result<LoadedConfig, CliError> {
    let load = |inputs: &VariableInputs| clusterform_config::load(dir, inputs);
    let loaded = match load(&inputs) {
        Err(diagnostics)
            if !diagnostics.missing_variables.is_empty() && std::io::stdin().is_terminal() =>
        {
            for missing in &diagnostics.missing_variables {
                let value = prompt::variable(missing)?;
                inputs.cli.push((missing.name.clone(), value));
            }
            load(&inputs)
        }
        other => other,
    }
    .map_err(|found| CliError::Diagnostics(diagnostics::located(found, dir, &inputs.files)))?;
    let warnings = loaded
        .warnings
        .into_iter()
        .map(|warning| diagnostics::located_warning(warning, dir, &inputs.files))
        .collect();
    Ok(LoadedConfig {
        config: loaded.config,
        warnings,
        secrets: loaded.secrets,
    })
}

/// Whether `dir` holds configuration files (`*.hcl`); a directory that does not exist yet
/// holds none.
pub fn has_configuration(dir: &Path) -> Result<bool, CliError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(source) => {
            return Err(CliError::Io {
                action: "could not read",
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    Ok(entries
        .flatten()
        .any(|entry| entry.path().extension().is_some_and(|ext| ext == "hcl")))
}

/// The prices costs are shown at: `--prices FILE`'s when given (the flag wins), its warnings
/// told as the configuration's are (`tell`), else the provider's `pricing` block's, whose
/// warnings the configuration's load told; `None`: no costs are shown.
pub fn prices(
    file: Option<&Path>,
    provider: Option<&Provider>,
    tell: &dyn Tell,
) -> Result<Option<PriceList>, CliError> {
    let Some(file) = file else {
        return Ok(provider.and_then(|provider| provider.pricing.clone()));
    };
    let loaded = clusterform_config::load_prices(file).map_err(CliError::Diagnostics)?;
    for warning in &loaded.warnings {
        tell.configuration_warning(warning);
    }
    Ok(Some(loaded.prices))
}

/// `--var`, `--var-file` and `CLUSTERFORM_VAR_*`.
pub fn variable_inputs(variables: &Variables) -> Result<VariableInputs, CliError> {
    Ok(VariableInputs {
        cli: variables.pairs.clone(),
        files: variables.files.clone(),
        env: environment::configuration_variables()?,
        ..VariableInputs::default()
    })
}

/// A client for the API, and the local emulator behind it when the endpoint is `local`.
#[derive(Debug)]
pub struct Connection {
    /// The API client.
    pub client: ApiClient,
    /// Where its requests go, as a saved plan records it (see [`plan_endpoint`]).
    pub endpoint: PlanEndpoint,
    /// The in-process emulator when the endpoint is `local`: held so it serves for as long as
    /// the client is used, and stops when the connection is dropped.
    _local_emulator: Option<LocalEmulator>,
    /// Where the journal is kept when the provider's `lock "gcs"` block puts it on Cloud
    /// Storage: a client on the bucket and the object `{prefix}/{stack}.journal.json`.
    remote_journal: Option<(StorageClient, String)>,
    /// Where the applied record is kept then: beside the journal, `{prefix}/{stack}.applied.json`.
    remote_applied: Option<(StorageClient, String)>,
    /// How preflight reaches its APIs.
    preflight: PreflightSetup,
}

/// The endpoints of preflight's APIs (checked) and the credentials to send them: the client is
/// built only when a plan needs a read, so a plan that creates nothing pays nothing for it.
#[derive(Clone)]
pub struct PreflightSetup {
    endpoints: BTreeMap<PreflightApi, String>,
    tokens: Arc<dyn TokenSource>,
}

impl std::fmt::Debug for PreflightSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreflightSetup")
            .field("endpoints", &self.endpoints)
            .finish_non_exhaustive()
    }
}

impl PreflightSetup {
    /// A client for the reads; its endpoints were checked when the setup was made.
    pub fn client(&self) -> Result<PreflightClient, PreflightEndpointError> {
        PreflightClient::new(
            &self.endpoints,
            preflight_client_options(),
            self.tokens.clone(),
        )
    }
}

/// A read of preflight gives up sooner than a cluster call: a check that cannot run is a
/// warning, and must not hold a plan for minutes.
fn preflight_client_options() -> ClientOptions {
    ClientOptions {
        request_timeout: Duration::from_secs(20),
        retry: RetryPolicy {
            max_attempts: 3,
            max_elapsed: Duration::from_secs(30),
            ..RetryPolicy::default()
        },
        ..client_options(None)
    }
}

impl Connection {
    /// The journal's object on Cloud Storage; `None`: the local `.clusterform/journal.json`.
    pub fn remote_journal(&self) -> Option<(StorageClient, String)> {
        self.remote_journal.clone()
    }

    /// The applied record's object on Cloud Storage, beside the journal's; `None`: the local
    /// `.clusterform/applied.json`.
    pub fn remote_applied(&self) -> Option<(StorageClient, String)> {
        self.remote_applied.clone()
    }

    /// How preflight reaches its APIs.
    pub fn preflight(&self) -> &PreflightSetup {
        &self.preflight
    }
}

/// Endpoint precedence: `endpoint` (`--endpoint` / `CLUSTERFORM_ENDPOINT`) > the provider's
/// `endpoint` > the regional Google endpoint. `local` starts the built-in emulator; no credentials are
/// looked up for it. `provider` is the configuration's, when the command loaded one.
///
/// A stack named after the directory may only own clusters of the built-in emulator: the
/// configuration allows it with `endpoint = "local"` alone, and overriding the endpoint must
/// not let two directories of the same name own each other's clusters somewhere real.
pub async fn connect(
    endpoint: Option<&Endpoint>,
    provider: Option<&Provider>,
    dir: &Path,
    tell: &(impl Tell + ?Sized),
) -> Result<Connection, CliError> {
    let mut notes = Vec::new();
    let connection = connect_noting(endpoint, provider, dir, &mut notes).await;
    for note in &notes {
        tell.tell(note);
    }
    connection
}

/// The endpoint by [`connect`]'s precedence as a saved plan records it: `local`, the base URL
/// given, or `google` for the regional Google endpoints.
pub fn plan_endpoint(endpoint: Option<&Endpoint>, provider: Option<&Provider>) -> PlanEndpoint {
    PlanEndpoint::of(resolved_endpoint(endpoint, provider))
}

/// The endpoint by [`connect`]'s precedence, `None` for the regional Google endpoint.
fn resolved_endpoint<'a>(
    endpoint: Option<&'a Endpoint>,
    provider: Option<&'a Provider>,
) -> Option<&'a Endpoint> {
    endpoint.or(provider.and_then(|p| p.endpoint.as_ref()))
}

/// [`connect`] without printing: the warnings it would print (where the token came from) are
/// added to `notes`, even when it then fails, for the caller to print in its order.
pub async fn connect_noting(
    endpoint: Option<&Endpoint>,
    provider: Option<&Provider>,
    dir: &Path,
    notes: &mut Vec<Note>,
) -> Result<Connection, CliError> {
    let label = plan_endpoint(endpoint, provider);
    let endpoint = resolved_endpoint(endpoint, provider);
    if let Some(provider) = provider {
        check_stack_fits_endpoint(provider, endpoint)?;
    }
    let api_endpoint = endpoint;
    let (endpoint, tokens, local): (Option<String>, Arc<dyn TokenSource>, _) = match endpoint {
        Some(Endpoint::Local) => {
            let local = LocalEmulator::start(dir).await?;
            let tokens: Arc<dyn TokenSource> = Arc::new(StaticToken::new(LocalEmulator::TOKEN));
            (Some(local.base_url()), tokens, Some(local))
        }
        other => {
            environment::require_unicode(environment::TOKEN_VARIABLES)?;
            let resolved = clusterform_executor::default_token_source()
                .await
                .map_err(|error| no_token(other, error))?;
            notes.extend(resolved.note.map(Note::Token));
            (
                other.map(|url| url.as_str().to_owned()),
                resolved.source,
                None,
            )
        }
    };
    let remote_state = match provider {
        Some(provider) => remote_state(provider, api_endpoint).await?,
        None => None,
    };
    let remote_journal = remote_state
        .as_ref()
        .map(|(client, objects)| (client.clone(), objects.journal()));
    let remote_applied = remote_state.map(|(client, objects)| (client, objects.applied_record()));
    let configured = provider.map(|p| &p.preflight_endpoints);
    let preflight = PreflightSetup {
        endpoints: preflight_endpoints(configured, local.as_ref())?,
        tokens: tokens.clone(),
    };
    PreflightClient::check_endpoints(&preflight.endpoints)?;
    let client = ApiClient::new(client_options(endpoint), tokens)?;
    Ok(Connection {
        client,
        endpoint: label,
        _local_emulator: local,
        remote_journal,
        remote_applied,
        preflight,
    })
}

/// No credentials found for `endpoint`: one on this machine is an emulator's most likely,
/// which the hint says takes any token. (A token variable set empty or a credentials file that
/// cannot be read is a mistake of its own, said as it is.)
fn no_token(endpoint: Option<&Endpoint>, error: clusterform_executor::AuthError) -> CliError {
    use clusterform_executor::AuthError;
    let none_found = matches!(error, AuthError::Provider(_) | AuthError::Gcloud(_));
    match endpoint {
        Some(Endpoint::Url(url)) if none_found && url.is_loopback() => {
            CliError::NoTokenForLoopback(error)
        }
        _ => CliError::Auth(error),
    }
}

/// Preflight endpoint precedence, for each API: the provider's `preflight_endpoints` block >
/// `CLUSTERFORM_<API>_ENDPOINT` (when not blank) > the in-process emulator when the API
/// endpoint is `local` > Google's endpoint (left out of the map). An API endpoint given as a
/// URL never redirects them: a private API endpoint must not receive other services' calls.
fn preflight_endpoints(
    configured: Option<&BTreeMap<PreflightApi, String>>,
    local: Option<&LocalEmulator>,
) -> Result<BTreeMap<PreflightApi, String>, CliError> {
    let mut endpoints = BTreeMap::new();
    for api in PreflightApi::ALL {
        let from_environment = environment::var(&api.environment_variable())?;
        let chosen = preflight_endpoint(
            configured.and_then(|endpoints| endpoints.get(&api).map(String::as_str)),
            from_environment.as_deref(),
            local.map(|local| local.preflight_endpoint(api)),
        );
        if let Some(endpoint) = chosen {
            endpoints.insert(api, endpoint);
        }
    }
    Ok(endpoints)
}

/// The precedence of [`preflight_endpoints`] for one API: the block's, the environment's (when
/// not blank), the in-process emulator's; `None` for Google's.
fn preflight_endpoint(
    configured: Option<&str>,
    from_environment: Option<&str>,
    local: Option<String>,
) -> Option<String> {
    let from_environment = from_environment.filter(|url| !url.trim().is_empty());
    configured.or(from_environment).map(str::to_owned).or(local)
}

/// The bucket and the stack's objects when the provider keeps the journal and the applied
/// record on Cloud Storage that other machines see. A bucket of the in-process emulator dies
/// with this process, so there both stay in local files, which survive a crash.
async fn remote_state(
    provider: &Provider,
    api_endpoint: Option<&Endpoint>,
) -> Result<Option<(StorageClient, StackObjects)>, CliError> {
    let Some(remote) = &provider.lock else {
        return Ok(None);
    };
    if storage_endpoint_of(remote, api_endpoint)? == StorageEndpoint::InProcess {
        return Ok(None);
    }
    let storage = connect_storage(remote, api_endpoint).await?;
    let objects = StackObjects::new(&remote.prefix, &provider.stack);
    Ok(Some((storage.client, objects)))
}

fn client_options(endpoint: Option<String>) -> ClientOptions {
    ClientOptions {
        endpoint,
        user_agent: format!("clusterform/{}", env!("CARGO_PKG_VERSION")),
        request_timeout: Duration::from_secs(60),
        retry: RetryPolicy::default(),
        max_answer_bytes: clusterform_executor::MAX_ANSWER_BYTES,
        refresh_budget: clusterform_executor::RefreshBudget::default(),
    }
}

/// A client for the bucket of a [`RemoteState`], and the in-process Storage emulator behind
/// it when that is where the state goes.
#[derive(Debug)]
pub struct StorageConnection {
    /// The Cloud Storage client.
    pub client: StorageClient,
    /// The private in-process emulator: no other process sees what it holds.
    local: Option<LocalEmulator>,
}

impl StorageConnection {
    /// Whether the bucket is this process's own in-process emulator.
    pub fn is_private(&self) -> bool {
        self.local.is_some()
    }
}

/// Storage endpoint precedence: the lock block's `endpoint` > `CLUSTERFORM_STORAGE_ENDPOINT` >
/// the in-process emulator when the API endpoint (`api_endpoint`, already resolved) is
/// `local` > Cloud Storage. An API endpoint given as a URL never redirects storage: a private
/// API endpoint must not receive storage calls. The credentials are the API's (none for the
/// in-process emulator).
pub async fn connect_storage(
    remote: &RemoteState,
    api_endpoint: Option<&Endpoint>,
) -> Result<StorageConnection, CliError> {
    let chosen = storage_endpoint_of(remote, api_endpoint)?;
    let (endpoint, tokens, local): (Option<String>, Arc<dyn TokenSource>, _) = match chosen {
        StorageEndpoint::InProcess => {
            let local = LocalEmulator::start_storage().await?;
            let tokens: Arc<dyn TokenSource> = Arc::new(StaticToken::new(LocalEmulator::TOKEN));
            (Some(local.base_url()), tokens, Some(local))
        }
        StorageEndpoint::Url(url) => storage_credentials(Some(url)).await?,
        StorageEndpoint::CloudStorage => storage_credentials(None).await?,
    };
    // The client serves the lock and the journal alike; what can fail here is the `lock`
    // block's bucket itself, which the lock's hint names.
    let client = StorageClient::new(&remote.bucket, client_options(endpoint), tokens)
        .map_err(|error| StateError::LockStorage(Box::new(error)))?;
    Ok(StorageConnection { client, local })
}

/// Where the storage calls of `remote` go, by [`storage_endpoint`]'s precedence.
fn storage_endpoint_of(
    remote: &RemoteState,
    api_endpoint: Option<&Endpoint>,
) -> Result<StorageEndpoint, CliError> {
    let from_environment = environment::var(STORAGE_ENDPOINT_VARIABLE)?;
    Ok(storage_endpoint(
        remote.endpoint.as_ref().map(EndpointUrl::as_str),
        from_environment.as_deref(),
        api_endpoint,
    ))
}

/// Where storage calls go.
#[derive(Debug, PartialEq, Eq)]
enum StorageEndpoint {
    /// This base URL.
    Url(String),
    /// An emulator in this process.
    InProcess,
    /// Cloud Storage itself.
    CloudStorage,
}

/// The precedence of [`connect_storage`]: the lock block's endpoint, the environment's (when
/// not blank), the in-process emulator when the API is `local`, Cloud Storage.
fn storage_endpoint(
    configured: Option<&str>,
    from_environment: Option<&str>,
    api_endpoint: Option<&Endpoint>,
) -> StorageEndpoint {
    let from_environment = from_environment.filter(|url| !url.trim().is_empty());
    match (configured.or(from_environment), api_endpoint) {
        (Some(url), _) => StorageEndpoint::Url(url.to_owned()),
        (None, Some(Endpoint::Local)) => StorageEndpoint::InProcess,
        (None, _) => StorageEndpoint::CloudStorage,
    }
}

/// What a storage endpoint other than the in-process emulator needs: the API's credentials.
type RemoteStorage = (Option<String>, Arc<dyn TokenSource>, Option<LocalEmulator>);

async fn storage_credentials(endpoint: Option<String>) -> Result<RemoteStorage, CliError> {
    environment::require_unicode(environment::TOKEN_VARIABLES)?;
    let resolved = clusterform_executor::default_token_source().await?;
    Ok((endpoint, resolved.source, None))
}

/// Refuses a directory-name stack anywhere but the built-in emulator.
fn check_stack_fits_endpoint(
    provider: &Provider,
    endpoint: Option<&Endpoint>,
) -> Result<(), CliError> {
    match (provider.stack_origin, endpoint) {
        (StackOrigin::Explicit, _) | (StackOrigin::DirectoryName, Some(Endpoint::Local)) => Ok(()),
        (StackOrigin::DirectoryName, other) => Err(CliError::DirectoryNameStack {
            stack: provider.stack.clone(),
            endpoint: other.map_or_else(
                || "the Google API".to_owned(),
                |url| clusterform_executor::redact_endpoint(url.as_str()),
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_credentials_for_an_endpoint_on_this_machine_hint_at_any_token() {
        let missing = || clusterform_executor::AuthError::Provider("none".to_owned());
        let at = |text: &str| text.parse::<Endpoint>().unwrap();
        let emulator = no_token(Some(&at("http://127.0.0.1:8089")), missing());
        assert!(
            emulator
                .hint()
                .is_some_and(|hint| hint.contains("CLUSTERFORM_ACCESS_TOKEN=anything")),
            "{emulator:?}"
        );
        assert!(
            emulator
                .to_string()
                .starts_with("no Google credentials found")
        );
        for elsewhere in [
            Some(at("https://europe-west4-aiplatform.googleapis.com")),
            None,
        ] {
            let google = no_token(elsewhere.as_ref(), missing());
            assert!(matches!(google, CliError::Auth(_)), "{google:?}");
        }
    }

    #[test]
    fn a_directory_with_hcl_files_has_configuration() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!has_configuration(&dir.path().join("absent")).unwrap());
        std::fs::write(dir.path().join("notes.txt"), "").unwrap();
        assert!(!has_configuration(dir.path()).unwrap());
        std::fs::write(dir.path().join("main.hcl"), "").unwrap();
        assert!(has_configuration(dir.path()).unwrap());
    }

    #[test]
    fn the_storage_endpoint_follows_its_precedence() {
        let url = |u: &str| StorageEndpoint::Url(u.to_owned());
        let (block, env) = ("https://block.example", "http://127.0.0.1:1");
        let local = Some(&Endpoint::Local);
        let api_url: Endpoint = "http://127.0.0.1:8089".parse().unwrap();
        assert_eq!(storage_endpoint(Some(block), Some(env), local), url(block));
        assert_eq!(storage_endpoint(None, Some(env), local), url(env));
        assert_eq!(
            storage_endpoint(None, Some(" "), local),
            StorageEndpoint::InProcess
        );
        assert_eq!(
            storage_endpoint(None, None, Some(&api_url)),
            StorageEndpoint::CloudStorage,
            "an API endpoint never redirects storage"
        );
        assert_eq!(
            storage_endpoint(None, None, None),
            StorageEndpoint::CloudStorage
        );
    }

    #[test]
    fn a_preflight_endpoint_follows_its_precedence() {
        let local = || Some("http://127.0.0.1:1/serviceusage".to_owned());
        let (block, env) = ("https://block.example", "http://127.0.0.1:2");
        assert_eq!(
            preflight_endpoint(Some(block), Some(env), local()).as_deref(),
            Some(block)
        );
        assert_eq!(
            preflight_endpoint(None, Some(env), local()).as_deref(),
            Some(env)
        );
        assert_eq!(preflight_endpoint(None, Some(" "), local()), local());
        assert_eq!(
            preflight_endpoint(None, None, None),
            None,
            "Google's endpoint: the API's never stands in"
        );
    }

    #[test]
    fn a_refused_endpoint_is_named_without_its_credentials() {
        let provider = Provider {
            stack: "infra".into(),
            stack_origin: StackOrigin::DirectoryName,
            ..Provider::default()
        };
        let endpoint: Endpoint = "https://me:hunter2@api.example".parse().unwrap();
        let error = check_stack_fits_endpoint(&provider, Some(&endpoint))
            .unwrap_err()
            .to_string();
        assert!(!error.contains("hunter2"), "{error}");
        assert!(error.contains("api.example"), "{error}");
    }
}
