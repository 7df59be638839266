//! Preflight: what a plan's creates need is read from the emulator's preflight world (its
//! Service Usage, Compute Engine and Filestore reads) while the plan is made; a documented
//! impossibility fails `plan` and `apply` at the configuration line, `--skip-preflight` makes
//! it a warning, a read that cannot be made is one warning, and no read goes to the API's
//! endpoint or is made for a plan that creates nothing.

use clusterform_emulator::{
    EmulatorOptions, PreflightWorld, SeededInstance, SeededQuota, SeededReservation,
    SeededSubnetwork,
};
use clusterform_testkit::{TOKEN, TestEmulator};

use crate::support::{ClusterSpec, Env, apply_ok, config, preflight_env_at, stdout};

/// What `args` told of preflight's findings: each `Error:` or `Warning:` line and the `at` line
/// after it (the run's own error left out), and the exit status when not 0.
fn findings_of(env: &Env, args: &[&str]) -> Vec<String> {
    let output = env
        .cmd(args)
        .env("CLUSTERFORM_STORAGE_ENDPOINT", env.server.base_url())
        .output()
        .unwrap();
    let stderr = crate::support::stderr(&output);
    let mut told = Vec::new();
    let mut after_finding = false;
    for line in stderr.lines() {
        let finding = (line.starts_with("Error: cluster ")
            || line.starts_with("Warning: cluster "))
            && !line.contains("preflight found");
        if finding || (after_finding && line.starts_with("  at ")) {
            told.push(line.to_owned());
        }
        after_finding = finding;
    }
    if let Some(code) = output.status.code().filter(|code| *code != 0) {
        told.push(format!("[exit status: {code}]"));
    }
    told
}

/// Whether a logged path is one of preflight's reads.
fn is_preflight(path: &str) -> bool {
    let bucket = path
        .strip_prefix("/storage/v1/b/")
        .is_some_and(|rest| !rest.contains('/'));
    bucket
        || [
            "/serviceusage/",
            "/compute/",
            "/file/",
            "/lustre/",
            "/cloudresourcemanager/",
            "/iam/",
        ]
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
fn a_home_directory_in_neither_filestore_nor_lustre_fails_the_plan() {
    let env = env_with(PreflightWorld {
        filestore_instances: Some(Vec::new()),
        lustre_instances: Some(Vec::new()),
        ..PreflightWorld::default()
    });
    assert_eq!(
        findings_of(&env, &["plan"]),
        [
            "Error: cluster train01: the home directory projects/my-proj/locations/us-central1-a/instances/home does not exist, as a Filestore instance or as a Managed Lustre instance",
            "  at main.hcl:46:32",
            "[exit status: 1]",
        ]
    );
}

#[test]
fn a_lustre_home_directory_passes_and_one_lustre_cannot_read_is_a_warning() {
    let env = env_with(PreflightWorld {
        filestore_instances: Some(Vec::new()),
        lustre_instances: Some(vec![SeededInstance {
            name: "projects/my-proj/locations/us-central1-a/instances/home".to_owned(),
            state: "ACTIVE".to_owned(),
            network: "projects/my-proj/global/networks/default".to_owned(),
        }]),
        ..PreflightWorld::default()
    });
    assert_eq!(findings_of(&env, &["plan"]), Vec::<String>::new());
    let mut world = env.emulator().preflight_world();
    world.forbidden_apis = vec!["lustre".to_owned()];
    env.emulator().set_preflight_world(world);
    assert_eq!(
        findings_of(&env, &["plan"]),
        [
            "Warning: cluster train01: no Filestore instance projects/my-proj/locations/us-central1-a/instances/home exists for the home directory, and whether a Managed Lustre instance does could not be read (unless it is one, the create will fail)",
            "  at main.hcl:46:32",
        ]
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
        9,
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
    assert_eq!(reads, 9);
}

/// A GPU pool on a reservation that mounts a Lustre instance, a Spot GPU pool, the nodes'
/// service account and a Lustre export, beside the canonical cluster's pools.
const GPU_SETTINGS: &str = r#"
  node_pool "gpu" {
    machine_spec {
      machine_type = "a3-megagpu-8g"
      reservation_affinity {
        reservation_affinity_type = "SPECIFIC_RESERVATION"
        key                       = "compute.googleapis.com/reservation-name"
        values                    = ["projects/my-proj/zones/us-central1-a/reservations/h100"]
      }
    }
    provisioning_model = "RESERVATION"
    scaling_spec {
      min_node_count = 2
      max_node_count = 2
    }
    zone    = "us-central1-a"
    lustres = ["projects/my-proj/locations/us-central1-a/instances/scratch"]
  }

  node_pool "spot" {
    machine_spec {
      machine_type = "a3-megagpu-8g"
    }
    provisioning_model = "SPOT"
    scaling_spec {
      min_node_count = 0
      max_node_count = 2
    }
    zone = "us-central1-a"
  }

  runtime_spec {
    service_account = "nodes@my-proj.iam.gserviceaccount.com"
  }

  lustre_export_config {
    destination_bucket = "my-proj-export"
    lustres            = ["projects/my-proj/locations/us-central1-a/instances/scratch"]
  }
"#;

fn gpu_env_with(world: PreflightWorld) -> Env {
    let env = Env::new(50);
    env.emulator().set_preflight_world(world);
    env.write_config(&config(&[ClusterSpec {
        extra_cluster_settings: GPU_SETTINGS,
        ..ClusterSpec::default()
    }]));
    env
}

#[test]
fn a_gpu_cluster_passes_the_default_world_reading_each_of_its_resources() {
    let env = gpu_env_with(PreflightWorld::default());
    assert_eq!(findings_of(&env, &["plan"]), Vec::<String>::new());
    let reads = preflight_reads(&env);
    for read in [
        "GET /lustre/v1/projects/my-proj/locations/us-central1-a/instances/scratch",
        "GET /storage/v1/b/my-proj-export",
        "GET /compute/v1/projects/my-proj/zones/us-central1-a/reservations/h100",
        "GET /compute/v1/projects/my-proj/regions/us-central1",
        "POST /cloudresourcemanager/v1/projects/my-proj:testIamPermissions",
        "GET /iam/v1/projects/-/serviceAccounts/nodes@my-proj.iam.gserviceaccount.com",
        "POST /iam/v1/projects/-/serviceAccounts/nodes@my-proj.iam.gserviceaccount.com:testIamPermissions",
    ] {
        assert!(reads.iter().any(|r| r == read), "{read}: {reads:#?}");
    }
}

#[test]
fn a_missing_lustre_instance_and_export_bucket_fail_the_plan_at_their_lines() {
    let env = gpu_env_with(PreflightWorld {
        lustre_instances: Some(Vec::new()),
        buckets: Some(Vec::new()),
        ..PreflightWorld::default()
    });
    assert_eq!(
        findings_of(&env, &["plan"]),
        [
            "Error: cluster train01: the Managed Lustre instance projects/my-proj/locations/us-central1-a/instances/scratch does not exist",
            "  at main.hcl:70:15",
            "Error: cluster train01: the Lustre export's bucket gs://my-proj-export does not exist",
            "  at main.hcl:90:26",
            "[exit status: 1]",
        ]
    );
}

#[test]
fn a_lustre_instance_not_active_on_another_network_fails_the_plan() {
    let env = gpu_env_with(PreflightWorld {
        lustre_instances: Some(vec![SeededInstance {
            name: "projects/my-proj/locations/us-central1-a/instances/scratch".to_owned(),
            state: "CREATING".to_owned(),
            network: "projects/my-proj/global/networks/other".to_owned(),
        }]),
        ..PreflightWorld::default()
    });
    assert_eq!(
        findings_of(&env, &["plan"]),
        [
            "Error: cluster train01: the Managed Lustre instance projects/my-proj/locations/us-central1-a/instances/scratch is CREATING, not ACTIVE",
            "  at main.hcl:70:15",
            "Error: cluster train01: the Managed Lustre instance projects/my-proj/locations/us-central1-a/instances/scratch is on projects/my-proj/global/networks/other, not on the cluster's network projects/my-proj/global/networks/default",
            "  at main.hcl:70:15",
            "[exit status: 1]",
        ]
    );
}

#[test]
fn a_home_filestore_in_no_pools_zone_is_a_warning() {
    let env = env_with(PreflightWorld::default());
    env.write_config(&config(&[ClusterSpec::default()]).replace(
        "locations/us-central1-a/instances/home",
        "locations/us-central1-b/instances/home",
    ));
    assert_eq!(
        findings_of(&env, &["plan"]),
        [
            "Warning: cluster train01: the Filestore instance projects/my-proj/locations/us-central1-b/instances/home is in zone us-central1-b, where no node pool is (the pools are in us-central1-a); nodes would mount it across zones, if the service allows it at all",
            "  at main.hcl:46:32",
        ]
    );
}

#[test]
fn a_reservation_for_other_machines_with_too_few_free_or_missing_fails_the_plan() {
    let env = gpu_env_with(PreflightWorld {
        reservations: Some(vec![SeededReservation {
            name: "projects/my-proj/zones/us-central1-a/reservations/h100".to_owned(),
            machine_type: "a4-highgpu-8g".to_owned(),
            count: 4,
            in_use_count: 3,
        }]),
        ..PreflightWorld::default()
    });
    assert_eq!(
        findings_of(&env, &["plan"]),
        [
            "Error: cluster train01: node pool gpu: the reservation projects/my-proj/zones/us-central1-a/reservations/h100 holds a4-highgpu-8g machines, not the pool's a3-megagpu-8g",
            "  at main.hcl:58:7",
            "Error: cluster train01: node pool gpu: the reservation projects/my-proj/zones/us-central1-a/reservations/h100 has 1 machine free (4 reserved, 3 in use), fewer than the pool's min_node_count 2",
            "  at main.hcl:58:7",
            "[exit status: 1]",
        ]
    );
    let env = gpu_env_with(PreflightWorld {
        reservations: Some(Vec::new()),
        ..PreflightWorld::default()
    });
    assert_eq!(
        findings_of(&env, &["plan"]),
        [
            "Error: cluster train01: node pool gpu: the reservation projects/my-proj/zones/us-central1-a/reservations/h100 does not exist",
            "  at main.hcl:58:7",
            "[exit status: 1]",
        ]
    );
}

#[test]
fn a_reservation_in_another_zone_than_its_pool_fails_the_plan() {
    let env = gpu_env_with(PreflightWorld {
        reservations: Some(vec![SeededReservation {
            name: "projects/my-proj/zones/us-central1-b/reservations/h100".to_owned(),
            machine_type: "a3-megagpu-8g".to_owned(),
            count: 4,
            in_use_count: 0,
        }]),
        ..PreflightWorld::default()
    });
    let hcl = std::fs::read_to_string(env.path().join("main.hcl")).unwrap();
    env.write_config(&hcl.replace(
        "zones/us-central1-a/reservations/h100",
        "zones/us-central1-b/reservations/h100",
    ));
    let findings = findings_of(&env, &["plan"]);
    assert!(
        findings
            .first()
            .is_some_and(|line| line.starts_with("Error: cluster train01: node pool gpu: the reservation projects/my-proj/zones/us-central1-b/reservations/h100")
                && line.contains("us-central1-a")),
        "{findings:?}"
    );
    assert_eq!(
        findings.last().map(String::as_str),
        Some("[exit status: 1]")
    );
}

#[test]
fn permissions_the_caller_lacks_and_a_missing_service_account_fail_plan_and_apply() {
    let env = gpu_env_with(PreflightWorld {
        denied_permissions: vec![
            "aiplatform.modelDevelopmentClusters.create".to_owned(),
            "iam.serviceAccounts.actAs".to_owned(),
        ],
        ..PreflightWorld::default()
    });
    assert_eq!(
        findings_of(&env, &["plan"]),
        [
            "Error: cluster train01: the caller lacks iam.serviceAccounts.actAs on the service account nodes@my-proj.iam.gserviceaccount.com: the create would be refused",
            "  at main.hcl:86:23",
            "Error: cluster train01: the caller lacks aiplatform.modelDevelopmentClusters.create on project my-proj: apply's calls would be refused",
            "  at main.hcl:8:1",
            "[exit status: 1]",
        ]
    );
    assert_eq!(
        findings_of(&env, &["apply", "--auto-approve", "--json"]),
        [
            "Error: cluster train01: the caller lacks iam.serviceAccounts.actAs on the service account nodes@my-proj.iam.gserviceaccount.com: the create would be refused",
            "  at main.hcl:86:23",
            "Error: cluster train01: the caller lacks aiplatform.modelDevelopmentClusters.create on project my-proj: apply's calls would be refused",
            "  at main.hcl:8:1",
            "[exit status: 1]",
        ]
    );
    assert_eq!(env.mutations(), [], "apply sent nothing");
    let env = gpu_env_with(PreflightWorld {
        service_accounts: Some(Vec::new()),
        ..PreflightWorld::default()
    });
    assert_eq!(
        findings_of(&env, &["plan"]),
        [
            "Error: cluster train01: the service account nodes@my-proj.iam.gserviceaccount.com does not exist",
            "  at main.hcl:86:23",
            "[exit status: 1]",
        ]
    );
}

#[test]
fn a_region_without_the_gpu_quota_and_a_disabled_lustre_api_are_told() {
    let env = gpu_env_with(PreflightWorld {
        quotas: Some(vec![SeededQuota {
            region: "projects/my-proj/regions/us-central1".to_owned(),
            metric: "CPUS".to_owned(),
            limit: 100.0,
            usage: 0.0,
        }]),
        disabled_services: vec!["projects/my-proj/services/lustre.googleapis.com".to_owned()],
        ..PreflightWorld::default()
    });
    assert_eq!(
        findings_of(&env, &["plan"]),
        [
            "Error: cluster train01: the service lustre.googleapis.com is not enabled in project my-proj: the create would fail",
            "  at main.hcl:8:1",
            "Warning: cluster train01: the plan's GPU pools may need 16 PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS in us-central1, and project my-proj lists no such quota there (its limit may be 0); which quota the service charges is not documented: PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS is an inference",
            "  at main.hcl:74:5",
            "[exit status: 1]",
        ]
    );
}

#[test]
fn gpu_quota_short_is_a_warning_with_its_numbers_in_text_and_json() {
    let env = gpu_env_with(PreflightWorld {
        quotas: Some(vec![SeededQuota {
            region: "projects/my-proj/regions/us-central1".to_owned(),
            metric: "PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS".to_owned(),
            limit: 16.0,
            usage: 8.0,
        }]),
        ..PreflightWorld::default()
    });
    assert_eq!(
        findings_of(&env, &["plan"]),
        [
            "Warning: cluster train01: the plan's GPU pools may need 16 PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS in us-central1 at their max_node_count (1 cluster), and project my-proj has 8 free of that quota (limit 16, in use 8); which quota the service charges is not documented: PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS is an inference",
            "  at main.hcl:74:5",
        ]
    );
    let output = env
        .cmd(&["plan", "--json"])
        .env("CLUSTERFORM_STORAGE_ENDPOINT", env.server.base_url())
        .output()
        .unwrap();
    assert!(output.status.success());
    let document: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let finding = &document["preflight"][0];
    assert_eq!(
        (&finding["kind"], &finding["severity"]),
        (
            &serde_json::json!("gpu_quota_short"),
            &serde_json::json!("warning")
        ),
        "{document}"
    );
}

#[test]
fn checks_that_cannot_run_are_one_warning_per_api_and_the_plan_goes_on() {
    let env = gpu_env_with(PreflightWorld {
        forbidden_apis: ["lustre", "cloudresourcemanager", "iam", "storage"]
            .map(str::to_owned)
            .to_vec(),
        ..PreflightWorld::default()
    });
    assert_eq!(
        findings_of(&env, &["plan"]),
        [
            "Warning: cluster train01: preflight could not read projects/my-proj/locations/us-central1-a/instances/scratch from Managed Lustre: HTTP 403: The caller does not have permission; what it checks is not known",
            "  at main.hcl:70:15",
            "Warning: cluster train01: preflight could not read gs://my-proj-export from Cloud Storage: HTTP 403: The caller does not have permission; what it checks is not known",
            "  at main.hcl:90:26",
            "Warning: cluster train01: preflight could not read the service account nodes@my-proj.iam.gserviceaccount.com, the caller's permission to act as nodes@my-proj.iam.gserviceaccount.com from IAM: HTTP 403: The caller does not have permission; what they check is not known",
            "  at main.hcl:86:23",
            "Warning: cluster train01: preflight could not read the caller's permissions on projects/my-proj from Resource Manager: HTTP 403: The caller does not have permission; what it checks is not known",
            "  at main.hcl:8:1",
        ]
    );
}

#[test]
fn a_fallback_on_a_reservation_in_another_zone_is_a_warning_and_the_plan_and_apply_go_on() {
    let env = gpu_env_with(PreflightWorld::default());
    let hcl = std::fs::read_to_string(env.path().join("main.hcl")).unwrap();
    let spare = r#"    provisioning_model = "RESERVATION"

    fallback {
      machine_spec {
        machine_type = "a3-megagpu-8g"
        reservation_affinity {
          reservation_affinity_type = "SPECIFIC_RESERVATION"
          key                       = "compute.googleapis.com/reservation-name"
          values                    = ["projects/my-proj/zones/us-central1-b/reservations/spare"]
        }
      }
    }
"#;
    env.write_config(&hcl.replacen("    provisioning_model = \"RESERVATION\"\n", spare, 1));
    assert_eq!(
        findings_of(&env, &["plan"]),
        [
            "Warning: cluster train01: fallback 1 (attempt 2) of pool `gpu`: the reservation projects/my-proj/zones/us-central1-b/reservations/spare is in zone us-central1-b, not in the pool's zone us-central1-a: this alternative would fail",
            "  at main.hcl:66:5",
        ],
        "a warning at the fallback block, not an error: the plan exits 0"
    );
    let mut reservation_reads: Vec<String> = preflight_reads(&env)
        .into_iter()
        .filter(|read| read.contains("/reservations/"))
        .collect();
    reservation_reads.sort();
    assert_eq!(
        reservation_reads,
        [
            "GET /compute/v1/projects/my-proj/zones/us-central1-a/reservations/h100",
            "GET /compute/v1/projects/my-proj/zones/us-central1-b/reservations/spare",
        ]
    );
    let output = env
        .cmd(&["apply", "--auto-approve"])
        .env("CLUSTERFORM_STORAGE_ENDPOINT", env.server.base_url())
        .output()
        .unwrap();
    let stderr = crate::support::stderr(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("Warning: cluster train01: fallback 1 (attempt 2) of pool `gpu`"),
        "{stderr}"
    );
}
