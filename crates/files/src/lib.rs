//! clusterform-files: the one way clusterform replaces a file. A write goes to a temporary file
//! in the same directory, is flushed to disk, renamed over the target and the rename itself is
//! made durable by syncing the directory, so a crash at any moment leaves either the old file
//! or the new one, never half of one. Saved plans, the journal, `fmt` and `import --out` all
//! write through [`write_atomic`], and the journal is removed with [`remove_durably`]. (The emulator keeps its own copy: it depends on no crate of
//! ours.)

use std::fs::{File, Permissions};
use std::io::{self, Write as _};
use std::path::Path;

/// Who may read the file written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Only its owner (0600), whatever the umask: plans and the journal may hold secrets.
    Private,
    /// As the file it replaces; a new file is readable by everyone (0644), as an editor would
    /// create it. For the user's own configuration files.
    LikeExisting,
}

/// Replaces `path` with `bytes` atomically and durably.
///
/// # Errors
///
/// When the directory cannot hold a temporary file, the write or a sync fails, or the rename
/// fails; the target is then untouched and the temporary file removed.
pub fn write_atomic(path: &Path, bytes: &[u8], access: Access) -> io::Result<()> {
    let directory = directory_of(path);
    let permissions = permissions_for(path, access)?;
    let mut temporary = tempfile::NamedTempFile::new_in(directory)?;
    temporary.write_all(bytes)?;
    if let Some(permissions) = permissions {
        temporary.as_file().set_permissions(permissions)?;
    }
    temporary.as_file().sync_all()?;
    temporary.persist(path).map_err(|error| error.error)?;
    File::open(directory)?.sync_all()
}

/// Removes `path` and makes the removal durable (syncs its directory), so that a crash right
/// after cannot bring the file back.
///
/// # Errors
///
/// As [`std::fs::remove_file`] (a missing file is `NotFound`), or when the sync fails.
pub fn remove_durably(path: &Path) -> io::Result<()> {
    std::fs::remove_file(path)?;
    File::open(directory_of(path))?.sync_all()
}

fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// The permissions the new file gets (`None`: the platform's default).
fn permissions_for(path: &Path, access: Access) -> io::Result<Option<Permissions>> {
    match access {
        Access::Private => Ok(mode(0o600)),
        Access::LikeExisting => match std::fs::metadata(path) {
            Ok(existing) => Ok(Some(existing.permissions())),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(mode(0o644)),
            Err(error) => Err(error),
        },
    }
}

#[cfg(unix)]
fn mode(bits: u32) -> Option<Permissions> {
    use std::os::unix::fs::PermissionsExt as _;
    Some(Permissions::from_mode(bits))
}

#[cfg(not(unix))]
fn mode(_bits: u32) -> Option<Permissions> {
    None
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn private_files_are_0600_and_replace_the_old_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, Permissions::from_mode(0o666)).unwrap();
        write_atomic(&path, b"new", Access::Private).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(mode_of(&path), 0o600);
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }

    #[test]
    fn user_files_keep_their_permissions_and_new_ones_are_0644() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("main.hcl");
        std::fs::write(&kept, "a = 1").unwrap();
        std::fs::set_permissions(&kept, Permissions::from_mode(0o640)).unwrap();
        write_atomic(&kept, b"a = 2\n", Access::LikeExisting).unwrap();
        assert_eq!(mode_of(&kept), 0o640);
        let new = dir.path().join("imported.hcl");
        write_atomic(&new, b"x", Access::LikeExisting).unwrap();
        assert_eq!(mode_of(&new), 0o644);
    }

    #[test]
    fn removal_reports_a_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.json");
        std::fs::write(&path, "{}").unwrap();
        remove_durably(&path).unwrap();
        assert!(!path.exists());
        let again = remove_durably(&path).unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_failed_write_leaves_the_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-dir").join("file");
        assert!(write_atomic(&missing, b"x", Access::Private).is_err());
        assert!(!missing.exists());
    }
}
