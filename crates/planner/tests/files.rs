//! Saved plan files and their freshness against the live clusters.

use clusterform_model::UpdateMode;
use clusterform_model::rest::ClusterRequest;
use clusterform_planner::{
    PLAN_FORMAT_VERSION, Plan, PlanEndpoint, PlanFileError, PlanFlags, PlanOptions, StalenessKind,
    load_plan, plan, plan_document, save_plan, stale_clusters,
};
use serde_json::json;

use crate::support::{cluster, config, desired, live_seed, seed, served};

fn update_plan() -> Plan {
    let mut wanted = seed();
    wanted["labels"] = json!({"team": "x"});
    let clusters = vec![desired("train01", wanted), desired("new01", seed())];
    let mut made = plan(
        &config(clusters),
        &[live_seed("train01")],
        &PlanOptions::default(),
    )
    .unwrap();
    made.directory = std::env::temp_dir().join("config");
    made
}

/// An edit of a plan document.
type Edit = fn(&mut serde_json::Value);

/// The saved `update_plan()` with `edit` applied to its document, loaded again.
fn load_edited(edit: impl FnOnce(&mut serde_json::Value)) -> Result<Plan, PlanFileError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tfplan.json");
    let mut document = plan_document(&update_plan());
    edit(&mut document);
    std::fs::write(&path, document.to_string()).unwrap();
    load_plan(&path)
}

#[test]
fn a_saved_plan_reads_back_identical_and_private() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tfplan.json");
    let made = update_plan();
    save_plan(&made, &path).unwrap();
    assert_eq!(load_plan(&path).unwrap(), made);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with(&format!("{{\n  \"format_version\": {PLAN_FORMAT_VERSION},")),
        "{text}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "temporary file left behind");
}

#[test]
fn the_endpoint_is_saved_when_recorded_and_optional_on_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tfplan.json");
    let mut made = update_plan();
    made.endpoint = Some(PlanEndpoint::Given(
        "http://127.0.0.1:8089".parse().unwrap(),
    ));
    save_plan(&made, &path).unwrap();
    assert_eq!(load_plan(&path).unwrap(), made);
    assert_eq!(plan_document(&made)["endpoint"], "http://127.0.0.1:8089");

    // A plan saved before the endpoint was recorded loads without one.
    let older = load_edited(|document| {
        document.as_object_mut().unwrap().remove("endpoint");
    })
    .unwrap();
    assert_eq!(older.endpoint, None);

    // Google's regional endpoints and the built-in emulator are named, as ever.
    for (named, endpoint) in [
        ("google", PlanEndpoint::Google),
        (
            "local",
            PlanEndpoint::Given(clusterform_model::Endpoint::Local),
        ),
    ] {
        let loaded = load_edited(|document| document["endpoint"] = json!(named)).unwrap();
        assert_eq!(loaded.endpoint, Some(endpoint.clone()));
        assert_eq!(plan_document(&loaded)["endpoint"], named);
    }
    // Text that names no endpoint is no plan file of ours.
    let refused =
        load_edited(|document| document["endpoint"] = json!("ftp://elsewhere")).unwrap_err();
    assert!(refused.to_string().contains("ftp://elsewhere"), "{refused}");
}

#[test]
fn garbage_and_other_versions_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan");
    let load = |text: &str| {
        std::fs::write(&path, text).unwrap();
        load_plan(&path).unwrap_err()
    };
    assert!(matches!(load("not json"), PlanFileError::NotJson { .. }));
    assert!(matches!(load("{\"a\": 1}"), PlanFileError::NotAPlan { .. }));
    let err = load("{\"format_version\": 99}");
    assert!(matches!(err, PlanFileError::UnsupportedVersion { .. }));
    assert!(err.to_string().contains("version 99"), "{err}");
    let err = load("{\"format_version\": 1}");
    assert!(err.to_string().contains("make the plan again"), "{err}");
    let err = load(&format!(
        "{{\"format_version\": {PLAN_FORMAT_VERSION}, \"directory\": \"/c\", \"variables\": {{}}, \"stack\": 3}}"
    ));
    assert!(matches!(err, PlanFileError::Malformed { .. }), "{err}");
    let missing = load_plan(&dir.path().join("absent")).unwrap_err();
    assert!(
        missing.to_string().contains("cannot read plan file"),
        "{missing}"
    );
}

#[test]
fn the_saved_file_is_the_json_document() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.json");
    let made = update_plan();
    save_plan(&made, &path).unwrap();
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(saved, plan_document(&made));
}

#[test]
fn staleness_names_what_changed_appeared_or_disappeared() {
    let made = update_plan();
    assert!(stale_clusters(&made, &[live_seed("train01")]).is_empty());

    let mut touched = served("train01", &seed(), Some("research"), "RUNNING");
    touched["updateTime"] = json!("2026-11-02T11:00:00Z");
    let stale = stale_clusters(&made, &[cluster(touched)]);
    assert_eq!(stale.len(), 1);
    assert_eq!(
        stale[0].to_string(),
        "cluster train01 changed since the plan was made (updateTime 2026-11-02T10:30:00Z -> 2026-11-02T11:00:00Z)"
    );

    let stale = stale_clusters(&made, &[]);
    assert_eq!(stale[0].kind, StalenessKind::Disappeared);

    let stale = stale_clusters(&made, &[live_seed("train01"), live_seed("new01")]);
    assert_eq!(stale.len(), 1);
    assert_eq!(stale[0].address.id(), "new01");
    assert_eq!(stale[0].kind, StalenessKind::Appeared);
}

#[test]
fn a_tampered_saved_plan_is_refused_on_load_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tfplan.json");
    save_plan(&update_plan(), &path).unwrap();
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let update = saved["changes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["action"] == "update")
        .unwrap();
    let tamperings = [
        ("/requests/0/method", json!("DELETE"), "`method`"),
        (
            "/requests/0/path",
            json!(
                "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/../../x"
            ),
            "`path`",
        ),
        ("/requests/0/query/0/1", json!("network"), "`updateMask`"),
        ("/requests/0/query/1/1", json!("EVERYTHING"), "`updateMode`"),
        ("/update_mode", json!("EVERYTHING"), "EVERYTHING"),
        (
            "/update_mode",
            json!("USER_ONLY"),
            "says its update mode is USER_ONLY, but its request sends",
        ),
        (
            "/update_mask",
            json!(["display_name"]),
            "says its update mask is display_name, but its request sends labels",
        ),
        ("/address/id", json!("a/b"), "cluster ID `a/b` is invalid"),
    ];
    for (pointer, value, named) in tamperings {
        let mut document = saved.clone();
        *document["changes"][update].pointer_mut(pointer).unwrap() = value.clone();
        std::fs::write(&path, document.to_string()).unwrap();
        let err = load_plan(&path).unwrap_err();
        assert!(matches!(err, PlanFileError::Malformed { .. }), "{err}");
        let message = err.to_string();
        assert!(message.contains(named), "{pointer} = {value}: {message}");
    }
}

#[test]
fn the_document_records_directory_variables_and_flags() {
    let mut made = update_plan();
    made.variables.insert("zones".to_owned(), json!(["a", "b"]));
    let document = plan_document(&made);
    assert_eq!(
        document["directory"],
        json!(made.directory.to_string_lossy())
    );
    assert_eq!(document["variables"], json!({"zones": ["a", "b"]}));
    assert_eq!(
        document["flags"],
        json!({"destroy": false, "idle_for_seconds": null, "targets": [], "replace": [], "update_mode": null})
    );
    assert_eq!(document["flags_digest"], json!(made.flags_digest));
    let destroying = plan(
        &config(vec![desired("train01", seed())]),
        &[live_seed("train01")],
        &PlanOptions {
            destroy: true,
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert_eq!(plan_document(&destroying)["flags"]["destroy"], json!(true));
}

#[test]
fn a_tampered_directory_or_variables_field_is_refused_clearly() {
    let cases: [(Edit, &str); 4] = [
        (
            |d| d["directory"] = json!("relative/dir"),
            "`directory` must be an absolute path, found `relative/dir`",
        ),
        (
            |d| {
                d.as_object_mut().unwrap().remove("directory");
            },
            "`directory` must be a string",
        ),
        (
            |d| d["variables"] = json!(["zones"]),
            "`variables` must be an object",
        ),
        (
            |d| d["flags"]["destroy"] = json!(true),
            "`flags.destroy` is true, but cluster `new01` has the action \"create\"",
        ),
    ];
    for (edit, expected) in cases {
        let err = load_edited(edit).unwrap_err();
        assert!(matches!(err, PlanFileError::Invalid { .. }), "{err}");
        assert!(err.to_string().contains(expected), "{err}");
    }
    assert!(load_edited(|d| d["variables"] = json!({"zones": ["a"]})).is_ok());
}

#[test]
fn only_a_destroy_plan_can_be_an_idle_destroy() {
    let refused = load_edited(|document| {
        document["flags"]["idle_for_seconds"] = json!(7200);
    });
    assert!(
        matches!(&refused, Err(PlanFileError::Invalid { problem, .. }) if problem.contains("`flags.destroy` is false")),
        "{refused:?}"
    );
    let zero = load_edited(|document| {
        document["flags"]["destroy"] = json!(true);
        document["changes"] = json!([]);
        document["flags"]["idle_for_seconds"] = json!(0);
    });
    assert!(
        matches!(&zero, Err(PlanFileError::Invalid { problem, .. }) if problem.contains("at least 1")),
        "{zero:?}"
    );
    let idle = load_edited(|document| {
        document["flags"]["destroy"] = json!(true);
        document["changes"] = json!([]);
        document["flags"]["idle_for_seconds"] = json!(7200);
    })
    .unwrap();
    assert_eq!(idle.flags.idle_for, Some(7200));
    assert_eq!(plan_document(&idle)["flags"]["idle_for_seconds"], 7200);
}

#[test]
fn a_saved_idle_destroy_matches_its_configuration_only_as_an_idle_destroy() {
    let config = config(vec![desired("train01", seed())]);
    let live = [live_seed("train01")];
    let options = PlanOptions {
        destroy: true,
        ..PlanOptions::default()
    };
    let mut saved = plan(&config, &live, &options).unwrap();
    saved.changes[0].reason = Some(clusterform_planner::ChangeReason::Idle {
        evidence: "no active job or busy node; last busy 5h ago (>= 2h)".to_owned(),
        idle_for: Some("2h".to_owned()),
    });
    let mismatches = clusterform_planner::saved_plan_mismatches(&saved, &config, &live);
    assert_eq!(
        mismatches.len(),
        1,
        "an idle reason in a plain destroy: {mismatches:?}"
    );
    saved.record_idle_threshold(7200);
    assert_eq!(
        clusterform_planner::saved_plan_mismatches(&saved, &config, &live),
        [],
        "an idle destroy's apply reads the evidence again"
    );
}

/// `train01` with other labels beside an unchanged `train02`, both live.
fn two_clusters() -> (
    clusterform_config::Config,
    [clusterform_model::LiveCluster; 2],
) {
    let mut wanted = seed();
    wanted["labels"] = json!({"team": "x"});
    let config = config(vec![desired("train01", wanted), desired("train02", seed())]);
    (config, [live_seed("train01"), live_seed("train02")])
}

/// The plan of `two_clusters()` made with `options`.
fn made_with(options: &PlanOptions) -> Plan {
    let (config, live) = two_clusters();
    let mut made = plan(&config, &live, options).unwrap();
    made.directory = std::env::temp_dir().join("config");
    made
}

fn targeting(ids: &[&str]) -> PlanOptions {
    PlanOptions {
        targets: ids.iter().map(|id| (*id).to_owned()).collect(),
        ..PlanOptions::default()
    }
}

/// The mismatches of `saved` against `two_clusters()`, as words.
fn mismatches_of(saved: &Plan) -> Vec<String> {
    let (config, live) = two_clusters();
    clusterform_planner::saved_plan_mismatches(saved, &config, &live)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// The deletion a destroy targeting `id` plans.
fn deletion_of(id: &str) -> Vec<clusterform_planner::ClusterChange> {
    made_with(&PlanOptions {
        destroy: true,
        ..targeting(&[id])
    })
    .changes
}

/// The refusal of a change the plan's flags do not give.
fn extra(address: &str) -> String {
    format!(
        "cluster {address} has a change in the plan, but planning again with the plan's flags gives it none"
    )
}

/// The refusal of a change the plan's flags give that the plan lacks.
fn missing(address: &str) -> String {
    format!(
        "cluster {address} has no change in the plan, but planning again with the plan's flags gives one"
    )
}

const TRAIN01: &str = "projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01";
const TRAIN02: &str = "projects/my-proj/locations/us-central1/modelDevelopmentClusters/train02";

#[test]
fn a_plan_records_the_flags_it_was_made_with_and_binds_them_to_the_configuration() {
    let options = PlanOptions {
        targets: vec!["train01".to_owned(), "train02".to_owned()],
        replace: vec!["train02".to_owned()],
        update_mode: Some(UpdateMode::UserOnly),
        ..PlanOptions::default()
    };
    let made = made_with(&options);
    assert_eq!(made.flags, PlanFlags::of(&options));
    assert_eq!(made.flags_digest, made.flags.digest(&made.config_digest));
    assert_eq!(
        plan_document(&made)["flags"],
        json!({
            "destroy": false,
            "idle_for_seconds": null,
            "targets": ["train01", "train02"],
            "replace": ["train02"],
            "update_mode": "USER_ONLY",
        })
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tfplan.json");
    save_plan(&made, &path).unwrap();
    assert_eq!(load_plan(&path).unwrap(), made);
    // Made honestly with every flag, it matches what planning again with them gives.
    assert_eq!(mismatches_of(&made), Vec::<String>::new());
}

#[test]
fn a_saved_plan_made_before_the_flags_were_recorded_is_refused_with_a_way_out() {
    let err = load_edited(|document| {
        document["format_version"] = json!(2);
        let object = document.as_object_mut().unwrap();
        object.remove("flags");
        object.remove("flags_digest");
        object.insert("destroy".to_owned(), json!(false));
    })
    .unwrap_err();
    assert!(
        matches!(err, PlanFileError::UnsupportedVersion { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("make the plan again"), "{err}");
    let err = load_edited(|document| {
        document.as_object_mut().unwrap().remove("flags_digest");
    })
    .unwrap_err();
    assert!(matches!(err, PlanFileError::Malformed { .. }), "{err}");
}

/// Version 3 held each warning as an English sentence; version 4 holds its kind and data.
#[test]
fn a_saved_plan_with_warnings_in_prose_is_refused_with_a_way_out() {
    let err = load_edited(|document| {
        document["format_version"] = json!(3);
        document["changes"][0]["warnings"] = json!(["the cluster is UPDATING right now"]);
    })
    .unwrap_err();
    assert!(
        matches!(err, PlanFileError::UnsupportedVersion { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("make the plan again"), "{err}");
    let err = load_edited(|document| {
        document["changes"][0]["warnings"] = json!(["the cluster is UPDATING right now"]);
    })
    .unwrap_err();
    assert!(matches!(err, PlanFileError::Malformed { .. }), "{err}");
}

/// Version 4 kept no digest per configuration file, so a refusal could not name the files
/// that changed: it is refused with the way out, and a version 5 file without them is damaged.
#[test]
fn a_saved_plan_without_file_digests_is_refused_with_a_way_out() {
    let err = load_edited(|document| {
        document["format_version"] = json!(4);
        document.as_object_mut().unwrap().remove("config_files");
    })
    .unwrap_err();
    assert!(
        matches!(err, PlanFileError::UnsupportedVersion { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("make the plan again"), "{err}");
    let err = load_edited(|document| {
        document.as_object_mut().unwrap().remove("config_files");
    })
    .unwrap_err();
    assert!(matches!(err, PlanFileError::Malformed { .. }), "{err}");
}

#[test]
fn the_files_that_changed_since_a_plan_are_named_each_once() {
    let mut made = made_with(&targeting(&[]));
    made.config_files = [("a.hcl", "1"), ("main.hcl", "2"), ("old.hcl", "3")]
        .into_iter()
        .map(|(name, digest)| (name.to_owned(), digest.to_owned()))
        .collect();
    let now = [("a.hcl", "1"), ("main.hcl", "9"), ("new/extra.hcl", "4")]
        .into_iter()
        .map(|(name, digest)| (name.to_owned(), digest.to_owned()))
        .collect();
    let changed: Vec<String> = made
        .changed_files(&now)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        changed,
        [
            "main.hcl changed",
            "new/extra.hcl is new",
            "old.hcl is gone"
        ]
    );
    assert!(made.changed_files(&made.config_files).is_empty());
}

#[test]
fn flags_edited_without_their_digest_are_refused() {
    let edits: [fn(&mut PlanFlags); 4] = [
        |flags| flags.targets.clear(),
        |flags| flags.destroy = true,
        |flags| flags.replace.push("train01".to_owned()),
        |flags| flags.update_mode = Some(UpdateMode::UserOnly),
    ];
    for edit in edits {
        let mut edited = made_with(&targeting(&["train01"]));
        edit(&mut edited.flags);
        assert_eq!(
            mismatches_of(&edited),
            [
                "the plan's flags are not the ones it was made with: `flags_digest` is not the digest of its `flags` and configuration"
            ],
            "{:?}",
            edited.flags
        );
    }
    // Bound to the configuration: the same flags with another configuration's digest.
    let mut other = made_with(&targeting(&["train01"]));
    other.flags_digest = other.flags.digest(&"0".repeat(64));
    assert_eq!(mismatches_of(&other).len(), 1);
}

#[test]
fn a_delete_added_outside_the_plans_targets_is_refused_naming_the_cluster() {
    let mut saved = made_with(&targeting(&["train01"]));
    saved.changes.extend(deletion_of("train02"));
    assert_eq!(mismatches_of(&saved), [extra(TRAIN02)]);
}

#[test]
fn a_change_left_out_of_the_plan_is_refused_naming_the_cluster() {
    let mut saved = made_with(&PlanOptions::default());
    saved
        .changes
        .retain(|change| change.address.id() != "train02");
    assert_eq!(mismatches_of(&saved), [missing(TRAIN02)]);
    // Flags edited with their digest made again are the flags planned with: the targeted
    // plan is now missing the cluster the targets left out.
    let mut widened = made_with(&targeting(&["train01"]));
    widened.flags.targets.clear();
    widened.flags_digest = widened.flags.digest(&widened.config_digest);
    assert_eq!(
        mismatches_of(&widened).len(),
        1,
        "{:?}",
        mismatches_of(&widened)
    );
}

#[test]
fn a_plan_edited_into_a_destroy_or_another_mode_or_a_replacement_is_refused() {
    let honest = made_with(&targeting(&["train01"]));
    // Into a destroy: the flag with its digest made again, the update turned into a delete.
    let mut destroying = honest.clone();
    destroying.flags.destroy = true;
    destroying.flags_digest = destroying.flags.digest(&destroying.config_digest);
    destroying.changes = deletion_of("train02");
    assert_eq!(
        mismatches_of(&destroying),
        [extra(TRAIN02), missing(TRAIN01)]
    );
    // Another update mode, in the request that holds it.
    let mut user_only = honest.clone();
    for request in &mut user_only.changes[0].requests {
        if let ClusterRequest::Update { mode, .. } = request {
            *mode = UpdateMode::UserOnly;
        }
    }
    assert_eq!(
        mismatches_of(&user_only),
        [format!(
            "cluster {TRAIN01}: the plan's update mode: not what its change implies"
        )]
    );
    // A replacement the flags did not ask for.
    let mut replacing = honest;
    replacing.changes = made_with(&PlanOptions {
        replace: vec!["train01".to_owned()],
        ..targeting(&["train01"])
    })
    .changes;
    assert_eq!(
        mismatches_of(&replacing),
        [format!(
            "cluster {TRAIN01}: the plan's action: not what its change implies"
        )]
    );
}

#[test]
fn an_idle_destroy_may_lack_the_busy_clusters_but_not_add_any() {
    let mut idle = made_with(&PlanOptions {
        destroy: true,
        keep_protected: true,
        ..PlanOptions::default()
    });
    idle.record_idle_threshold(7200);
    // The idle filter kept only train01: train02 was busy.
    idle.changes
        .retain(|change| change.address.id() == "train01");
    assert_eq!(mismatches_of(&idle), Vec::<String>::new());
    let mut targeted = made_with(&PlanOptions {
        destroy: true,
        keep_protected: true,
        ..targeting(&["train01"])
    });
    targeted.record_idle_threshold(7200);
    targeted.changes.extend(deletion_of("train02"));
    assert_eq!(mismatches_of(&targeted), [extra(TRAIN02)]);
}
