//! `.clusterform/`, the directory in a configuration directory where clusterform keeps its
//! files (the run lock, the journal, the record of applied changes, the local emulator's
//! state). [`StateDir`] is the one place
//! that names the directory and its files: everyone else asks it for paths. The files name
//! operations and clusters and may hold request bodies, so the directory is made readable by
//! its owner only (0700) and every file in it is created 0600, whatever the umask.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// The most clusterform reads of the journal or the applied record: far more than ten thousand
/// clusters' entries, far less than what a link to `/dev/zero` would hand over.
pub(crate) const MAX_STATE_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The state directory of one configuration directory, and the names of its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    path: PathBuf,
}

impl StateDir {
    /// The directory's name, under the configuration directory.
    pub const NAME: &'static str = ".clusterform";

    /// The state directory of `config_dir` (`CONFIG_DIR/.clusterform`); nothing is created.
    pub fn of(config_dir: &Path) -> Self {
        Self {
            path: config_dir.join(Self::NAME),
        }
    }

    /// The directory itself.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The run lock ([`crate::RunLock`]).
    pub fn lock_file(&self) -> PathBuf {
        self.path.join("lock")
    }

    /// The journal of operations in flight ([`crate::Journal`]).
    pub fn journal_file(&self) -> PathBuf {
        self.path.join("journal.json")
    }

    /// The record of what clusterform last applied to each cluster ([`crate::AppliedRecord`]),
    /// beside the journal.
    pub fn applied_file(&self) -> PathBuf {
        self.path.join("applied.json")
    }

    /// The clusters of the built-in emulator (`endpoint = "local"`).
    pub fn emulator_state_file(&self) -> PathBuf {
        self.path.join("emulator.json")
    }

    /// Creates the directory if needed and makes it private to its owner (also when an
    /// earlier version or a loose umask left it open).
    ///
    /// # Errors
    ///
    /// When the directory cannot be created or its permissions cannot be set.
    pub fn create(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.path)?;
        make_private(&self.path, 0o700)
    }
}

/// Opens `path` for writing, creating it 0600 if needed (and making an existing file 0600),
/// without truncating it.
pub(crate) fn open_private_file(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    make_private(path, 0o600)?;
    Ok(file)
}

/// Sets `mode` unless the permissions already are exactly that.
#[cfg(unix)]
fn make_private(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;

    let current = std::fs::metadata(path)?.permissions().mode() & 0o777;
    if current == mode {
        return Ok(());
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Other systems have no owner-only mode bits to set.
#[cfg(not(unix))]
fn make_private(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_is_named_inside_the_directory() {
        let state = StateDir::of(Path::new("/configs/fleet"));
        assert_eq!(state.path(), Path::new("/configs/fleet/.clusterform"));
        for file in [
            state.lock_file(),
            state.journal_file(),
            state.applied_file(),
            state.emulator_state_file(),
        ] {
            assert_eq!(file.parent(), Some(state.path()));
        }
    }
}

#[cfg(all(test, unix))]
mod unix_tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    /// A state directory some earlier run (or a loose umask) left open to everyone.
    fn open_state_dir(config: &Path) -> StateDir {
        let state = StateDir::of(config);
        std::fs::create_dir(state.path()).unwrap();
        std::fs::set_permissions(state.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        state
    }

    #[test]
    fn an_open_state_directory_and_file_are_made_private() {
        let config = tempfile::tempdir().unwrap();
        let state = open_state_dir(config.path());
        state.create().unwrap();
        assert_eq!(mode(state.path()), 0o700);

        let file = state.lock_file();
        std::fs::write(&file, "").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        open_private_file(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
    }

    #[tokio::test]
    async fn the_journal_is_written_private() {
        use clusterform_model::Action;
        use clusterform_model::ClusterName;
        use clusterform_model::rest::RequestKind;

        let config = tempfile::tempdir().unwrap();
        let state = open_state_dir(config.path());
        let journal = crate::Journal::open(config.path()).unwrap();
        journal
            .record(crate::JournalEntry {
                address: ClusterName::new("proj-one", "us-central1", "a").unwrap(),
                action: Action::Create,
                request: RequestKind::Create,
                operation: "projects/123/locations/us-central1/operations/1".into(),
                started_at: "2026-11-10T12:00:00Z".into(),
                timeout_seconds: 60,
                attempt: None,
            })
            .await
            .unwrap();
        assert_eq!(mode(state.path()), 0o700);
        assert_eq!(
            journal.location(),
            &crate::DocumentLocation::File(state.journal_file())
        );
        assert_eq!(mode(&state.journal_file()), 0o600);
    }
}
