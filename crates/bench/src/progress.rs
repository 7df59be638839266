//! Progress lines on stderr: stdout carries only the table.

use std::io::Write;

/// Writes one progress line to stderr. A failed write is ignored: progress is a courtesy,
/// and the run's result does not depend on it.
pub fn progress(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "clusterform-bench: {line}");
}
