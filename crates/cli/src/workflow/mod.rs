//! The steps that `plan`, `apply` and `destroy` are made of (uv's `commands/pip/operations.rs`),
//! once the configuration is loaded (`context::load_config`): hold the stack lock, connect,
//! settle what earlier runs left in flight, plan, look up the jobs a plan would disrupt,
//! confirm, execute and finish. A command is a short composition of
//! these steps around one [`Run`]: the configuration, the connection, one engine holding the
//! journal opened once, one Ctrl-C listener, and the command's view, chosen once.

mod execution;
mod idle;
mod interrupts;
mod planning;
mod preflight;
mod unread;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clusterform_config::Config;
use clusterform_executor::{AppliedRecord, ApplyEngine, Journal, StorageClient, WaitOptions};
use clusterform_model::Endpoint;

pub use execution::still_working;
pub use idle::Recheck;
pub use planning::{Planned, refresh_live, target_names};
pub use unread::{KnownClusters, complete_view, fully_read, report_unread};

use self::interrupts::Interrupts;
use crate::arguments::Parallelism;
use crate::context::{self, Connection};
use crate::error::CliError;
use crate::printer::{Printer, Tell};
use crate::stack_lock::{self, LockRequest};
use crate::views::PlanView;

/// Runs `body` with `config` while holding the stack lock `request` and `config`'s provider
/// name, released whatever the outcome; waiting for the lock, or failing to release it, is
/// told through `tell` (the command's view).
pub async fn locked<T>(
    config: Config,
    request: LockRequest<'_>,
    tell: &dyn Tell,
    body: impl AsyncFnOnce(Config) -> Result<T, CliError>,
) -> Result<T, CliError> {
    // The body takes the configuration; the lock only reads its provider.
    let provider = config.provider.clone();
    stack_lock::with_lock(request, Some(&provider), tell, body(config)).await
}

/// The journal of a run: the Cloud Storage object `remote` names (a client on its bucket and
/// the object, `{prefix}/{stack}.journal.json`) when the configuration keeps the journal there,
/// else `.clusterform/journal.json` in `dir`.
async fn open_journal(
    dir: &Path,
    remote: Option<(StorageClient, String)>,
) -> Result<Journal, CliError> {
    Ok(match remote {
        Some((client, object)) => Journal::open_in_storage(client, object).await?,
        None => Journal::open(dir)?,
    })
}

/// The locations a refresh of `config` lists ([`Config::refresh_locations`]), and every
/// location the applied record or the journal names a cluster in: clusterform always looks
/// where it put a cluster, whatever `regions = [...]` or the service's region list say, so no
/// cluster it created is orphaned.
pub fn scanned_locations(
    config: &Config,
    record: Option<&AppliedRecord>,
    journaled: impl IntoIterator<Item = clusterform_model::ClusterName>,
) -> clusterform_model::RefreshLocations {
    let mut locations = config.refresh_locations();
    let recorded = record.into_iter().flat_map(|record| {
        let entries = record.entries().into_iter().map(|entry| entry.address);
        let marked = record.marks().into_iter().map(|marked| marked.address);
        entries.chain(marked).collect::<Vec<_>>()
    });
    for address in recorded.chain(journaled) {
        locations.add_other(address.location().clone());
    }
    locations
}

/// Where earlier runs put clusters, for a command that only reads (no lock): the applied
/// record and the clusters of the journal's entries. A journal that cannot be read names none
/// (a warning says so: the locations it would name are not scanned for that reason alone).
#[derive(Debug)]
pub struct EarlierRuns {
    /// The applied record (an unreadable one is empty).
    pub record: AppliedRecord,
    /// The clusters the journal holds operations of.
    pub journaled: Vec<clusterform_model::ClusterName>,
}

impl EarlierRuns {
    /// Reads both, beside each other, as a run would find them.
    pub async fn read(dir: &Path, connection: &Connection, printer: &Printer) -> Self {
        let (journal, record) = tokio::join!(
            open_journal(dir, connection.remote_journal()),
            open_applied(dir, connection.remote_applied())
        );
        let journaled = match journal {
            Ok(journal) => journal
                .entries()
                .into_iter()
                .map(|entry| entry.address)
                .collect(),
            Err(error) => {
                printer.warn(&format!(
                    "the journal could not be read ({error}): the locations of its operations are \
                     scanned only if something else names them"
                ));
                Vec::new()
            }
        };
        Self { record, journaled }
    }

    /// The locations `config`'s stack is looked for in ([`scanned_locations`]).
    pub fn scanned(&self, config: &Config) -> clusterform_model::RefreshLocations {
        scanned_locations(config, Some(&self.record), self.journaled.iter().cloned())
    }

    /// The clusters of `config`'s stack known to be somewhere.
    pub fn known(&self, config: &Config) -> KnownClusters {
        KnownClusters::of(config, Some(&self.record), self.journaled.iter().cloned())
    }
}

/// The applied record of a run, beside its journal: the Cloud Storage object `remote` names
/// when the journal is kept there, else `.clusterform/applied.json` in `dir`. It never fails
/// (an unreadable record is an empty one).
pub async fn open_applied(dir: &Path, remote: Option<(StorageClient, String)>) -> AppliedRecord {
    match remote {
        Some((client, object)) => AppliedRecord::open_in_storage(client, object).await,
        None => AppliedRecord::open(dir),
    }
}

/// Who approves a run's changes, and what it may stop without a person to ask.
#[derive(Debug, Clone)]
pub struct Approval {
    /// Nobody is asked: `--auto-approve`, or a saved plan.
    pub unattended: bool,
    /// `--allow-disruption`: unattended, stop running work all the same.
    pub allow_disruption: bool,
    /// The command line that goes ahead all the same, for the refusal's hint.
    pub go_ahead: String,
}

/// One command's run against the API: what it was loaded from, what it talks to, and how it
/// shows itself (`V`, the command's view).
pub struct Run<'v, V: ?Sized> {
    /// The configuration directory.
    dir: PathBuf,
    config: Arc<Config>,
    connection: Connection,
    /// Runs plans, resumes and settles; holds the journal, opened once per run.
    engine: ApplyEngine,
    interrupts: Interrupts,
    view: &'v V,
}

/// How long one `:wait` call blocks: short enough that every cluster's line shows its state
/// and progress message every few seconds, long enough to cost one call per cluster per interval.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(5);

impl<'v, V: PlanView + ?Sized> Run<'v, V> {
    /// Connects for `config` (loaded from `dir`; `endpoint` overrides its provider's) and opens
    /// the run's journal: the Cloud Storage object the provider's `lock "gcs"` block names, else
    /// `.clusterform/journal.json` in `dir`.
    pub async fn connect(
        config: Config,
        dir: &Path,
        endpoint: Option<&Endpoint>,
        parallelism: Parallelism,
        view: &'v V,
    ) -> Result<Self, CliError> {
        let connection = context::connect(endpoint, Some(&config.provider), dir, view).await?;
        // Both are read before anything else is asked of the API; the record, never failing, is
        // read while the journal is.
        let (journal, applied) = tokio::join!(
            open_journal(dir, connection.remote_journal()),
            open_applied(dir, connection.remote_applied())
        );
        let journal = journal?;
        let wait = WaitOptions {
            long_poll: PROGRESS_INTERVAL,
            ..WaitOptions::default()
        };
        let engine = ApplyEngine::new(
            connection.client.clone(),
            journal,
            usize::from(parallelism.global),
        )
        .with_parallelism_per_location(parallelism.per_location.map(usize::from))
        .with_wait_options(wait)
        .with_applied_record(applied);
        Ok(Self {
            dir: dir.to_path_buf(),
            config: Arc::new(config),
            connection,
            engine,
            interrupts: Interrupts::new(),
            view,
        })
    }

    /// The command's view.
    pub fn view(&self) -> &V {
        self.view
    }

    /// The configuration the run was loaded from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Drops the connection as usual (its `Drop` releases the built-in emulator's state-file
    /// lock) but not the configuration, the live clusters and the plan: the process exits next,
    /// and freeing tens of thousands of small allocations only gives memory back to a process
    /// about to end (about 40 ms at 10,000 clusters).
    pub fn leave_to_exit(self, planned: Planned) {
        let Self {
            config, connection, ..
        } = self;
        drop(connection);
        std::mem::forget((config, planned));
    }
}

#[cfg(test)]
mod tests {
    use clusterform_emulator::{Emulator, EmulatorOptions};
    use clusterform_executor::{ClientOptions, DocumentLocation, JournalEntry, StaticToken};
    use clusterform_model::Action;
    use clusterform_model::ClusterName;
    use clusterform_model::rest::RequestKind;

    use super::*;

    const OBJECT: &str = "clusterform/prod/research.journal.json";

    #[tokio::test]
    async fn the_journal_is_the_object_when_one_is_given_else_the_local_file() {
        let emulator = Emulator::new(EmulatorOptions {
            buckets: vec!["team-infra".to_owned()],
            ..EmulatorOptions::default()
        })
        .unwrap();
        let handle = emulator
            .clone()
            .serve("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let client = StorageClient::new(
            "team-infra",
            ClientOptions {
                endpoint: Some(handle.base_url()),
                ..ClientOptions::default()
            },
            Arc::new(StaticToken::new("token")),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();

        let remote = open_journal(dir.path(), Some((client.clone(), OBJECT.to_owned())))
            .await
            .unwrap();
        remote
            .record(JournalEntry {
                address: ClusterName::new("proj-one", "us-central1", "train01").unwrap(),
                action: Action::Create,
                request: RequestKind::Create,
                operation: "projects/1/locations/us-central1/operations/7".into(),
                started_at: "2026-11-10T12:00:00Z".into(),
                timeout_seconds: 60,
                attempt: None,
            })
            .await
            .unwrap();
        assert!(emulator.object("team-infra", OBJECT).is_some());
        let reopened = open_journal(dir.path(), Some((client, OBJECT.to_owned())))
            .await
            .unwrap();
        assert_eq!(reopened.entries().len(), 1);

        let local = open_journal(dir.path(), None).await.unwrap();
        assert!(local.is_empty());
        assert_eq!(
            local.location(),
            &DocumentLocation::File(Journal::path_in(dir.path()))
        );
    }
}
