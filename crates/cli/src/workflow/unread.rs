//! Locations a refresh could not list, and what that costs a run: which of the stack's
//! clusters are there (declared, or named by the applied record or the journal), what the run
//! says of them, and when it ends in an error.
//!
//! Where nothing of the stack is known to be, a location *refused* for good is one short note
//! per run, and a *failing* one a warning per run: the run goes on, exit codes unchanged. Where
//! the configuration names the location or clusters of the stack are known to be, it is an
//! error for those clusters only: the others are planned and applied, and the run exits 1.

use std::collections::{BTreeMap, BTreeSet};

use clusterform_config::Config;
use clusterform_executor::{AppliedRecord, RefusedList};
use clusterform_model::{ClusterId, ClusterName, Location, UnreadKind, UnreadLocation};

use clusterform::format::notes::Note;

use crate::error::CliError;
use crate::printer::{Printer, Tell};

/// The clusters of the stack known to be somewhere, by location: those the configuration
/// declares, and those the applied record or the journal names.
#[derive(Debug, Default)]
pub struct KnownClusters(BTreeMap<Location, BTreeSet<ClusterId>>);

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
        // A set, not a list searched before each insert: a fleet's location holds thousands.
        let mut known: BTreeMap<Location, BTreeSet<ClusterId>> = BTreeMap::new();
        for address in declared.chain(recorded).chain(journaled) {
            known
                .entry(address.location().clone())
                .or_default()
                .insert(address.id().clone());
        }
        Self(known)
    }

    /// What `refused` costs: each List as an [`UnreadLocation`] holding the clusters known to
    /// be there.
    pub fn unread(&self, refused: &[RefusedList]) -> Vec<UnreadLocation> {
        refused
            .iter()
            .map(|list| UnreadLocation {
                held: self
                    .0
                    .get(&list.location)
                    .map(|ids| ids.iter().cloned().collect())
                    .unwrap_or_default(),
                ..list.unread()
            })
            .collect()
    }
}

/// What the run says without `unread`: one note for the refused locations where nothing of
/// the stack is known, one warning for the failing ones, one warning per location that is an
/// error (its clusters are left alone; the run ends in [`CliError::LocationsUnread`]).
pub fn unread_notes(unread: &[UnreadLocation]) -> Vec<Note> {
    let (errors, others): (Vec<&UnreadLocation>, Vec<&UnreadLocation>) =
        unread.iter().partition(|location| location.is_error());
    let of_kind = |kind: UnreadKind| -> Vec<UnreadLocation> {
        others
            .iter()
            .filter(|location| location.kind == kind)
            .map(|location| (*location).clone())
            .collect()
    };
    let refused = of_kind(UnreadKind::Refused);
    let failing = of_kind(UnreadKind::Failing);
    let mut notes = Vec::new();
    if !refused.is_empty() {
        notes.push(Note::LocationsRefused(refused));
    }
    if !failing.is_empty() {
        notes.push(Note::LocationsFailing(failing));
    }
    notes.extend(
        errors
            .into_iter()
            .map(|location| Note::LocationHeld(location.clone())),
    );
    notes
}

/// [`unread_notes`], told on `printer`: for `list` and `status`, which have no plan view.
pub fn report_unread(printer: &Printer, unread: &[UnreadLocation]) {
    for note in unread_notes(unread) {
        printer.tell(&note);
    }
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

#[cfg(test)]
mod tests {
    use clusterform_testkit::unread_location as unread;

    use super::*;

    #[test]
    fn refused_and_failing_locations_make_one_note_each_and_a_held_one_its_own() {
        let unread = [
            unread("us-east5", UnreadKind::Refused, false, &[]),
            unread("asia-south2", UnreadKind::Refused, false, &[]),
            unread("europe-west4", UnreadKind::Failing, false, &[]),
            unread("us-central1", UnreadKind::Failing, true, &["train01"]),
        ];
        let notes = unread_notes(&unread);
        assert_eq!(
            notes,
            [
                Note::LocationsRefused(unread[..2].to_vec()),
                Note::LocationsFailing(vec![unread[2].clone()]),
                Note::LocationHeld(unread[3].clone()),
            ]
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
