//! Every validation rule: the whole rendered diagnostic (message, file:line:col, the source
//! line underlined, the hint) is pinned by a snapshot. The base file is
//! `support::valid_file()`; each case edits one spot of it.

use clusterform_config::{
    RemovedCluster, Severity, SourceLocation, StackOrigin, VariableInputs, load,
};
use clusterform_model::UpdateMode;

use crate::support::{CLUSTER_BODY, dir_with, failure, find, load_text, valid_file, valid_with};

/// Applies one edit to the valid file and returns the diagnostic containing `needle`.
fn problem(from: &str, to: &str, needle: &str) -> String {
    find(&failure(&valid_with(from, to)), needle)
}

#[test]
fn the_base_file_is_valid() {
    let loaded = load_text(&valid_file()).unwrap();
    assert_eq!(loaded.config.clusters.len(), 1);
}

#[test]
fn unknown_attribute_suggests_the_closest_name() {
    let text = valid_with("max_node_count = 4", "max_node_cont = 4");
    let diagnostics = failure(&text);
    insta::assert_snapshot!(find(&diagnostics, "unknown attribute"));
}

#[test]
fn unknown_block_inside_a_cluster() {
    insta::assert_snapshot!(problem(
        "  network {",
        "  netwrk {",
        "unknown attribute or block"
    ));
}

#[test]
fn unknown_top_level_block() {
    let text = format!("{}\nresource \"x\" {{}}\n", valid_file());
    insta::assert_snapshot!(find(&failure(&text), "unknown block"));
}

#[test]
fn output_only_fields_are_refused() {
    insta::assert_snapshot!(problem(
        "  network {",
        "  create_time = \"x\"\n  network {",
        "output only"
    ));
}

#[test]
fn block_and_attribute_syntax_are_not_interchangeable() {
    insta::assert_snapshot!(problem(
        "zone = \"us-central1-a\"\n  }\n  node_pool \"cpu\"",
        "zone = \"us-central1-a\"\n    boot_disk = {}\n  }\n  node_pool \"cpu\"",
        "is a block"
    ));
    insta::assert_snapshot!(problem(
        "  network {",
        "  labels {}\n  network {",
        "is an attribute"
    ));
}

#[test]
fn wrong_types() {
    insta::assert_snapshot!(problem(
        "max_node_count = 4",
        "max_node_count = \"four\"",
        "wrong value"
    ));
    insta::assert_snapshot!(problem(
        "node_pool_ids = [\"cpu\"]",
        "node_pool_ids = \"cpu\"",
        "wrong value"
    ));
}

#[test]
fn enums_are_checked_with_a_hint() {
    let text = valid_with(
        "zone = \"us-central1-a\"\n  }\n  orch",
        "zone = \"us-central1-a\"\n    provisioning_model = \"spot\"\n  }\n  orch",
    );
    let diagnostics = failure(&text);
    insta::assert_snapshot!(find(&diagnostics, "not a valid"));
}

#[test]
fn update_mode_is_an_enum() {
    insta::assert_snapshot!(problem(
        "  network {",
        "  update_mode = \"USER\"\n  network {",
        "update_mode"
    ));
}

#[test]
fn missing_required_fields() {
    insta::assert_snapshot!(problem(
        "      machine_type = \"n2-standard-8\"\n    }\n    scaling_spec {\n      min_node_count = 0",
        "    }\n    scaling_spec {\n      min_node_count = 0",
        "missing required"
    ));
    insta::assert_snapshot!(problem(
        "      login_node_pool_id     = \"login\"\n",
        "",
        "missing required"
    ));
    let no_slurm = valid_with(
        "  orchestrator_spec {\n    slurm_spec {",
        "  orchestrator_spec {\n    slurm_spe {",
    );
    insta::assert_snapshot!(find(&failure(&no_slurm), "missing required"));
}

#[test]
fn node_pools_are_required() {
    let text = format!(
        "{}\ncluster \"empty\" {{\n  network {{\n    network = \"projects/p/global/networks/n\"\n  }}\n}}\n",
        crate::support::PROVIDER
    );
    let diagnostics = failure(&text);
    insta::assert_snapshot!(find(&diagnostics, "node_pool"));
    insta::assert_snapshot!(find(&diagnostics, "orchestrator_spec"));
}

#[test]
fn duplicate_ids() {
    insta::assert_snapshot!(problem(
        "node_pool \"cpu\"",
        "node_pool \"login\"",
        "duplicate"
    ));
    insta::assert_snapshot!(problem(
        "      partition \"cpu\" {\n        node_pool_ids = [\"cpu\"]\n      }",
        "      partition \"cpu\" {\n        node_pool_ids = [\"cpu\"]\n      }\n      partition \"cpu\" {}",
        "duplicate"
    ));
    let two = format!(
        "{}\ncluster \"train01\" {{{}}}\n",
        valid_file(),
        CLUSTER_BODY
    );
    insta::assert_snapshot!(find(&failure(&two), "duplicate cluster"));
    let node_sets = valid_with(
        "      login_node_pool_id     = \"login\"",
        "      login_node_pool_id     = \"login\"\n      node_set \"cpu\" {}\n      node_set \"cpu\" {}",
    );
    insta::assert_snapshot!(find(&failure(&node_sets), "duplicate"));
}

#[test]
fn cluster_id_format() {
    let diagnostics = failure(&valid_with("cluster \"train01\"", "cluster \"train-01\""));
    insta::assert_snapshot!(find(&diagnostics, "cluster ID"));
    insta::assert_snapshot!(problem(
        "cluster \"train01\"",
        "cluster \"Train01\"",
        "cluster ID"
    ));
}

#[test]
fn references_between_pools_and_partitions() {
    insta::assert_snapshot!(problem(
        "login_node_pool_id     = \"login\"",
        "login_node_pool_id     = \"logn\"",
        "login_node_pool_id"
    ));
    insta::assert_snapshot!(problem(
        "node_pool_ids = [\"cpu\"]",
        "node_pool_ids = [\"gpu\"]",
        "partition"
    ));
    insta::assert_snapshot!(problem(
        "      login_node_pool_id     = \"login\"",
        "      login_node_pool_id     = \"login\"\n      node_set \"gpu\" {}",
        "node_set"
    ));
    insta::assert_snapshot!(problem(
        "      login_node_pool_id     = \"login\"",
        "      login_node_pool_id     = \"login\"\n      default_partition_id = \"gpu\"",
        "default_partition_id"
    ));
}

#[test]
fn node_counts() {
    insta::assert_snapshot!(problem("min_node_count = 0", "min_node_count = 5", "below"));
    insta::assert_snapshot!(problem(
        "min_node_count = 0",
        "min_node_count = -1",
        "negative"
    ));
}

#[test]
fn zone_must_be_in_the_region() {
    insta::assert_snapshot!(problem(
        "zone = \"us-central1-a\"\n  }\n  orch",
        "zone = \"europe-west4-a\"\n  }\n  orch",
        "not in the cluster's region"
    ));
}

#[test]
fn resource_name_formats() {
    insta::assert_snapshot!(problem(
        "network = \"projects/my-proj/global/networks/default\"",
        "network = \"default\"",
        "network name"
    ));
    insta::assert_snapshot!(problem(
        "network = \"projects/my-proj/global/networks/default\"",
        "network = \"projects/my-proj/global/networks/default\"\n    subnetwork = \"projects/p/subnetworks/s\"",
        "subnetwork name"
    ));
    insta::assert_snapshot!(problem(
        "network = \"projects/my-proj/global/networks/default\"",
        "network = \"projects/my-proj/global/networks/default\"\n    subnetwork = \"projects/p/regions/europe-west4/subnetworks/s\"",
        "subnetwork is in region"
    ));
    insta::assert_snapshot!(problem(
        "home_directory_storage = \"projects/my-proj/locations/us-central1-a/instances/home\"",
        "home_directory_storage = \"home\"",
        "Lustre"
    ));
}

#[test]
fn label_syntax() {
    insta::assert_snapshot!(problem(
        "  network {",
        "  labels = { Team = \"ml\" }\n  network {",
        "label key"
    ));
    insta::assert_snapshot!(problem(
        "  network {",
        "  labels = { team = \"ML team\" }\n  network {",
        "label `team`"
    ));
    insta::assert_snapshot!(problem(
        "  network {",
        "  labels = { \"clusterform-stack\" = \"x\" }\n  network {",
        "reserved"
    ));
}

/// The cpu pool with extra lines after its zone.
fn cpu_pool_with(extra: &str) -> String {
    valid_with(
        "zone = \"us-central1-a\"\n  }\n  orch",
        &format!("zone = \"us-central1-a\"\n{extra}\n  }}\n  orch"),
    )
}

#[test]
fn provisioning_model_and_reservation_affinity() {
    let reservation = cpu_pool_with("    provisioning_model = \"RESERVATION\"");
    insta::assert_snapshot!(find(&failure(&reservation), "RESERVATION"));
    let spot = valid_with(
        "      machine_type = \"n2-standard-8\"\n    }\n    scaling_spec {\n      min_node_count = 0",
        "      machine_type = \"n2-standard-8\"\n      reservation_affinity {\n        reservation_affinity_type = \"ANY_RESERVATION\"\n      }\n    }\n    provisioning_model = \"SPOT\"\n    scaling_spec {\n      min_node_count = 0",
    );
    insta::assert_snapshot!(find(&failure(&spot), "SPOT"));
    let gpu = valid_with(
        "      machine_type = \"n2-standard-8\"\n    }\n    scaling_spec {\n      min_node_count = 0",
        "      machine_type = \"a3-highgpu-8g\"\n      accelerator_type = \"NVIDIA_H100_80GB\"\n    }\n    scaling_spec {\n      min_node_count = 0",
    );
    insta::assert_snapshot!(find(&failure(&gpu), "accelerators"));
    let flex = cpu_pool_with("    flex_start_max_duration = \"2h\"");
    insta::assert_snapshot!(find(&failure(&flex), "flex_start"));
}

#[test]
fn project_and_region_are_required() {
    let text = valid_file().replace("  project = \"my-proj\"\n", "");
    insta::assert_snapshot!(find(&failure(&text), "no project"));
    let bad = valid_with("  network {", "  region = \"Europe\"\n  network {");
    insta::assert_snapshot!(find(&failure(&bad), "location"));
}

#[test]
fn all_problems_are_reported_together() {
    let text = valid_with("max_node_count = 4", "max_node_count = \"x\"").replacen(
        "network {",
        "netwrk {",
        1,
    );
    let diagnostics = failure(&text);
    assert!(diagnostics.items.len() >= 2, "{diagnostics:?}");
    assert!(
        diagnostics
            .items
            .iter()
            .all(|d| d.severity == Severity::Error)
    );
}

#[test]
fn provider_checks() {
    let text = valid_file().replace("stack   = \"research\"", "stack   = \"Test Stack\"");
    insta::assert_snapshot!(find(&failure(&text), "stack"));
    let other = valid_file().replace("provider \"google\"", "provider \"aws\"");
    insta::assert_snapshot!(find(&failure(&other), "unknown provider"));
    let endpoint = valid_file().replace("stack   = \"research\"", "endpoint = \"ftp://x\"");
    insta::assert_snapshot!(find(&failure(&endpoint), "endpoint"));
}

/// The valid file without its `stack` line, with `extra` added to the provider block.
fn without_stack(extra: &str) -> String {
    valid_file().replace("  stack   = \"research\"\n", extra)
}

#[test]
fn stack_is_required_unless_the_endpoint_is_local() {
    for provider_extra in ["", "  endpoint = \"https://example.test\"\n"] {
        let diagnostics = failure(&without_stack(provider_extra));
        insta::assert_snapshot!(find(&diagnostics, "stack"));
    }
}

#[test]
fn without_a_provider_block_the_missing_stack_points_at_the_first_cluster() {
    let text = format!(
        "cluster \"train01\" {{\n  project = \"my-proj\"\n  region  = \"us-central1\"{CLUSTER_BODY}}}\n"
    );
    insta::assert_snapshot!(find(&failure(&text), "stack"));
}

#[test]
fn a_local_endpoint_defaults_the_stack_to_the_directory_name() {
    let dir = dir_with(&[("main.hcl", &without_stack("  endpoint = \"local\"\n"))]);
    let loaded = load(dir.path(), &VariableInputs::default()).unwrap();
    let name = dir.path().file_name().unwrap().to_string_lossy();
    let expected: String = name
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    assert_eq!(loaded.config.provider.stack, expected);
    assert_eq!(
        loaded.config.provider.stack_origin,
        StackOrigin::DirectoryName
    );
}

#[test]
fn an_explicit_stack_is_marked_so() {
    let loaded = load_text(&valid_file()).unwrap();
    assert_eq!(loaded.config.provider.stack, "research");
    assert_eq!(loaded.config.provider.stack_origin, StackOrigin::Explicit);
}

#[test]
fn a_stack_longer_than_a_label_value_is_refused() {
    let long = "s".repeat(64);
    let text = valid_file().replace("stack   = \"research\"", &format!("stack   = \"{long}\""));
    insta::assert_snapshot!(find(&failure(&text), "stack"));
}

#[test]
fn provider_update_mode_is_checked_and_typed() {
    let bad = valid_file().replace(
        "  stack   = \"research\"\n",
        "  stack   = \"research\"\n  update_mode = \"USER_ONLY_PLEASE\"\n",
    );
    insta::assert_snapshot!(find(&failure(&bad), "update_mode"));
    let good = valid_file().replace(
        "  stack   = \"research\"\n",
        "  stack   = \"research\"\n  update_mode = \"USER_ONLY\"\n",
    );
    let config = load_text(&good).unwrap().config;
    assert_eq!(config.provider.update_mode, Some(UpdateMode::UserOnly));
    assert_eq!(
        config.clusters[0].update_mode,
        Some(UpdateMode::UserOnly),
        "the provider's mode is every cluster's default"
    );
}

/// The valid file with a lifecycle block holding `ignore_changes = LIST`.
fn ignoring(list: &str) -> String {
    valid_with(
        "  network {",
        &format!("  lifecycle {{\n    ignore_changes = {list}\n  }}\n  network {{"),
    )
}

#[test]
fn ignore_changes_entries_are_checked_at_the_element() {
    let diagnostics = failure(&ignoring("[\"labels\", \"node_pool.cpu.nonsense\"]"));
    insta::assert_snapshot!(find(&diagnostics, "ignore_changes"));
    assert!(
        diagnostics.items[0]
            .hint
            .as_deref()
            .unwrap()
            .contains("node_pool.cpu.scaling_spec")
    );
    insta::assert_snapshot!(find(
        &failure(&ignoring("[\"update_time\"]")),
        "ignore_changes"
    ));
    insta::assert_snapshot!(find(
        &failure(&ignoring("[\"labels\", 3]")),
        "ignore_changes"
    ));
}

#[test]
fn a_computed_ignore_changes_list_is_checked_at_its_value() {
    let text = format!(
        "locals {{\n  ignored = [\"node_pool.cpu\", \"node_pool\"]\n}}\n{}",
        ignoring("local.ignored")
    );
    insta::assert_snapshot!(find(&failure(&text), "ignore_changes"));
}

#[test]
fn ignore_changes_accepts_the_documented_spellings() {
    let spellings = "[\"labels\", \"node_pool.cpu.scaling_spec\", \"node_pool.*.zone\", \"node_pools[cpu].zone\", \"orchestrator_spec.slurm_spec.partition.cpu\"]";
    let config = load_text(&ignoring(spellings)).unwrap().config;
    let read: Vec<String> = config.clusters[0]
        .lifecycle
        .ignore_changes
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        read,
        [
            "labels",
            "node_pools[cpu].scaling_spec",
            "node_pools[].zone",
            "node_pools[cpu].zone",
            "orchestrator_spec.slurm_spec.partitions[cpu]"
        ]
    );
}

/// The valid file followed by `removed`.
fn with_removed(removed: &str) -> String {
    format!("{}\n{removed}", valid_file())
}

#[test]
fn removed_blocks_are_read_with_the_provider_defaults() {
    let text = with_removed(
        "removed {\n  cluster = \"train02\"\n}\n\nremoved {\n  cluster = \"old01\"\n  region  = \"europe-west4\"\n}\n",
    );
    let config = load_text(&text).unwrap().config;
    assert_eq!(
        config.removed,
        [
            RemovedCluster {
                id: "train02".into(),
                project: "my-proj".into(),
                region: "us-central1".into(),
                location: SourceLocation {
                    file: "main.hcl".into(),
                    line: 43,
                    column: 1,
                },
            },
            RemovedCluster {
                id: "old01".into(),
                project: "my-proj".into(),
                region: "europe-west4".into(),
                location: SourceLocation {
                    file: "main.hcl".into(),
                    line: 47,
                    column: 1,
                },
            },
        ]
    );
    let locations: Vec<(String, String)> = config.locations().into_iter().collect();
    assert_eq!(
        locations,
        [
            ("my-proj".to_owned(), "europe-west4".to_owned()),
            ("my-proj".to_owned(), "us-central1".to_owned()),
        ]
    );
}

#[test]
fn removed_cluster_id_is_checked() {
    let diagnostics = failure(&with_removed("removed {\n  cluster = \"Train_02\"\n}\n"));
    insta::assert_snapshot!(find(&diagnostics, "Train_02"));
}

#[test]
fn removed_unknown_attribute_suggests_the_closest_name() {
    let diagnostics = failure(&with_removed(
        "removed {\n  cluster = \"train02\"\n  regoin  = \"us-east1\"\n}\n",
    ));
    insta::assert_snapshot!(find(&diagnostics, "unknown attribute"));
    let nested = failure(&with_removed(
        "removed {\n  cluster = \"train02\"\n  lifecycle {}\n}\n",
    ));
    insta::assert_snapshot!(find(&nested, "unknown block"));
}

#[test]
fn removed_needs_a_cluster_and_no_label() {
    insta::assert_snapshot!(find(&failure(&with_removed("removed {\n}\n")), "needs"));
    insta::assert_snapshot!(find(
        &failure(&with_removed(
            "removed \"train02\" {\n  cluster = \"train02\"\n}\n"
        )),
        "label"
    ));
}

#[test]
fn a_cluster_removed_twice_is_reported_at_the_second_block() {
    let diagnostics = failure(&with_removed(
        "removed {\n  cluster = \"train02\"\n}\nremoved {\n  cluster = \"train02\"\n}\n",
    ));
    insta::assert_snapshot!(find(&diagnostics, "more than once"));
}

#[test]
fn a_cluster_cannot_be_both_declared_and_removed() {
    let diagnostics = failure(&with_removed("removed {\n  cluster = \"train01\"\n}\n"));
    insta::assert_snapshot!(find(&diagnostics, "both"));
}

#[test]
fn removed_project_is_checked() {
    let diagnostics = failure(&with_removed(
        "removed {\n  cluster = \"train02\"\n  project = \"Not A Project\"\n}\n",
    ));
    insta::assert_snapshot!(find(&diagnostics, "Not A Project"));
}

#[test]
fn a_broken_endpoint_is_reported_without_a_missing_stack() {
    let diagnostics = failure(&without_stack("  endpoint = \"lokal\"\n"));
    insta::assert_snapshot!(find(&diagnostics, "endpoint"));
    assert!(
        diagnostics
            .items
            .iter()
            .all(|d| !d.message.contains("`stack`")),
        "{diagnostics:?}"
    );
}
