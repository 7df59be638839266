//! Where the state of a stack is kept: a [`DocumentLocation`] (a local file, or an object of a
//! bucket) as errors and reports name it, and [`StackObjects`], the one place that names a
//! stack's objects on Cloud Storage.

use std::fmt;
use std::path::PathBuf;

/// Where a stored document (the journal, the applied record) is kept, as errors and reports
/// name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocumentLocation {
    /// A local file.
    File(PathBuf),
    /// A Cloud Storage object, shown `gs://BUCKET/OBJECT`.
    Object {
        /// The bucket.
        bucket: String,
        /// The object's name.
        object: String,
    },
}

impl fmt::Display for DocumentLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Object { bucket, object } => write!(f, "gs://{bucket}/{object}"),
        }
    }
}

/// The names of one stack's state objects in a bucket, under the `lock "gcs"` block's prefix:
/// the lock `{prefix}/{stack}.lock`, the journal `{prefix}/{stack}.journal.json` and, beside
/// it, `{prefix}/{stack}.applied.json` (no `/` before the stack without a prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackObjects {
    /// `{prefix}/{stack}`, or `{stack}` without a prefix.
    base: String,
}

impl StackObjects {
    /// The objects of `stack` under `prefix` (`""`: at the bucket's root).
    pub fn new(prefix: &str, stack: &str) -> Self {
        let base = if prefix.is_empty() {
            stack.to_owned()
        } else {
            format!("{prefix}/{stack}")
        };
        Self { base }
    }

    /// The stack's lock.
    pub fn lock(&self) -> String {
        format!("{}.lock", self.base)
    }

    /// The journal of operations in flight ([`crate::Journal::open_in_storage`]).
    pub fn journal(&self) -> String {
        format!("{}.journal.json", self.base)
    }

    /// The record of applied changes, beside the journal
    /// ([`crate::AppliedRecord::open_in_storage`]).
    pub fn applied_record(&self) -> String {
        format!("{}.applied.json", self.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stacks_objects_are_named_under_its_prefix_or_at_the_root() {
        let objects = StackObjects::new("clusterform/prod", "research");
        assert_eq!(objects.lock(), "clusterform/prod/research.lock");
        assert_eq!(objects.journal(), "clusterform/prod/research.journal.json");
        assert_eq!(
            objects.applied_record(),
            "clusterform/prod/research.applied.json"
        );
        let at_root = StackObjects::new("", "research");
        assert_eq!(at_root.lock(), "research.lock");
        assert_eq!(at_root.journal(), "research.journal.json");
        assert_eq!(at_root.applied_record(), "research.applied.json");
    }

    #[test]
    fn a_location_is_shown_as_a_path_or_a_gs_url() {
        let file = DocumentLocation::File(PathBuf::from(".clusterform/journal.json"));
        assert_eq!(file.to_string(), ".clusterform/journal.json");
        let object = DocumentLocation::Object {
            bucket: "team-infra".to_owned(),
            object: "research.applied.json".to_owned(),
        };
        assert_eq!(object.to_string(), "gs://team-infra/research.applied.json");
    }
}
