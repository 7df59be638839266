//! Every validation rule: the whole rendered diagnostic (message, file:line:col, the source
//! line underlined, the hint) is pinned by a snapshot. The base file is
//! `support::valid_file()`; each case edits one spot of it.

use clusterform_config::{
    RemovedCluster, Severity, SourceLocation, StackOrigin, VariableInputs, load,
};
use clusterform_model::{ClusterName, UpdateMode};

use crate::support::{
    CLUSTER_BODY, PROVIDER, dir_with, failure, find, load_text, valid_file, valid_with,
};

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
        PROVIDER
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
    // International characters, and values of up to 64 code points, are what the service allows.
    let sixty_four = "é".repeat(64);
    let allowed = valid_with(
        "  network {",
        &format!("  labels = {{ équipe = \"研究-ml\", long = \"{sixty_four}\" }}\n  network {{"),
    );
    let loaded = load_text(&allowed);
    assert!(loaded.is_ok(), "{:?}", loaded.err());
    insta::assert_snapshot!(problem(
        "  network {",
        &format!("  labels = {{ long = \"{sixty_four}x\" }}\n  network {{"),
        "label `long`"
    ), @r#"
     × invalid value `ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééx` of label
     │ `long`: it must be at most 64 characters long
       ╭─[main.hcl:9:12]
     8 │ cluster "train01" {
     9 │   labels = { long = "ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééx" }
       ·            ──────────────────────────────────────────────────────────────────────────────
    10 │   network {
       ╰────
     help: label keys: 1 to 63 lowercase letters (of any script), digits, `_` and `-`, starting with
           a letter; values: at most 64 of the same
    "#);
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
    // A machine type with built-in accelerators is a GPU pool without naming them.
    let built_in = valid_with(
        "      machine_type = \"n2-standard-8\"\n    }\n    scaling_spec {\n      min_node_count = 0",
        "      machine_type = \"a3-ultragpu-8g\"\n    }\n    scaling_spec {\n      min_node_count = 0",
    );
    insta::assert_snapshot!(find(&failure(&built_in), "neither provisioning_model"), @r#"
     × pool `cpu` has accelerators but neither provisioning_model nor reservation_affinity
       ╭─[main.hcl:24:22]
    23 │     machine_spec {
    24 │       machine_type = "a3-ultragpu-8g"
       ·                      ────────────────
    25 │     }
       ╰────
     help: set provisioning_model (ON_DEMAND, SPOT, FLEX_START) or a reservation_affinity
    "#);
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

#[test]
fn an_endpoint_that_looks_like_a_url_but_does_not_parse_says_why_where() {
    let endpoint = valid_file().replace("stack   = \"research\"", "endpoint = \"https://\"");
    insta::assert_snapshot!(find(&failure(&endpoint), "endpoint"), @r#"
      × endpoint `https://` is not a valid URL: empty host
       ╭─[main.hcl:5:14]
     4 │   region  = "us-central1"
     5 │   endpoint = "https://"
       ·              ──────────
     6 │ }
       ╰────
      help: use "local" for the built-in emulator, or a base URL
    "#);
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
    let long = "s".repeat(65);
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
fn a_mistyped_ignore_changes_name_gets_the_entry_as_it_was_meant() {
    for (typed, meant) in [
        ("lables", "labels"),
        (
            "node_pool.cpu.scaling_spec.max_node_cont",
            "node_pool.cpu.scaling_spec.max_node_count",
        ),
        ("node_pol.cpu.zone", "node_pool.cpu.zone"),
    ] {
        let diagnostics = failure(&ignoring(&format!("[\"{typed}\"]")));
        assert_eq!(
            diagnostics.items[0].hint.as_deref(),
            Some(format!("did you mean `{meant}`?").as_str()),
            "{typed}"
        );
    }
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
                name: ClusterName::new("my-proj", "us-central1", "train02").unwrap(),
                location: SourceLocation {
                    file: "main.hcl".into(),
                    line: 43,
                    column: 1,
                },
            },
            RemovedCluster {
                name: ClusterName::new("my-proj", "europe-west4", "old01").unwrap(),
                location: SourceLocation {
                    file: "main.hcl".into(),
                    line: 47,
                    column: 1,
                },
            },
        ]
    );
    let locations: Vec<(String, String)> = config
        .locations()
        .iter()
        .map(|l| (l.project().to_owned(), l.region().to_owned()))
        .collect();
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

/// The valid file whose `cpu` pool has `machine_spec` lines `machine` and `extra` lines after
/// its zone.
fn cpu_pool_as(machine: &str, extra: &str) -> String {
    valid_with(
        "      machine_type = \"n2-standard-8\"\n    }\n    scaling_spec {\n      min_node_count = 0",
        &format!("{machine}\n    }}\n    scaling_spec {{\n      min_node_count = 0"),
    )
    .replacen(
        "zone = \"us-central1-a\"\n  }\n  orch",
        &format!("zone = \"us-central1-a\"\n{extra}\n  }}\n  orch"),
        1,
    )
}

const A4: &str = "      machine_type = \"a4-highgpu-8g\"\n      accelerator_type = \"NVIDIA_B200\"\n      accelerator_count = 8";

#[test]
fn a4_boot_disks_are_hyperdisk_balanced_or_unset() {
    let standard = cpu_pool_as(
        A4,
        "    provisioning_model = \"SPOT\"\n    boot_disk {\n      boot_disk_type = \"pd-standard\"\n    }",
    );
    insta::assert_snapshot!(find(&failure(&standard), "requires boot_disk_type"));
    for fine in [
        "    provisioning_model = \"SPOT\"\n    boot_disk {\n      boot_disk_type = \"hyperdisk-balanced\"\n    }",
        "    provisioning_model = \"SPOT\"\n    boot_disk {\n      boot_disk_size_gb = 200\n    }",
    ] {
        load_text(&cpu_pool_as(A4, fine)).unwrap();
    }
    let cpu = cpu_pool_with("    boot_disk {\n      boot_disk_type = \"pd-standard\"\n    }");
    load_text(&cpu).expect("other machine types take any boot disk");
}

/// The `cpu` pool as an A4 pool on reservation `values` with affinity type `kind`.
fn reserved(kind: &str, values: &str) -> String {
    cpu_pool_as(
        &format!(
            "{A4}\n      reservation_affinity {{\n        reservation_affinity_type = \"{kind}\"\n        key = \"compute.googleapis.com/reservation-name\"\n        values = {values}\n      }}"
        ),
        "    provisioning_model = \"RESERVATION\"",
    )
}

#[test]
fn reservation_affinity_takes_only_specific_reservations() {
    let any = reserved(
        "ANY_RESERVATION",
        "[\"projects/my-proj/zones/us-central1-a/reservations/r\"]",
    );
    insta::assert_snapshot!(find(&failure(&any), "reservation_affinity_type"));
}

#[test]
fn reservation_values_are_full_names_and_a_bare_name_gets_its_full_form() {
    let bare = reserved(
        "SPECIFIC_RESERVATION",
        "[\"projects/my-proj/zones/us-central1-a/reservations/r/reservationBlocks/b\", \"my-reservation\"]",
    );
    insta::assert_snapshot!(find(&failure(&bare), "my-reservation"));
    let broken = reserved(
        "SPECIFIC_RESERVATION",
        "[\"projects/my-proj/reservations/r\"]",
    );
    insta::assert_snapshot!(find(&failure(&broken), "full reservation name"));
    let full = reserved(
        "SPECIFIC_RESERVATION",
        "[\"projects/host/zones/us-central1-a/reservations/r/reservationBlocks/b/reservationSubBlocks/s\"]",
    );
    load_text(&full).unwrap();
}

#[test]
fn the_login_pool_does_not_autoscale() {
    let text = valid_with(
        "      min_node_count = 1\n      max_node_count = 1",
        "      min_node_count = 1\n      max_node_count = 3",
    );
    insta::assert_snapshot!(find(&failure(&text), "login pool"));
    let cpu = valid_with("max_node_count = 4", "max_node_count = 40");
    load_text(&cpu).expect("compute pools autoscale");
}

#[test]
fn flex_start_max_duration_is_30_seconds_to_7_days() {
    for (duration, shown) in [("\"10s\"", "10s"), ("\"8d\"", "8d")] {
        let text = cpu_pool_with(&format!(
            "    provisioning_model = \"FLEX_START\"\n    flex_start_max_duration = {duration}"
        ));
        let diagnostic = find(&failure(&text), "flex_start_max_duration");
        assert!(diagnostic.contains(&format!("is {shown};")), "{diagnostic}");
        if shown == "10s" {
            insta::assert_snapshot!(diagnostic);
        }
    }
    for fine in ["\"30s\"", "\"7d\""] {
        let text = cpu_pool_with(&format!(
            "    provisioning_model = \"FLEX_START\"\n    flex_start_max_duration = {fine}"
        ));
        load_text(&text).unwrap();
    }
}

#[test]
fn display_names_are_at_most_128_characters() {
    let long = format!("  display_name = \"{}\"\n  network {{", "é".repeat(129));
    insta::assert_snapshot!(find(
        &failure(&valid_with("  network {", &long)),
        "display_name"
    ));
    let fits = format!("  display_name = \"{}\"\n  network {{", "é".repeat(128));
    load_text(&valid_with("  network {", &fits)).unwrap();
}

/// The valid file with a Lustre export to `bucket`.
fn exporting_to(bucket: &str) -> String {
    valid_with(
        "  network {",
        &format!(
            "  lustre_export_config {{\n    destination_bucket = \"{bucket}\"\n  }}\n  network {{"
        ),
    )
}

#[test]
fn destination_bucket_is_a_bucket_name_not_a_url() {
    insta::assert_snapshot!(find(
        &failure(&exporting_to("gs://my-bucket/exports")),
        "destination_bucket"
    ));
    load_text(&exporting_to("my-bucket")).unwrap();
}

#[test]
fn a_zero_timeout_is_refused() {
    let text = valid_with(
        "  network {",
        "  timeouts {\n    create = \"0s\"\n  }\n  network {",
    );
    insta::assert_snapshot!(find(&failure(&text), "timeout"));
}

/// The valid file with `config` in slurm_spec, `partition_config` in partition `cpu` and a
/// node set of pool `cpu` with `node_set_config`.
fn slurm_maps(config: &str, partition_config: &str, node_set_config: &str) -> String {
    valid_with(
        "      login_node_pool_id     = \"login\"\n      partition \"cpu\" {\n        node_pool_ids = [\"cpu\"]\n      }",
        &format!(
            "      login_node_pool_id     = \"login\"\n      config = {config}\n      partition \"cpu\" {{\n        node_pool_ids = [\"cpu\"]\n        config = {partition_config}\n      }}\n      node_set \"cpu\" {{\n        config = {node_set_config}\n      }}"
        ),
    )
}

#[test]
fn refused_slurm_parameters_are_reported_at_their_key() {
    let text = slurm_maps(
        "{ DefMemPerCPU = \"1024\", health_check_program = \"/bin/true\", \"StorageHost\" = \"db\" }",
        "{ MaxTime = \"1:00:00\", Default = \"YES\" }",
        "{ Weight = \"1\", Prolog = \"/opt/p.sh\" }",
    );
    let diagnostics = failure(&text);
    insta::assert_snapshot!(find(&diagnostics, "health_check_program"));
    insta::assert_snapshot!(find(&diagnostics, "StorageHost"));
    insta::assert_snapshot!(find(&diagnostics, "`Default`"));
    insta::assert_snapshot!(find(&diagnostics, "`Prolog`"));
    assert_eq!(diagnostics.items.len(), 4, "{}", diagnostics.render(false));
    load_text(&slurm_maps(
        "{ DefMemPerCPU = \"1024\" }",
        "{ MaxTime = \"1:00:00\" }",
        "{ Weight = \"1\" }",
    ))
    .unwrap();
}

#[test]
fn a_refused_key_of_a_computed_map_is_reported_at_the_map() {
    let text = slurm_maps(
        "merge({ MaxJobCount = \"10\" }, { RequeueExit = \"1\" })",
        "{}",
        "{}",
    );
    insta::assert_snapshot!(find(&failure(&text), "RequeueExit"));
}

#[test]
fn one_slurm_parameter_twice_is_an_error_at_the_later_key() {
    for config in [
        "{ DefMemPerCPU = \"1024\", def_mem_per_cpu = \"2048\" }",
        "{ def_mem_per_cpu = \"2048\", DefMemPerCPU = \"1024\" }",
    ] {
        let text = slurm_maps(config, "{}", "{}");
        insta::assert_snapshot!(find(&failure(&text), "same Slurm parameter"));
    }
}

#[test]
fn a_node_set_cannot_describe_the_login_pool() {
    let text = valid_with(
        "      login_node_pool_id     = \"login\"",
        "      login_node_pool_id     = \"login\"\n      node_set \"login\" {}",
    );
    insta::assert_snapshot!(find(&failure(&text), "login pool"));
}

#[test]
fn a_typo_region_is_a_warning_and_never_built_into_a_hint() {
    let text = valid_file().replace("region  = \"us-central1\"", "region  = \"us-centrall\"");
    let diagnostics = failure(&text);
    insta::assert_snapshot!(find(&diagnostics, "Get started"));
    let zone = find(&diagnostics, "not in the cluster's region");
    assert!(!zone.contains("us-centrall-"), "{zone}");
    insta::assert_snapshot!(zone);
    let subnetwork = text.replacen(
        "network = \"projects/my-proj/global/networks/default\"",
        "network = \"projects/my-proj/global/networks/default\"\n    subnetwork = \"projects/my-proj/regions/us-central1/subnetworks/s\"",
        1,
    );
    let subnetwork = find(&failure(&subnetwork), "subnetwork is in region");
    assert!(
        !subnetwork.contains("subnetwork of `us-centrall`"),
        "{subnetwork}"
    );
    insta::assert_snapshot!(subnetwork);
}

#[test]
fn a_malformed_provider_region_is_an_error_without_a_region_warning() {
    let text = valid_file().replace("region  = \"us-central1\"", "region  = \"Europe\"");
    let diagnostics = failure(&text);
    find(&diagnostics, "location");
    assert!(
        diagnostics
            .items
            .iter()
            .all(|d| !d.message.contains("Get started")),
        "{}",
        diagnostics.render(false)
    );
}

#[test]
fn a_cluster_region_outside_the_documented_list_is_a_warning_at_the_cluster() {
    let text = valid_with("  network {", "  region = \"asia-northeast1\"\n  network {")
        .replace("us-central1-a", "asia-northeast1-a");
    let loaded = load_text(&text).expect("an undocumented region is only a warning");
    let warnings: Vec<String> = loaded
        .warnings
        .iter()
        .map(|w| format!("{}:{} {}", w.line, w.column, w.message))
        .collect();
    insta::assert_debug_snapshot!(warnings, @r#"
    [
        "9:12 region `asia-northeast1` is not one of the regions the Get started page lists for training clusters",
    ]
    "#);
}

/// The valid file with `lines` added to slurm_spec.
fn slurm_spec_with(lines: &str) -> String {
    valid_with(
        "      login_node_pool_id     = \"login\"",
        &format!("      login_node_pool_id     = \"login\"\n{lines}"),
    )
}

#[test]
fn config_cannot_sit_beside_scheduling_or_accounting() {
    let text = slurm_spec_with(
        "      config = { PriorityType = \"priority/multifactor\" }\n      scheduling {\n        priority_weight_age = 1000\n      }\n      accounting {\n        accounting_storage_enforce = \"limits,qos\"\n      }",
    );
    let diagnostics = failure(&text);
    insta::assert_snapshot!(find(&diagnostics, "`scheduling` cannot"));
    find(&diagnostics, "`accounting` cannot");
    assert!(
        diagnostics
            .items
            .iter()
            .all(|d| d.severity == Severity::Error),
        "no superseded warning on top of the error: {}",
        diagnostics.render(false)
    );
}

#[test]
fn scheduling_and_accounting_alone_still_work_with_a_warning() {
    let text = slurm_spec_with(
        "      config = {}\n      scheduling {\n        preempt_mode = \"SUSPEND,GANG\"\n      }",
    );
    let loaded = load_text(&text).expect("scheduling without config still works");
    let warnings: Vec<String> = loaded
        .warnings
        .iter()
        .map(|w| {
            format!(
                "{}:{} {} | {}",
                w.line,
                w.column,
                w.message,
                w.hint.as_deref().unwrap_or("")
            )
        })
        .collect();
    insta::assert_debug_snapshot!(warnings, @r#"
    [
        "37:7 `scheduling` is superseded by `config`; it still works for clusters that use it | write its settings in `config` as slurm.conf parameters (`PriorityType`, `PriorityWeightAge`, `PreemptMode`, ...) and remove the `scheduling` block",
    ]
    "#);
}

/// Without clusters the provider's project and region are the location the refresh lists: a
/// malformed one is an error at its attribute, not a plan that silently lists nothing.
#[test]
fn a_malformed_provider_location_without_clusters_is_an_error_at_its_attribute() {
    let text = "provider \"google\" {\n  project = \"My Project\"\n  region  = \"us central\"\n  stack   = \"research\"\n}\n";
    let diagnostics = failure(text);
    let messages: Vec<String> = diagnostics
        .items
        .iter()
        .map(|d| format!("{}:{}: {}", d.line, d.column, d.message))
        .collect();
    assert_eq!(
        messages,
        [
            "2:13: project `My Project` is invalid: use a project ID (6–30 lowercase letters, digits, hyphens) or a project number",
            "3:13: location `us central` is invalid: expected a region such as `us-central1`",
        ]
    );
    let empty_for_each =
        format!("{text}cluster \"fleet\" {{\n  for_each = {{}}\n{CLUSTER_BODY}}}\n");
    assert_eq!(
        failure(&empty_for_each).items.len(),
        2,
        "a for_each over nothing declares no cluster"
    );
    let with_cluster = format!("{text}{}", &valid_file()[PROVIDER.len()..]);
    let reported = failure(&with_cluster);
    let project_problems = reported
        .items
        .iter()
        .filter(|d| d.message.starts_with("project `My Project`"))
        .count();
    assert_eq!(
        project_problems,
        1,
        "with a cluster, the check of the cluster that takes it reports it, once: {}",
        reported.render(false)
    );
}
