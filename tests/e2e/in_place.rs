//! The documented service's in-place updates, end to end: a rename and a Slurm configuration
//! change are updates (never replacements), a service answering another spelling of a Slurm
//! parameter plans nothing, and a controller that stops answering after a Slurm settings
//! change is warned about.

use crate::emulator_command::ServedEmulator;
use crate::support::{
    ClusterSpec, Env, apply_ok, cluster_name, config, created_attributes_elided,
    failure_seconds_hidden, stderr, stdout,
};

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
    insta::assert_snapshot!(env.transcript(&["plan"]), @r#"
    clusterform will perform the following actions:

      # train01 will be updated in place
      ~ cluster "train01" {
          ~ display_name = "Research training" -> "Renamed training"
            # (1 unchanged attribute hidden)
            # (4 unchanged blocks hidden)
        }
        update mask: display_name
        # display_name is vouched for by the Terraform provider only: if the service refuses it, the cluster is unchanged (--replace forces the change)
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; no node is recreated unless it refreshes a pool's startup script)
        impact: immediate

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.
    "#);
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
    insta::assert_snapshot!(env.transcript(&["apply", "--auto-approve"]).normalized_with(created_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    [HH:MM:SS] train01: creating… [Ns]
    [HH:MM:SS] train01: create request accepted [Ns]
    [HH:MM:SS] train01: create done [Ns]
    [HH:MM:SS] train01: created [Ns]
    Apply complete! Resources: 1 added, 0 changed, 0 replaced, 0 destroyed.
    "#);

    env.emulator()
        .set_slurm_controller_down(&cluster_name("train01"), true);
    env.write_config(&with_slurm_config("2048"));
    insta::assert_snapshot!(env.transcript(&["apply", "--auto-approve"]), @r#"
    clusterform will perform the following actions:

      # train01 will be updated in place
      ~ cluster "train01" {
          ~ orchestrator_spec {
              ~ slurm_spec {
                  ~ config = {
                      ~ "DefMemPerCPU" = "1024" -> "2048"
                    }
                    # (3 unchanged attributes hidden)
                    # (1 unchanged block hidden)
                }
            }
            # (2 unchanged attributes hidden)
            # (3 unchanged blocks hidden)
        }
        update mask: orchestrator_spec.slurm_spec.config
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; no node is recreated unless it refreshes a pool's startup script)
        impact: slurm sync ≤ 15 s

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.
    [stderr]
    [HH:MM:SS] train01: updating… [Ns]
    [HH:MM:SS] train01: update request accepted [Ns]
    [HH:MM:SS] train01: update done [Ns]
    [HH:MM:SS] train01: updated [Ns]
    Warning: cluster train01: its Slurm controller does not answer after `orchestrator_spec.slurm_spec.config` changed (slurmctld does not respond: train01-controller (DOWN)). The service checks each Slurm parameter on its own: some accepted combinations stop slurmctld (e.g. PreemptType=preempt/none with PreemptMode=SUSPEND,GANG) while the operation reports success; check `sinfo` on the login node, and revert the change if it fails
    Apply complete! Resources: 0 added, 1 changed, 0 replaced, 0 destroyed.
    "#);
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
    insta::assert_snapshot!(env.transcript_of(&apply).normalized_with(failure_seconds_hidden), @r#"
    clusterform will perform the following actions:

      # train01 will be updated in place
      ~ cluster "train01" {
          ~ display_name = "Research training" -> "Renamed training"
            # (1 unchanged attribute hidden)
            # (4 unchanged blocks hidden)
        }
        update mask: display_name
        # display_name is vouched for by the Terraform provider only: if the service refuses it, the cluster is unchanged (--replace forces the change)
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; no node is recreated unless it refreshes a pool's startup script)
        impact: immediate

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.
    [stderr]
    [HH:MM:SS] train01: updating… [Ns]
    [HH:MM:SS] train01: FAILED after [N]s: the service does not update `display_name` in place: it refused the update and nothing changed (INVALID_ARGUMENT (400): Invalid update mask path `display_name`: the field cannot be updated in place.)
    Error: Update of cluster train01 failed: the service does not update `display_name` in place: it refused the update and nothing changed (INVALID_ARGUMENT (400): Invalid update mask path `display_name`: the field cannot be updated in place.)
      hint: only the Terraform provider's update mask vouches for `display_name`; to change it anyway, replace the cluster (this deletes it and its running jobs): `clusterform apply --replace train01`, or undo the change in the configuration
    Error: 1 of 1 actions failed
      hint: fix the cause above and run `clusterform apply` again; finished clusters are not touched twice
    [exit status: 1]
    "#);
    let plan = against_served(&env, &served, &["plan", "--detailed-exitcode"]);
    assert_eq!(plan.status.code(), Some(2), "the rename is still to do");
}
