//! `load_with`'s early locations: announced before the cluster bodies are decoded, equal to the
//! loaded configuration's `locations()` and provider whenever the load succeeds, and not
//! announced when a `for_each`, `project` or `region` is broken.

use std::collections::BTreeSet;

use clusterform_config::{Diagnostics, Loaded, Provider, VariableInputs, load_with};
use clusterform_model::Location;

use crate::support::{CLUSTER_BODY, PROVIDER, dir_with};

type Announced = Option<(Provider, BTreeSet<Location>)>;

/// Loads `text` as `main.hcl`, with what the load announced early.
fn load_announcing(text: &str) -> (Announced, Result<Loaded, Diagnostics>) {
    let dir = dir_with(&[("main.hcl", text)]);
    let mut announced = None;
    let loaded = load_with(
        dir.path(),
        &VariableInputs::default(),
        Box::new(|provider, locations| {
            announced = Some((provider.clone(), locations.clone()));
        }),
    );
    (announced, loaded)
}

/// Loads `text`, which must succeed, and checks that the early announcement matches.
fn early_locations_of(text: &str) -> Vec<(String, String)> {
    let (announced, loaded) = load_announcing(text);
    let config = match loaded {
        Ok(loaded) => loaded.config,
        Err(diagnostics) => panic!("{}", diagnostics.render(false)),
    };
    let (provider, locations) = announced.expect("the locations were announced");
    assert_eq!(provider, config.provider);
    assert_eq!(locations, config.locations());
    locations
        .into_iter()
        .map(|l| (l.project().to_owned(), l.region().to_owned()))
        .collect()
}

fn pair(project: &str, region: &str) -> (String, String) {
    (project.to_owned(), region.to_owned())
}

fn cluster(id: &str, extra: &str) -> String {
    format!("cluster \"{id}\" {{\n{extra}\n{CLUSTER_BODY}}}\n")
}

/// A cluster whose pools are in the zone `zone` (an expression in a template).
fn cluster_in(id: &str, extra: &str, zone: &str) -> String {
    cluster(id, extra).replace("\"us-central1-a\"", &format!("\"${{{zone}}}-a\""))
}

#[test]
fn a_cluster_takes_the_provider_s_location() {
    let text = format!("{PROVIDER}{}", cluster("train01", ""));
    assert_eq!(early_locations_of(&text), [pair("my-proj", "us-central1")]);
}

#[test]
fn for_each_instances_an_explicit_project_and_removed_blocks_are_all_listed() {
    let fleet = cluster_in(
        "fleet",
        "for_each = { a = \"europe-west4\", b = \"us-east1\", c = \"europe-west4\" }\nregion = each.value",
        "each.value",
    );
    let other = cluster("other", "project = \"other-proj\"");
    let removed = "removed {\n  cluster = \"old01\"\n  region  = \"asia-east1\"\n}\n";
    let text = format!("{PROVIDER}{fleet}{other}{removed}");
    assert_eq!(
        early_locations_of(&text),
        [
            pair("my-proj", "asia-east1"),
            pair("my-proj", "europe-west4"),
            pair("my-proj", "us-east1"),
            pair("other-proj", "us-central1"),
        ]
    );
}

#[test]
fn locations_from_variables_and_locals_are_evaluated() {
    let text = format!(
        "variable \"regions\" {{\n  default = [\"us-east1\", \"us-west1\"]\n}}\n\
         locals {{\n  project = \"local-proj\"\n}}\n{PROVIDER}{}",
        cluster_in(
            "fleet",
            "for_each = var.regions\nid = replace(each.key, \"-\", \"\")\nregion = each.key\nproject = local.project",
            "each.key"
        )
    );
    assert_eq!(
        early_locations_of(&text),
        [
            pair("local-proj", "us-east1"),
            pair("local-proj", "us-west1")
        ]
    );
}

#[test]
fn without_clusters_the_provider_s_location_is_listed() {
    let removed_only = format!("{PROVIDER}removed {{\n  cluster = \"old01\"\n}}\n");
    assert_eq!(
        early_locations_of(&removed_only),
        [pair("my-proj", "us-central1")]
    );
    assert_eq!(
        early_locations_of(PROVIDER),
        [pair("my-proj", "us-central1")]
    );
}

#[test]
fn the_locations_are_announced_before_the_cluster_bodies_are_decoded() {
    let broken_body = cluster("train01", "no_such_attribute = 1");
    let (announced, loaded) = load_announcing(&format!("{PROVIDER}{broken_body}"));
    assert!(loaded.is_err(), "the body is wrong");
    let (_, locations) = announced.expect("announced before the body was decoded");
    assert_eq!(
        locations,
        BTreeSet::from([Location::new("my-proj", "us-central1").unwrap()])
    );
}

#[test]
fn broken_locations_are_not_announced() {
    let broken = [
        cluster("fleet", "for_each = 3\nregion = each.value"),
        cluster("fleet", "for_each = { a = \"x\" }\nregion = each.nothing"),
        cluster("train01", "region = \"Not A Region\""),
        cluster("train01", "project = [\"a\"]"),
        cluster("train01", "project = var.undeclared"),
    ];
    for cluster in broken {
        let (announced, loaded) = load_announcing(&format!("{PROVIDER}{cluster}"));
        assert!(loaded.is_err(), "{cluster}");
        assert!(announced.is_none(), "announced for\n{cluster}");
    }
}

#[test]
fn a_run_with_an_earlier_error_announces_nothing() {
    let text = format!(
        "provider \"google\" {{\n  region = \"us-central1\"\n  stack = \"Bad Stack\"\n}}\n{}",
        cluster("train01", "project = \"my-proj\"")
    );
    let (announced, loaded) = load_announcing(&text);
    assert!(loaded.is_err());
    assert!(announced.is_none());
}
