//! The regions that offer training clusters, for warnings: the *Get started* page lists them
//! (the list is `clusterform_model::SERVICE_REGIONS`, which the refresh lists too), and a
//! request to another region fails, but the service adds regions over time, so a region
//! outside the list is a warning, never an error.

use clusterform_model::SERVICE_REGIONS as DOCUMENTED_REGIONS;

use crate::diagnostic::did_you_mean;

/// Whether `region` is one of the documented regions.
pub(crate) fn is_documented(region: &str) -> bool {
    DOCUMENTED_REGIONS.contains(&region)
}

/// The closest documented region, as a hint ("did you mean `us-central1`?").
pub(crate) fn suggestion(region: &str) -> Option<String> {
    did_you_mean(region, DOCUMENTED_REGIONS)
}

/// The message and hint of the warning for a region outside the documented list.
pub(crate) fn unknown_region(region: &str) -> Option<(String, String)> {
    if is_documented(region) {
        return None;
    }
    let message = format!(
        "region `{region}` is not one of the regions the Get started page lists for training clusters"
    );
    let listed = format!(
        "documented: {}; the service adds regions over time: if `{region}` offers training clusters, ignore this warning",
        DOCUMENTED_REGIONS.join(", ")
    );
    let hint = match suggestion(region) {
        Some(suggestion) => format!("{suggestion} {listed}"),
        None => listed,
    };
    Some((message, hint))
}

/// The hint for a zone or subnetwork outside the cluster's region: a place in that region when
/// the region is documented, else no name built from a region that may be a typo.
pub(crate) fn outside_region_hint(region: &str, documented_example: String) -> String {
    if is_documented(region) {
        return documented_example;
    }
    let fix = "make the region and this value agree";
    match suggestion(region) {
        Some(suggestion) => format!("{fix}; `{region}` is not a documented region ({suggestion})"),
        None => format!("{fix}; `{region}` is not a documented region"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_regions_get_no_warning_and_typos_a_suggestion() {
        assert_eq!(unknown_region("europe-north1"), None);
        let (message, hint) = unknown_region("us-centrall").unwrap();
        assert!(message.contains("`us-centrall`"), "{message}");
        assert!(hint.starts_with("did you mean `us-central1`?"), "{hint}");
    }

    #[test]
    fn hints_never_build_names_from_an_unknown_region() {
        let example = || "use a zone such as `us-central1-a`".to_owned();
        assert_eq!(outside_region_hint("us-central1", example()), example());
        let hint = outside_region_hint("us-centrall", example());
        assert!(!hint.contains("us-centrall-"), "{hint}");
        assert!(hint.contains("did you mean `us-central1`?"), "{hint}");
    }
}
