//! Every validation rule: the message and the line/column it points at. The base file is
//! `support::valid_file()`; each case edits one spot of it.

use clusterform_config::Severity;

use crate::support::{errors, find, load_text, valid_file, valid_with};

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
        crate::support::CLUSTER_BODY
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
