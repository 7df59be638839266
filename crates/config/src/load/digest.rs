//! The configuration's digest: what a saved plan compares to tell whether it was made from
//! the configuration it is applied with.

use hcl::Value;
use sha2::{Digest, Sha256};

use crate::diagnostic::SourceFile;

/// SHA-256 over every file's name and text and every variable value.
pub(super) fn digest(files: &[SourceFile], values: &hcl::Map<String, Value>) -> String {
    let mut hasher = Sha256::new();
    for file in files {
        hasher.update(file.path.to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update(file.text.as_bytes());
        hasher.update([0]);
    }
    let mut names: Vec<&String> = values.keys().collect();
    names.sort();
    for name in names {
        hasher.update(format!("{name}={}\0", values[name]).as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}
