//! Saved plan files and their freshness against the live clusters.

use clusterform_planner::{
    PLAN_FORMAT_VERSION, PlanFileError, PlanOptions, StalenessKind, load_plan, plan, plan_document,
    save_plan, stale_clusters,
};
use serde_json::json;

use crate::support::{cluster, config, desired, live_seed, seed, served};

fn update_plan() -> clusterform_planner::Plan {
    let mut wanted = seed();
    wanted["labels"] = json!({"team": "x"});
    let clusters = vec![desired("train01", wanted), desired("new01", seed())];
    plan(
        &config(clusters),
        &[live_seed("train01")],
        &PlanOptions::default(),
    )
    .unwrap()
}

#[test]
fn a_saved_plan_reads_back_identical_and_private() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tfplan.json");
    let made = update_plan();
    save_plan(&made, &path).unwrap();
    assert_eq!(load_plan(&path).unwrap(), made);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("{\n  \"format_version\": 1,"), "{text}");
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
    let err = load(&format!(
        "{{\"format_version\": {PLAN_FORMAT_VERSION}, \"stack\": 3}}"
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
    assert_eq!(stale[0].address.cluster_id, "new01");
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
        (
            "/requests/0/query/0/1",
            json!("display_name"),
            "`updateMask`",
        ),
        ("/requests/0/query/1/1", json!("EVERYTHING"), "`updateMode`"),
        ("/update_mode", json!("EVERYTHING"), "EVERYTHING"),
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
