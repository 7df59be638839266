//! The testkit's canonical cluster: its HCL declares exactly its JSON, so that tests of the
//! config crate and tests of the crates downstream speak of the same cluster.

use clusterform_testkit::{PROJECT, REGION, STACK, hcl, seed};

use crate::support::load_text;

#[test]
fn the_canonical_hcl_declares_the_canonical_json() {
    let loaded = load_text(&hcl::seed_file("train01")).expect("the canonical file loads");
    let config = loaded.config;
    assert_eq!(config.provider.stack, STACK);
    let [cluster] = config.clusters.as_slice() else {
        panic!("one cluster expected, got {}", config.clusters.len());
    };
    assert_eq!(
        (cluster.name.id().as_str(), cluster.name.project()),
        ("train01", PROJECT)
    );
    assert_eq!(cluster.name.region(), REGION);
    assert_eq!(serde_json::to_value(&cluster.cluster).unwrap(), seed());
}

#[test]
fn the_required_body_is_the_canonical_cluster_without_its_optional_fields() {
    let text = format!(
        "{}\ncluster \"train01\" {{{}}}\n",
        hcl::PROVIDER_HCL,
        hcl::REQUIRED_BODY_HCL
    );
    let loaded = load_text(&text).expect("the required body loads");
    let mut expected = seed();
    let object = expected.as_object_mut().unwrap();
    object.remove("displayName");
    object.remove("labels");
    object["network"]
        .as_object_mut()
        .unwrap()
        .remove("subnetwork");
    let login = object["nodePools"][0].as_object_mut().unwrap();
    login.remove("enablePublicIps");
    login.remove("bootDisk");
    object["orchestratorSpec"]["slurmSpec"]
        .as_object_mut()
        .unwrap()
        .remove("prologBashScripts");
    let cluster = &loaded.config.clusters[0].cluster;
    assert_eq!(serde_json::to_value(cluster).unwrap(), expected);
}
