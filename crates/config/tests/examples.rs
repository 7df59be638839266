//! Every example in `examples/` loads.

use clusterform_config::{CommandLineReason, VariableInputs, load, validate};
use clusterform_model::{Endpoint, UpdateMode};

use crate::support::{example, reason};

fn inputs(vars: &[(&str, &str)]) -> VariableInputs {
    VariableInputs {
        cli: vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..VariableInputs::default()
    }
}

fn load_example(name: &str, vars: &[(&str, &str)]) -> clusterform_config::Loaded {
    match load(&example(name), &inputs(vars)) {
        Ok(loaded) => loaded,
        Err(diagnostics) => panic!("{name}:\n{}", diagnostics.render(false)),
    }
}

#[test]
fn quickstart_needs_no_input() {
    let loaded = load_example("quickstart", &[]);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let config = loaded.config;
    assert_eq!(config.provider.endpoint, Some(Endpoint::Local));
    assert_eq!(config.provider.stack, "quickstart");
    let cluster = config.cluster("train01").unwrap();
    assert_eq!(
        (cluster.name.project(), cluster.name.region()),
        ("demo-project", "us-central1")
    );
    let pools = cluster.cluster.node_pools.as_ref().unwrap();
    assert_eq!(pools.len(), 2);
    let cpu = cluster.cluster.node_pool("cpu").unwrap();
    let scaling = cpu.scaling_spec.as_ref().unwrap();
    assert_eq!(
        (scaling.min_node_count, scaling.max_node_count),
        (Some(0), Some(4))
    );
    let disk = cpu.boot_disk.as_ref().unwrap();
    assert_eq!(disk.boot_disk_type.as_deref(), Some("pd-standard"));
    assert_eq!(disk.boot_disk_size_gb, Some(120));
    assert!(cpu.node_image.is_none(), "unset fields stay unset");
}

#[test]
fn cpu_cluster_takes_project_and_region() {
    let loaded = load_example(
        "cpu-cluster",
        &[("project", "my-proj"), ("region", "europe-west4")],
    );
    let cluster = loaded.config.cluster("train01").unwrap();
    assert_eq!(cluster.name.region(), "europe-west4");
    assert_eq!(
        cluster.cluster.node_pool("cpu").unwrap().zone.as_deref(),
        Some("europe-west4-a")
    );
    assert_eq!(cluster.timeouts.create.map(|s| s.0), Some(5400));
}

#[test]
fn cpu_cluster_without_project_reports_the_missing_variable() {
    let diagnostics = load(&example("cpu-cluster"), &VariableInputs::default()).unwrap_err();
    let missing: Vec<_> = diagnostics
        .missing_variables
        .iter()
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(missing, ["project"]);
    assert_eq!(
        diagnostics.missing_variables[0].description.as_deref(),
        Some("Project that owns the cluster")
    );
    assert_eq!(
        reason(&diagnostics, "no value for variable `project`"),
        Some(CommandLineReason::MissingValue {
            variable: "project".into()
        })
    );
}

#[test]
fn gpu_a4_reads_scripts_and_reservation() {
    let loaded = load_example(
        "gpu-a4",
        &[("project", "my-proj"), ("reservation", "res-a4")],
    );
    // A machine type, accelerator or region outside the documented lists is a warning.
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let cluster = loaded.config.cluster("a4train").unwrap();
    let a4 = cluster.cluster.node_pool("a4").unwrap();
    let machine = a4.machine_spec.as_ref().unwrap();
    assert_eq!(machine.accelerator_count, Some(8));
    let affinity = machine.reservation_affinity.as_ref().unwrap();
    assert_eq!(
        affinity.values.as_deref(),
        Some(&["projects/my-proj/zones/us-central1-b/reservations/res-a4".to_owned()][..])
    );
    let slurm = cluster.cluster.slurm_spec().unwrap();
    assert!(slurm.prolog_bash_scripts.as_ref().unwrap()[0].contains("nvidia-smi"));
    assert!(slurm.epilog_bash_scripts.as_ref().unwrap()[0].contains("SLURM_JOB_ID"));
    assert!(cluster.lifecycle.prevent_destroy);
    assert_eq!(cluster.update_mode, Some(UpdateMode::UserAndService));
}

#[test]
fn gpu_fallback_tries_h200_then_h100_on_demand() {
    let loaded = load_example("gpu-fallback", &[("project", "my-proj")]);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let cluster = loaded.config.cluster("gputrain").unwrap();
    assert_eq!(cluster.attempts(), 3);
    let chain: Vec<_> = (0..cluster.attempts())
        .map(|attempt| {
            let made = cluster.attempt(attempt);
            let gpu = made.node_pool("gpu").unwrap().clone();
            assert!(gpu.has_static_nodes(), "attempt {attempt}");
            (
                gpu.machine_spec.unwrap().machine_type.unwrap(),
                gpu.provisioning_model.unwrap(),
            )
        })
        .collect();
    let chain: Vec<(&str, &str)> = chain
        .iter()
        .map(|(machine, model)| (machine.as_str(), model.as_str()))
        .collect();
    assert_eq!(
        chain,
        [
            ("a4-highgpu-8g", "SPOT"),
            ("a3-ultragpu-8g", "SPOT"),
            ("a3-megagpu-8g", "ON_DEMAND"),
        ]
    );
}

#[test]
fn flex_start_normalises_the_duration() {
    let loaded = load_example("flex-start", &[("project", "my-proj")]);
    // A machine type, accelerator or region outside the documented lists is a warning.
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let pool = loaded
        .config
        .cluster("flex01")
        .unwrap()
        .cluster
        .node_pool("h100")
        .unwrap()
        .clone();
    assert_eq!(pool.flex_start_max_duration.as_deref(), Some("604800s"));
}

#[test]
fn lustre_sets_export_config() {
    let loaded = load_example("lustre", &[("project", "my-proj")]);
    // A machine type, accelerator or region outside the documented lists is a warning.
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let cluster = loaded.config.cluster("lustre01").unwrap();
    let export = cluster.cluster.lustre_export_config.as_ref().unwrap();
    assert_eq!(
        export.destination_bucket.as_deref(),
        Some("my-proj-lustre-export"),
        "the API takes the bucket's name, without gs://"
    );
    assert_eq!(export.start_time.as_ref().unwrap().hours, Some(2));
    assert_eq!(
        cluster
            .cluster
            .node_pool("cpu")
            .unwrap()
            .lustres
            .as_ref()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn fleet_stamps_one_cluster_per_team() {
    let loaded = load_example("fleet", &[("project", "my-proj")]);
    let ids: Vec<_> = loaded
        .config
        .clusters
        .iter()
        .map(|c| c.name.id().as_str())
        .collect();
    assert_eq!(ids, ["nlp", "speech", "vision"]);
    let nlp = loaded.config.cluster("nlp").unwrap();
    let cpu = nlp.cluster.node_pool("cpu").unwrap();
    assert_eq!(cpu.scaling_spec.as_ref().unwrap().max_node_count, Some(8));
    assert_eq!(nlp.cluster.label("team"), Some("nlp"));
}

#[test]
fn every_example_validates_without_variables() {
    let examples = std::fs::read_dir(example("")).unwrap();
    let mut validated = Vec::new();
    for entry in examples {
        let path = entry.unwrap().path();
        if !path.is_dir() {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        match validate(&path, &VariableInputs::default()) {
            Ok(result) => validated.push((name, result.clusters)),
            Err(diagnostics) => panic!("{name}:\n{}", diagnostics.render(false)),
        }
    }
    validated.sort();
    assert_eq!(
        validated,
        [
            ("cpu-cluster".to_owned(), 1),
            ("docs-cpu-only".to_owned(), 1),
            ("docs-gpu-filestore".to_owned(), 1),
            ("docs-gpu-lustre".to_owned(), 1),
            ("docs-gpu-startup".to_owned(), 1),
            ("docs-slurm-config".to_owned(), 1),
            ("fleet".to_owned(), 3),
            ("flex-start".to_owned(), 1),
            ("gpu-a4".to_owned(), 1),
            ("gpu-fallback".to_owned(), 1),
            ("lustre".to_owned(), 1),
            ("quickstart".to_owned(), 1),
        ]
    );
}
