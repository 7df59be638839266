//! Every validation rule: the message and the line/column it points at. The base file is
//! `support::valid_file()`; each case edits one spot of it.

use clusterform_config::{
    RemovedCluster, Severity, SourceLocation, StackOrigin, VariableInputs, load,
};
use clusterform_model::UpdateMode;

use crate::support::{CLUSTER_BODY, dir_with, errors, find, load_text, valid_file, valid_with};

/// Applies one edit to the valid file and returns the diagnostic containing `needle`.
fn problem(from: &str, to: &str, needle: &str) -> String {
    find(&errors(&valid_with(from, to)), needle)
}

#[test]
fn the_base_file_is_valid() {
    let loaded = load_text(&valid_file()).unwrap();
    assert_eq!(loaded.config.clusters.len(), 1);
}

#[test]
fn unknown_attribute_suggests_the_closest_name() {
    let text = valid_with("max_node_count = 4", "max_node_cont = 4");
    let diagnostics = errors(&text);
    assert_eq!(
        find(&diagnostics, "unknown attribute"),
        "28:7 unknown attribute or block `max_node_cont` in `scaling_spec`"
    );
    assert_eq!(
        diagnostics[0].hint.as_deref(),
        Some("did you mean `max_node_count`?")
    );
}

#[test]
fn unknown_block_inside_a_cluster() {
    assert_eq!(
        problem("  network {", "  netwrk {", "unknown attribute or block"),
        "9:3 unknown attribute or block `netwrk` in a cluster block"
    );
}

#[test]
fn unknown_top_level_block() {
    let text = format!("{}\nresource \"x\" {{}}\n", valid_file());
    assert_eq!(
        find(&errors(&text), "unknown block"),
        "43:1 unknown block `resource`"
    );
}

#[test]
fn output_only_fields_are_refused() {
    assert_eq!(
        problem(
            "  network {",
            "  create_time = \"x\"\n  network {",
            "output only"
        ),
        "9:3 `create_time` is output only: the service sets it"
    );
}

#[test]
fn block_and_attribute_syntax_are_not_interchangeable() {
    assert_eq!(
        problem(
            "zone = \"us-central1-a\"\n  }\n  node_pool \"cpu\"",
            "zone = \"us-central1-a\"\n    boot_disk = {}\n  }\n  node_pool \"cpu\"",
            "is a block"
        ),
        "21:5 `boot_disk` is a block, not an attribute"
    );
    assert_eq!(
        problem("  network {", "  labels {}\n  network {", "is an attribute"),
        "9:3 `labels` is an attribute, not a block"
    );
}

#[test]
fn wrong_types() {
    assert_eq!(
        problem(
            "max_node_count = 4",
            "max_node_count = \"four\"",
            "wrong value"
        ),
        "28:24 wrong value for `max_node_count`: expected a whole number, found `four`"
    );
    assert_eq!(
        problem(
            "node_pool_ids = [\"cpu\"]",
            "node_pool_ids = \"cpu\"",
            "wrong value"
        ),
        "37:25 wrong value for `node_pool_ids`: expected a list, found a string"
    );
}

#[test]
fn enums_are_checked_with_a_hint() {
    let text = valid_with(
        "zone = \"us-central1-a\"\n  }\n  orch",
        "zone = \"us-central1-a\"\n    provisioning_model = \"spot\"\n  }\n  orch",
    );
    let diagnostics = errors(&text);
    assert_eq!(
        find(&diagnostics, "not a valid"),
        "31:26 wrong value for `provisioning_model`: `spot` is not a valid provisioning_model"
    );
    assert_eq!(diagnostics[0].hint.as_deref(), Some("did you mean `SPOT`?"));
}

#[test]
fn update_mode_is_an_enum() {
    assert_eq!(
        problem(
            "  network {",
            "  update_mode = \"USER\"\n  network {",
            "update_mode"
        ),
        "9:17 wrong value for `update_mode`: `USER` is not a valid update_mode"
    );
}

#[test]
fn missing_required_fields() {
    assert_eq!(
        problem(
            "      machine_type = \"n2-standard-8\"\n    }\n    scaling_spec {\n      min_node_count = 0",
            "    }\n    scaling_spec {\n      min_node_count = 0",
            "missing required"
        ),
        "23:5 missing required attribute `machine_type` in `node_pools[cpu].machine_spec`"
    );
    assert_eq!(
        problem(
            "      login_node_pool_id     = \"login\"\n",
            "",
            "missing required"
        ),
        "33:5 missing required attribute `login_node_pool_id` in `orchestrator_spec.slurm_spec`"
    );
    let no_slurm = valid_with(
        "  orchestrator_spec {\n    slurm_spec {",
        "  orchestrator_spec {\n    slurm_spe {",
    );
    assert_eq!(
        find(&errors(&no_slurm), "missing required"),
        "32:3 missing required block `slurm_spec` in `orchestrator_spec`"
    );
}

#[test]
fn node_pools_are_required() {
    let text = format!(
        "{}\ncluster \"empty\" {{\n  network {{\n    network = \"projects/p/global/networks/n\"\n  }}\n}}\n",
        crate::support::PROVIDER
    );
    let diagnostics = errors(&text);
    assert_eq!(
        find(&diagnostics, "node_pool"),
        "8:1 missing required at least one `node_pool` block in the cluster"
    );
    assert_eq!(
        find(&diagnostics, "orchestrator_spec"),
        "8:1 missing required block `orchestrator_spec` in the cluster"
    );
}

#[test]
fn duplicate_ids() {
    assert_eq!(
        problem("node_pool \"cpu\"", "node_pool \"login\"", "duplicate"),
        "22:13 duplicate node_pool `login`"
    );
    assert_eq!(
        problem(
            "      partition \"cpu\" {\n        node_pool_ids = [\"cpu\"]\n      }",
            "      partition \"cpu\" {\n        node_pool_ids = [\"cpu\"]\n      }\n      partition \"cpu\" {}",
            "duplicate"
        ),
        "39:17 duplicate partition `cpu`"
    );
    let two = format!(
        "{}\ncluster \"train01\" {{{}}}\n",
        valid_file(),
        CLUSTER_BODY
    );
    assert_eq!(
        find(&errors(&two), "duplicate cluster"),
        "43:9 duplicate cluster ID `train01`"
    );
    let node_sets = valid_with(
        "      login_node_pool_id     = \"login\"",
        "      login_node_pool_id     = \"login\"\n      node_set \"cpu\" {}\n      node_set \"cpu\" {}",
    );
    assert_eq!(
        find(&errors(&node_sets), "duplicate"),
        "37:16 duplicate node_set `cpu`"
    );
}

#[test]
fn cluster_id_format() {
    let diagnostics = errors(&valid_with("cluster \"train01\"", "cluster \"train-01\""));
    assert_eq!(
        find(&diagnostics, "cluster ID"),
        "8:9 cluster ID `train-01` is invalid: a cluster with a Slurm orchestrator cannot have hyphens in its ID"
    );
    assert_eq!(
        diagnostics[0].hint.as_deref(),
        Some("Slurm cluster IDs cannot contain hyphens; try `train01`")
    );
    assert_eq!(
        problem("cluster \"train01\"", "cluster \"Train01\"", "cluster ID"),
        "8:9 cluster ID `Train01` is invalid: it must start with a lowercase letter"
    );
}

#[test]
fn references_between_pools_and_partitions() {
    assert_eq!(
        problem(
            "login_node_pool_id     = \"login\"",
            "login_node_pool_id     = \"logn\"",
            "login_node_pool_id"
        ),
        "35:32 login_node_pool_id refers to node pool `logn`, which does not exist"
    );
    assert_eq!(
        problem(
            "node_pool_ids = [\"cpu\"]",
            "node_pool_ids = [\"gpu\"]",
            "partition"
        ),
        "37:25 partition `cpu` refers to node pool `gpu`, which does not exist"
    );
    assert_eq!(
        problem(
            "      login_node_pool_id     = \"login\"",
            "      login_node_pool_id     = \"login\"\n      node_set \"gpu\" {}",
            "node_set"
        ),
        "36:16 node_set refers to node pool `gpu`, which does not exist"
    );
    assert_eq!(
        problem(
            "      login_node_pool_id     = \"login\"",
            "      login_node_pool_id     = \"login\"\n      default_partition_id = \"gpu\"",
            "default_partition_id"
        ),
        "36:30 default_partition_id refers to partition `gpu`, which does not exist"
    );
}

#[test]
fn node_counts() {
    assert_eq!(
        problem("min_node_count = 0", "min_node_count = 5", "below"),
        "28:24 max_node_count (4) of pool `cpu` is below min_node_count (5)"
    );
    assert_eq!(
        problem("min_node_count = 0", "min_node_count = -1", "negative"),
        "27:24 min_node_count of pool `cpu` is -1; it cannot be negative"
    );
}

#[test]
fn zone_must_be_in_the_region() {
    assert_eq!(
        problem(
            "zone = \"us-central1-a\"\n  }\n  orch",
            "zone = \"europe-west4-a\"\n  }\n  orch",
            "not in the cluster's region"
        ),
        "30:12 zone `europe-west4-a` of pool `cpu` is not in the cluster's region `us-central1`"
    );
}

#[test]
fn resource_name_formats() {
    assert_eq!(
        problem(
            "network = \"projects/demo-project/global/networks/default\"",
            "network = \"default\"",
            "network name"
        ),
        "10:15 `default` is not a network name: expected `projects/{P}/global/networks/{N}`"
    );
    assert_eq!(
        problem(
            "network = \"projects/demo-project/global/networks/default\"",
            "network = \"projects/demo-project/global/networks/default\"\n    subnetwork = \"projects/p/subnetworks/s\"",
            "subnetwork name"
        ),
        "11:18 `projects/p/subnetworks/s` is not a subnetwork name: expected `projects/{P}/regions/{R}/subnetworks/{S}`"
    );
    assert_eq!(
        problem(
            "network = \"projects/demo-project/global/networks/default\"",
            "network = \"projects/demo-project/global/networks/default\"\n    subnetwork = \"projects/p/regions/europe-west4/subnetworks/s\"",
            "subnetwork is in region"
        ),
        "11:18 the subnetwork is in region `europe-west4`, but the cluster is in `us-central1`"
    );
    assert_eq!(
        problem(
            "home_directory_storage = \"projects/demo-project/locations/us-central1-a/instances/home\"",
            "home_directory_storage = \"home\"",
            "Lustre"
        ),
        "34:32 `home` is not a Filestore or Lustre instance name: expected `projects/{P}/locations/{ZONE}/instances/{NAME}`"
    );
}

#[test]
fn label_syntax() {
    assert_eq!(
        problem(
            "  network {",
            "  labels = { Team = \"ml\" }\n  network {",
            "label key"
        ),
        "9:12 invalid label key `Team`: it must start with a lowercase letter"
    );
    assert_eq!(
        problem(
            "  network {",
            "  labels = { team = \"ML team\" }\n  network {",
            "label `team`"
        ),
        "9:12 invalid value `ML team` of label `team`: it may contain only lowercase letters, digits, `_` and `-`"
    );
    assert_eq!(
        problem(
            "  network {",
            "  labels = { \"clusterform-stack\" = \"x\" }\n  network {",
            "reserved"
        ),
        "9:12 the label `clusterform-stack` is reserved: clusterform sets it to the stack name"
    );
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
    assert_eq!(
        find(&errors(&reservation), "RESERVATION"),
        "31:26 pool `cpu` uses provisioning_model RESERVATION without a reservation_affinity"
    );
    let spot = valid_with(
        "      machine_type = \"n2-standard-8\"\n    }\n    scaling_spec {\n      min_node_count = 0",
        "      machine_type = \"n2-standard-8\"\n      reservation_affinity {\n        reservation_affinity_type = \"ANY_RESERVATION\"\n      }\n    }\n    provisioning_model = \"SPOT\"\n    scaling_spec {\n      min_node_count = 0",
    );
    assert_eq!(
        find(&errors(&spot), "SPOT"),
        "25:7 pool `cpu` sets reservation_affinity, which provisioning_model SPOT does not use"
    );
    let gpu = valid_with(
        "      machine_type = \"n2-standard-8\"\n    }\n    scaling_spec {\n      min_node_count = 0",
        "      machine_type = \"a3-highgpu-8g\"\n      accelerator_type = \"NVIDIA_H100_80GB\"\n    }\n    scaling_spec {\n      min_node_count = 0",
    );
    assert_eq!(
        find(&errors(&gpu), "accelerators"),
        "25:26 pool `cpu` has accelerators but neither provisioning_model nor reservation_affinity"
    );
    let flex = cpu_pool_with("    flex_start_max_duration = \"2h\"");
    assert_eq!(
        find(&errors(&flex), "flex_start"),
        "31:31 flex_start_max_duration of pool `cpu` needs provisioning_model FLEX_START"
    );
}

#[test]
fn project_and_region_are_required() {
    let text = valid_file().replace("  project = \"demo-project\"\n", "");
    assert_eq!(
        find(&errors(&text), "no project"),
        "7:1 cluster `train01` has no project"
    );
    let bad = valid_with("  network {", "  region = \"Europe\"\n  network {");
    assert_eq!(
        find(&errors(&bad), "location"),
        "9:12 location `Europe` is invalid: expected a region such as `us-central1`"
    );
}

#[test]
fn all_problems_are_reported_together() {
    let text = valid_with("max_node_count = 4", "max_node_count = \"x\"").replacen(
        "network {",
        "netwrk {",
        1,
    );
    let diagnostics = errors(&text);
    assert!(diagnostics.len() >= 2, "{diagnostics:?}");
    assert!(diagnostics.iter().all(|d| d.severity == Severity::Error));
}

#[test]
fn provider_checks() {
    let text = valid_file().replace("stack   = \"test\"", "stack   = \"Test Stack\"");
    assert_eq!(
        find(&errors(&text), "stack"),
        "5:13 stack `Test Stack` is not a valid label value: it may contain only lowercase letters, digits, `_` and `-`"
    );
    let other = valid_file().replace("provider \"google\"", "provider \"aws\"");
    assert_eq!(
        find(&errors(&other), "unknown provider"),
        "2:1 unknown provider `aws`"
    );
    let endpoint = valid_file().replace("stack   = \"test\"", "endpoint = \"ftp://x\"");
    assert_eq!(
        find(&errors(&endpoint), "endpoint"),
        "5:14 endpoint `ftp://x` is neither \"local\" nor an http(s) URL"
    );
}

/// The valid file without its `stack` line, with `extra` added to the provider block.
fn without_stack(extra: &str) -> String {
    valid_file().replace("  stack   = \"test\"\n", extra)
}

#[test]
fn stack_is_required_unless_the_endpoint_is_local() {
    for provider_extra in ["", "  endpoint = \"https://example.test\"\n"] {
        let diagnostics = errors(&without_stack(provider_extra));
        assert_eq!(
            find(&diagnostics, "stack"),
            "2:1 the provider block sets no `stack`; it is required unless `endpoint = \"local\"`"
        );
        let hint = diagnostics[0].hint.as_deref().unwrap();
        assert!(hint.contains("`stack = \"...\"`"), "{hint}");
        assert!(hint.contains("unique per configuration"), "{hint}");
        assert!(hint.contains("owner of these clusters"), "{hint}");
    }
}

#[test]
fn without_a_provider_block_the_missing_stack_points_at_the_first_cluster() {
    let text = format!(
        "cluster \"train01\" {{\n  project = \"demo-project\"\n  region  = \"us-central1\"{CLUSTER_BODY}}}\n"
    );
    assert_eq!(
        find(&errors(&text), "stack"),
        "1:1 no provider block sets `stack`; it is required unless `endpoint = \"local\"`"
    );
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
    assert_eq!(loaded.config.provider.stack, "test");
    assert_eq!(loaded.config.provider.stack_origin, StackOrigin::Explicit);
}

#[test]
fn a_stack_longer_than_a_label_value_is_refused() {
    let long = "s".repeat(64);
    let text = valid_file().replace("stack   = \"test\"", &format!("stack   = \"{long}\""));
    assert_eq!(
        find(&errors(&text), "stack"),
        format!(
            "5:13 stack `{long}` is not a valid label value: it must be at most 63 characters long"
        )
    );
}

#[test]
fn provider_update_mode_is_checked_and_typed() {
    let bad = valid_file().replace(
        "  stack   = \"test\"\n",
        "  stack   = \"test\"\n  update_mode = \"USER_ONLY_PLEASE\"\n",
    );
    assert_eq!(
        find(&errors(&bad), "update_mode"),
        "6:17 `USER_ONLY_PLEASE` is not a valid update_mode"
    );
    let good = valid_file().replace(
        "  stack   = \"test\"\n",
        "  stack   = \"test\"\n  update_mode = \"USER_ONLY\"\n",
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
    let diagnostics = errors(&ignoring("[\"labels\", \"node_pool.cpu.nonsense\"]"));
    assert_eq!(
        find(&diagnostics, "ignore_changes"),
        "10:33 invalid `ignore_changes` entry: `node_pool.cpu.nonsense` names no field (read as `node_pools[].nonsense`)"
    );
    assert!(
        diagnostics[0]
            .hint
            .as_deref()
            .unwrap()
            .contains("node_pool.cpu.scaling_spec")
    );
    assert_eq!(
        find(&errors(&ignoring("[\"update_time\"]")), "ignore_changes"),
        "10:23 invalid `ignore_changes` entry: `update_time` names an output-only field, which is never compared"
    );
    assert_eq!(
        find(&errors(&ignoring("[\"labels\", 3]")), "ignore_changes"),
        "10:33 wrong value in `ignore_changes`: expected a field path as a string, found a number"
    );
}

#[test]
fn a_computed_ignore_changes_list_is_checked_at_its_value() {
    let text = format!(
        "locals {{\n  ignored = [\"node_pool.cpu\", \"node_pool\"]\n}}\n{}",
        ignoring("local.ignored")
    );
    assert_eq!(
        find(&errors(&text), "ignore_changes"),
        "13:22 invalid `ignore_changes` entry: `node_pool` needs the node_pool label after `node_pool`"
    );
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
                project: "demo-project".into(),
                region: "us-central1".into(),
                location: SourceLocation {
                    file: "main.hcl".into(),
                    line: 43,
                    column: 1,
                },
            },
            RemovedCluster {
                id: "old01".into(),
                project: "demo-project".into(),
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
            ("demo-project".to_owned(), "europe-west4".to_owned()),
            ("demo-project".to_owned(), "us-central1".to_owned()),
        ]
    );
}

#[test]
fn removed_cluster_id_is_checked() {
    let diagnostics = errors(&with_removed("removed {\n  cluster = \"Train_02\"\n}\n"));
    assert_eq!(
        find(&diagnostics, "Train_02"),
        "44:13 cluster ID `Train_02` is invalid: it must start with a lowercase letter"
    );
}

#[test]
fn removed_unknown_attribute_suggests_the_closest_name() {
    let diagnostics = errors(&with_removed(
        "removed {\n  cluster = \"train02\"\n  regoin  = \"us-east1\"\n}\n",
    ));
    assert_eq!(
        find(&diagnostics, "unknown attribute"),
        "45:3 unknown attribute `regoin` in `removed`"
    );
    assert_eq!(
        diagnostics[0].hint.as_deref(),
        Some("did you mean `region`?")
    );
    let nested = errors(&with_removed(
        "removed {\n  cluster = \"train02\"\n  lifecycle {}\n}\n",
    ));
    assert_eq!(
        find(&nested, "unknown block"),
        "45:3 unknown block `lifecycle` in `removed`"
    );
}

#[test]
fn removed_needs_a_cluster_and_no_label() {
    assert_eq!(
        find(&errors(&with_removed("removed {\n}\n")), "needs"),
        "43:1 a `removed` block needs `cluster`, the ID of the cluster to release"
    );
    assert_eq!(
        find(
            &errors(&with_removed(
                "removed \"train02\" {\n  cluster = \"train02\"\n}\n"
            )),
            "label"
        ),
        "43:9 a `removed` block takes no label"
    );
}

#[test]
fn a_cluster_removed_twice_is_reported_at_the_second_block() {
    let diagnostics = errors(&with_removed(
        "removed {\n  cluster = \"train02\"\n}\nremoved {\n  cluster = \"train02\"\n}\n",
    ));
    assert_eq!(
        find(&diagnostics, "more than once"),
        "47:13 cluster `train02` is removed more than once"
    );
    assert_eq!(
        diagnostics[0].hint.as_deref(),
        Some("already removed at main.hcl:43:1")
    );
}

#[test]
fn a_cluster_cannot_be_both_declared_and_removed() {
    let diagnostics = errors(&with_removed("removed {\n  cluster = \"train01\"\n}\n"));
    assert_eq!(
        find(&diagnostics, "both"),
        "44:13 cluster `train01` is both declared and removed"
    );
    let hint = diagnostics[0].hint.as_deref().unwrap();
    assert!(hint.contains("declared at main.hcl:8:1"), "{hint}");
}

#[test]
fn removed_project_is_checked() {
    let diagnostics = errors(&with_removed(
        "removed {\n  cluster = \"train02\"\n  project = \"Not A Project\"\n}\n",
    ));
    assert_eq!(
        find(&diagnostics, "Not A Project"),
        "45:13 project `Not A Project` is invalid: use a project ID (6–30 lowercase letters, digits, hyphens) or a project number"
    );
}

#[test]
fn a_broken_endpoint_is_reported_without_a_missing_stack() {
    let diagnostics = errors(&without_stack("  endpoint = \"lokal\"\n"));
    assert_eq!(
        find(&diagnostics, "endpoint"),
        "5:14 endpoint `lokal` is neither \"local\" nor an http(s) URL"
    );
    assert!(
        diagnostics.iter().all(|d| !d.message.contains("`stack`")),
        "{diagnostics:?}"
    );
}
