//! Load time (parse, evaluate, validate) of a generated configuration of 1,000 clusters, each
//! with 3 node pools and 2 partitions, spread over 10 files. Target: ≤ 100 ms. Next to it, the
//! same fleet written as one `for_each` block over a local map of 1,000 entries (each instance
//! once held a copy of every local, so this load was quadratic in the fleet's size).

use std::fmt::Write;

use clusterform_config::{VariableInputs, load};
use criterion::{Criterion, criterion_group, criterion_main};

const CLUSTERS: usize = 1_000;
const FILES: usize = 10;

fn cluster(index: usize) -> String {
    let mut out = format!(
        "cluster \"c{index}\" {{\n  display_name = \"cluster ${{local.prefix}} {index}\"\n  labels       = {{ team = \"t{team}\" }}\n\n  network {{\n    network    = local.network\n    subnetwork = \"projects/${{var.project}}/regions/${{var.region}}/subnetworks/default\"\n  }}\n",
        team = index % 7
    );
    for (pool, machine, min, max) in [
        ("login", "n2-standard-8", 1, 1),
        ("cpu", "n2-standard-16", 0, 8),
        ("big", "c3-standard-88", 0, 4),
    ] {
        let _ = write!(
            out,
            "\n  node_pool \"{pool}\" {{\n    machine_spec {{\n      machine_type = \"{machine}\"\n    }}\n    scaling_spec {{\n      min_node_count = {min}\n      max_node_count = {max}\n    }}\n    zone = local.zone\n    boot_disk {{\n      boot_disk_type    = \"pd-standard\"\n      boot_disk_size_gb = 120\n    }}\n  }}\n"
        );
    }
    out.push_str(
        "\n  orchestrator_spec {\n    slurm_spec {\n      home_directory_storage = \"projects/${var.project}/locations/${local.zone}/instances/home\"\n      login_node_pool_id     = \"login\"\n      partition \"cpu\" {\n        node_pool_ids = [\"cpu\"]\n      }\n      partition \"big\" {\n        node_pool_ids = [\"big\", \"cpu\"]\n      }\n    }\n  }\n}\n\n",
    );
    out
}

/// The variables, locals (with `more_locals`) and provider of both configurations.
fn header(more_locals: &str) -> String {
    format!(
        "variable \"project\" {{\n  default = \"demo-project\"\n}}\n\nvariable \"region\" {{\n  default = \"us-central1\"\n}}\n\nlocals {{\n  zone    = \"${{var.region}}-a\"\n  network = \"projects/${{var.project}}/global/networks/default\"\n  prefix  = upper(var.project)\n{more_locals}}}\n\nprovider \"google\" {{\n  project = var.project\n  region  = var.region\n  stack   = \"bench\"\n}}\n"
    )
}

fn write_config(dir: &std::path::Path) {
    std::fs::write(dir.join("main.hcl"), header("")).unwrap();
    for file in 0..FILES {
        let text: String = (file * CLUSTERS / FILES..(file + 1) * CLUSTERS / FILES)
            .map(cluster)
            .collect();
        std::fs::write(dir.join(format!("clusters{file:02}.hcl")), text).unwrap();
    }
}

/// Benchmarks `load` of the configuration `write` puts in a directory, checking first that it
/// loads all `CLUSTERS` clusters.
fn bench_loading(c: &mut Criterion, name: &str, write: fn(&std::path::Path)) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path());
    let inputs = VariableInputs::default();
    let loaded = load(dir.path(), &inputs).unwrap_or_else(|d| panic!("{}", d.render(false)));
    assert_eq!(loaded.config.clusters.len(), CLUSTERS);
    c.bench_function(name, |b| {
        b.iter(|| load(dir.path(), &inputs).unwrap());
    });
}

fn bench_load(c: &mut Criterion) {
    bench_loading(
        c,
        "load 1000 clusters x 3 pools x 2 partitions",
        write_config,
    );
}

/// One `for_each` block over a local map of `CLUSTERS` entries, each instance with its own
/// team and size.
fn write_fleet(dir: &std::path::Path) {
    let entries: String = (0..CLUSTERS)
        .map(|index| {
            format!(
                "    c{index} = {{ team = \"t{team}\", max = {max} }}\n",
                team = index % 7,
                max = 4 + index % 5
            )
        })
        .collect();
    let block = cluster(0)
        .replacen(
            "cluster \"c0\" {\n",
            "cluster \"fleet\" {\n  for_each = local.fleet\n",
            1,
        )
        .replace("max_node_count = 8", "max_node_count = each.value.max")
        .replace("team = \"t0\"", "team = each.value.team");
    let text = format!(
        "{}\n{block}",
        header(&format!("  fleet = {{\n{entries}  }}\n"))
    );
    std::fs::write(dir.join("main.hcl"), text).unwrap();
}

fn bench_for_each(c: &mut Criterion) {
    bench_loading(
        c,
        "load one for_each of 1000 clusters over a local",
        write_fleet,
    );
}

criterion_group!(benches, bench_load, bench_for_each);
criterion_main!(benches);
