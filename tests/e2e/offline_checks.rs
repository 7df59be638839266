//! What `validate` catches offline that the API would reject a minute later, as a user sees it:
//! a number out of range is an error at its value, a machine type outside the catalogue of
//! training machine types is a warning with a suggestion (the configuration still validates).

use crate::support::{ClusterSpec, Env, config};

#[test]
fn a_negative_disk_size_is_an_error_at_its_value() {
    let env = Env::new(50);
    let hcl = config(&[ClusterSpec::default()]).replacen(
        "  node_pool \"cpu\" {\n",
        "  node_pool \"cpu\" {\n    boot_disk {\n      boot_disk_size_gb = -5\n    }\n",
        1,
    );
    assert!(hcl.contains("-5"), "{hcl}");
    env.write_config(&hcl);
    insta::assert_snapshot!(env.transcript(&["validate"]), @"
    [stderr]
    Error: boot_disk_size_gb of pool `cpu` is -5; it cannot be negative
        ╭─[main.hcl:35:27]
     34 │     boot_disk {
     35 │       boot_disk_size_gb = -5
        ·                           ──
     36 │     }
        ╰────
    [exit status: 1]
    ");
}

#[test]
fn a_count_beyond_int32_is_an_error_however_it_is_written() {
    let env = Env::new(50);
    let transcripts: String = ["99999999999", "1e23"]
        .into_iter()
        .map(|written| {
            let hcl = config(&[ClusterSpec::default()]).replacen(
                "max_node_count = ",
                &format!("max_node_count = {written} # was "),
                1,
            );
            env.write_config(&hcl);
            format!(
                "$ validate # max_node_count = {written}\n{}",
                env.transcript(&["validate"])
            )
        })
        .collect();
    insta::assert_snapshot!(transcripts, @"
    $ validate # max_node_count = 99999999999
    [stderr]
    Error: wrong value for `max_node_count`: 99999999999 is out of range: the API takes a 32-bit integer (-2147483648 to 2147483647)
        ╭─[main.hcl:23:24]
     22 │       min_node_count = 1
     23 │       max_node_count = 99999999999 # was 1
        ·                        ───────────
     24 │     }
        ╰────
    [exit status: 1]
    $ validate # max_node_count = 1e23
    [stderr]
    Error: wrong value for `max_node_count`: 1e23 is out of range: the API takes a 32-bit integer (-2147483648 to 2147483647)
        ╭─[main.hcl:23:24]
     22 │       min_node_count = 1
     23 │       max_node_count = 1e23 # was 1
        ·                        ────
     24 │     }
        ╰────
    [exit status: 1]
    ");
}

#[test]
fn a_misspelt_machine_type_is_a_warning_with_a_suggestion() {
    let env = Env::new(50);
    let hcl = config(&[ClusterSpec::default()]).replacen(
        "machine_type = \"n2-standard-8\"",
        "machine_type = \"n2-standrad-8\"",
        1,
    );
    assert!(hcl.contains("n2-standrad-8"), "{hcl}");
    env.write_config(&hcl);
    insta::assert_snapshot!(env.transcript(&["validate"]), @"
    [stderr]
    Warning: pool `login`: machine type `n2-standrad-8` is not in clusterform's catalogue of training machine types
      at main.hcl:19:22
      hint: did you mean `n2-standard-8`? The service may offer types newer than clusterform's catalogue (the Compute resources page lists the documented ones): if this one exists, ignore this warning.
    Success! The configuration is valid (1 cluster).
    ");
}
