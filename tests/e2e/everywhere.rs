//! A stack owns its clusters wherever they are: every plan lists every region the service runs
//! in, so a cluster whose region the configuration no longer names is destroyed like any other
//! undeclared cluster of the stack, `list` shows clusters in regions the configuration does not
//! name, and a List refused in such a region is a warning that deletes nothing.

use clusterform_emulator::RefusedLocation;
use serde_json::{Value, json};

use crate::support::{
    ClusterSpec, Env, PROJECT, PROVIDER, assert_succeeded, cluster_hcl,
    destroyed_attributes_elided, stdout,
};

/// `train01` in the provider's us-central1, and, with `far`, `far01` in europe-west4.
fn configuration(far: bool) -> String {
    let here = cluster_hcl(&ClusterSpec::default());
    if !far {
        return format!("{PROVIDER}{here}");
    }
    // Every `us-central1` of this block, the region setting included, becomes europe-west4.
    let there = cluster_hcl(&ClusterSpec {
        id: "far01",
        extra_cluster_settings: "  region = \"us-central1\"\n",
        ..ClusterSpec::default()
    })
    .replace("us-central1", "europe-west4");
    format!("{PROVIDER}{here}{there}")
}

fn far01() -> String {
    format!("projects/{PROJECT}/locations/europe-west4/modelDevelopmentClusters/far01")
}

/// Both clusters applied, then the configuration without `far01`: europe-west4 is named by
/// nothing any more.
fn far01_dropped(env: &Env) {
    env.write_config(&configuration(true));
    assert_succeeded(&env.run(&["apply", "--auto-approve"]));
    env.write_config(&configuration(false));
}

#[test]
fn a_cluster_in_a_region_the_configuration_no_longer_names_is_destroyed() {
    let env = Env::new(50);
    far01_dropped(&env);

    let plan = env.transcript(&["plan", "--detailed-exitcode"]);
    insta::assert_snapshot!(plan.normalized_with(destroyed_attributes_elided), @r#"
    clusterform will perform the following actions:

      # far01 (my-proj/europe-west4) will be destroyed: owned by stack "research" and no longer in the configuration
      - cluster "far01" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [exit status: 2]
    "#);

    // A target that is not declared may be anywhere: it is looked for in every location.
    let targeted = env.run(&["plan", "--target", "far01", "--json"]);
    assert_succeeded(&targeted);
    let document: Value = serde_json::from_slice(&targeted.stdout).unwrap();
    assert_eq!(document["summary"]["destroy"], 1, "{document}");
    assert_eq!(
        document["changes"].as_array().unwrap().len(),
        1,
        "{document}"
    );

    env.emulator().clear_requests();
    assert_succeeded(&env.run(&["apply", "--auto-approve"]));
    let deletes: Vec<String> = env
        .mutations()
        .into_iter()
        .filter(|r| r.method == "DELETE")
        .map(|r| r.path)
        .collect();
    assert_eq!(deletes, [format!("/v1beta1/{}", far01())]);
    assert!(env.emulator().cluster(&far01()).is_none());
    insta::assert_snapshot!(env.transcript(&["plan"]), @"No changes. Your clusters match the configuration.");
}

/// A cluster of another team in a region this configuration names nowhere, with a GPU pool.
fn gpu_cluster_elsewhere(env: &Env) -> String {
    let name =
        format!("projects/{PROJECT}/locations/asia-southeast1/modelDevelopmentClusters/gpu01");
    let mut cluster = crate::support::hand_made_cluster();
    cluster["labels"] = json!({"clusterform-stack": "vision"});
    cluster["nodePools"].as_array_mut().unwrap().push(json!({
        "id": "gpu",
        "machineSpec": {
            "machineType": "a3-ultragpu-8g",
            "acceleratorType": "NVIDIA_H200_141GB",
            "acceleratorCount": 8
        },
        "scalingSpec": {"minNodeCount": "0", "maxNodeCount": "2"},
        "zone": "asia-southeast1-b"
    }));
    env.emulator().insert_cluster(&name, cluster);
    name
}

#[test]
fn list_shows_clusters_in_regions_the_configuration_does_not_name_with_accelerators() {
    let env = Env::new(50);
    env.write_config(&configuration(false));
    assert_succeeded(&env.run(&["apply", "--auto-approve"]));
    gpu_cluster_elsewhere(&env);

    let listed = env.run(&["list"]);
    assert_succeeded(&listed);
    let table: String = stdout(&listed)
        .lines()
        .map(|line| {
            line.rsplit_once("  ")
                .map_or(line, |(start, _)| start)
                .trim_end()
        })
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!(table, @r#"
    PROJECT  REGION           ID       STATE    HEALTH  POOLS (min-max(nodes))              ACCELERATORS             STACK
    my-proj  asia-southeast1  gpu01    RUNNING  ok      login:1-1(1) cpu:0-4(0) gpu:0-2(0)  gpu:NVIDIA_H200_141GB×8  vision
    my-proj  us-central1      train01  RUNNING  ok      login:1-1(1) cpu:0-4(0)             -                        research

    Fleet: 2 clusters; GPUs running: none; idle GPU-hours: 0.0
    "#);

    let json_list = env.run(&["list", "--json"]);
    assert_succeeded(&json_list);
    let document: Value = serde_json::from_slice(&json_list.stdout).unwrap();
    let rows = &document["clusters"];
    let gpu = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == "gpu01")
        .expect("gpu01 listed");
    assert_eq!(gpu["region"], "asia-southeast1");
    assert_eq!(
        gpu["node_pools"][2]["accelerator_type"],
        "NVIDIA_H200_141GB"
    );
    assert_eq!(gpu["node_pools"][2]["accelerator_count"], 8);
    assert_eq!(gpu["node_pools"][0]["accelerator_type"], Value::Null);

    let one_region = env.run(&["list", "--region", "asia-southeast1", "--json"]);
    assert_succeeded(&one_region);
    let document: Value = serde_json::from_slice(&one_region.stdout).unwrap();
    let ids: Vec<&str> = document["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["gpu01"]);

    // Without a configuration, the flags say where; the plan's warnings are not printed.
    let empty = env.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    env.emulator().clear_requests();
    let elsewhere = env.run(&[
        "list",
        "--chdir",
        empty.to_str().unwrap(),
        "--project",
        PROJECT,
        "--region",
        "asia-southeast1",
        "--json",
    ]);
    assert_succeeded(&elsewhere);
    let document: Value = serde_json::from_slice(&elsewhere.stdout).unwrap();
    let rows = &document["clusters"];
    assert_eq!(rows.as_array().unwrap().len(), 1);
    assert_eq!(rows[0]["stack"], "vision");
    let listed_in =
        format!("/v1beta1/projects/{PROJECT}/locations/asia-southeast1/modelDevelopmentClusters");
    let (lists, others): (Vec<String>, Vec<String>) = env
        .emulator()
        .requests()
        .into_iter()
        .map(|r| r.path)
        .partition(|path| *path == listed_in);
    assert_eq!(lists.len(), 1, "one location only");
    assert!(
        others
            .iter()
            .all(|path| *path == format!("{listed_in}/gpu01:callSlurmRestApi")),
        "nothing else but the health of the one cluster listed: {others:?}"
    );
}

#[test]
fn a_refused_list_where_only_the_record_names_a_cluster_is_an_error_that_deletes_nothing() {
    let env = Env::new(50);
    far01_dropped(&env);
    env.emulator().set_refused_locations(vec![
        format!("{PROJECT}/europe-west4")
            .parse::<RefusedLocation>()
            .unwrap(),
    ]);

    insta::assert_snapshot!(env.transcript(&["plan", "--detailed-exitcode"]), @"
    No changes. Your clusters match the configuration.
    [stderr]
    Warning: the List of my-proj/europe-west4, which this stack uses, was refused (PERMISSION_DENIED (403): Permission 'aiplatform.modelDevelopmentClusters.list' denied on resource '//aiplatform.googleapis.com/projects/my-proj/locations/europe-west4' (or it may not exist).): far01 there is left as it is (not created, changed or destroyed); the rest of the plan goes on
    Error: the clusters of my-proj/europe-west4 (far01) could not be listed: they were left as they are, and the run is incomplete
      hint: run the command again once the service answers there (the warning above has its answer); nothing else waits for it: the other clusters were planned as usual
    [exit status: 1]
    ");

    let applied = env.run(&["apply", "--auto-approve"]);
    assert_eq!(applied.status.code(), Some(1), "far01's location is unread");
    assert!(env.mutations().iter().all(|r| r.method != "DELETE"));
    assert!(
        env.emulator().cluster(&far01()).is_some(),
        "far01 was not seen, so not deleted"
    );

    // A destroy deletes what it sees, and says what it could not see: exit 1.
    let destroyed = env.transcript(&["destroy", "--auto-approve"]);
    assert!(
        env.emulator().cluster(&far01()).is_some(),
        "far01 was not seen, so not deleted"
    );
    let end = destroyed
        .to_string()
        .lines()
        .skip_while(|line| !line.starts_with("Error:"))
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!(end, @"
    Error: destroy incomplete: 1 destroyed, but the clusters of my-proj/europe-west4 could not be listed; any clusters of this stack there were not destroyed
      hint: the warning above says why each List was refused; run `clusterform destroy` again once they answer (or once the caller may list them)
    [exit status: 1]
    ");
    let again = env.transcript(&["destroy", "--auto-approve"]).to_string();
    assert!(
        again.contains("destroy incomplete: 0 destroyed") && again.contains("[exit status: 1]"),
        "nothing left to destroy, yet one location unread: {again}"
    );

    // Where the configuration names a cluster, a refused List is an error too.
    env.emulator()
        .set_refused_locations(vec![format!("{PROJECT}/us-central1").parse().unwrap()]);
    let refused = env.run(&["plan"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        crate::support::stderr(&refused).contains("PERMISSION_DENIED"),
        "{}",
        crate::support::stderr(&refused)
    );
}

/// `train01` in us-central1, and, with `west`, `west01` in us-west2, a region the service's
/// list does not name; the provider's `regions` when given.
fn with_an_undocumented_region(west: bool, regions: Option<&str>) -> String {
    let provider = match regions {
        Some(regions) => PROVIDER.replacen("{\n", &format!("{{\n  regions = {regions}\n"), 1),
        None => PROVIDER.to_owned(),
    };
    let here = cluster_hcl(&ClusterSpec::default());
    let there = cluster_hcl(&ClusterSpec {
        id: "west01",
        extra_cluster_settings: "  region = \"us-central1\"\n",
        ..ClusterSpec::default()
    })
    .replace("us-central1", "us-west2");
    if west {
        format!("{provider}{here}{there}")
    } else {
        format!("{provider}{here}")
    }
}

#[test]
fn a_cluster_clusterform_created_outside_the_scanned_regions_is_never_orphaned() {
    let env = Env::new(50);
    env.write_config(&with_an_undocumented_region(true, None));
    assert_succeeded(&env.run(&["apply", "--auto-approve"]));
    // Its block gone, nothing names us-west2 and the service's list lacks it: the applied
    // record does, so the plan still sees the cluster and destroys it.
    env.write_config(&with_an_undocumented_region(false, None));
    let plan = env.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(2), "{}", stdout(&plan));
    assert!(
        stdout(&plan).contains("# west01 (my-proj/us-west2) will be destroyed"),
        "{}",
        stdout(&plan)
    );
    // `regions` bounds the scan of what nothing names; the record's locations are scanned all
    // the same.
    env.write_config(&with_an_undocumented_region(
        false,
        Some("[\"us-central1\"]"),
    ));
    env.emulator().clear_requests();
    let bounded = env.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(bounded.status.code(), Some(2));
    let listed: std::collections::BTreeSet<String> = env
        .emulator()
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET" && r.path.ends_with("/modelDevelopmentClusters"))
        .map(|r| r.path)
        .collect();
    assert_eq!(
        listed,
        [
            format!("/v1beta1/projects/{PROJECT}/locations/us-central1/modelDevelopmentClusters"),
            format!("/v1beta1/projects/{PROJECT}/locations/us-west2/modelDevelopmentClusters"),
        ]
        .into_iter()
        .collect(),
        "the configured region and the one the record names, nothing else"
    );
    // `list` and `status` look where the plan looks: the orphan is in both.
    let list = env.run(&["list"]);
    assert_succeeded(&list);
    assert!(
        stdout(&list)
            .lines()
            .any(|line| line.starts_with("my-proj  us-west2     west01")),
        "{}",
        stdout(&list)
    );
    let status = env.run(&["status", "--json"]);
    let document: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert!(
        document["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["address"]["region"] == "us-west2" && c["declared"] == false),
        "{document}"
    );
}

#[test]
fn a_region_outside_the_documented_list_in_regions_is_warned_about_not_refused() {
    let env = Env::new(50);
    env.write_config(&with_an_undocumented_region(
        false,
        Some("[\"us-central1\", \"us-centrl2\"]"),
    ));
    let validated = env.run(&["validate"]);
    assert!(validated.status.success());
    let said = crate::support::stderr(&validated);
    assert!(
        said.contains("region `us-centrl2` is not one of the regions")
            && said.contains("us-central1"),
        "{said}"
    );
    env.write_config(&with_an_undocumented_region(false, Some("\"us-central1\"")));
    let refused = env.run(&["validate"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        crate::support::stderr(&refused).contains("`regions` must be a list of region names"),
        "{}",
        crate::support::stderr(&refused)
    );
}

#[test]
fn a_failing_region_the_configuration_does_not_name_stops_no_work_elsewhere() {
    let env = Env::new(50);
    env.write_config(&configuration(false));
    assert_succeeded(&env.run(&["apply", "--auto-approve"]));
    env.emulator()
        .set_faults("503=1,retry-after=0,location=europe-west4".parse().unwrap());
    let plan = env.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(
        plan.status.code(),
        Some(0),
        "{}",
        crate::support::stderr(&plan)
    );
    let said = crate::support::stderr(&plan);
    assert!(
        said.contains("the List of my-proj/europe-west4 (UNAVAILABLE (503)")
            && said.contains("kept failing; going on without it")
            && said.contains("none of them is changed or destroyed"),
        "{said}"
    );
    // What could be read is shown, and the incomplete view exits 1.
    let status = env.run(&["status"]);
    assert_eq!(status.status.code(), Some(1));
    assert!(stdout(&status).contains("train01"), "{}", stdout(&status));
    assert!(
        crate::support::stderr(&status)
            .contains("the clusters of my-proj/europe-west4 could not be listed"),
        "{}",
        crate::support::stderr(&status)
    );
    let list = env.run(&["list"]);
    assert_eq!(list.status.code(), Some(1));
    assert!(stdout(&list).contains("train01"));
}

/// `train01` (with `display_name`) in us-central1, and `far01` in europe-west4.
fn both_with(display_name: &'static str) -> String {
    let far = configuration(true);
    let here = cluster_hcl(&ClusterSpec::default());
    let changed = cluster_hcl(&ClusterSpec {
        display_name,
        ..ClusterSpec::default()
    });
    far.replacen(&here, &changed, 1)
}

fn failing_in_europe(env: &Env) {
    env.emulator()
        .set_faults("503=1,retry-after=0,location=europe-west4".parse().unwrap());
}

#[test]
fn a_failing_region_the_stack_uses_leaves_its_clusters_alone_and_the_rest_is_applied() {
    let env = Env::new(50);
    env.write_config(&configuration(true));
    assert_succeeded(&env.run(&["apply", "--auto-approve"]));
    env.write_config(&both_with("Renamed"));
    failing_in_europe(&env);

    let plan = env.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(1), "an error for far01's location");
    let shown = stdout(&plan);
    assert!(
        shown.contains("train01 will be updated in place"),
        "{shown}"
    );
    assert!(
        !shown.contains("far01"),
        "far01 is not planned at all: {shown}"
    );
    let said = crate::support::stderr(&plan);
    assert!(
        said.contains(
            "the List of my-proj/europe-west4, which this stack uses, kept failing (UNAVAILABLE"
        ) && said.contains("far01 there is left as it is (not created, changed or destroyed)"),
        "{said}"
    );
    assert!(
        said.contains("the clusters of my-proj/europe-west4 (far01) could not be listed"),
        "{said}"
    );

    let json = env.run(&["plan", "--json"]);
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    let unread = &document["unreadable_locations"][0];
    assert_eq!(
        (
            &unread["region"],
            &unread["kind"],
            &unread["named"],
            &unread["held"]
        ),
        (
            &json!("europe-west4"),
            &json!("failing"),
            &json!(true),
            &json!(["far01"])
        ),
        "{document}"
    );

    let apply = env.run(&["apply", "--auto-approve", "--json"]);
    assert_eq!(apply.status.code(), Some(1));
    let events: Vec<Value> = stdout(&apply)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(events[0]["type"], "planned");
    assert_eq!(
        events[0]["unreadable_locations"][0]["held"],
        json!(["far01"])
    );
    env.emulator().set_faults(Default::default());
    let train01 = env
        .emulator()
        .cluster(&crate::support::cluster_name("train01"));
    assert_eq!(
        train01.unwrap()["displayName"],
        "Renamed",
        "the rest was applied"
    );
    assert!(
        env.emulator().cluster(&far01()).is_some(),
        "far01 is untouched"
    );
}

#[test]
fn a_failing_region_only_the_applied_record_names_is_an_error_and_destroys_nothing() {
    let env = Env::new(50);
    far01_dropped(&env);
    failing_in_europe(&env);
    let plan = env.run(&["plan"]);
    assert_eq!(plan.status.code(), Some(1));
    let said = crate::support::stderr(&plan);
    assert!(
        said.contains("which this stack uses, kept failing"),
        "{said}"
    );
    assert!(!stdout(&plan).contains("destroyed"), "{}", stdout(&plan));
    env.emulator().set_faults(Default::default());
    assert!(env.emulator().cluster(&far01()).is_some());
}

#[test]
fn refused_regions_nothing_names_make_one_short_note() {
    let env = Env::new(50);
    env.write_config(&configuration(false));
    env.emulator().set_refused_locations(vec![
        format!("{PROJECT}/us-east5").parse().unwrap(),
        format!("{PROJECT}/asia-south2").parse().unwrap(),
    ]);
    let plan = env.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(2), "exit codes unchanged");
    let said = crate::support::stderr(&plan);
    assert_eq!(said.matches("refused").count(), 1, "{said}");
    assert!(
        said.contains("Note: 2 locations refused the List for good")
            && said.contains("my-proj/asia-south2, my-proj/us-east5")
            && said.contains("`regions = [...]`"),
        "{said}"
    );
}

#[test]
fn status_and_list_show_a_row_per_failing_location_and_say_it_in_json() {
    let env = Env::new(50);
    env.write_config(&configuration(false));
    assert_succeeded(&env.run(&["apply", "--auto-approve"]));
    failing_in_europe(&env);
    let status = env.run(&["status"]);
    assert_eq!(status.status.code(), Some(1));
    let table = stdout(&status);
    assert!(
        table
            .lines()
            .any(|line| line.starts_with("my-proj  europe-west4  *        not listed")),
        "{table}"
    );
    assert!(
        table.contains("  my-proj/europe-west4: the List kept failing (UNAVAILABLE"),
        "{table}"
    );
    let json = env.run(&["status", "--json"]);
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(document["needs_attention"], true);
    assert_eq!(document["unreadable_locations"][0]["kind"], "failing");
    assert_eq!(document["clusters"][0]["address"]["id"], "train01");

    let list = env.run(&["list"]);
    assert_eq!(list.status.code(), Some(1));
    assert!(
        stdout(&list).contains("europe-west4  *        not listed"),
        "{}",
        stdout(&list)
    );
    let listed: Value = serde_json::from_slice(&env.run(&["list", "--json"]).stdout).unwrap();
    assert_eq!(listed["format_version"], 1);
    assert_eq!(listed["clusters"][0]["id"], "train01");
    assert_eq!(listed["unreadable_locations"][0]["region"], "europe-west4");
}

#[test]
fn a_json_apply_keeps_every_warning_on_stderr() {
    let env = Env::new(50);
    env.write_config(&with_an_undocumented_region(true, None));
    failing_in_europe(&env);
    env.emulator()
        .set_refused_locations(vec![format!("{PROJECT}/us-east5").parse().unwrap()]);
    let apply = env.run(&["apply", "--auto-approve", "--json"]);
    assert_succeeded(&apply);
    let said = crate::support::stderr(&apply);
    assert!(
        said.contains("Warning:") && said.contains("us-west2"),
        "the configuration's warning about an undocumented region: {said}"
    );
    assert!(
        said.contains("the List of my-proj/europe-west4 (UNAVAILABLE (503)"),
        "the plan's warning about a failing region: {said}"
    );
    assert!(
        said.contains("Note: 1 location refused the List for good"),
        "the plan's note: {said}"
    );
    assert!(
        stdout(&apply)
            .lines()
            .all(|line| serde_json::from_str::<Value>(line).is_ok()),
        "stdout holds events only: {}",
        stdout(&apply)
    );
    let quiet = env.run(&["apply", "--auto-approve", "--json", "--quiet"]);
    assert_succeeded(&quiet);
    assert!(
        !crate::support::stderr(&quiet).contains("Warning:"),
        "--quiet silences them: {}",
        crate::support::stderr(&quiet)
    );
}
