//! Secrets: with a distinctive access token and a sensitive variable feeding a startup script,
//! every command — successful and failing ones, quiet and with `-v`/`-vv` — is run, and the
//! token appears in no output, journal, plan file or emulator state file, while the sensitive
//! value appears only where it is documented to (JSON plans, plan files, the API itself).

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use clusterform_emulator::EmulatorOptions;
use tempfile::TempDir;

use crate::support::{ClusterSpec, Env, PROVIDER, cluster_hcl, cluster_name, stderr, stdout};

const TOKEN: &str = "cf-token-Zq8vX3-distinctive";
const WRONG_TOKEN: &str = "cf-wrong-token-Jk2pQ9";
const SENSITIVE: &str = "s3nsitive-boot-value-Pw7";
const SENSITIVE_UPDATE: &str = "s3nsitive-second-value-Lm4";

/// Where a sensitive value may be printed: the JSON plan document carries the real request
/// bodies (docs/plan-json.md).
#[derive(Clone, Copy, PartialEq)]
enum Sensitive {
    Masked,
    Shown,
}

struct Secrets {
    env: Env,
    state: TempDir,
    /// Every run so far: its command line, what it printed, where the sensitive value may show.
    runs: Vec<(String, Output, Sensitive)>,
}

impl Secrets {
    fn new() -> Self {
        let state = tempfile::tempdir().unwrap();
        let env = Env::with_options(EmulatorOptions {
            operation_duration: Duration::from_millis(300),
            required_token: Some(TOKEN.to_owned()),
            project_numbers: true,
            state_file: Some(state.path().join("emulator.json")),
            ..EmulatorOptions::default()
        });
        let cluster = cluster_hcl(&ClusterSpec::default()).replacen(
            "node_pool \"cpu\" {",
            "node_pool \"cpu\" {\n    startup_script = \"echo ${var.boot_secret}\"",
            1,
        );
        env.write_config(&format!(
            "{PROVIDER}\nvariable \"boot_secret\" {{\n  type      = string\n  sensitive = true\n}}\n{cluster}"
        ));
        Self {
            env,
            state,
            runs: Vec::new(),
        }
    }

    /// Runs the binary with the token and the sensitive value `secret`, and keeps its output.
    fn run_with(
        &mut self,
        args: &[&str],
        token: &str,
        secret: &str,
        sensitive: Sensitive,
    ) -> &Output {
        let output = self
            .env
            .cmd(args)
            .env("CLUSTERFORM_ACCESS_TOKEN", token)
            .env("CLUSTERFORM_VAR_boot_secret", secret)
            .output()
            .unwrap();
        self.runs.push((args.join(" "), output, sensitive));
        &self.runs.last().unwrap().1
    }

    fn run(&mut self, args: &[&str], sensitive: Sensitive) -> &Output {
        self.run_with(args, TOKEN, SENSITIVE, sensitive)
    }

    fn run_ok(&mut self, args: &[&str], sensitive: Sensitive) {
        let output = self.run(args, sensitive);
        assert!(
            output.status.success(),
            "{args:?}:\n{}{}",
            stdout(output),
            stderr(output)
        );
    }

    fn run_failing(&mut self, args: &[&str], token: &str) {
        let output = self.run_with(args, token, SENSITIVE, Sensitive::Masked);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{args:?}:\n{}",
            stdout(output)
        );
    }
}

/// Every file under `dir`, with its path.
fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    files
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

/// The journal's text while an update to `secret` is in flight (the run then finishes).
fn journal_during_an_update(secrets: &Secrets, secret: &str) -> String {
    let env = &secrets.env;
    let child = env.spawn(
        &["apply", "--auto-approve", "-vv"],
        &[
            ("CLUSTERFORM_ACCESS_TOKEN", TOKEN),
            ("CLUSTERFORM_VAR_boot_secret", secret),
        ],
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let journal = loop {
        let text = std::fs::read_to_string(env.journal_path()).unwrap_or_default();
        if text.contains("/operations/") {
            break text;
        }
        assert!(Instant::now() < deadline, "the update was never journaled");
        std::thread::sleep(Duration::from_millis(5));
    };
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    for text in [stdout(&output), stderr(&output)] {
        assert!(!text.contains(TOKEN) && !text.contains(secret), "{text}");
    }
    journal
}

/// A cluster made outside clusterform, for `import`.
fn foreign_cluster() -> serde_json::Value {
    serde_json::json!({
        "labels": {"team": "ml"},
        "network": {"network": "projects/my-proj/global/networks/default"},
        "nodePools": [
            {"id": "login", "machineSpec": {"machineType": "n2-standard-8"},
             "scalingSpec": {"minNodeCount": "1", "maxNodeCount": "1"}, "zone": "us-central1-a"}
        ],
        "orchestratorSpec": {"slurmSpec": {
            "homeDirectoryStorage": "projects/my-proj/locations/us-central1-a/instances/home",
            "loginNodePoolId": "login"}}
    })
}

#[test]
fn the_token_and_sensitive_values_stay_where_they_belong() {
    let mut secrets = Secrets::new();
    let plan_file = "saved.plan.json";

    secrets.run_ok(&["validate"], Sensitive::Masked);
    secrets.run_ok(&["validate", "--json"], Sensitive::Masked);
    secrets.run_ok(&["fmt", "-vv"], Sensitive::Masked);
    secrets.run_ok(&["fmt", "--check"], Sensitive::Masked);
    secrets.run_ok(&["plan", "-v"], Sensitive::Masked);
    let plan = &secrets.runs.last().unwrap().1;
    // The request logs come in whatever order the Lists answer: the checks of every run
    // (`Sensitive::Masked`) read them; the snapshot is of the plan.
    let without_logs = |text: &str| {
        text.lines()
            .filter(|line| !line.contains(" DEBUG "))
            .map(|line| format!("{line}\n"))
            .collect::<String>()
    };
    insta::assert_snapshot!(secrets.env.transcript_of(plan).normalized_with(without_logs), @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" {
          + display_name = "Research training"
          + labels       = {
              + "team" = "ml"
            }
          + network {
              + network    = "projects/my-proj/global/networks/default"
              + subnetwork = "projects/my-proj/regions/us-central1/subnetworks/default"
            }
          + node_pool "login" {
              + machine_spec {
                  + machine_type = "n2-standard-8"
                }
              + scaling_spec {
                  + min_node_count = 1
                  + max_node_count = 1
                }
              + zone              = "us-central1-a"
              + enable_public_ips = true
              + boot_disk {
                  + boot_disk_type    = "pd-standard"
                  + boot_disk_size_gb = 120
                }
            }
          + node_pool "cpu" {
              + machine_spec {
                  + machine_type = "n2-standard-8"
                }
              + scaling_spec {
                  + min_node_count = 0
                  + max_node_count = 4
                }
              + zone           = "us-central1-a"
              + startup_script = (sensitive)
            }
          + orchestrator_spec {
              + slurm_spec {
                  + home_directory_storage = "projects/my-proj/locations/us-central1-a/instances/home"
                  + login_node_pool_id     = "login"
                  + partition "cpu" {
                      + node_pool_ids = ["cpu"]
                    }
                  + prolog_bash_scripts    = [
                      + <<-EOT
                            #!/bin/bash
                            echo prolog
                        EOT,
                    ]
                }
            }
        }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    "#);
    secrets.run_ok(&["plan", "--json", "-vv"], Sensitive::Shown);
    secrets.run_ok(&["plan", "--out", plan_file, "-vv"], Sensitive::Masked);
    secrets.run_ok(&["show", plan_file], Sensitive::Masked);
    secrets.run_ok(&["show", plan_file, "--json"], Sensitive::Shown);
    secrets.run_ok(&["apply", plan_file, "-vv"], Sensitive::Masked);

    // An update of the sensitive value: the diff is masked on both sides.
    secrets.run_with(&["plan"], TOKEN, SENSITIVE_UPDATE, Sensitive::Masked);
    let update = &secrets.runs.last().unwrap().1;
    insta::assert_snapshot!(secrets.env.transcript_of(update), @r#"
    clusterform will perform the following actions:

      # train01 will be updated in place
      ~ cluster "train01" {
          ~ node_pool "cpu" {
              ~ startup_script = (sensitive)
                # (1 unchanged attribute hidden)
                # (2 unchanged blocks hidden)
            }
            # (2 unchanged attributes hidden)
            # (3 unchanged blocks hidden)
        }
        update mask: node_pools
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; a refreshed startup script recreates the pool's nodes)
        impact: recreates nodes of pool cpu
        Warning: this node_pools update sends back what the service filled in where the configuration sets nothing, which may pin it (an unset node_image follows the default image, a set one stays): node_pools[login].node_image = "slurm-24-11-ubuntu-2204", node_pools[cpu].boot_disk.boot_disk_type = "pd-ssd", node_pools[cpu].boot_disk.boot_disk_size_gb = 100, node_pools[cpu].node_image = "slurm-24-11-ubuntu-2204"
        # no Slurm jobs active now

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.
    "#);
    let journal = journal_during_an_update(&secrets, SENSITIVE_UPDATE);
    for secret in [TOKEN, SENSITIVE, SENSITIVE_UPDATE] {
        assert!(!journal.contains(secret), "{journal}");
    }

    // Failing runs: a wrong token, a wrong endpoint path, an endpoint refused as insecure, a
    // server that fails every operation, and nobody listening at all.
    secrets.run_failing(&["list", "-vv"], WRONG_TOKEN);
    let base = secrets.env.server.base_url();
    let wrong_path = format!("{base}/wrong");
    secrets.run_failing(&["plan", "-vv", "--endpoint", &wrong_path], TOKEN);
    secrets.run_failing(&["plan", "-v", "--endpoint", "http://example.com"], TOKEN);
    secrets
        .env
        .emulator()
        .set_faults("opfail=1.0".parse().unwrap());
    let failed = secrets.run_with(
        &["apply", "--auto-approve", "-vv"],
        TOKEN,
        SENSITIVE,
        Sensitive::Masked,
    );
    assert_eq!(failed.status.code(), Some(1), "{}", stdout(failed));
    secrets.env.emulator().set_faults(Default::default());
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nobody = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    secrets.run_failing(&["list", "-vv", "--endpoint", &nobody], TOKEN);

    secrets.run_ok(&["list", "-vv"], Sensitive::Masked);
    secrets.run_ok(&["list", "--json"], Sensitive::Masked);
    secrets
        .env
        .emulator()
        .insert_cluster(&cluster_name("other01"), foreign_cluster());
    secrets.run_ok(&["import", "other01", "-vv"], Sensitive::Masked);
    secrets.run_ok(&["destroy", "--auto-approve", "-vv"], Sensitive::Masked);

    for (command, output, sensitive) in &secrets.runs {
        for (stream, text) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
            for token in [TOKEN, WRONG_TOKEN] {
                assert!(
                    !contains(text, token),
                    "`{command}` printed the token on {stream}"
                );
            }
            if *sensitive == Sensitive::Masked {
                for secret in [SENSITIVE, SENSITIVE_UPDATE] {
                    assert!(
                        !contains(text, secret),
                        "`{command}` printed the sensitive value on {stream}:\n{}",
                        String::from_utf8_lossy(text)
                    );
                }
            }
        }
    }
    let files = [
        files_under(secrets.env.path()),
        files_under(secrets.state.path()),
    ]
    .concat();
    assert!(
        files
            .iter()
            .any(|(path, _)| path.ends_with("emulator.json"))
    );
    for (path, bytes) in &files {
        for token in [TOKEN, WRONG_TOKEN] {
            assert!(!contains(bytes, token), "{path} holds the token");
        }
    }
    let saved = secrets.env.path().join(plan_file);
    assert!(
        contains(&std::fs::read(&saved).unwrap(), SENSITIVE),
        "the plan file holds the request body"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&saved).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
}
