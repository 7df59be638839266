//! The configuration's digest: what a saved plan compares to tell whether it was made from
//! the configuration it is applied with.

use std::collections::BTreeMap;

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
    hex(hasher)
}

/// SHA-256 of each file's text, by its name relative to the configuration directory (`/`
/// between directories): a saved plan keeps them to name the files that changed since.
pub(super) fn file_digests(files: &[SourceFile]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|file| {
            let name = file
                .path
                .components()
                .map(|part| part.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            let mut hasher = Sha256::new();
            hasher.update(file.text.as_bytes());
            (name, hex(hasher))
        })
        .collect()
}

fn hex(hasher: Sha256) -> String {
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}
