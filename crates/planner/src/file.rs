//! Saved plan files (`plan --out FILE`): the JSON plan document, written atomically (a temporary
//! file in the same directory, then a rename) with mode 0600 because request bodies and the
//! recorded variable values may carry values from sensitive variables; and read back with a
//! check of the format version, of the fields applying it relies on (an absolute directory,
//! variable values by name) and of a destroy plan holding only deletions.

use std::fs;
use std::path::{Path, PathBuf};

use clusterform_files::{Access, write_atomic};
use clusterform_model::Action;
use serde_json::Value;

use crate::document::plan_document;
use crate::plan::{PLAN_FORMAT_VERSION, Plan};

/// Why a plan file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum PlanFileError {
    /// The file system refused.
    #[error("cannot {action} plan file {}: {source}", path.display())]
    Io {
        /// `write` or `read`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{} is not a plan file: not JSON ({source})", path.display())]
    NotJson {
        /// The file.
        path: PathBuf,
        /// The parser's explanation, with line and column.
        #[source]
        source: serde_json::Error,
    },
    /// The file is JSON but has no `format_version`.
    #[error("{} is not a clusterform plan file: it has no `format_version`", path.display())]
    NotAPlan {
        /// The file.
        path: PathBuf,
    },
    /// The file was written by another version of clusterform.
    #[error(
        "{} has plan format version {found}, but this clusterform reads version {supported}; make the plan again with this version",
        path.display()
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: String,
        /// [`PLAN_FORMAT_VERSION`].
        supported: u32,
    },
    /// The file has the right version but not the right shape.
    #[error("{} is a damaged plan file: {source}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What does not fit.
        #[source]
        source: serde_json::Error,
    },
    /// The file has the right shape, but a field applying it relies on does not hold up.
    #[error("{} is a damaged plan file: {problem}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Which field, and what is wrong with it.
        problem: String,
    },
}

/// Writes the plan document to `path` atomically, readable only by its owner.
pub fn save_plan(plan: &Plan, path: &Path) -> Result<(), PlanFileError> {
    let io_error = |source| PlanFileError::Io {
        action: "write",
        path: path.to_owned(),
        source,
    };
    let mut text = serde_json::to_string_pretty(&plan_document(plan)).unwrap_or_default();
    text.push('\n');
    write_atomic(path, text.as_bytes(), Access::Private).map_err(io_error)
}

/// Reads a plan file, checking its format version before its shape.
pub fn load_plan(path: &Path) -> Result<Plan, PlanFileError> {
    let text = fs::read_to_string(path).map_err(|source| PlanFileError::Io {
        action: "read",
        path: path.to_owned(),
        source,
    })?;
    let document: Value = serde_json::from_str(&text).map_err(|source| PlanFileError::NotJson {
        path: path.to_owned(),
        source,
    })?;
    let version = document
        .get("format_version")
        .ok_or_else(|| PlanFileError::NotAPlan {
            path: path.to_owned(),
        })?;
    if version.as_u64() != Some(u64::from(PLAN_FORMAT_VERSION)) {
        return Err(PlanFileError::UnsupportedVersion {
            path: path.to_owned(),
            found: version.to_string(),
            supported: PLAN_FORMAT_VERSION,
        });
    }
    let invalid = |problem: String| PlanFileError::Invalid {
        path: path.to_owned(),
        problem,
    };
    check_recorded_fields(&document).map_err(invalid)?;
    let plan: Plan =
        serde_json::from_value(document).map_err(|source| PlanFileError::Malformed {
            path: path.to_owned(),
            source,
        })?;
    check_destroy_only_deletes(&plan).map_err(invalid)?;
    check_idle_only_destroys(&plan).map_err(invalid)?;
    Ok(plan)
}

/// `directory` must be an absolute path (applying loads the configuration from it, whatever
/// the working directory) and `variables` an object of values by name. Their content is
/// checked when the plan is applied: the configuration loaded from them must have the
/// recorded digest.
fn check_recorded_fields(document: &Value) -> Result<(), String> {
    match document.get("directory") {
        Some(Value::String(directory)) if Path::new(directory).is_absolute() => {}
        Some(Value::String(directory)) => {
            return Err(format!(
                "`directory` must be an absolute path, found `{directory}`"
            ));
        }
        _ => return Err("`directory` must be a string, the configuration directory".to_owned()),
    }
    match document.get("variables") {
        Some(Value::Object(_)) => Ok(()),
        _ => Err("`variables` must be an object of variable values by name".to_owned()),
    }
}

/// Only a destroy plan can be an idle one, with a threshold of at least a second.
fn check_idle_only_destroys(plan: &Plan) -> Result<(), String> {
    match plan.flags.idle_for {
        Some(_) if !plan.flags.destroy => {
            Err("`flags.idle_for_seconds` is set, but `flags.destroy` is false; only a destroy plan deletes idle clusters".to_owned())
        }
        Some(0) => Err("`flags.idle_for_seconds` must be at least 1".to_owned()),
        _ => Ok(()),
    }
}

/// A destroy plan is applied without asking what it does beyond deleting: a change of another
/// kind in it was not made by `plan --destroy`.
fn check_destroy_only_deletes(plan: &Plan) -> Result<(), String> {
    let other = plan
        .changes
        .iter()
        .find(|change| !matches!(change.action, Action::Delete | Action::NoOp));
    match other {
        Some(change) if plan.flags.destroy => Err(format!(
            "`flags.destroy` is true, but cluster `{}` has the action {}; a destroy plan only deletes",
            change.address.id(),
            serde_json::to_string(&change.action).unwrap_or_default()
        )),
        _ => Ok(()),
    }
}
