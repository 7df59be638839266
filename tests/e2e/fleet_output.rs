//! What a fleet spread over two regions looks like: plan headers and `list` name each
//! cluster's project and region, and a changed startup script diffs line by line as a heredoc.

use crate::support::{
    ClusterSpec, Env, PROVIDER, assert_succeeded, cluster_hcl, created_attributes_elided, stdout,
};

/// `train01` in the provider's us-central1 running `startup`, and `train02` in europe-west4.
/// What `show` says of a saved plan that takes the nodes of one cluster.
const SHOW_HOLDS_NO_JOBS: &str = "The plan file holds no Slurm jobs: `clusterform apply tfplan.json` reads them again when it runs, on the 1 cluster it takes nodes from, and refuses to stop running jobs unless --allow-disruption is given.";

fn two_regions(startup: &str) -> String {
    let first = cluster_hcl(&ClusterSpec::default()).replacen(
        "    zone = \"us-central1-a\"\n",
        &format!("    zone = \"us-central1-a\"\n    startup_script = <<-EOT\n{startup}    EOT\n"),
        1,
    );
    // Every `us-central1` of this block, the region setting included, becomes europe-west4.
    let second = cluster_hcl(&ClusterSpec {
        id: "train02",
        extra_cluster_settings: "  region = \"us-central1\"\n",
        ..ClusterSpec::default()
    })
    .replace("us-central1", "europe-west4");
    format!("{PROVIDER}{first}{second}")
}

fn script(package: &str) -> String {
    format!(
        "      #!/bin/bash\n      apt-get update\n      apt-get install -y {package}\n      echo done\n"
    )
}

#[test]
fn a_two_region_fleet_shows_locations_and_script_diffs() {
    let env = Env::new(50);
    env.write_config(&two_regions(&script("foo")));
    insta::assert_snapshot!(env.transcript(&["apply", "--auto-approve"]).normalized_with(created_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train02 (my-proj/europe-west4) will be created
      + cluster "train02" { … }

      # train01 (my-proj/us-central1) will be created
      + cluster "train01" { … }

    Plan: 2 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    [HH:MM:SS] train01 (my-proj/us-central1): creating… [Ns]
    [HH:MM:SS] train01 (my-proj/us-central1): create request accepted [Ns]
    [HH:MM:SS] train01 (my-proj/us-central1): create done [Ns]
    [HH:MM:SS] train01 (my-proj/us-central1): created [Ns] ([K]/[N] done)
    [HH:MM:SS] train02 (my-proj/europe-west4): creating… [Ns]
    [HH:MM:SS] train02 (my-proj/europe-west4): create request accepted [Ns]
    [HH:MM:SS] train02 (my-proj/europe-west4): create done [Ns]
    [HH:MM:SS] train02 (my-proj/europe-west4): created [Ns] ([K]/[N] done)
    Apply complete! Resources: 2 added, 0 changed, 0 replaced, 0 destroyed.
    "#);

    let listed = env.run(&["list"]);
    assert_succeeded(&listed);
    let table = stdout(&listed);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0][..4],
        ["PROJECT", "REGION", "ID", "STATE"],
        "{table}"
    );
    assert!(
        rows.iter()
            .any(|row| row[..3] == ["my-proj", "us-central1", "train01"]),
        "{table}"
    );
    assert!(
        rows.iter()
            .any(|row| row[..3] == ["my-proj", "europe-west4", "train02"]),
        "{table}"
    );

    let json = env.run(&["list", "--json"]);
    assert_succeeded(&json);
    let document: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let rows = document["clusters"].as_array().unwrap();
    let mut locations: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|row| {
            let field = |key: &str| row[key].as_str().unwrap_or_default();
            (field("id"), field("project"), field("region"))
        })
        .collect();
    locations.sort_unstable();
    assert_eq!(
        locations,
        [
            ("train01", "my-proj", "us-central1"),
            ("train02", "my-proj", "europe-west4")
        ]
    );

    env.write_config(&two_regions(&script("bar")));
    let plan = env.run(&["plan", "--out", "tfplan.json"]);
    insta::assert_snapshot!(env.transcript_of(&plan), @r#"
    clusterform will perform the following actions:

      # train01 (my-proj/us-central1) will be updated in place
      ~ cluster "train01" {
          ~ node_pool "cpu" {
              ~ startup_script = <<-EOT
                    #!/bin/bash
                    apt-get update
                  - apt-get install -y foo
                  + apt-get install -y bar
                    echo done
                EOT
                # (1 unchanged attribute hidden)
                # (2 unchanged blocks hidden)
            }
            # (2 unchanged attributes hidden)
            # (3 unchanged blocks hidden)
        }
        update mask: node_pools
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; a refreshed startup script recreates the pool's nodes)
        impact: recreates nodes of pool cpu
        Warning: this node_pools update sends back what the service filled in where the configuration sets nothing, which may pin it (an unset node_image follows the default image, a set one stays): node_pools[login].node_image = "slurm-24-11-ubuntu-2204", node_pools[cpu].boot_disk.boot_disk_type = "pd-ssd", node_pools[cpu].boot_disk.boot_disk_size_gb = 100, node_pools[cpu].node_image = "slurm-24-11-ubuntu-2204"
        # no Slurm jobs active now

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.
    [stderr]

    Saved the plan to tfplan.json. To perform exactly these actions, run:
      clusterform apply tfplan.json
    "#);
    assert_eq!(
        env.transcript(&["show", "tfplan.json"]).to_string(),
        format!(
            "Made with: clusterform plan\n\n{}[stderr]\n{SHOW_HOLDS_NO_JOBS}\n",
            stdout(&plan).replace("    # no Slurm jobs active now\n", "")
        ),
        "show prints the flags, then the saved plan as plan did, without what was running"
    );
}
