//! How the output names a cluster: by its ID alone while everything shown lives in one
//! (project, region), and with its location (`train01 (acme-ml/us-central1)`) as soon as it
//! spans several, since the same ID may then exist in two regions. Plan text and progress
//! lines use the same rule.

use clusterform_model::ClusterName;

/// The naming rule of one piece of output.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClusterNames {
    with_location: bool,
}

impl ClusterNames {
    /// The rule for output about these clusters.
    pub fn for_clusters<'a>(clusters: impl IntoIterator<Item = &'a ClusterName>) -> Self {
        let mut clusters = clusters.into_iter();
        let with_location = clusters
            .next()
            .is_some_and(|first| clusters.any(|other| other.location() != first.location()));
        Self { with_location }
    }

    /// `train01`, or `train01 (acme-ml/us-central1)`.
    pub fn name(self, cluster: &ClusterName) -> String {
        if self.with_location {
            format!(
                "{} ({}/{})",
                cluster.id(),
                cluster.project(),
                cluster.region()
            )
        } else {
            cluster.id().to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(id: &str, region: &str) -> ClusterName {
        ClusterName::new("acme-ml", region, id).unwrap()
    }

    #[test]
    fn one_location_names_by_id_and_two_add_the_location() {
        let one = [at("a", "us-central1"), at("b", "us-central1")];
        assert_eq!(ClusterNames::for_clusters(&one).name(&one[0]), "a");
        let two = [at("a", "us-central1"), at("a", "europe-west4")];
        let names = ClusterNames::for_clusters(&two);
        assert_eq!(names.name(&two[1]), "a (acme-ml/europe-west4)");
    }
}
