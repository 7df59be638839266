//! Preflight: what a plan's creates need is read from the emulator's preflight world (its
//! Service Usage, Compute Engine and Filestore reads) while the plan is made; a documented
//! impossibility fails `plan` and `apply` at the configuration line, `--skip-preflight` makes
//! it a warning, a read that cannot be made is one warning, and no read goes to the API's
//! endpoint or is made for a plan that creates nothing.

use clusterform_emulator::{EmulatorOptions, PreflightWorld, SeededInstance, SeededSubnetwork};
use clusterform_testkit::{TOKEN, TestEmulator};

use crate::support::{ClusterSpec, Env, apply_ok, config, preflight_env_at, stdout};

/// Whether a logged path is one of preflight's reads.
fn is_preflight(path: &str) -> bool {
    ["/serviceusage/", "/compute/", "/file/"]
        .iter()
        .any(|prefix| path.starts_with(prefix))
}

/// The preflight reads the emulator received, as `GET path`.
fn preflight_reads(env: &Env) -> Vec<String> {
    env.emulator()
        .requests()
        .into_iter()
        .filter(|request| is_preflight(&request.path))
        .map(|request| format!("{} {}", request.method, request.path))
        .collect()
}

fn env_with(world: PreflightWorld) -> Env {
    let env = Env::new(50);
    env.emulator().set_preflight_world(world);
    env.write_config(&config(&[ClusterSpec::default()]));
    env
}

/// The testkit's subnetwork, on its network, with Private Google Access as given.
fn default_subnetwork(private_ip_google_access: bool) -> SeededSubnetwork {
    SeededSubnetwork {
        name: "projects/my-proj/regions/us-central1/subnetworks/default".to_owned(),
        network: "projects/my-proj/global/networks/default".to_owned(),
        private_ip_google_access,
    }
}

#[test]
fn a_disabled_service_fails_the_plan_at_the_cluster_block() {
    let env = env_with(PreflightWorld {
        disabled_services: vec![
            "projects/my-proj/services/hypercomputecluster.googleapis.com".to_owned(),
        ],
        ..PreflightWorld::default()
    });
    insta::assert_snapshot!(env.transcript(&["plan"]).normalized_with(crate::support::created_attributes_elided), @"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster \"train01\" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    Error: cluster train01: the service hypercomputecluster.googleapis.com is not enabled in project my-proj: the create would fail
      at main.hcl:8:1
      hint: enable it: gcloud services enable hypercomputecluster.googleapis.com --project my-proj
    Error: preflight found 1 problem that would make applying this plan fail
      hint: fix what each error above names, or run again with --skip-preflight to go ahead all the same (the errors are then warnings)
    [exit status: 1]
    ");
}

#[test]
fn a_missing_subnetwork_fails_the_plan_at_its_line() {
    let env = env_with(PreflightWorld {
        subnetworks: Some(Vec::new()),
        ..PreflightWorld::default()
    });
    let output = env.run(&["plan"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = crate::support::stderr(&output);
    assert!(
        stderr.contains(
            "Error: cluster train01: the subnetwork projects/my-proj/regions/us-central1/subnetworks/default does not exist\n  at main.hcl:14:18"
        ),
        "{stderr}"
    );
}

#[test]
fn private_google_access_off_with_private_pools_fails_plan_and_apply_before_anything_is_sent() {
    let env = env_with(PreflightWorld {
        subnetworks: Some(vec![default_subnetwork(false)]),
        ..PreflightWorld::default()
    });
    insta::assert_snapshot!(env.transcript(&["plan", "--out", "tfplan.json"]).normalized_with(crate::support::created_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    Error: cluster train01: node pool cpu has no public IPs, and the subnetwork projects/my-proj/regions/us-central1/subnetworks/default has Private Google Access off: the create would fail ("Subnetwork does not allow private IP Google access")
      at main.hcl:14:18
      hint: turn it on: gcloud compute networks subnets update default --region us-central1 --project my-proj --enable-private-ip-google-access; or set enable_public_ips = true on those pools
    Error: preflight found 1 problem that would make applying this plan fail
      hint: fix what each error above names, or run again with --skip-preflight to go ahead all the same (the errors are then warnings)
    [exit status: 1]
    "#);
    assert!(
        !env.path().join("tfplan.json").exists(),
        "a plan preflight refuses is not saved"
    );
    let apply = env.run(&["apply", "--auto-approve"]);
    assert_eq!(apply.status.code(), Some(1));
    assert_eq!(env.mutations(), [], "apply sent nothing");
}

#[test]
fn skip_preflight_turns_the_error_into_a_warning() {
    let env = env_with(PreflightWorld {
        subnetworks: Some(vec![default_subnetwork(false)]),
        ..PreflightWorld::default()
    });
    let output = env.run(&["plan", "--skip-preflight", "--json"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        crate::support::stderr(&output)
    );
    let stderr = crate::support::stderr(&output);
    assert!(
        stderr.starts_with("Warning: cluster train01: node pool cpu has no public IPs"),
        "{stderr}"
    );
    let document: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let finding = &document["preflight"][0];
    assert_eq!(finding["severity"], "warning", "{document}");
    assert_eq!(finding["kind"], "private_google_access_off");
    assert_eq!(
        (&finding["file"], &finding["line"]),
        (&serde_json::json!("main.hcl"), &serde_json::json!(14))
    );
    let apply = env.run(&["apply", "--auto-approve", "--skip-preflight"]);
    assert!(apply.status.success(), "{}", crate::support::stderr(&apply));
}

#[test]
fn a_missing_home_filestore_instance_is_a_warning_since_it_may_be_lustre() {
    let env = env_with(PreflightWorld {
        filestore_instances: Some(vec![SeededInstance {
            name: "projects/my-proj/locations/us-central1-b/instances/home".to_owned(),
            state: "READY".to_owned(),
            network: "default".to_owned(),
        }]),
        ..PreflightWorld::default()
    });
    let output = env.run(&["plan", "--json"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        crate::support::stderr(&output)
    );
    let document: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let finding = &document["preflight"][0];
    assert_eq!(finding["kind"], "filestore_missing", "{document}");
    assert_eq!(finding["severity"], "warning");
    assert_eq!(
        finding["field"],
        "orchestrator_spec.slurm_spec.home_directory_storage"
    );
}

#[test]
fn a_check_that_cannot_run_is_one_warning_and_the_plan_goes_on() {
    let env = env_with(PreflightWorld {
        forbidden_apis: vec!["compute".to_owned()],
        ..PreflightWorld::default()
    });
    let output = env.run(&["plan"]);
    assert_eq!(output.status.code(), Some(0));
    let stderr = crate::support::stderr(&output);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("Warning:"))
        .collect();
    assert_eq!(
        warnings,
        [
            "Warning: cluster train01: preflight could not read projects/my-proj/global/networks/default, projects/my-proj/regions/us-central1/subnetworks/default from Compute Engine: HTTP 403: The caller does not have permission; what they check is not known",
        ],
        "{stderr}"
    );
}

#[test]
fn the_quick_starts_world_passes_and_a_plan_that_creates_nothing_reads_nothing() {
    let env = Env::new(50);
    apply_ok(
        &env,
        &[ClusterSpec::default(), ClusterSpec::named("train02")],
    );
    assert_eq!(
        preflight_reads(&env).len(),
        7,
        "each distinct read once for two clusters: {:?}",
        preflight_reads(&env)
    );
    env.emulator().clear_requests();
    let plan = env.run(&["plan"]);
    assert!(plan.status.success());
    assert_eq!(preflight_reads(&env), Vec::<String>::new());
}

#[test]
fn a_plan_that_only_deletes_reads_nothing_although_declared_clusters_are_absent() {
    let env = Env::new(50);
    env.write_config(&config(&[ClusterSpec::default()]));
    let plan = env.run(&["plan", "--destroy"]);
    assert!(plan.status.success(), "{}", crate::support::stderr(&plan));
    assert_eq!(preflight_reads(&env), Vec::<String>::new());
}

#[test]
fn no_preflight_read_reaches_the_api_endpoint() {
    let env = Env::new(50);
    env.write_config(&config(&[ClusterSpec::default()]));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let elsewhere = runtime.block_on(TestEmulator::start(EmulatorOptions {
        required_token: Some(TOKEN.to_owned()),
        ..EmulatorOptions::default()
    }));
    let output = env
        .cmd(&["plan", "--endpoint", &env.server.base_url()])
        .envs(preflight_env_at(&elsewhere.base_url()))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        crate::support::stderr(&output)
    );
    assert_eq!(
        preflight_reads(&env),
        Vec::<String>::new(),
        "the API endpoint got none"
    );
    let reads = elsewhere
        .emulator()
        .requests()
        .into_iter()
        .filter(|request| is_preflight(&request.path))
        .count();
    assert_eq!(reads, 7);
}
