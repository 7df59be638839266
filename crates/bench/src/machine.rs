//! The machine a run measured on: cores, memory, operating system and compiler, read where
//! Linux keeps them. Whatever cannot be read is written as `unknown`.

use std::process::Command;

/// What the report says about the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// Logical CPUs this process may use.
    pub cores: String,
    /// Total memory.
    pub memory: String,
    /// Operating system and kernel.
    pub os: String,
    /// `rustc --version`.
    pub rustc: String,
}

const UNKNOWN: &str = "unknown";

impl Machine {
    /// Reads the machine this process runs on.
    pub fn current() -> Self {
        Self {
            cores: std::thread::available_parallelism()
                .map_or_else(|_| UNKNOWN.to_owned(), |n| n.to_string()),
            memory: std::fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|text| memory_of(&text))
                .unwrap_or_else(|| UNKNOWN.to_owned()),
            os: os_name(),
            rustc: Command::new("rustc")
                .arg("--version")
                .output()
                .ok()
                .filter(|output| output.status.success())
                .map_or_else(
                    || UNKNOWN.to_owned(),
                    |output| String::from_utf8_lossy(&output.stdout).trim().to_owned(),
                ),
        }
    }
}

fn os_name() -> String {
    let distribution = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| pretty_name_of(&text));
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|text| format!("Linux {}", text.trim()));
    match (distribution, kernel) {
        (Some(distribution), Some(kernel)) => format!("{distribution}, {kernel}"),
        (Some(one), None) | (None, Some(one)) => one,
        (None, None) => std::env::consts::OS.to_owned(),
    }
}

/// `MemTotal` of /proc/meminfo in GiB.
fn memory_of(meminfo: &str) -> Option<String> {
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(format!("{} GiB", kib.div_ceil(1024 * 1024)))
}

/// `PRETTY_NAME` of /etc/os-release.
fn pretty_name_of(os_release: &str) -> Option<String> {
    let value = os_release
        .lines()
        .find_map(|line| line.strip_prefix("PRETTY_NAME="))?;
    Some(value.trim_matches('"').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_read_from_meminfo_in_gib() {
        let meminfo = "MemTotal:       24598612 kB\nMemFree:         1000 kB\n";
        assert_eq!(memory_of(meminfo).as_deref(), Some("24 GiB"));
        assert_eq!(memory_of("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn the_distribution_is_its_pretty_name() {
        let os_release =
            "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\n";
        assert_eq!(
            pretty_name_of(os_release).as_deref(),
            Some("Debian GNU/Linux 13 (trixie)")
        );
    }
}
