//! clusterform-testkit: what the tests of several crates share (dev-only, never a dependency of
//! production code). It holds the constants every fixture uses, the canonical cluster as JSON
//! ([`seed`], [`served`]) and as HCL ([`hcl`]), one emulator harness ([`TestEmulator`]: an
//! in-process emulator on a free loopback port), and, with the feature `typed`, builders
//! of our crates' typed values (`config`, `cluster`, `slurm_job`, `plan_against_seed`, `fleet`). The
//! emulator's tests use it without `typed`, so they see JSON only.

mod cluster;
mod emulator;
pub mod hcl;
#[cfg(feature = "typed")]
mod typed;

pub use cluster::{seed, served};
pub use emulator::{TestEmulator, options_with_token};
#[cfg(feature = "typed")]
pub use typed::{
    address, cluster, config, declared, desired, fleet, live_seed, location, plan_against_seed,
    removed, slurm_job, unread_location,
};

/// The project every fixture uses.
pub const PROJECT: &str = "my-proj";
/// The region every fixture uses.
pub const REGION: &str = "us-central1";
/// `projects/PROJECT/locations/REGION`: the parent of the fixtures' clusters and operations.
pub const PARENT: &str = "projects/my-proj/locations/us-central1";
/// The stack that owns the fixtures' clusters.
pub const STACK: &str = "research";
/// The number of `PROJECT`: the service spells cluster names with it.
pub const PROJECT_NUMBER: &str = "123456789012";
/// The bearer token tests send, and the one [`options_with_token`] requires. It looks like a
/// Google access token so that tests can check it never shows in output or errors.
pub const TOKEN: &str = "ya29.test-secret-token";

/// The full name of cluster `id` under [`PARENT`].
pub fn cluster_name(id: &str) -> String {
    format!("{PARENT}/modelDevelopmentClusters/{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_is_made_of_the_project_and_the_region() {
        assert_eq!(PARENT, format!("projects/{PROJECT}/locations/{REGION}"));
    }

    /// Production code must never build on test fixtures: every crate of the workspace lists
    /// the testkit under `[dev-dependencies]` only.
    #[test]
    fn no_crate_depends_on_the_testkit_outside_its_dev_dependencies() {
        let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for entry in std::fs::read_dir(&crates).expect("crates/") {
            let manifest = entry.expect("an entry").path().join("Cargo.toml");
            let Ok(text) = std::fs::read_to_string(&manifest) else {
                continue;
            };
            let mut section = String::new();
            for line in text.lines().map(str::trim) {
                if line.starts_with('[') {
                    section = line.to_owned();
                } else if line.starts_with("clusterform-testkit") {
                    assert!(
                        section.ends_with("dev-dependencies]"),
                        "{} lists the testkit under {section}",
                        manifest.display()
                    );
                }
            }
        }
    }
}
