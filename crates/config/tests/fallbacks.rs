//! `fallback` blocks in node pools: what they decode to (whole alternative pools), what they
//! refuse, and how each alternative is checked as a pool, at its block.

use clusterform_config::{
    Diagnostic, Diagnostics, PoolFallbacks, Severity, VariableInputs, validate,
};
use clusterform_model::{MachineSpec, NodePool, ProvisioningModel, ScalingSpec};

use crate::support::{PROVIDER, dir_with, failure, load_text};

/// A cluster whose pool `gpu` is on flex start, with two fallbacks: H200 machines, then H100
/// Mega machines on Spot. `{gpu}` is replaced by more of the pool's body, `{cpu}` by more of
/// pool `cpu`'s, `{cluster}` by more of the cluster's.
const GPU_CLUSTER: &str = r#"
cluster "train01" {
  network {
    network = "projects/my-proj/global/networks/default"
  }
  node_pool "login" {
    machine_spec {
      machine_type = "n2-standard-8"
    }
    scaling_spec {
      min_node_count = 1
      max_node_count = 1
    }
    zone = "us-central1-a"
  }
  node_pool "cpu" {
    machine_spec {
      machine_type = "n2-standard-8"
    }
    zone = "us-central1-a"
{cpu}
  }
  node_pool "gpu" {
    machine_spec {
      machine_type      = "a4-highgpu-8g"
      accelerator_type  = "NVIDIA_B200"
      accelerator_count = 8
    }
    scaling_spec {
      min_node_count = 1
      max_node_count = 2
    }
    provisioning_model      = "FLEX_START"
    flex_start_max_duration = "86400s"
    zone                    = "us-central1-a"
    fallback {
      machine_spec {
        machine_type      = "a3-ultragpu-8g"
        accelerator_type  = "NVIDIA_H200_141GB"
        accelerator_count = 8
      }
    }
    fallback {
      machine_spec {
        machine_type      = "a3-megagpu-8g"
        accelerator_type  = "NVIDIA_H100_MEGA_80GB"
        accelerator_count = 8
      }
      provisioning_model = "SPOT"
    }
{gpu}
  }
  orchestrator_spec {
    slurm_spec {
      home_directory_storage = "projects/my-proj/locations/us-central1-a/instances/home"
      login_node_pool_id     = "login"
      partition "gpu" {
        node_pool_ids = ["gpu", "cpu"]
      }
    }
  }
{cluster}
}
"#;

/// The file with `gpu`, `cpu` and `cluster` added where [`GPU_CLUSTER`] says. Line 1 is the
/// provider's first line; pool `gpu`'s fallbacks start on lines 41 and 48 and, when `cpu` adds
/// nothing, `gpu` starts on line 56 and `cluster` on line 67.
fn file(gpu: &str, cpu: &str, cluster: &str) -> String {
    let text = GPU_CLUSTER
        .replace("{gpu}", gpu)
        .replace("{cpu}", cpu)
        .replace("{cluster}", cluster);
    format!("{}{text}", PROVIDER.trim_start())
}

/// What every file of [`GPU_CLUSTER`] is told of its FLEX_START pool's chain, at pool `gpu`'s
/// first fallback; [`shown`] leaves it out, and
/// `a_flex_start_chain_and_a_pool_that_starts_empty_are_warned_at_their_fallbacks` checks it.
const FLEX_START_NOTE: &str = "pool `gpu` is FLEX_START: its requests are queued until the machines are available (Dynamic Workload Scheduler), and no public record shows a flex create failing for a stockout, so its fallbacks may never be tried";

/// Each diagnostic as `file:line:col severity: message | hint`, without [`FLEX_START_NOTE`].
fn shown(items: &[Diagnostic]) -> Vec<String> {
    items
        .iter()
        .filter(|d| d.message != FLEX_START_NOTE)
        .map(|d| {
            let severity = match d.severity {
                Severity::Error => "error",
                _ => "warning",
            };
            format!(
                "{}:{}:{} {severity}: {} | {}",
                d.file.display(),
                d.line,
                d.column,
                d.message,
                d.hint.as_deref().unwrap_or("")
            )
        })
        .collect()
}

fn errors(text: &str) -> Vec<String> {
    let Diagnostics { items, .. } = failure(text);
    shown(&items)
}

fn warnings(text: &str) -> Vec<String> {
    match load_text(text) {
        Ok(loaded) => shown(&loaded.warnings),
        Err(diagnostics) => panic!("{}", diagnostics.render(false)),
    }
}

fn machine(machine_type: &str, accelerator_type: &str) -> Option<MachineSpec> {
    Some(MachineSpec {
        machine_type: Some(machine_type.to_owned()),
        accelerator_type: Some(accelerator_type.to_owned()),
        accelerator_count: Some(8),
        ..MachineSpec::default()
    })
}

#[test]
fn each_fallback_decodes_to_the_whole_pool_with_what_it_sets() {
    let loaded = load_text(&file("", "", "")).unwrap();
    assert_eq!(shown(&loaded.warnings), Vec::<String>::new());
    let cluster = &loaded.config.clusters[0];
    let gpu = cluster.cluster.node_pool("gpu").unwrap();
    let h200 = NodePool {
        machine_spec: machine("a3-ultragpu-8g", "NVIDIA_H200_141GB"),
        ..gpu.clone()
    };
    // Spot leaves the pool's flex-start duration behind: it belongs to FLEX_START only.
    let h100_spot = NodePool {
        machine_spec: machine("a3-megagpu-8g", "NVIDIA_H100_MEGA_80GB"),
        provisioning_model: Some(ProvisioningModel::Spot),
        flex_start_max_duration: None,
        ..gpu.clone()
    };
    assert_eq!(
        cluster.fallbacks,
        [PoolFallbacks {
            pool: "gpu".to_owned(),
            alternatives: vec![h200, h100_spot],
        }]
    );
    assert_eq!(gpu.flex_start_max_duration.as_deref(), Some("86400s"));
}

#[test]
fn attempt_k_takes_each_pools_kth_alternative_or_its_last() {
    // One static node: a create asks for machines for `cpu`, so its chain applies.
    let cpu_fallback = "    scaling_spec {\n      min_node_count = 1\n    }\n    fallback {\n      scaling_spec {\n        max_node_count = 8\n      }\n    }";
    let loaded = load_text(&file("", cpu_fallback, "")).unwrap();
    let cluster = &loaded.config.clusters[0];
    let pools: Vec<&str> = cluster.fallbacks.iter().map(|f| f.pool.as_str()).collect();
    assert_eq!(pools, ["cpu", "gpu"], "pools in declaration order");
    assert_eq!(cluster.attempts(), 3);
    let machine_of = |attempt: usize, pool: &str| {
        let made = cluster.attempt(attempt);
        let pool = made.node_pool(pool).unwrap().clone();
        (
            pool.machine_spec.unwrap().machine_type.unwrap(),
            pool.scaling_spec.and_then(|s| s.max_node_count),
        )
    };
    let gpu = |machine: &str| (machine.to_owned(), Some(2));
    let cpu = |max| ("n2-standard-8".to_owned(), max);
    assert_eq!(shown(&loaded.warnings), Vec::<String>::new());
    assert_eq!(machine_of(0, "gpu"), gpu("a4-highgpu-8g"));
    assert_eq!(machine_of(0, "cpu"), cpu(None));
    assert_eq!(machine_of(1, "gpu"), gpu("a3-ultragpu-8g"));
    assert_eq!(machine_of(1, "cpu"), cpu(Some(8)));
    assert_eq!(machine_of(2, "gpu"), gpu("a3-megagpu-8g"));
    assert_eq!(machine_of(2, "cpu"), cpu(Some(8)), "cpu's last");
    assert_eq!(
        cluster.attempt(1).node_pool("cpu").unwrap().scaling_spec,
        Some(ScalingSpec {
            max_node_count: Some(8),
            ..ScalingSpec::default()
        }),
        "scaling_spec is replaced whole"
    );
}

#[test]
fn fallbacks_are_not_part_of_the_cluster_sent_to_the_api() {
    let loaded = load_text(&file("", "", "")).unwrap();
    let cluster = &loaded.config.clusters[0];
    let json = serde_json::to_string(&cluster.cluster).unwrap();
    assert!(!json.to_lowercase().contains("fallback"), "{json}");
    assert!(json.contains("a4-highgpu-8g") && !json.contains("a3-ultragpu-8g"));
}

#[test]
fn a_fallback_sets_only_the_fallback_fields() {
    let zone = "    fallback {\n      zone = \"us-central1-b\"\n      machine_spc {}\n    }";
    assert_eq!(
        errors(&file(zone, "", "")),
        [
            "main.hcl:57:7 error: `zone` cannot be set in a `fallback` block: a fallback may set machine_spec, provisioning_model, flex_start_max_duration, boot_disk and scaling_spec; everything else is the pool's | set `zone` in the pool itself: every fallback of the pool uses it",
            "main.hcl:58:7 error: `machine_spc` cannot be set in a `fallback` block: a fallback may set machine_spec, provisioning_model, flex_start_max_duration, boot_disk and scaling_spec; everything else is the pool's | did you mean `machine_spec`?",
        ]
    );
}

#[test]
fn a_fallback_takes_no_label_and_is_not_empty() {
    let labelled = "    fallback \"h100\" {\n      provisioning_model = \"SPOT\"\n    }";
    assert_eq!(
        errors(&file(labelled, "", "")),
        [
            "main.hcl:56:14 error: a `fallback` block takes no label | write `fallback { ... }`: a pool's fallbacks are tried in the order they are written"
        ]
    );
    assert_eq!(
        errors(&file("    fallback {}", "", "")),
        [
            "main.hcl:56:5 error: an empty `fallback` block would retry the same pool | set at least one of machine_spec, provisioning_model, flex_start_max_duration, boot_disk and scaling_spec in it, or remove it"
        ]
    );
}

#[test]
fn fallback_members_are_decoded_as_the_pools_are() {
    let wrong = "    fallback {\n      provisioning_model = \"spot\"\n      machine_spec {\n        accelerator_count = 8\n      }\n      scaling_spec = {}\n      boot_disk {}\n      boot_disk {}\n    }";
    assert_eq!(
        errors(&file(wrong, "", "")),
        [
            "main.hcl:57:28 error: wrong value for `provisioning_model`: `spot` is not a valid provisioning_model | did you mean `SPOT`?",
            "main.hcl:58:7 error: missing required attribute `machine_type` in `node_pools[gpu].fallback[3].machine_spec` | node_pools[].machine_spec.machine_type: e.g. `n2-standard-8`, `a4-highgpu-8g`",
            "main.hcl:61:7 error: `scaling_spec` is a block, not an attribute | write `scaling_spec { ... }`",
            "main.hcl:63:7 error: `boot_disk` is set more than once | remove the repeated one",
        ]
    );
}

#[test]
fn fallback_blocks_elsewhere_are_unknown_blocks() {
    let at_cluster = errors(&file(
        "",
        "",
        "  fallback {\n    provisioning_model = \"SPOT\"\n  }",
    ));
    assert_eq!(
        at_cluster,
        [
            "main.hcl:67:3 error: unknown attribute or block `fallback` in a cluster block | expected one of: display_name, labels, network, node_pool, orchestrator_spec, runtime_spec, lustre_export_config, project, region, update_mode, for_each, id, timeouts, lifecycle"
        ]
    );
    let in_machine = errors(&file("", "", "").replacen(
        "      accelerator_count = 8\n    }\n    scaling_spec",
        "      accelerator_count = 8\n      fallback {}\n    }\n    scaling_spec",
        1,
    ));
    assert_eq!(in_machine.len(), 1, "{in_machine:?}");
    assert!(
        in_machine[0].starts_with(
            "main.hcl:33:7 error: unknown attribute or block `fallback` in `machine_spec`"
        ),
        "{in_machine:?}"
    );
    assert!(!in_machine[0].contains("`fallback`?"), "{in_machine:?}");
}

#[test]
fn a_misspelt_fallback_in_a_pool_is_suggested() {
    let misspelt = "    fallbak {\n      provisioning_model = \"SPOT\"\n    }";
    assert_eq!(
        errors(&file(misspelt, "", "")),
        [
            "main.hcl:56:5 error: unknown attribute or block `fallbak` in `node_pool` | did you mean `fallback`?"
        ]
    );
}

#[test]
fn what_a_fallback_sets_is_checked_where_it_is_written() {
    let short = "    fallback {\n      flex_start_max_duration = \"10s\"\n    }";
    assert_eq!(
        errors(&file(short, "", "")),
        [
            "main.hcl:57:33 error: flex_start_max_duration of pool `gpu` is 10s; it must be between 30s and 7 days (604800s) (fallback 3) | write a duration such as \"24h\"; without one, the service uses 7 days"
        ]
    );
    let four = "    fallback {\n      machine_spec {\n        machine_type      = \"a3-megagpu-8g\"\n        accelerator_type  = \"NVIDIA_H100_MEGA_80GB\"\n        accelerator_count = 4\n      }\n    }";
    assert_eq!(
        warnings(&file(four, "", "")),
        [
            "main.hcl:60:29 warning: pool `gpu`: `a3-megagpu-8g` has 8 × NVIDIA_H100_MEGA_80GB; accelerator_count is 4 (fallback 3) | use accelerator_count = 8"
        ]
    );
}

#[test]
fn what_a_fallback_inherits_is_checked_at_its_block() {
    let ultra_on_standard_disk = "    boot_disk {\n      boot_disk_type = \"pd-standard\"\n    }\n    fallback {\n      machine_spec {\n        machine_type      = \"a3-ultragpu-8g\"\n        accelerator_type  = \"NVIDIA_H200_141GB\"\n        accelerator_count = 8\n      }\n      provisioning_model = \"SPOT\"\n    }";
    assert_eq!(
        errors(&file("", ultra_on_standard_disk, "")),
        [
            "main.hcl:29:5 error: Machine type a3-ultragpu-8g requires boot_disk_type to be unset (the default) or \"hyperdisk-balanced\"; got \"pd-standard\" (fallback 1, inherited from the pool) | remove boot_disk_type, or set boot_disk_type = \"hyperdisk-balanced\"",
            "main.hcl:29:5 warning: fallback 1 of pool `cpu`: the pool starts empty (min_node_count = 0); its nodes are made when jobs pend, so this fallback is never tried at create | set min_node_count above 0 for machines at create (a shortage then falls back), or remove the fallback; `clusterform status` shows nodes that fail to start"
        ]
    );
}

#[test]
fn a_problem_of_the_pool_itself_is_reported_once() {
    let text = file("", "", "").replacen(
        "zone                    = \"us-central1-a\"",
        "zone                    = \"europe-west4-a\"",
        1,
    );
    let reported = errors(&text);
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert!(reported[0].starts_with("main.hcl:40:31 error: zone `europe-west4-a` of pool `gpu`"));
}

#[test]
fn the_login_pools_alternatives_keep_equal_counts() {
    let text = file("", "", "").replacen(
        "    zone = \"us-central1-a\"\n  }\n  node_pool \"cpu\"",
        "    zone = \"us-central1-a\"\n    fallback {\n      scaling_spec {\n        min_node_count = 1\n        max_node_count = 2\n      }\n    }\n  }\n  node_pool \"cpu\"",
        1,
    );
    assert_eq!(
        errors(&text),
        [
            "main.hcl:23:26 error: the login pool `login` has min_node_count 1 and max_node_count 2; the login pool's counts must be equal (fallback 1) | set max_node_count = 1, or min_node_count = 2: login nodes do not autoscale"
        ]
    );
}

#[test]
fn an_alternative_that_makes_the_same_pool_again_is_a_warning() {
    let again = "    fallback {\n      provisioning_model = \"FLEX_START\"\n    }\n    fallback {\n      machine_spec {\n        machine_type      = \"a3-ultragpu-8g\"\n        accelerator_type  = \"NVIDIA_H200_141GB\"\n        accelerator_count = 8\n      }\n    }";
    assert_eq!(
        warnings(&file(again, "", "")),
        [
            "main.hcl:56:5 warning: fallback 3 of pool `gpu` makes the same pool as the pool itself: it would retry the same machines | change what it sets, or remove it",
            "main.hcl:59:5 warning: fallback 4 of pool `gpu` makes the same pool as its fallback 1: it would retry the same machines | change what it sets, or remove it",
        ]
    );
}

#[test]
fn a_fallback_to_another_model_leaves_the_reservation_behind() {
    let reserved = file("", "", "")
        .replacen(
            "      accelerator_count = 8\n    }\n    scaling_spec",
            "      accelerator_count = 8\n      reservation_affinity {\n        reservation_affinity_type = \"SPECIFIC_RESERVATION\"\n        values = [\"projects/my-proj/zones/us-central1-a/reservations/r\"]\n      }\n    }\n    scaling_spec",
            1,
        )
        .replacen(
            "provisioning_model      = \"FLEX_START\"\n    flex_start_max_duration = \"86400s\"",
            "provisioning_model      = \"RESERVATION\"",
            1,
        )
        .replacen(
            "    fallback {\n      machine_spec {\n        machine_type      = \"a3-ultragpu-8g\"",
            "    fallback {\n      provisioning_model = \"SPOT\"\n    }\n    fallback {\n      provisioning_model = \"FLEX_START\"\n      machine_spec {\n        machine_type      = \"a3-ultragpu-8g\"",
            1,
        );
    let loaded = load_text(&reserved).unwrap_or_else(|d| panic!("{}", d.render(false)));
    let cluster = &loaded.config.clusters[0];
    let gpu = cluster.cluster.node_pool("gpu").unwrap();
    let spot = &cluster.fallbacks[0].alternatives[0];
    let machine = gpu.machine_spec.as_ref().unwrap();
    assert!(machine.reservation_affinity.is_some());
    assert_eq!(
        spot.machine_spec,
        Some(MachineSpec {
            reservation_affinity: None,
            ..machine.clone()
        })
    );
    assert_eq!(spot.provisioning_model, Some(ProvisioningModel::Spot));
}

#[test]
fn a_sensitive_value_in_a_fallback_marks_the_pools_field() {
    let text = format!(
        "variable \"model\" {{\n  sensitive = true\n  default   = \"SPOT\"\n}}\n{}",
        file(
            "    fallback {\n      provisioning_model = var.model\n    }",
            "",
            ""
        )
    );
    let loaded = load_text(&text).unwrap();
    let paths: Vec<_> = loaded.config.clusters[0]
        .sensitive_paths
        .iter()
        .cloned()
        .collect();
    assert_eq!(paths, ["node_pools[gpu].provisioning_model"]);
}

#[test]
fn an_unknown_value_in_a_fallback_is_not_compared() {
    let text = format!(
        "variable \"model\" {{\n  type = string\n}}\n{}",
        file(
            "    fallback {\n      provisioning_model = var.model\n    }",
            "",
            ""
        )
    );
    let dir = dir_with(&[("main.hcl", &text)]);
    let validated = validate(dir.path(), &VariableInputs::default())
        .unwrap_or_else(|d| panic!("{}", d.render(false)));
    assert_eq!(shown(&validated.warnings), Vec::<String>::new());
}

#[test]
fn a_flex_start_chain_and_a_pool_that_starts_empty_are_warned_at_their_fallbacks() {
    let starts_empty = file("", "", "").replace(
        "      min_node_count = 1\n      max_node_count = 2",
        "      min_node_count = 0\n      max_node_count = 2",
    );
    let loaded = load_text(&starts_empty).unwrap();
    let told: Vec<(usize, usize, &str)> = loaded
        .warnings
        .iter()
        .map(|d| (d.line, d.column, d.message.as_str()))
        .collect();
    let never_tried = |n: usize| {
        format!(
            "fallback {n} of pool `gpu`: the pool starts empty (min_node_count = 0); its nodes \
             are made when jobs pend, so this fallback is never tried at create"
        )
    };
    assert_eq!(
        told,
        [
            (41, 5, never_tried(1).as_str()),
            (41, 5, FLEX_START_NOTE),
            (48, 5, never_tried(2).as_str()),
        ]
    );
    assert_eq!(
        loaded.config.clusters[0].attempts(),
        1,
        "no chain at create"
    );
    let statically = load_text(&file("", "", "")).unwrap();
    let messages: Vec<&str> = statically
        .warnings
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [FLEX_START_NOTE],
        "a static pool's chain is tried"
    );
    assert_eq!(statically.config.clusters[0].attempts(), 3);
}
