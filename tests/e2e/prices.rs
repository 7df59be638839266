//! Prices the user gives (the provider's `pricing` block or `--prices FILE`): the change in
//! cost per hour and per 30 days a plan shows per cluster and in total, each cluster's burn
//! rate and the fleet's in `list`, what idle hours cost in the evidence of an idle destroy; and
//! without prices, the output of before.

use serde_json::{Value, json};

use crate::support::gpu_fleet::{self, Accelerators, idle_hours_rounded};
use crate::support::{
    ClusterSpec, Env, PROVIDER, assert_succeeded, cluster_hcl, created_attributes_elided, stderr,
    stdout,
};

/// B200s at 5.50 USD an hour each, the seed's `n2-standard-8` at 0.40 a node and the
/// `n2-standard-16` it may move to at 0.80.
const PRICING: &str = r#"
  pricing {
    currency      = "USD"
    machine_types = { "n2-standard-8" = 0.40, "n2-standard-16" = 0.80 }
    accelerators  = { NVIDIA_B200 = 5.50 }
  }
}
"#;

/// The same prices as a JSON file for `--prices`.
const PRICES_JSON: &str = r#"{"currency": "USD",
  "machine_types": {"n2-standard-8": 0.40, "n2-standard-16": 0.80},
  "accelerators": {"NVIDIA_B200": 5.50}}"#;

/// The provider block with [`PRICING`] in it.
fn priced_provider() -> String {
    let end = PROVIDER.rfind('}').unwrap();
    format!("{}{PRICING}", &PROVIDER[..end])
}

/// The fleet change of [`gpu_fleet::fleet_change`] (B200s named), `train01`'s CPU pool
/// allowed 8 nodes instead of 4 (a scale-up); `provider` heads the configuration.
fn fleet_change(env: &Env, provider: &str) {
    let train01 = cluster_hcl(&ClusterSpec {
        max_nodes: 8,
        ..ClusterSpec::default()
    });
    gpu_fleet::fleet_change(env, provider, &train01, Accelerators::Named);
}

#[test]
fn a_plan_with_prices_shows_the_cost_of_a_scale_up_a_replacement_and_a_create_and_in_total() {
    let env = Env::new(100);
    fleet_change(&env, &priced_provider());
    insta::assert_snapshot!(
        env.transcript(&["plan", "--out", "review.plan"]).normalized_with(created_attributes_elided),
        @r##"
        clusterform will perform the following actions:

          # train01 will be updated in place
          # Cost: 0.00 USD/h (0.00 USD per 30 days) now, +1.60 USD/h (+1152.00 USD per 30 days) at most
          ~ cluster "train01" {
              ~ node_pool "cpu" {
                  ~ scaling_spec {
                      ~ max_node_count = 4 -> 8
                        # (1 unchanged attribute hidden)
                    }
                    # (1 unchanged attribute hidden)
                    # (1 unchanged block hidden)
                }
                # (2 unchanged attributes hidden)
                # (3 unchanged blocks hidden)
            }
            update mask: node_pools
            update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; no node is recreated unless it refreshes a pool's startup script)
            impact: resizes pool cpu
            Warning: this node_pools update sends back what the service filled in where the configuration sets nothing, which may pin it (an unset node_image follows the default image, a set one stays): node_pools[login].node_image = "slurm-24-11-ubuntu-2204", node_pools[cpu].boot_disk.boot_disk_type = "pd-ssd", node_pools[cpu].boot_disk.boot_disk_size_gb = 100, node_pools[cpu].node_image = "slurm-24-11-ubuntu-2204"

          # train02 must be replaced
          # Cost: 0.00 USD/h (0.00 USD per 30 days) now, +1.60 USD/h (+1152.00 USD per 30 days) at most
        -/+ cluster "train02" {
              ~ node_pool "cpu" {
                  ~ machine_spec {
                      ~ machine_type = "n2-standard-8" -> "n2-standard-16" # forces replacement
                    }
                    # (1 unchanged attribute hidden)
                    # (1 unchanged block hidden)
                }
                # (2 unchanged attributes hidden)
                # (3 unchanged blocks hidden)
            }
            impact: replaces cluster
            # the live cluster is deleted first: its machines are not held for the new one, so if the create finds no machines, train02 is gone
            # no Slurm jobs active now

          # train03 will be created
          # GPUs: +16 NVIDIA_B200 now (+32 at most)
          # Cost: +88.40 USD/h (+63648.00 USD per 30 days) now, +178.00 USD/h (+128160.00 USD per 30 days) at most
          + cluster "train03" { … }

        Plan: 1 to add, 1 to change, 1 to replace, 0 to destroy.
        GPUs in total: +16 NVIDIA_B200 now (+32 at most)
        Cost in total: +88.40 USD/h (+63648.00 USD per 30 days) now, +181.20 USD/h (+130464.00 USD per 30 days) at most
        [stderr]

        Saved the plan to review.plan. To perform exactly these actions, run:
          clusterform apply review.plan
        "##
    );
    let document: Value = serde_json::from_slice(&env.run(&["plan", "--json"]).stdout).unwrap();
    assert_eq!(
        document["cost"],
        json!({"currency": "USD",
               "now": {"per_hour": 88.4, "per_30_days": 63648.0, "unpriced_machine_types": []},
               "at_most": {"per_hour": 181.2, "per_30_days": 130464.0,
                           "unpriced_machine_types": []}})
    );
}

#[test]
fn show_prices_a_saved_plan_with_the_prices_file() {
    let env = Env::new(100);
    fleet_change(&env, PROVIDER);
    std::fs::write(env.path().join("prices.json"), PRICES_JSON).unwrap();
    assert!(env.run(&["plan", "--out", "review.plan"]).status.success());
    let shown = stdout(&env.run(&["show", "review.plan", "--prices", "prices.json"]));
    let costs: Vec<&str> = shown.lines().filter(|line| line.contains("Cost")).collect();
    insta::assert_snapshot!(costs.join("\n"), @r##"
      # Cost: 0.00 USD/h (0.00 USD per 30 days) now, +1.60 USD/h (+1152.00 USD per 30 days) at most
      # Cost: 0.00 USD/h (0.00 USD per 30 days) now, +1.60 USD/h (+1152.00 USD per 30 days) at most
      # Cost: +88.40 USD/h (+63648.00 USD per 30 days) now, +178.00 USD/h (+128160.00 USD per 30 days) at most
    Cost in total: +88.40 USD/h (+63648.00 USD per 30 days) now, +181.20 USD/h (+130464.00 USD per 30 days) at most
    "##);
}

/// [`gpu_fleet::fleet_with_idle_gpus`], with [`PRICES_JSON`] in `prices.json`.
fn fleet_with_idle_gpus() -> Env {
    let env = gpu_fleet::fleet_with_idle_gpus();
    std::fs::write(env.path().join("prices.json"), PRICES_JSON).unwrap();
    env
}

#[test]
fn list_with_prices_shows_each_clusters_burn_rate_and_the_fleets() {
    let env = fleet_with_idle_gpus();
    insta::assert_snapshot!(
        env.transcript(&["list", "--prices", "prices.json"]).normalized_with(idle_hours_rounded),
        @r##"
        PROJECT  REGION       ID       STATE    HEALTH  POOLS (min-max(nodes))   ACCELERATORS       STACK     UPDATED
        my-proj  us-central1  train01  RUNNING  ok      login:1-1(1) cpu:0-4(2)  cpu:NVIDIA_B200×8  research  [TIME]
        my-proj  us-central1  train02  RUNNING  ok      login:1-1(1) cpu:0-4(0)  -                  research  [TIME]

        PROJECT  REGION       ID       BURN RATE    PER 30 DAYS
        my-proj  us-central1  train01  88.40 USD/h  63648.00 USD
        my-proj  us-central1  train02  0.40 USD/h   288.00 USD

        Fleet: 2 clusters; GPUs running: 16 NVIDIA_B200; idle GPU-hours: 80.0; burn rate: 88.80 USD/h (63936.00 USD per 30 days)
        "##
    );
    let document: Value = serde_json::from_slice(
        &env.run(&["list", "--json", "--prices", "prices.json"])
            .stdout,
    )
    .unwrap();
    let burn_rate = &document["totals"]["burn_rate"];
    assert_eq!(burn_rate["currency"], "USD", "{burn_rate}");
    assert_eq!(burn_rate["per_hour"], 88.8, "{burn_rate}");
    assert_eq!(burn_rate["clusters"][0]["id"], "train01", "{burn_rate}");
    let status = stdout(&env.run(&["status", "--prices", "prices.json"]));
    let totals = status.lines().last().unwrap_or_default();
    assert!(
        totals.contains("; burn rate: 88.80 USD/h (63936.00 USD per 30 days)"),
        "{status}"
    );
}

#[test]
fn without_prices_plans_and_list_show_no_cost() {
    let env = fleet_with_idle_gpus();
    let listed = stdout(&env.run(&["list"]));
    assert!(
        !listed.contains("BURN RATE") && !listed.contains("USD"),
        "{listed}"
    );
    assert_eq!(
        listed.lines().last().map(idle_hours_rounded).as_deref(),
        Some("Fleet: 2 clusters; GPUs running: 16 NVIDIA_B200; idle GPU-hours: 80.0")
    );
    let document: Value = serde_json::from_slice(&env.run(&["list", "--json"]).stdout).unwrap();
    assert!(document["totals"].get("burn_rate").is_none(), "{document}");
    let planned = stdout(&env.run(&["plan", "--destroy", "--idle-for", "1h"]));
    assert!(
        !planned.contains("Cost") && !planned.contains("IDLE COST"),
        "{planned}"
    );
}

#[test]
fn the_idle_evidence_with_prices_says_what_the_idle_hours_cost() {
    let env = fleet_with_idle_gpus();
    let planned = stdout(&env.run(&[
        "plan",
        "--destroy",
        "--idle-for",
        "1h",
        "--prices",
        "prices.json",
    ]));
    let header = planned.lines().next().unwrap_or_default();
    assert!(header.contains("IDLE GPU-HOURS  IDLE COST"), "{planned}");
    // 88.40 USD an hour (the login node and two B200 nodes) for five hours and a few seconds.
    let train01 = planned
        .lines()
        .find(|line| line.contains("train01"))
        .unwrap();
    assert!(train01.contains(" 442."), "{planned}");
    // The plan prices the static nodes: the login node now, every node the pools allow at most.
    assert!(
        planned.contains("# Cost: -0.40 USD/h (-288.00 USD per 30 days) now, -176.40 USD/h"),
        "{planned}"
    );
}

/// [`PRICES_JSON`]'s prices and a misspelt machine type (`n2-standrad-8`), as HCL.
const PRICES_WITH_A_TYPO_HCL: &str = r#"currency      = "USD"
machine_types = { "n2-standard-8" = 0.40, "n2-standrad-8" = 0.40 }
accelerators  = { NVIDIA_B200 = 5.50 }
"#;

/// The warning about [`PRICES_WITH_A_TYPO_HCL`]'s misspelt key, at `place`.
fn typo_warning(place: &str) -> String {
    format!(
        "Warning: `pricing.machine_types`: machine type `n2-standrad-8` is not in clusterform's \
         catalogue of training machine types; its price is used only by pools of that type\n  \
         at {place}\n  hint: did you mean `n2-standard-8`? The service may offer types newer \
         than clusterform's catalogue"
    )
}

#[test]
fn a_price_for_a_type_the_catalogue_lacks_is_a_warning_on_stderr_in_text_and_json() {
    let env = Env::new(100);
    let train01 = cluster_hcl(&ClusterSpec::default());
    // Beside the configuration, not in its directory: every `*.hcl` there is configuration.
    std::fs::create_dir(env.path().join("prices")).unwrap();
    std::fs::write(env.path().join("prices/typo.hcl"), PRICES_WITH_A_TYPO_HCL).unwrap();
    std::fs::write(env.path().join("prices.json"), PRICES_JSON).unwrap();
    env.write_config(&format!("{PROVIDER}{train01}"));

    let file_warning = typo_warning("prices/typo.hcl:2:43");
    let planned = env.run(&["plan", "--prices", "prices/typo.hcl"]);
    assert_succeeded(&planned);
    assert!(
        stderr(&planned).contains(&file_warning),
        "{}",
        stderr(&planned)
    );
    let planned = env.run(&["plan", "--json", "--prices", "prices/typo.hcl"]);
    assert_succeeded(&planned);
    assert!(
        stderr(&planned).contains(&file_warning),
        "{}",
        stderr(&planned)
    );
    // The unused price changes nothing the document says.
    let without_typo = env.run(&["plan", "--json", "--prices", "prices.json"]);
    assert!(
        !stderr(&without_typo).contains("Warning"),
        "{}",
        stderr(&without_typo)
    );
    assert_eq!(stdout(&planned), stdout(&without_typo));

    let block = format!("  pricing {{\n{PRICES_WITH_A_TYPO_HCL}  }}\n}}\n");
    let end = PROVIDER.rfind('}').unwrap();
    let config = format!("{}{block}{train01}", &PROVIDER[..end]);
    let line = config
        .lines()
        .position(|line| line.contains("n2-standrad-8"))
        .unwrap();
    env.write_config(&config);
    let block_warning = typo_warning(&format!("main.hcl:{}:43", line + 1));
    for args in [&["plan"][..], &["plan", "--json"]] {
        let planned = env.run(args);
        assert_succeeded(&planned);
        assert!(
            stderr(&planned).contains(&block_warning),
            "{}",
            stderr(&planned)
        );
    }
    // The document differs from the prices file's only in what names the files and flags.
    let document = |output: &std::process::Output| {
        let mut document: Value = serde_json::from_slice(&output.stdout).unwrap();
        for digest in ["config_digest", "config_files", "flags_digest"] {
            document.as_object_mut().unwrap().remove(digest);
        }
        document
    };
    assert_eq!(
        document(&env.run(&["plan", "--json"])),
        document(&without_typo)
    );
}
