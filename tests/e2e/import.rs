//! `import`: labels a foreign cluster and writes HCL that plans to no changes.

use serde_json::json;

use crate::support::{Env, PROVIDER, STACK, cluster_name, hand_made_cluster, stderr, stdout};

#[test]
fn import_labels_the_cluster_and_round_trips() {
    let env = Env::new(100);
    let mut legacy = hand_made_cluster();
    legacy["labels"] = json!({"team": "ml"});
    env.emulator()
        .insert_cluster(&cluster_name("legacy"), legacy);
    env.write_config(PROVIDER);
    insta::assert_snapshot!(env.transcript(&["import", "legacy", "--out", "legacy.hcl"]), @"
    [stderr]
    Found cluster legacy in my-proj/us-central1 (looked in 12 locations).
    Adding label clusterform-stack=research to legacy…
    Left out the node_image of login (slurm-24-11-ubuntu-2204), cpu (slurm-24-11-ubuntu-2204): the service fills it in, and a pool without it follows the default image; pass --keep-node-image to keep the pools on these images.
    Wrote legacy.hcl. `clusterform plan` should now show no changes for this cluster.
    ");
    let live = env.emulator().cluster(&cluster_name("legacy")).unwrap();
    assert_eq!(live["labels"]["clusterform-stack"], STACK);
    assert_eq!(live["labels"]["team"], "ml");
    let patches: Vec<_> = env
        .emulator()
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH")
        .collect();
    assert_eq!(patches.len(), 1, "{patches:?}");
    assert_eq!(patches[0].query, "updateMask=labels&updateMode=USER_ONLY");
    // The planner's body rules: the live cluster without its output-only fields.
    let body = patches[0].body.as_ref().unwrap();
    assert_eq!(
        body["labels"],
        json!({"team": "ml", "clusterform-stack": STACK})
    );
    assert_eq!(body["nodePools"][1]["id"], "cpu");
    assert!(
        body.get("createTime").is_none() && body.get("name").is_none(),
        "{body}"
    );
    let hcl = std::fs::read_to_string(env.path().join("legacy.hcl")).unwrap();
    insta::assert_snapshot!(hcl, @r#"
    cluster "legacy" {
      display_name = "Made by hand"
      labels       = { team = "ml" }
      network {
        network    = "projects/my-proj/global/networks/default"
        subnetwork = "projects/253589482369/regions/us-central1/subnetworks/default"
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
        boot_disk {
          boot_disk_type    = "pd-ssd"
          boot_disk_size_gb = 100
        }
      }
      node_pool "cpu" {
        machine_spec {
          machine_type = "n2-standard-8"
        }
        scaling_spec {
          max_node_count = 4
        }
        zone = "us-central1-a"
        boot_disk {
          boot_disk_type    = "pd-ssd"
          boot_disk_size_gb = 100
        }
      }
      orchestrator_spec {
        slurm_spec {
          home_directory_storage = "projects/my-proj/locations/us-central1-a/instances/home"
          login_node_pool_id     = "login"
          partition "cpu" {
            node_pool_ids = ["cpu"]
          }
        }
      }
      runtime_spec {
        service_account = "253589482369-compute@developer.gserviceaccount.com"
      }
    }
    "#);

    insta::assert_snapshot!(env.transcript(&["plan", "--detailed-exitcode"]), @"No changes. Your clusters match the configuration.");
}

#[test]
fn keep_node_image_writes_the_live_images_which_pin_the_pools() {
    let env = Env::new(100);
    env.emulator()
        .insert_cluster(&cluster_name("pinned"), hand_made_cluster());
    env.write_config(PROVIDER);
    let imported = env.run(&["import", "pinned", "--keep-node-image"]);
    assert!(imported.status.success(), "{}", stderr(&imported));
    let hcl = stdout(&imported);
    assert_eq!(hcl.matches("node_image = ").count(), 2, "{hcl}");
    assert!(
        !stderr(&imported).contains("Left out"),
        "nothing is left out"
    );
}

#[test]
fn import_of_another_stacks_cluster_says_to_release_it_there_and_changes_nothing() {
    let env = Env::new(100);
    let mut theirs = hand_made_cluster();
    theirs["labels"] = json!({"clusterform-stack": "ml-prod"});
    env.emulator()
        .insert_cluster(&cluster_name("theirs"), theirs);
    env.write_config(PROVIDER);
    insta::assert_snapshot!(env.transcript(&["import", "theirs"]), @r#"
    [stderr]
    Found cluster theirs in my-proj/us-central1 (looked in 12 locations).
    Error: cluster theirs belongs to stack ml-prod
      hint: release it in stack ml-prod's configuration first: replace its cluster block there with `removed { cluster = "theirs" }` and apply (the cluster is kept, only its label goes), then import it here. Deleting its block there instead would destroy the cluster
    [exit status: 1]
    "#);
    let live = env.emulator().cluster(&cluster_name("theirs")).unwrap();
    assert_eq!(live["labels"]["clusterform-stack"], "ml-prod");
    assert!(
        env.emulator().requests().iter().all(|r| r.method == "GET"),
        "nothing changed"
    );
}

/// `hand_made_cluster` living in europe-west4 (its zones and subnetwork there too).
fn hand_made_in_europe() -> serde_json::Value {
    let text = hand_made_cluster()
        .to_string()
        .replace("us-central1", "europe-west4");
    serde_json::from_str(&text).unwrap()
}

fn in_europe(id: &str) -> String {
    cluster_name(id).replace("us-central1", "europe-west4")
}

/// Without `--region`, import looks in every location plan scans: found in one, it says where
/// and writes the block's own region; found in several, or in none, it names them and
/// changes nothing.
#[test]
fn import_without_a_region_finds_the_cluster_where_it_lives() {
    let env = Env::new(100);
    env.emulator()
        .insert_cluster(&in_europe("far01"), hand_made_in_europe());
    env.write_config(PROVIDER);
    env.emulator().set_refused_locations(vec![
        "my-proj/asia-southeast1"
            .parse::<clusterform_emulator::RefusedLocation>()
            .unwrap(),
    ]);
    let imported = env.transcript(&["import", "far01", "--out", "far01.hcl"]);
    insta::assert_snapshot!(imported, @"
    [stderr]
    Found cluster far01 in my-proj/europe-west4 (looked in 12 locations).
    Warning: 1 location could not be read, so a cluster far01 there was not seen: my-proj/asia-southeast1 (GET [ENDPOINT]/v1beta1/projects/my-proj/locations/asia-southeast1/modelDevelopmentClusters/far01 failed: PERMISSION_DENIED (403): Permission 'aiplatform.modelDevelopmentClusters.get' denied on resource '//aiplatform.googleapis.com/projects/my-proj/locations/asia-southeast1' (or it may not exist).)
    Adding label clusterform-stack=research to far01…
    Left out the node_image of login (slurm-24-11-ubuntu-2204), cpu (slurm-24-11-ubuntu-2204): the service fills it in, and a pool without it follows the default image; pass --keep-node-image to keep the pools on these images.
    Wrote far01.hcl. `clusterform plan` should now show no changes for this cluster.
    ");
    let hcl = std::fs::read_to_string(env.path().join("far01.hcl")).unwrap();
    assert!(
        hcl.starts_with("cluster \"far01\" {\n  region       = \"europe-west4\"\n"),
        "{hcl}"
    );
    insta::assert_snapshot!(env.transcript(&["plan", "--detailed-exitcode"]), @"
    No changes. Your clusters match the configuration.
    [stderr]
    Note: 1 location refused the List for good (no permission, or a region the project may not use) and was skipped: my-proj/asia-southeast1. Nothing there is planned; `regions = [...]` in the provider block limits the scan to the regions you use.
    ");

    env.emulator()
        .insert_cluster(&in_europe("twin01"), hand_made_in_europe());
    env.emulator()
        .insert_cluster(&cluster_name("twin01"), hand_made_cluster());
    env.emulator().clear_requests();
    insta::assert_snapshot!(env.transcript(&["import", "twin01"]), @"
    [stderr]
    Error: cluster twin01 exists in 2 locations: my-proj/europe-west4, my-proj/us-central1
      hint: pick one with --project and --region, e.g. `clusterform import twin01 --project my-proj --region europe-west4`
    [exit status: 1]
    ");
    assert!(
        env.emulator().requests().iter().all(|r| r.method == "GET"),
        "nothing changed"
    );

    insta::assert_snapshot!(env.transcript(&["import", "nosuch"]), @"
    [stderr]
    Error: cluster nosuch was not found in any of the 12 locations looked in; 1 could not be read: my-proj/asia-southeast1 (GET [ENDPOINT]/v1beta1/projects/my-proj/locations/asia-southeast1/modelDevelopmentClusters/nosuch failed: PERMISSION_DENIED (403): Permission 'aiplatform.modelDevelopmentClusters.get' denied on resource '//aiplatform.googleapis.com/projects/my-proj/locations/asia-southeast1' (or it may not exist).)
      hint: check the ID; a cluster in a project or region the configuration does not name is imported with --project P --region R
    [exit status: 1]
    ");
}

/// `import --endpoint URL` into an empty directory writes that endpoint into the provider
/// block: the next `plan` there, with no flag and no variable, reads the same service, not
/// Google's.
#[test]
fn import_into_an_empty_directory_keeps_the_endpoint_it_read_from() {
    let env = Env::new(0);
    env.emulator()
        .insert_cluster(&cluster_name("legacy"), hand_made_cluster());
    let url = env.server.base_url();
    let without_endpoint_variable = |args: &[&str]| {
        let output = env
            .cmd(args)
            .env_remove("CLUSTERFORM_ENDPOINT")
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        output
    };
    without_endpoint_variable(&[
        "import",
        "legacy",
        "--project",
        "my-proj",
        "--region",
        "us-central1",
        "--stack",
        "research",
        "--endpoint",
        &url,
    ]);
    let hcl = std::fs::read_to_string(env.path().join("main.hcl")).unwrap();
    assert!(hcl.contains(&format!("endpoint = \"{url}\"")), "{hcl}");
    let plan = without_endpoint_variable(&["plan", "--detailed-exitcode"]);
    assert_eq!(
        stdout(&plan).trim(),
        "No changes. Your clusters match the configuration."
    );
}
