//! Locations a refresh could not list: which, how (refused for good, or failing for now), the
//! service's answer, and the clusters there that a run therefore leaves alone.

use serde::{Deserialize, Serialize};

use crate::names::{ClusterId, Location};

/// Why a location could not be listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnreadKind {
    /// Refused for good: no permission, a region the project may not use or the service does
    /// not run in. Asking again gives the same answer.
    Refused,
    /// Failing after the retries: an outage (`UNAVAILABLE`, `INTERNAL`, a rate limit that
    /// outlasted them), no answer in time, an answer that is not the API's. The location may
    /// hold clusters of the stack that the run does not see.
    Failing,
}

impl UnreadKind {
    /// What the List did, for a sentence: `was refused`, `kept failing`.
    pub fn what_the_list_did(self) -> &'static str {
        match self {
            Self::Refused => "was refused",
            Self::Failing => "kept failing",
        }
    }
}

/// A location whose List gave nothing: nothing there is seen, so nothing there is planned,
/// changed or deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "UnreadDocument", into = "UnreadDocument")]
pub struct UnreadLocation {
    /// Where the List was sent.
    pub location: Location,
    /// Refused, or failing.
    pub kind: UnreadKind,
    /// The service's answer (or the transport's failure), in one line.
    pub reason: String,
    /// Whether the configuration names the location (a declared cluster, a `removed` block,
    /// the provider's location): its List had to answer.
    pub named: bool,
    /// The clusters there that the configuration declares or the applied record names, each
    /// left as it is because it could not be read. Empty until a plan says.
    pub held: Vec<ClusterId>,
}

impl UnreadLocation {
    /// Whether it is an error of the run: the configuration names the location, or clusters of
    /// the stack are known to be there. Elsewhere, a refused location is a note and a failing
    /// one a warning.
    pub fn is_error(&self) -> bool {
        self.named || !self.held.is_empty()
    }

    /// Whether a view (`list`, `status`) without it is incomplete: it kept failing (it may hold
    /// clusters of the stack), or clusters of the stack are known to be there.
    pub fn leaves_a_view_incomplete(&self) -> bool {
        self.kind == UnreadKind::Failing || self.is_error()
    }
}

/// [`UnreadLocation`] as a plan file and `--json` write it.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct UnreadDocument {
    project: String,
    region: String,
    kind: UnreadKind,
    reason: String,
    #[serde(default)]
    named: bool,
    #[serde(default)]
    held: Vec<String>,
}

impl TryFrom<UnreadDocument> for UnreadLocation {
    type Error = crate::NameError;

    fn try_from(document: UnreadDocument) -> Result<Self, Self::Error> {
        Ok(Self {
            location: Location::new(&document.project, &document.region)?,
            kind: document.kind,
            reason: document.reason,
            named: document.named,
            held: document
                .held
                .iter()
                .map(|id| ClusterId::parse(id, false))
                .collect::<Result<_, _>>()?,
        })
    }
}

impl From<UnreadLocation> for UnreadDocument {
    fn from(unread: UnreadLocation) -> Self {
        Self {
            project: unread.location.project().to_owned(),
            region: unread.location.region().to_owned(),
            kind: unread.kind,
            reason: unread.reason,
            named: unread.named,
            held: unread.held.iter().map(ToString::to_string).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unread_location_is_written_by_its_parts_and_read_back_checked() {
        let unread = UnreadLocation {
            location: Location::new("acme-ml", "europe-west4").unwrap(),
            kind: UnreadKind::Failing,
            reason: "UNAVAILABLE (503): try later".to_owned(),
            named: false,
            held: vec![ClusterId::parse("train01", false).unwrap()],
        };
        let written = serde_json::to_value(&unread).unwrap();
        assert_eq!(
            written,
            serde_json::json!({
                "project": "acme-ml", "region": "europe-west4", "kind": "failing",
                "reason": "UNAVAILABLE (503): try later", "named": false, "held": ["train01"],
            })
        );
        assert!(unread.is_error(), "a cluster of the stack is there");
        assert_eq!(
            serde_json::from_value::<UnreadLocation>(written).unwrap(),
            unread
        );
        let spliced = serde_json::json!({
            "project": "acme-ml/../x", "region": "europe-west4", "kind": "refused", "reason": "",
        });
        assert!(serde_json::from_value::<UnreadLocation>(spliced).is_err());
    }
}
