//! The documented service's in-place updates, end to end: a rename and a Slurm configuration
//! change are updates (never replacements), a service answering another spelling of a Slurm
//! parameter plans nothing, and a controller that stops answering after a Slurm settings
//! change is warned about.

use crate::emulator_command::ServedEmulator;
use crate::support::{ClusterSpec, Env, apply_ok, cluster_name, config, stderr, stdout};

/// The default cluster with a cluster-wide Slurm setting.
fn with_slurm_config(value: &str) -> String {
    config(&[ClusterSpec::default()]).replace(
        "      login_node_pool_id     = \"login\"\n",
        &format!(
            "      login_node_pool_id     = \"login\"\n      config = {{ DefMemPerCPU = {value} }}\n"
        ),
    )
}

/// The requests after the first apply that change something (PATCH, POST, DELETE).
fn changes(env: &Env) -> Vec<(String, String)> {
    env.mutations()
        .into_iter()
        .map(|r| (r.method, r.query))
        .collect()
}

#[test]
fn a_rename_is_an_update_in_place() {
    let env = Env::new(50);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator().clear_requests();
    let renamed = ClusterSpec {
        display_name: "Renamed training",
        ..ClusterSpec::default()
    };
    env.write_config(&config(&[renamed]));
    let plan = env.run(&["plan"]);
    let text = stdout(&plan);
    assert!(text.contains("will be updated in place"), "{text}");
    assert!(!text.contains("forces replacement"), "{text}");
    assert!(
        text.contains("# display_name is vouched for by the Terraform provider only"),
        "{text}"
    );
    let apply = env.run(&["apply", "--auto-approve"]);
    assert!(apply.status.success(), "{}", stderr(&apply));
    let sent = changes(&env);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].0, "PATCH");
    assert!(sent[0].1.contains("updateMask=display_name"), "{sent:?}");
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    assert_eq!(live["displayName"], "Renamed training");
}

#[test]
fn a_slurm_setting_is_updated_in_place_and_another_spelling_is_no_change() {
    let env = Env::new(50);
    env.write_config(&with_slurm_config("1024"));
    let first = env.run(&["apply", "--auto-approve"]);
    assert!(first.status.success(), "{}", stderr(&first));
    env.emulator().clear_requests();

    env.write_config(&with_slurm_config("2048"));
    let apply = env.run(&["apply", "--auto-approve"]);
    assert!(apply.status.success(), "{}", stderr(&apply));
    let sent = changes(&env);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(
        sent[0]
            .1
            .contains("updateMask=orchestrator_spec.slurm_spec.config"),
        "{sent:?}"
    );

    // The service answers with its own spelling of the parameter: nothing to change.
    let name = cluster_name("train01");
    let mut live = env.emulator().cluster(&name).unwrap();
    live["orchestratorSpec"]["slurmSpec"]["config"] =
        serde_json::json!({"def_mem_per_cpu": "2048"});
    env.emulator().insert_cluster(&name, live);
    let plan = env.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(0), "{}", stdout(&plan));
}

#[test]
fn a_controller_that_stops_after_a_slurm_settings_change_is_warned_about() {
    let env = Env::new(50);
    env.write_config(&with_slurm_config("1024"));
    let first = env.run(&["apply", "--auto-approve"]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        !stderr(&first).contains("does not answer"),
        "{}",
        stderr(&first)
    );

    env.emulator()
        .set_slurm_controller_down(&cluster_name("train01"), true);
    env.write_config(&with_slurm_config("2048"));
    let apply = env.run(&["apply", "--auto-approve"]);
    let err = stderr(&apply);
    assert!(apply.status.success(), "{err}");
    assert!(
        err.contains("cluster train01: its Slurm controller does not answer after `orchestrator_spec.slurm_spec.config` changed"),
        "{err}"
    );
}

/// `clusterform` against a separate `clusterform emulator` started with `flags`.
fn against_served(env: &Env, served: &ServedEmulator, args: &[&str]) -> std::process::Output {
    env.cmd(args)
        .env("CLUSTERFORM_ENDPOINT", served.base_url())
        .output()
        .unwrap()
}

#[test]
#[cfg(unix)]
fn a_service_that_folds_slurm_keys_plans_no_change() {
    let env = Env::new(50);
    let served = ServedEmulator::start("127.0.0.1", &["--op-seconds", "0.05", "--fold-slurm-keys"]);
    env.write_config(&with_slurm_config("1024"));
    let apply = against_served(&env, &served, &["apply", "--auto-approve"]);
    assert!(apply.status.success(), "{}", stderr(&apply));
    let plan = against_served(&env, &served, &["plan", "--detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(0), "{}", stdout(&plan));
}

#[test]
#[cfg(unix)]
fn a_refused_provider_only_path_changes_nothing_and_the_hint_names_replace() {
    let env = Env::new(50);
    let served = ServedEmulator::start(
        "127.0.0.1",
        &[
            "--op-seconds",
            "0.05",
            "--refuse-update-path",
            "display_name",
        ],
    );
    env.write_config(&config(&[ClusterSpec::default()]));
    let apply = against_served(&env, &served, &["apply", "--auto-approve"]);
    assert!(apply.status.success(), "{}", stderr(&apply));
    let renamed = ClusterSpec {
        display_name: "Renamed training",
        ..ClusterSpec::default()
    };
    env.write_config(&config(&[renamed]));
    let apply = against_served(&env, &served, &["apply", "--auto-approve"]);
    let err = stderr(&apply);
    assert_eq!(apply.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the service does not update `display_name` in place"),
        "{err}"
    );
    assert!(err.contains("clusterform apply --replace train01"), "{err}");
    let plan = against_served(&env, &served, &["plan", "--detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(2), "the rename is still to do");
}
