//! clusterform-files: the one way clusterform replaces a file. A write goes to a temporary file
//! in the same directory, is flushed to disk, renamed over the target and the rename itself is
//! made durable by syncing the directory, so a crash at any moment leaves either the old file
//! or the new one, never half of one. Saved plans, the journal, `fmt` and `import --out` all
//! write through [`write_atomic`], and the journal is removed with [`remove_durably`]. A file
//! clusterform reads that anyone may have replaced (configuration, state files, saved plans)
//! is read with [`read_capped`]: regular files only, checked before opening, at most a limit.
//! (The emulator keeps its own copy: it depends on no crate of ours.)

use std::fs::{File, Permissions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

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

/// Why a file could not be read by [`read_capped`].
#[derive(Debug)]
pub enum ReadError {
    /// Not a regular file (after following symlinks): its kind.
    NotRegular(&'static str),
    /// Longer than the limit.
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// A symbolic link to this path, which does not exist.
    BrokenLink(PathBuf),
    /// Reading failed.
    Io(io::Error),
}

impl std::error::Error for ReadError {}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotRegular(kind) => write!(f, "it is {kind}, not a regular file"),
            Self::TooLarge { limit } => write!(f, "it is too large (more than {limit} bytes)"),
            Self::BrokenLink(target) => write!(
                f,
                "it is a symbolic link to `{}`, which does not exist",
                target.display()
            ),
            Self::Io(error) => write!(f, "{error}"),
        }
    }
}

/// The bytes of the regular file at `path`, at most `limit` of them. Special files are refused
/// before they are opened (opening a FIFO waits for a writer), and the size is checked on the
/// bytes read, not the size the file system reports (`/dev/zero` and `/proc` files report 0).
pub fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    let kind = std::fs::metadata(path)
        .map_err(|error| broken_link(path, error))?
        .file_type();
    if !kind.is_file() {
        return Err(ReadError::NotRegular(describe(kind)));
    }
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|file| file.take(limit + 1).read_to_end(&mut bytes))
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

/// The error of a file whose metadata cannot be read: a link whose target is missing says
/// so (the system's "No such file or directory" for a name that is listed reads as a bug).
fn broken_link(path: &Path, error: io::Error) -> ReadError {
    match std::fs::read_link(path) {
        Ok(target) if error.kind() == io::ErrorKind::NotFound => ReadError::BrokenLink(target),
        _ => ReadError::Io(error),
    }
}

fn describe(kind: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}
