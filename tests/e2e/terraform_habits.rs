//! Terraform's spellings that users type from habit: `fmt -recursive`, `fmt -`, `version`,
//! options clusterform has no counterpart for, typos of `--target` IDs, and resource
//! addresses where clusterform takes an ID.

use std::time::Duration;

use crate::support::{ClusterSpec, Env, config, stderr, stdout};

const UNFORMATTED: &str = "locals {\n  a=1\n}\n";
const FORMATTED: &str = "locals {\n  a = 1\n}\n";

#[test]
fn fmt_recursive_formats_directories_at_any_depth_but_hidden_ones() {
    let env = Env::new(0);
    let nested = env.path().join("envs/prod");
    let hidden = env.path().join(".git");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::create_dir_all(&hidden).unwrap();
    std::fs::write(nested.join("main.hcl"), UNFORMATTED).unwrap();
    std::fs::write(hidden.join("x.hcl"), UNFORMATTED).unwrap();

    let flat = env.run(&["fmt", "--check", "."]);
    assert!(
        stderr(&flat).contains("holds no *.hcl file"),
        "{}",
        stderr(&flat)
    );
    let check = env.run(&["fmt", "-check", "-recursive", "."]);
    assert!(!check.status.success());
    assert!(
        stderr(&check).contains("envs/prod/main.hcl"),
        "{}",
        stderr(&check)
    );

    let written = env.run(&["fmt", "-recursive", "."]);
    assert!(written.status.success(), "{}", stderr(&written));
    assert_eq!(
        std::fs::read_to_string(nested.join("main.hcl")).unwrap(),
        FORMATTED
    );
    assert_eq!(
        std::fs::read_to_string(hidden.join("x.hcl")).unwrap(),
        UNFORMATTED
    );
}

#[test]
fn fmt_dash_formats_standard_input_onto_standard_output() {
    let env = Env::new(0);
    let run = |args: &[&str], input: &str| {
        env.cmd(args)
            .write_stdin(input)
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap()
    };
    let formatted = run(&["fmt", "-"], UNFORMATTED);
    assert!(formatted.status.success(), "{}", stderr(&formatted));
    assert_eq!(stdout(&formatted), FORMATTED);
    assert!(!run(&["fmt", "-check", "-"], UNFORMATTED).status.success());
    assert!(run(&["fmt", "-check", "-"], FORMATTED).status.success());
    let broken = run(&["fmt", "-"], "locals {\n");
    assert!(!broken.status.success());
    assert!(stderr(&broken).contains("<stdin>:"), "{}", stderr(&broken));
    assert_eq!(stdout(&broken), "");
}

#[test]
fn version_is_a_command_too() {
    let env = Env::new(0);
    let text = env.run(&["version"]);
    assert_eq!(stdout(&text), stdout(&env.run(&["--version"])));
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&env.run(&["version", "-json"]))).unwrap();
    assert_eq!(json["clusterform_version"], env!("CARGO_PKG_VERSION"));
    assert!(json["plan_format_version"].is_u64(), "{json}");
}

#[test]
fn a_terraform_only_option_says_what_clusterform_does_instead() {
    let env = Env::new(0);
    let output = env.run(&["plan", "-lock=false"]);
    assert_eq!(output.status.code(), Some(1));
    insta::assert_snapshot!(stderr(&output), @"Error: `-lock` is a Terraform option, not a clusterform one: clusterform always locks the stack while it changes clusters; `--lock-timeout` waits for a held lock and `force-unlock` removes one a dead run left");
}

#[test]
fn a_mistyped_target_or_an_address_names_the_id_to_use() {
    let env = Env::new(0);
    env.write_config(&config(&[ClusterSpec::named("train01")]));
    let typo = env.run(&["plan", "--target", "trian01"]);
    assert_eq!(typo.status.code(), Some(1));
    assert!(
        stderr(&typo).contains("hint: did you mean `--target train01`?"),
        "{}",
        stderr(&typo)
    );
    let address = env.run(&["plan", "-target=cluster.train01"]);
    assert_eq!(address.status.code(), Some(1));
    assert!(
        stderr(&address).contains("did you mean `--target train01`?"),
        "{}",
        stderr(&address)
    );
    assert!(env.mutations().is_empty());
}
