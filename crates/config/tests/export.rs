//! `cluster_to_hcl` writes HCL that loads back into the same desired cluster.

use clusterform_config::{Placement, VariableInputs, cluster_to_hcl, cluster_to_hcl_placed, load};
use clusterform_model::{Cluster, STACK_LABEL};

use crate::support::{PROVIDER, example, load_text};

fn round_trip(id: &str, cluster: &Cluster) {
    let hcl = cluster_to_hcl(id, cluster);
    let loaded = match load_text(&format!("{PROVIDER}\n{hcl}")) {
        Ok(loaded) => loaded,
        Err(diagnostics) => panic!("{hcl}\n{}", diagnostics.render(false)),
    };
    let mut expected = cluster.clone();
    if let Some(labels) = expected.labels.as_mut() {
        labels.remove(STACK_LABEL);
    }
    assert_eq!(loaded.config.clusters[0].cluster, expected, "{hcl}");
}

fn example_cluster(name: &str, vars: &[(&str, &str)], id: &str) -> Cluster {
    let inputs = VariableInputs {
        cli: vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..VariableInputs::default()
    };
    let config = load(&example(name), &inputs).unwrap().config;
    config.cluster(id).unwrap().cluster.clone()
}

/// A cluster imported from another project and region than the provider's keeps its place: the block
/// writes its own `region` (and `project`), so loading it gives back the same address.
#[test]
fn a_placed_cluster_loads_back_at_its_own_project_and_region() {
    let cluster = example_cluster("quickstart", &[], "train01");
    let placement = Placement {
        project: Some("other-proj"),
        region: Some("us-central1"),
    };
    let hcl = cluster_to_hcl_placed("train01", &cluster, &placement);
    assert!(hcl.starts_with("cluster \"train01\" {\n  project"), "{hcl}");
    let elsewhere = PROVIDER.replace("us-central1", "europe-west4");
    let loaded = load_text(&format!("{elsewhere}\n{hcl}"))
        .unwrap_or_else(|diagnostics| panic!("{hcl}\n{}", diagnostics.render(false)));
    let name = &loaded.config.clusters[0].name;
    assert_eq!(
        (name.project(), name.region()),
        ("other-proj", "us-central1")
    );
}

#[test]
fn the_quickstart_cluster_round_trips() {
    let cluster = example_cluster("quickstart", &[], "train01");
    round_trip("train01", &cluster);
    insta::assert_snapshot!("quickstart_import", cluster_to_hcl("train01", &cluster));
}

#[test]
fn a_gpu_cluster_with_scripts_round_trips() {
    let mut cluster = example_cluster(
        "gpu-a4",
        &[
            ("project", "demo-project"),
            ("region", "us-central1"),
            ("reservation", "r1"),
        ],
        "a4train",
    );
    cluster
        .labels
        .get_or_insert_default()
        .insert(STACK_LABEL.to_owned(), "test".to_owned());
    round_trip("a4train", &cluster);
}

#[test]
fn lustre_and_flex_start_round_trip() {
    let lustre = example_cluster("lustre", &[("project", "demo-project")], "lustre01");
    round_trip("lustre01", &lustre);
    let flex = example_cluster("flex-start", &[("project", "demo-project")], "flex01");
    round_trip("flex01", &flex);
}

#[test]
fn a_live_pool_is_imported_as_it_runs_without_fallback_blocks() {
    let inputs = VariableInputs {
        cli: vec![("project".to_owned(), "demo-project".to_owned())],
        ..VariableInputs::default()
    };
    let config = load(&example("gpu-fallback"), &inputs).unwrap().config;
    let desired = config.cluster("gputrain").unwrap();
    assert!(!desired.fallbacks.is_empty());
    // What the second attempt created, as the service shows it.
    let live = desired.attempt(1);
    let hcl = cluster_to_hcl("gputrain", &live);
    assert!(!hcl.contains("fallback"), "{hcl}");
    assert!(
        hcl.contains("a3-ultragpu-8g") && !hcl.contains("a4-highgpu-8g"),
        "{hcl}"
    );
    round_trip("gputrain", &live);
    let imported = load_text(&format!("{PROVIDER}\n{hcl}")).unwrap().config;
    assert_eq!(imported.clusters[0].fallbacks, []);
}

#[test]
fn a_live_cluster_loses_its_output_fields() {
    let mut cluster = example_cluster("quickstart", &[], "train01");
    let desired = cluster.clone();
    cluster.name = Some(
        "projects/demo-project/locations/us-central1/modelDevelopmentClusters/train01".to_owned(),
    );
    cluster.create_time = Some("2026-01-01T00:00:00Z".to_owned());
    let hcl = cluster_to_hcl("train01", &cluster);
    assert!(
        !hcl.contains("create_time") && !hcl.contains("modelDevelopmentClusters"),
        "{hcl}"
    );
    round_trip("train01", &desired);
}
