//! What `validate` catches offline that the API would reject a minute later, as a user sees it:
//! a number out of range is an error at its value, a machine type outside the catalogue of
//! training machine types is a warning with a suggestion (the configuration still validates).

use crate::support::{ClusterSpec, Env, config, stderr, stdout};

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
    let out = env.run(&["validate"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let text = stderr(&out);
    assert!(
        text.contains("Error: boot_disk_size_gb of pool `cpu` is -5; it cannot be negative"),
        "{text}"
    );
    assert!(text.contains("main.hcl:"), "{text}");
}

#[test]
fn a_count_beyond_int32_is_an_error_however_it_is_written() {
    let env = Env::new(50);
    for written in ["99999999999", "1e23"] {
        let hcl = config(&[ClusterSpec::default()]).replacen(
            "max_node_count = ",
            &format!("max_node_count = {written} # was "),
            1,
        );
        env.write_config(&hcl);
        let out = env.run(&["validate"]);
        assert_eq!(out.status.code(), Some(1), "{written}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("is out of range: the API takes a 32-bit integer"),
            "{written}: {}",
            stderr(&out)
        );
    }
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
    let out = env.run(&["validate"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains(
            "Warning: pool `login`: machine type `n2-standrad-8` is not in clusterform's catalogue"
        ),
        "{text}"
    );
    assert!(text.contains("did you mean `n2-standard-8`?"), "{text}");
}
