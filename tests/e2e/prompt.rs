//! The confirmation prompt on a real pty: `no` sends nothing, `yes` applies; without a
//! terminal and without `--auto-approve`, apply refuses.

use crate::support::{
    ClusterSpec, Env, TOKEN, cluster_name, config, created_attributes_elided, on_terminal, stderr,
    stdout,
};

#[test]
#[cfg(unix)]
fn answering_no_sends_nothing() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let mut session = on_terminal(&env, "apply");
    session.exp_string("Only 'yes' will be accepted").unwrap();
    session.send_line("no").unwrap();
    session.exp_string("Apply cancelled.").unwrap();
    session.exp_eof().unwrap();
    let status = session.process().wait().unwrap();
    assert!(
        matches!(status, rexpect::process::WaitStatus::Exited(_, 1)),
        "a declined apply exits 1, as Terraform's does: {status:?}"
    );
    assert!(env.mutations().is_empty());
}

#[test]
#[cfg(unix)]
fn answering_yes_applies() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let mut session = on_terminal(&env, "apply");
    session.exp_string("Only 'yes' will be accepted").unwrap();
    session.send_line("yes").unwrap();
    session.exp_string("Apply complete!").unwrap();
    session.exp_eof().unwrap();
    assert!(env.emulator().cluster(&cluster_name("train01")).is_some());
}

#[test]
fn no_terminal_and_no_auto_approve_is_an_error() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let output = env.cmd(&["apply"]).write_stdin("yes\n").output().unwrap();
    insta::assert_snapshot!(env.transcript_of(&output).normalized_with(created_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    Error: no terminal to ask for confirmation, and --auto-approve was not given
      hint: run with --auto-approve, or save a plan with `plan --out FILE` and `apply FILE`
    [exit status: 1]
    "#);
    assert!(env.mutations().is_empty());
}

fn plan_on_a_terminal(env: &Env, no_color: &str, extra: &str) -> String {
    let preflight: Vec<String> = env
        .preflight_env()
        .into_iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    let command = format!(
        "env -u NO_COLOR {no_color} {} CLUSTERFORM_ENDPOINT={} CLUSTERFORM_ACCESS_TOKEN={TOKEN} {} plan {extra} {}",
        preflight.join(" "),
        env.server.base_url(),
        env!("CARGO_BIN_EXE_clusterform"),
        env.path().display()
    );
    let mut session = rexpect::spawn(&command, Some(30_000)).unwrap();
    session.exp_eof().unwrap()
}

#[test]
#[cfg(unix)]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let coloured = plan_on_a_terminal(&env, "", "");
    assert!(
        coloured.contains("\u{1b}["),
        "a terminal gets colour: {coloured}"
    );
    for (no_color, flag) in [("", "--no-color"), ("NO_COLOR=1", "")] {
        let plain = plan_on_a_terminal(&env, no_color, flag).replace("\r\n", "\n");
        // Also in the attributes the snapshot elides.
        assert!(!plain.contains('\u{1b}'), "{no_color}{flag}: {plain}");
        insta::allow_duplicates! {
            insta::assert_snapshot!(created_attributes_elided(&plain), @r#"
            clusterform will perform the following actions:

              # train01 will be created
              + cluster "train01" { … }

            Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
            "#);
        }
    }
    let piped = env.cmd(&["plan"]).env_remove("NO_COLOR").output().unwrap();
    let said = format!("{}{}", stdout(&piped), stderr(&piped));
    assert!(!said.contains('\u{1b}'), "a pipe gets no colour: {said}");
    insta::assert_snapshot!(env.transcript_of(&piped).normalized_with(created_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    "#);
}
