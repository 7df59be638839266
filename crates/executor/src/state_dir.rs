//! `.clusterform/`, the directory in a configuration directory where clusterform keeps its
//! files (the run lock, the journal, the local emulator's state). They name operations and
//! clusters and may hold request bodies, so the directory is made readable by its owner only
//! (0700) and every file in it is created 0600, whatever the umask.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// The directory's name, under the configuration directory.
pub const STATE_DIR: &str = ".clusterform";

/// Creates `CONFIG_DIR/.clusterform` if needed, makes it private to its owner (also when an
/// earlier version or a loose umask left it open) and returns its path.
pub fn create_state_dir(config_dir: &Path) -> std::io::Result<PathBuf> {
    let dir = config_dir.join(STATE_DIR);
    std::fs::create_dir_all(&dir)?;
    make_private(&dir, 0o700)?;
    Ok(dir)
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

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn an_open_state_directory_and_file_are_made_private() {
        let config = tempfile::tempdir().unwrap();
        let open = config.path().join(STATE_DIR);
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let dir = create_state_dir(config.path()).unwrap();
        assert_eq!(dir, open);
        assert_eq!(mode(&dir), 0o700);

        let file = dir.join("lock");
        std::fs::write(&file, "").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        open_private_file(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
    }

    #[test]
    fn the_journal_is_written_private() {
        use clusterform_model::ClusterName;
        use clusterform_model::rest::RequestKind;
        use clusterform_planner::Action;

        let config = tempfile::tempdir().unwrap();
        let open = config.path().join(STATE_DIR);
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let journal = crate::Journal::open(config.path()).unwrap();
        journal
            .record(crate::JournalEntry {
                address: ClusterName {
                    project: "proj-one".into(),
                    location: "us-central1".into(),
                    cluster_id: "a".into(),
                },
                action: Action::Create,
                request: RequestKind::Create,
                operation: "projects/123/locations/us-central1/operations/1".into(),
                started_at: "2026-11-10T12:00:00Z".into(),
                timeout_seconds: 60,
            })
            .unwrap();
        assert_eq!(mode(&open), 0o700);
        assert_eq!(mode(journal.path()), 0o600);
    }
}
