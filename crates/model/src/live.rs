//! Live clusters: each with the address it was read at.
//!
//! The service may spell a cluster's `name` with the project **number** where the
//! configuration names the project **ID** (`projects/123456789012/...` for a request on
//! `acme-ml`). A cluster's identity is therefore the (project, location) of the List or Get
//! that returned it plus the last segment of its name — never the whole `name` string, which
//! would make every declared cluster look absent and every owned one look undeclared.

use crate::{Cluster, ClusterName, Location};

/// A live cluster and where it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveCluster {
    /// The configuration's spelling of where the cluster lives: the project and region of the
    /// request that returned it, and its cluster ID.
    pub address: ClusterName,
    /// The cluster as the service returned it.
    pub cluster: Cluster,
}

/// Why a live cluster cannot be given an address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the service returned a cluster named `{name}` under {location}: {reason}")]
pub struct UnreadableName {
    /// The name as received (empty when absent).
    pub name: String,
    /// Where the request listed or read it.
    pub location: Location,
    /// What is wrong with it.
    pub reason: String,
}

impl LiveCluster {
    /// A cluster returned by a List or Get on `location`. Its name must be a cluster name in
    /// that region (with the project spelled either way) whose ID is a valid cluster ID.
    pub fn read_at(location: &Location, cluster: Cluster) -> Result<Self, UnreadableName> {
        let name = cluster.name.clone().unwrap_or_default();
        let unreadable = |reason: String| UnreadableName {
            name: name.clone(),
            location: location.clone(),
            reason,
        };
        let parsed: ClusterName = name.parse().map_err(|e| unreadable(format!("{e}")))?;
        if parsed.region() != location.region() {
            return Err(unreadable(format!(
                "it names location `{}`",
                parsed.region()
            )));
        }
        // The service may name the listed project by its number; any other project ID is
        // another project's cluster, never to be re-addressed into this one.
        let is_number = parsed.project().bytes().all(|b| b.is_ascii_digit());
        if parsed.project() != location.project() && !is_number {
            return Err(unreadable(format!(
                "it names project `{}`",
                parsed.project()
            )));
        }
        Ok(Self {
            address: ClusterName::at(location.clone(), parsed.id().clone()),
            cluster,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acme_ml() -> Location {
        Location::new("acme-ml", "us-central1").unwrap()
    }

    fn named(name: &str) -> Cluster {
        Cluster {
            name: Some(name.to_owned()),
            ..Cluster::default()
        }
    }

    #[test]
    fn a_name_in_another_project_is_refused() {
        let cluster =
            named("projects/someone-else/locations/us-central1/modelDevelopmentClusters/train01");
        let error = LiveCluster::read_at(&acme_ml(), cluster).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("it names project `someone-else`"),
            "{error}"
        );
    }

    #[test]
    fn a_project_number_in_the_name_keeps_the_project_id_of_the_request() {
        let cluster =
            named("projects/123456789012/locations/us-central1/modelDevelopmentClusters/train01");
        let live = LiveCluster::read_at(&acme_ml(), cluster).unwrap();
        assert_eq!(
            live.address,
            ClusterName::new("acme-ml", "us-central1", "train01").unwrap()
        );
    }

    #[test]
    fn names_outside_the_region_or_malformed_are_refused() {
        let elsewhere = named("projects/acme-ml/locations/europe-west4/modelDevelopmentClusters/a");
        let error = LiveCluster::read_at(&acme_ml(), elsewhere).unwrap_err();
        assert!(error.to_string().contains("europe-west4"), "{error}");
        for bad in [
            "",
            "train01",
            "projects/acme-ml/locations/us-central1/modelDevelopmentClusters/../x",
        ] {
            assert!(
                LiveCluster::read_at(&acme_ml(), named(bad)).is_err(),
                "{bad}"
            );
        }
    }
}
