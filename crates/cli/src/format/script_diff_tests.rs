//! Multi-line strings (startup, prolog and epilog scripts) diff line by line as heredocs;
//! single-line strings keep their quoted form.

use clusterform_model::JobsByCluster;
use clusterform_planner::{PlanOptions, plan};
use clusterform_testkit::{STACK, cluster, config, desired, plan_against_seed, seed, served};
use serde_json::{Value, json};

use crate::format::plan_text::render_text;

/// A startup script of a dozen lines, `package` installed on its seventh.
fn startup_script(package: &str) -> String {
    format!(
        "#!/bin/bash\nset -euo pipefail\nexport HOME=/root\n\napt-get update\nmkdir -p /opt/setup\n\
         apt-get install -y {package}\necho installed\nsystemctl daemon-reload\n\
         systemctl restart slurmd\nlogger setup\necho done\n"
    )
}

/// The seed with `script` as the `cpu` pool's startup script.
fn with_startup_script(script: &str) -> Value {
    let mut cluster = seed();
    cluster["nodePools"][1]["startupScript"] = json!(script);
    cluster
}

#[test]
fn a_changed_startup_script_diffs_line_by_line() {
    let before = with_startup_script(&startup_script("foo"));
    let after = with_startup_script(&startup_script("bar"));
    let made = plan(
        &config(vec![desired("train01", after)]),
        &[cluster(served("train01", &before, Some(STACK), "RUNNING"))],
        &PlanOptions::default(),
    )
    .unwrap();
    insta::assert_snapshot!(render_text(&made, &JobsByCluster::new(), false));
}

#[test]
fn a_new_startup_script_is_shown_whole_and_escaped_as_hcl() {
    let script = "#!/bin/bash\necho \"${HOSTNAME}\" %{x} \\n $HOME\n";
    let made = plan_against_seed(with_startup_script(script));
    let text = render_text(&made, &JobsByCluster::new(), false);
    assert!(
        text.contains(
            "          + startup_script = <<-EOT\n                #!/bin/bash\n                echo \"$${HOSTNAME}\" %%{x} \\n $HOME\n            EOT\n"
        ),
        "{text}"
    );
}

#[test]
fn a_prolog_script_edited_in_place_diffs_line_by_line_within_its_list() {
    let mut wanted = seed();
    wanted["orchestratorSpec"]["slurmSpec"]["prologBashScripts"] =
        json!(["#!/bin/bash\necho prolog v2", "echo second"]);
    insta::assert_snapshot!(render_text(
        &plan_against_seed(wanted),
        &JobsByCluster::new(),
        false
    ));
}

#[test]
fn single_line_strings_stay_quoted_with_template_sequences_escaped() {
    let mut wanted = seed();
    wanted["orchestratorSpec"]["slurmSpec"]["prologBashScripts"] =
        json!(["#!/bin/bash\necho prolog"]);
    wanted["displayName"] = json!("Team ${name}");
    let text = render_text(&plan_against_seed(wanted), &JobsByCluster::new(), false);
    assert!(
        text.contains("display_name = \"Research training\" -> \"Team $${name}\""),
        "{text}"
    );
    assert!(!text.contains("<<-EOT"), "{text}");
}
