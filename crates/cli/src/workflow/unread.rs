//! Locations a refresh could not list, and what that costs a run: which of the stack's
//! clusters are there (declared, or named by the applied record or the journal), what the run
//! says of them, and when it ends in an error.
//!
//! Where nothing of the stack is known to be, a location *refused* for good is one short note
//! per run, and a *failing* one a warning per run: the run goes on, exit codes unchanged. Where
//! the configuration names the location or clusters of the stack are known to be, it is an
//! error for those clusters only: the others are planned and applied, and the run exits 1.

use std::collections::BTreeMap;

use clusterform_config::Config;
use clusterform_executor::{AppliedRecord, RefusedList};
use clusterform_model::{ClusterId, ClusterName, Location, UnreadKind, UnreadLocation};

use crate::error::CliError;
use crate::printer::Printer;

/// The clusters of the stack known to be somewhere, by location: those the configuration
/// declares, and those the applied record or the journal names.
#[derive(Debug, Default)]
pub struct KnownClusters(BTreeMap<Location, Vec<ClusterId>>);

impl KnownClusters {
    /// The declared clusters of `config`, and the clusters `record` and `journaled` name.
    pub fn of(
        config: &Config,
        record: Option<&AppliedRecord>,
        journaled: impl IntoIterator<Item = ClusterName>,
    ) -> Self {
        let declared = config.clusters.iter().map(|cluster| cluster.name.clone());
        let recorded = record.into_iter().flat_map(|record| {
            let entries = record.entries().into_iter().map(|entry| entry.address);
            let marked = record.marks().into_iter().map(|marked| marked.address);
            entries.chain(marked).collect::<Vec<_>>()
        });
        let mut known: BTreeMap<Location, Vec<ClusterId>> = BTreeMap::new();
        for address in declared.chain(recorded).chain(journaled) {
            let ids = known.entry(address.location().clone()).or_default();
            if !ids.contains(address.id()) {
                ids.push(address.id().clone());
            }
        }
        Self(known)
    }

    /// What `refused` costs: each List as an [`UnreadLocation`] holding the clusters known to
    /// be there.
    pub fn unread(&self, refused: &[RefusedList]) -> Vec<UnreadLocation> {
        refused
            .iter()
            .map(|list| UnreadLocation {
                held: self.0.get(&list.location).cloned().unwrap_or_default(),
                ..list.unread()
            })
            .collect()
    }
}

/// Says what the run does without `unread`: one note for the refused locations where nothing
/// of the stack is known, one warning for the failing ones, one warning per location that is
/// an error (its clusters are left alone; the run ends in [`CliError::LocationsUnread`]).
pub fn report_unread(printer: &Printer, unread: &[UnreadLocation]) {
    let (errors, others): (Vec<&UnreadLocation>, Vec<&UnreadLocation>) =
        unread.iter().partition(|location| location.is_error());
    let refused: Vec<&UnreadLocation> = others
        .iter()
        .copied()
        .filter(|location| location.kind == UnreadKind::Refused)
        .collect();
    if !refused.is_empty() {
        printer.note(&refused_note(&refused));
    }
    let failing: Vec<&UnreadLocation> = others
        .iter()
        .copied()
        .filter(|location| location.kind == UnreadKind::Failing)
        .collect();
    if !failing.is_empty() {
        printer.warn(&failing_warning(&failing));
    }
    for location in errors {
        printer.warn(&held_warning(location));
    }
}

/// `Note: 2 locations refused the List …`: names only; `-v` logs each answer.
fn refused_note(refused: &[&UnreadLocation]) -> String {
    let count = refused.len();
    let (locations, were) = if count == 1 {
        ("location", "was")
    } else {
        ("locations", "were")
    };
    format!(
        "Note: {count} {locations} refused the List for good (no permission, or a region the \
         project may not use) and {were} skipped: {}. Nothing there is planned; `regions = [...]` \
         in the provider block limits the scan to the regions you use.",
        shown(refused)
    )
}

/// The failing locations where nothing of the stack is known, with each answer.
fn failing_warning(failing: &[&UnreadLocation]) -> String {
    let listed: Vec<String> = failing
        .iter()
        .map(|unread| format!("{} ({})", short(&unread.location), unread.reason))
        .collect();
    let (lists, them) = if failing.len() == 1 {
        ("the List of", "it")
    } else {
        ("the Lists of", "them")
    };
    format!(
        "{lists} {} kept failing; going on without {them}: this stack's clusters there are not \
         seen, and none of them is changed or destroyed",
        listed.join("; ")
    )
}

/// A location that is an error: its answer, and which clusters are left as they are.
fn held_warning(unread: &UnreadLocation) -> String {
    let what = unread.kind.what_the_list_did();
    let clusters = if unread.held.is_empty() {
        "no cluster of this stack there is planned".to_owned()
    } else {
        format!(
            "{} there {} left as {} (not created, changed or destroyed)",
            ids(&unread.held),
            if unread.held.len() == 1 { "is" } else { "are" },
            if unread.held.len() == 1 {
                "it is"
            } else {
                "they are"
            },
        )
    };
    format!(
        "the List of {}, which this stack uses, {what} ({}): {clusters}; the rest of the plan \
         goes on",
        short(&unread.location),
        unread.reason
    )
}

/// The run's error when a location of the stack could not be read (after the rest ran).
pub fn fully_read(unread: &[UnreadLocation]) -> Result<(), CliError> {
    let held: Vec<UnreadLocation> = unread
        .iter()
        .filter(|location| location.is_error())
        .cloned()
        .collect();
    if held.is_empty() {
        Ok(())
    } else {
        Err(CliError::LocationsUnread { unread: held })
    }
}

/// A view (`list`, `status`) that lacks a failing location, or one the configuration names,
/// ends in an error naming them, after what it could read was printed.
pub fn complete_view(unread: &[UnreadLocation]) -> Result<(), CliError> {
    let failing: Vec<Location> = unread
        .iter()
        .filter(|location| location.leaves_a_view_incomplete())
        .map(|location| location.location.clone())
        .collect();
    if failing.is_empty() {
        return Ok(());
    }
    Err(CliError::ViewIncomplete { failing })
}

/// `my-proj/europe-west4`.
fn short(location: &Location) -> String {
    format!("{}/{}", location.project(), location.region())
}

fn shown(unread: &[&UnreadLocation]) -> String {
    unread
        .iter()
        .map(|unread| short(&unread.location))
        .collect::<Vec<_>>()
        .join(", ")
}

fn ids(held: &[ClusterId]) -> String {
    held.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unread(region: &str, kind: UnreadKind, named: bool, held: &[&str]) -> UnreadLocation {
        UnreadLocation {
            location: Location::new("my-proj", region).unwrap(),
            kind,
            reason: "UNAVAILABLE (503): try later".to_owned(),
            named,
            held: held
                .iter()
                .map(|id| ClusterId::parse(id, false).unwrap())
                .collect(),
        }
    }

    #[test]
    fn refused_locations_make_one_note_naming_them_all() {
        let refused = [
            unread("us-east5", UnreadKind::Refused, false, &[]),
            unread("asia-south2", UnreadKind::Refused, false, &[]),
        ];
        let refused: Vec<&UnreadLocation> = refused.iter().collect();
        assert_eq!(
            refused_note(&refused),
            "Note: 2 locations refused the List for good (no permission, or a region the project \
             may not use) and were skipped: my-proj/us-east5, my-proj/asia-south2. Nothing there \
             is planned; `regions = [...]` in the provider block limits the scan to the regions \
             you use."
        );
    }

    #[test]
    fn failing_locations_make_one_warning_with_each_answer() {
        let failing = [
            unread("us-east5", UnreadKind::Failing, false, &[]),
            unread("asia-south2", UnreadKind::Failing, false, &[]),
        ];
        let failing: Vec<&UnreadLocation> = failing.iter().collect();
        assert_eq!(
            failing_warning(&failing),
            "the Lists of my-proj/us-east5 (UNAVAILABLE (503): try later); my-proj/asia-south2 \
             (UNAVAILABLE (503): try later) kept failing; going on without them: this stack's \
             clusters there are not seen, and none of them is changed or destroyed"
        );
    }

    #[test]
    fn a_location_of_the_stack_is_an_error_for_its_clusters_only() {
        let held = unread(
            "us-central1",
            UnreadKind::Failing,
            true,
            &["train01", "train02"],
        );
        assert_eq!(
            held_warning(&held),
            "the List of my-proj/us-central1, which this stack uses, kept failing (UNAVAILABLE \
             (503): try later): train01, train02 there are left as they are (not created, \
             changed or destroyed); the rest of the plan goes on"
        );
        let elsewhere = unread("us-east5", UnreadKind::Refused, false, &[]);
        assert!(fully_read(std::slice::from_ref(&elsewhere)).is_ok());
        assert!(complete_view(std::slice::from_ref(&elsewhere)).is_ok());
        let failing = unread("us-east5", UnreadKind::Failing, false, &[]);
        assert!(fully_read(std::slice::from_ref(&failing)).is_ok());
        assert!(matches!(
            complete_view(&[failing]),
            Err(CliError::ViewIncomplete { .. })
        ));
        let Err(CliError::LocationsUnread { unread }) = fully_read(&[elsewhere, held]) else {
            panic!("a location holding clusters of the stack is an error");
        };
        assert_eq!(unread.len(), 1);
        let recorded_only = unread_of_record();
        assert!(recorded_only.is_error(), "the record names a cluster there");
    }

    /// A location nothing in the configuration names, where the applied record says the
    /// stack has a cluster.
    fn unread_of_record() -> UnreadLocation {
        let config = clusterform_testkit::config(Vec::new());
        let elsewhere = ClusterName::new("my-proj", "us-west2", "old01").unwrap();
        let known = KnownClusters::of(&config, None, [elsewhere]);
        let mut unread = known.unread(&[RefusedList {
            location: Location::new("my-proj", "us-west2").unwrap(),
            error: clusterform_executor::TransportError::NoAnswer {
                method: "GET".to_owned(),
                url: "u".to_owned(),
                message: "m".to_owned(),
            },
            kind: UnreadKind::Failing,
            named: false,
        }]);
        assert_eq!(unread[0].held[0].as_str(), "old01");
        unread.remove(0)
    }
}
