//! Who holds a lock ([`LockInfo`]): the record a run writes into the local lock file or the
//! lock object, and that a refused run shows.

use std::fmt;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Who holds a lock: written by the holder, shown to the runs it refuses. The same record can
/// describe a remote lock (an object in a bucket) as well as the local file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockInfo {
    /// A random ID of this acquisition (UUID form), to tell two holders apart.
    pub id: String,
    /// `user@host` of the process that holds the lock.
    pub who: String,
    /// Its process ID, on `host`.
    pub pid: u32,
    /// The command it runs: `apply`, `destroy`, `import`.
    pub command: String,
    /// When it took the lock, RFC 3339 in UTC.
    pub created: String,
    /// The version of the tool that took it.
    pub version: String,
}

impl LockInfo {
    /// The record of this process running `command`, with a fresh random ID and the time now.
    pub fn for_this_process(command: &str, version: &str) -> Self {
        let now = OffsetDateTime::now_utc()
            .replace_nanosecond(0)
            .unwrap_or_else(|_| OffsetDateTime::now_utc());
        Self {
            id: random_lock_id(),
            who: format!("{}@{}", user_name(), host_name()),
            pid: std::process::id(),
            command: command.to_owned(),
            created: now.format(&Rfc3339).unwrap_or_default(),
            version: version.to_owned(),
        }
    }
}

/// `alice@laptop (pid 4242) running `apply` since 2026-11-30T22:00:00Z (lock ID …)`.
impl fmt::Display for LockInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (pid {}) running `{}` since {} (lock ID {})",
            self.who, self.pid, self.command, self.created, self.id
        )
    }
}

/// 128 random bits in the UUID version 4 form, as lock IDs usually are.
fn random_lock_id() -> String {
    let mut bytes: [u8; 16] = rand::random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The login name, from the environment (`USER` on Unix, `USERNAME` on Windows), else the
/// operating system's account of this process (as `id -un` names it: CI runners and
/// containers often run without `USER`).
fn user_name() -> String {
    ["USER", "USERNAME", "LOGNAME"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
        .or_else(account_name)
        .unwrap_or_else(|| "unknown".to_owned())
}

#[cfg(unix)]
fn account_name() -> Option<String> {
    let uid = nix::unistd::getuid();
    nix::unistd::User::from_uid(uid)
        .ok()
        .flatten()
        .map(|user| user.name)
        .or_else(|| Some(format!("uid {uid}")))
}

#[cfg(not(unix))]
fn account_name() -> Option<String> {
    None
}

/// The host name: `HOSTNAME` when exported, else what the kernel says.
fn host_name() -> String {
    let from_file = |path: &str| std::fs::read_to_string(path).ok();
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| from_file("/proc/sys/kernel/hostname"))
        .or_else(|| from_file("/etc/hostname"))
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_account_is_named_without_user_in_the_environment() {
        let name = account_name().unwrap();
        assert!(!name.is_empty() && name != "unknown", "{name}");
    }

    #[test]
    fn lock_ids_are_random_uuids() {
        let (one, two) = (random_lock_id(), random_lock_id());
        assert_ne!(one, two);
        assert_eq!(one.len(), 36);
        assert_eq!(one.as_bytes()[14], b'4', "{one}");
    }
}
