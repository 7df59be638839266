//! What a fleet spread over two regions looks like: plan headers and `list` name each
//! cluster's project and region, and a changed startup script diffs line by line as a heredoc.

use crate::support::{ClusterSpec, Env, PROVIDER, assert_succeeded, cluster_hcl, stderr, stdout};

/// `train01` in the provider's us-central1 running `startup`, and `train02` in europe-west4.
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
    let created = env.run(&["apply", "--auto-approve"]);
    assert_succeeded(&created);
    let text = stdout(&created);
    assert!(
        text.contains("  # train02 (my-proj/europe-west4) will be created\n"),
        "{text}"
    );
    let progress = stderr(&created);
    assert!(
        progress.contains("train02 (my-proj/europe-west4): created"),
        "progress lines name the location too: {progress}"
    );

    let listed = env.run(&["list"]);
    assert_succeeded(&listed);
    let table = stdout(&listed);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0][..4],
        ["ID", "PROJECT", "REGION", "STATE"],
        "{table}"
    );
    assert!(
        rows.iter()
            .any(|row| row[..3] == ["train01", "my-proj", "us-central1"]),
        "{table}"
    );
    assert!(
        rows.iter()
            .any(|row| row[..3] == ["train02", "my-proj", "europe-west4"]),
        "{table}"
    );

    let json = env.run(&["list", "--json"]);
    assert_succeeded(&json);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout(&json)).unwrap();
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
    let planned = env.run(&["plan", "--out", "tfplan.json"]);
    assert_succeeded(&planned);
    let plan = stdout(&planned);
    assert!(
        plan.contains("  # train01 (my-proj/us-central1) will be updated in place\n"),
        "{plan}"
    );
    let heredoc = "          ~ startup_script = <<-EOT\n                #!/bin/bash\n                apt-get update\n              - apt-get install -y foo\n              + apt-get install -y bar\n                echo done\n            EOT\n";
    assert!(plan.contains(heredoc), "{plan}");
    let shown = env.run(&["show", "tfplan.json"]);
    assert_succeeded(&shown);
    let saved = stdout(&shown);
    assert!(
        saved.contains("  # train01 (my-proj/us-central1) will be updated in place\n"),
        "{saved}"
    );
    assert!(saved.contains(heredoc), "{saved}");
}
