//! Where the service runs, and where a refresh lists.
//!
//! [`SERVICE_REGIONS`] is the one copy of the regions that offer training clusters: the
//! configuration warns about a region outside it, and every refresh lists all of them (plus any
//! region the configuration names) in every project the configuration names, so that a stack
//! owns its clusters wherever they are. [`RefreshLocations`] is that set of locations, each
//! marked with whether the configuration names it.

use std::collections::BTreeSet;

use crate::names::{Location, validate_location, validate_project};

/// The regions that offer training clusters, as the product's *Get started* page lists them
/// ("Vertex AI training clusters", *Get started*, region list; a public practitioner's notes of
/// December 2025 give the same twelve, and a request to any other region is an API error). The
/// service adds regions over time: a region outside this list is a warning in a configuration,
/// never an error, and a refresh lists it as well when the configuration names it.
pub const SERVICE_REGIONS: [&str; 12] = [
    "us-central1",
    "us-east1",
    "us-east4",
    "us-east5",
    "us-south1",
    "us-west1",
    "us-west4",
    "asia-southeast1",
    "asia-south2",
    "europe-west1",
    "europe-west4",
    "europe-north1",
];

/// Whether `region` is one of [`SERVICE_REGIONS`].
pub fn is_service_region(region: &str) -> bool {
    SERVICE_REGIONS.contains(&region)
}

/// The locations one refresh lists, each either **named** by the configuration (a declared
/// cluster or a `removed` block lives there, or it is the provider's location of a
/// configuration without either) or listed only because the service runs there. A List that
/// fails in a named location fails the refresh; one *refused* in another location (no
/// permission, a region the project may not use) is reported and contributes nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefreshLocations {
    named: BTreeSet<Location>,
    others: BTreeSet<Location>,
}

impl RefreshLocations {
    /// Exactly these locations, every one named.
    pub fn named(locations: impl IntoIterator<Item = Location>) -> Self {
        Self {
            named: locations.into_iter().collect(),
            others: BTreeSet::new(),
        }
    }

    /// `named`, and every region of [`SERVICE_REGIONS`], of `named` and of `regions` in every
    /// project of `named` and of `projects`; the locations added are not named. A project or
    /// region that is not a valid name is left out (the configuration reports it where it is
    /// used).
    pub fn everywhere<'a>(
        named: impl IntoIterator<Item = Location>,
        projects: impl IntoIterator<Item = &'a str>,
        regions: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        Self::within(
            named,
            projects,
            SERVICE_REGIONS.iter().copied().chain(regions),
        )
    }

    /// `named`, and every region of `named` and of `regions` (a provider's `regions = [...]`)
    /// in every project of `named` and of `projects`; the locations added are not named.
    pub fn within<'a>(
        named: impl IntoIterator<Item = Location>,
        projects: impl IntoIterator<Item = &'a str>,
        regions: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let named: BTreeSet<Location> = named.into_iter().collect();
        let mut all_projects: BTreeSet<String> =
            named.iter().map(|l| l.project().to_owned()).collect();
        all_projects.extend(
            projects
                .into_iter()
                .filter(|p| validate_project(p).is_ok())
                .map(str::to_owned),
        );
        let mut all_regions: BTreeSet<String> =
            named.iter().map(|l| l.region().to_owned()).collect();
        all_regions.extend(
            regions
                .into_iter()
                .filter(|r| validate_location(r).is_ok())
                .map(str::to_owned),
        );
        let others = all_projects
            .iter()
            .flat_map(|project| {
                all_regions
                    .iter()
                    .filter_map(move |region| Location::new(project, region).ok())
            })
            .filter(|location| !named.contains(location))
            .collect();
        Self { named, others }
    }

    /// Adds `location`, named; it is no longer among the others if it was.
    pub fn add_named(&mut self, location: Location) {
        self.others.remove(&location);
        self.named.insert(location);
    }

    /// Adds `location`, not named, unless it is named already.
    pub fn add_other(&mut self, location: Location) {
        if !self.named.contains(&location) {
            self.others.insert(location);
        }
    }

    /// Keeps only the locations `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&Location) -> bool) {
        self.named.retain(&mut keep);
        self.others.retain(keep);
    }

    /// Every location, sorted, each with whether it is named.
    pub fn iter(&self) -> impl Iterator<Item = (&Location, bool)> {
        let mut all: Vec<(&Location, bool)> = self
            .named
            .iter()
            .map(|l| (l, true))
            .chain(self.others.iter().map(|l| (l, false)))
            .collect();
        all.sort_unstable_by(|a, b| a.0.cmp(b.0));
        all.into_iter()
    }

    /// The named locations, sorted.
    pub fn named_locations(&self) -> &BTreeSet<Location> {
        &self.named
    }

    /// The locations listed only because the service runs there, sorted.
    pub fn other_locations(&self) -> &BTreeSet<Location> {
        &self.others
    }

    /// Whether `location` is named.
    pub fn is_named(&self, location: &Location) -> bool {
        self.named.contains(location)
    }

    /// How many locations are listed.
    pub fn len(&self) -> usize {
        self.named.len() + self.others.len()
    }

    /// Whether nothing is listed.
    pub fn is_empty(&self) -> bool {
        self.named.is_empty() && self.others.is_empty()
    }
}

impl From<&BTreeSet<Location>> for RefreshLocations {
    /// Exactly these locations, every one named.
    fn from(locations: &BTreeSet<Location>) -> Self {
        Self::named(locations.iter().cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(project: &str, region: &str) -> Location {
        Location::new(project, region).unwrap()
    }

    #[test]
    fn every_service_region_of_every_project_is_listed_and_the_named_stay_named() {
        let named = [at("acme-ml", "us-central1"), at("acme-ml", "me-west9")];
        let refresh = RefreshLocations::everywhere(named, ["proj-two", "Not A Project"], []);
        // Two projects, the twelve service regions plus `me-west9`.
        assert_eq!(refresh.len(), 2 * 13);
        assert!(refresh.is_named(&at("acme-ml", "us-central1")));
        assert!(refresh.is_named(&at("acme-ml", "me-west9")));
        assert!(!refresh.is_named(&at("proj-two", "me-west9")));
        assert!(
            refresh
                .other_locations()
                .contains(&at("proj-two", "me-west9"))
        );
        assert!(
            refresh
                .other_locations()
                .contains(&at("acme-ml", "europe-north1"))
        );
        let listed: Vec<_> = refresh.iter().map(|(l, _)| l.clone()).collect();
        let mut sorted = listed.clone();
        sorted.sort();
        assert_eq!(listed, sorted, "in order");
        assert_eq!(refresh.iter().filter(|(_, named)| *named).count(), 2);
    }

    #[test]
    fn without_a_project_nothing_is_listed() {
        let refresh = RefreshLocations::everywhere([], [], ["us-central1"]);
        assert!(refresh.is_empty());
    }

    #[test]
    fn retain_and_add_named_keep_each_location_once() {
        let mut refresh = RefreshLocations::everywhere([], ["acme-ml"], []);
        refresh.retain(|l| l.region() == "europe-west4" || l.region() == "us-east1");
        assert_eq!(refresh.len(), 2);
        refresh.add_named(at("acme-ml", "us-east1"));
        assert_eq!(refresh.len(), 2);
        assert!(refresh.is_named(&at("acme-ml", "us-east1")));
        assert!(!refresh.is_named(&at("acme-ml", "europe-west4")));
    }

    #[test]
    fn the_list_is_the_get_started_pages_twelve() {
        assert_eq!(SERVICE_REGIONS.len(), 12);
        assert!(is_service_region("asia-south2"));
        assert!(!is_service_region("us-central2"));
        for region in SERVICE_REGIONS {
            validate_location(region).unwrap();
        }
    }
}
