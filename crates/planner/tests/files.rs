//! Saved plan files and their freshness against the live clusters.

use clusterform_planner::{
    PLAN_FORMAT_VERSION, Plan, PlanFileError, PlanOptions, StalenessKind, load_plan, plan,
    plan_document, save_plan, stale_clusters,
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
    assert!(text.starts_with("{\n  \"format_version\": 2,"), "{text}");
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
    made.endpoint = Some("http://127.0.0.1:8089".to_owned());
    save_plan(&made, &path).unwrap();
    assert_eq!(load_plan(&path).unwrap(), made);
    assert_eq!(plan_document(&made)["endpoint"], "http://127.0.0.1:8089");

    // A plan saved before the endpoint was recorded loads without one.
    let older = load_edited(|document| {
        document.as_object_mut().unwrap().remove("endpoint");
    })
    .unwrap();
    assert_eq!(older.endpoint, None);
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
fn the_document_records_directory_variables_and_destroy() {
    let mut made = update_plan();
    made.variables.insert("zones".to_owned(), json!(["a", "b"]));
    let document = plan_document(&made);
    assert_eq!(
        document["directory"],
        json!(made.directory.to_string_lossy())
    );
    assert_eq!(document["variables"], json!({"zones": ["a", "b"]}));
    assert_eq!(document["destroy"], json!(false));
    let destroying = plan(
        &config(vec![desired("train01", seed())]),
        &[live_seed("train01")],
        &PlanOptions {
            destroy: true,
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert_eq!(plan_document(&destroying)["destroy"], json!(true));
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
            |d| d["destroy"] = json!(true),
            "`destroy` is true, but cluster `new01` has the action \"create\"",
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
        document["idle_for_seconds"] = json!(7200);
    });
    assert!(
        matches!(&refused, Err(PlanFileError::Invalid { problem, .. }) if problem.contains("`destroy` is false")),
        "{refused:?}"
    );
    let zero = load_edited(|document| {
        document["destroy"] = json!(true);
        document["changes"] = json!([]);
        document["idle_for_seconds"] = json!(0);
    });
    assert!(
        matches!(&zero, Err(PlanFileError::Invalid { problem, .. }) if problem.contains("at least 1")),
        "{zero:?}"
    );
    let idle = load_edited(|document| {
        document["destroy"] = json!(true);
        document["changes"] = json!([]);
        document["idle_for_seconds"] = json!(7200);
    })
    .unwrap();
    assert_eq!(idle.idle_for, Some(7200));
    assert_eq!(plan_document(&idle)["idle_for_seconds"], 7200);
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
    saved.idle_for = Some(7200);
    assert_eq!(
        clusterform_planner::saved_plan_mismatches(&saved, &config, &live),
        [],
        "an idle destroy's apply reads the evidence again"
    );
}
