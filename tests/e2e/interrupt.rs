//! Ctrl-C during an apply keeps the journal; the next apply waits for the operation instead
//! of creating the cluster a second time.

use std::time::{Duration, Instant};

use crate::support::{
    ClusterSpec, Env, config, created_attributes_elided, destroyed_attributes_elided, final_screen,
    on_terminal, stderr, terminal_output, two_clusters,
};

fn creates(env: &Env) -> usize {
    env.mutations()
        .iter()
        .filter(|r| r.method == "POST")
        .count()
}

/// Starts `apply`, waits until its create is journaled, sends SIGINT, and checks that the run
/// stopped with the journal intact. Returns the journal's path.
#[cfg(unix)]
fn interrupt_an_apply(env: &Env) -> std::path::PathBuf {
    let journal = env.path().join(".clusterform/journal.json");
    let output = interrupted_once_journaled(env, &["apply", "--auto-approve"], &journal);
    // One line says it all: no FAILED progress line, no error blocks after it. The create is
    // journaled before its "accepted" line is printed, so the interrupt may come before that
    // line or after it: the transcript leaves it out.
    let accepted_elided = |text: &str| {
        created_attributes_elided(text)
            .lines()
            .filter(|line| !line.ends_with("create request accepted [Ns]"))
            .map(|line| format!("{line}\n"))
            .collect::<String>()
    };
    insta::allow_duplicates! {
        insta::assert_snapshot!(env.transcript_of(&output).normalized_with(accepted_elided), @r#"
        clusterform will perform the following actions:

          # train01 will be created
          + cluster "train01" { … }

        Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
        [stderr]
        [HH:MM:SS] train01: creating… [Ns]
        Interrupted: no longer waiting for operations; they keep running, and the next `clusterform apply` waits for them. Press Ctrl-C again to exit at once.
        [exit status: 1]
        "#);
    }
    assert!(
        journal_has_entry(&journal),
        "the journal survives the interrupt"
    );
    assert_eq!(creates(env), 1);
    journal
}

#[test]
#[cfg(unix)]
fn an_interrupted_apply_resumes_without_a_second_create() {
    let env = Env::new(3_000);
    env.write_config(&config(&[ClusterSpec::default()]));
    let journal = interrupt_an_apply(&env);

    insta::assert_snapshot!(env.transcript(&["plan"]).normalized_with(created_attributes_elided), @"
    No changes. Your clusters match the configuration.
    Note: train01: the cluster is PROVISIONING right now: an operation is in flight on it (started by another run)
    [stderr]
    Warning: an earlier run left operation projects/253589482369/locations/us-central1/operations/1 (creating train01) in flight; `clusterform apply` and `destroy` wait for it before changing anything
    ");
    assert_eq!(creates(&env), 1, "plan sends nothing");

    insta::assert_snapshot!(env.transcript(&["apply", "--auto-approve"]), @"
    No changes. Your clusters match the configuration.
    [stderr]
    Warning: an earlier run left operation projects/253589482369/locations/us-central1/operations/1 (creating train01) in flight; `clusterform apply` and `destroy` wait for it before changing anything
    [HH:MM:SS] train01: waiting for projects/253589482369/locations/us-central1/operations/1, started by an earlier run… [Ns]
    [HH:MM:SS] train01: created [Ns]
    Apply complete! Resources: 1 added, 0 changed, 0 replaced, 0 destroyed.
    ");
    assert_eq!(creates(&env), 1, "no second create");
    assert!(!journal_has_entry(&journal), "the journal is emptied");
}

#[test]
#[cfg(unix)]
fn destroy_waits_for_an_interrupted_create_before_deleting() {
    let env = Env::new(3_000);
    env.write_config(&config(&[ClusterSpec::default()]));
    let journal = interrupt_an_apply(&env);

    insta::assert_snapshot!(env.transcript(&["destroy", "--auto-approve"]).normalized_with(destroyed_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be destroyed: declared in this configuration, and destroy was requested
      - cluster "train01" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    Warning: an earlier run left operation projects/253589482369/locations/us-central1/operations/1 (creating train01) in flight; `clusterform apply` and `destroy` wait for it before changing anything
    [HH:MM:SS] train01: waiting for projects/253589482369/locations/us-central1/operations/1, started by an earlier run… [Ns]
    [HH:MM:SS] train01: created [Ns]
    [HH:MM:SS] train01: destroying… [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: destroyed [Ns]
    Destroy complete! Resources: 1 destroyed.
    "#);
    assert!(!journal_has_entry(&journal), "the journal is emptied");
    let conflicts: Vec<u16> = env
        .emulator()
        .requests()
        .iter()
        .map(|r| r.status)
        .filter(|status| *status == 409)
        .collect();
    assert!(
        conflicts.is_empty(),
        "the delete waited instead of meeting ABORTED"
    );
    assert!(
        env.emulator()
            .cluster(&crate::support::cluster_name("train01"))
            .is_none()
    );
}

/// Runs the binary with `args` in the background, sends it SIGINT once `journal` holds an
/// operation, and answers what it printed.
#[cfg(unix)]
fn interrupted_once_journaled(
    env: &Env,
    args: &[&str],
    journal: &std::path::Path,
) -> std::process::Output {
    interrupted_once(env, args, || journal_has_entry(journal))
}

/// Runs the binary with `args` in the background, sends it SIGINT once `ready` says so (within
/// 30 s), and answers what it printed.
#[cfg(unix)]
fn interrupted_once(env: &Env, args: &[&str], ready: impl Fn() -> bool) -> std::process::Output {
    let child = env.spawn(args, &[]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(Instant::now() < deadline, "the run never got there");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    child.wait_with_output().unwrap()
}

fn journal_has_entry(path: &std::path::Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|json| json_has_operation(&json))
}

fn json_has_operation(json: &serde_json::Value) -> bool {
    match json {
        serde_json::Value::Object(map) => {
            map.contains_key("operation") || map.values().any(json_has_operation)
        }
        serde_json::Value::Array(items) => items.iter().any(json_has_operation),
        _ => false,
    }
}

/// On a terminal the interrupt line is printed above the live progress bars, never under them
/// where their next redraw would erase it, and the spinners of the actions it stops are
/// cleared: no progress line stays above or below it.
#[test]
#[cfg(unix)]
fn on_a_terminal_the_interrupt_line_survives_the_progress_bars_and_no_spinner_stays() {
    let env = Env::new(5_000);
    env.write_config(&config(&two_clusters()));
    let mut session = on_terminal(&env, "apply --auto-approve");
    let deadline = Instant::now() + Duration::from_secs(20);
    while operations_journaled(&env.journal_path()) < 2 {
        assert!(
            Instant::now() < deadline,
            "the creates were never journaled"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Long enough for the spinners to redraw a few times.
    std::thread::sleep(Duration::from_millis(500));
    session.send_control('c').unwrap();
    let output = terminal_output(&mut session);
    let screen = final_screen(&output);
    let shown = screen.join("\n");
    assert!(
        screen.iter().any(|line| line.starts_with("Interrupted: "))
            && screen.iter().any(|line| line.ends_with("exit at once.")),
        "the interrupt line was erased:\n{shown}\n--- raw ---\n{output:?}"
    );
    let first = screen
        .iter()
        .position(|line| line.starts_with("Interrupted: "))
        .unwrap();
    let last = first
        + screen[first..]
            .iter()
            .position(|line| line.ends_with("exit at once."))
            .unwrap();
    assert_eq!(
        screen[first - 1],
        "Plan: 2 to add, 0 to change, 0 to replace, 0 to destroy.",
        "a line is left above the interrupt line:\n{shown}"
    );
    assert!(
        screen[last + 1..].iter().all(String::is_empty),
        "a progress line is left below the interrupt line:\n{shown}"
    );
    assert!(
        !screen.iter().any(|line| line.contains("train01: ")),
        "a progress line is left:\n{shown}"
    );
}

fn operations_journaled(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .matches("/operations/")
        .count()
}

/// Ctrl-C during `destroy` names `destroy` as the command that waits for the deletions: an
/// `apply` would create the clusters being deleted again.
#[test]
#[cfg(unix)]
fn an_interrupted_destroy_names_destroy_as_the_command_to_resume() {
    let env = Env::new(3_000);
    env.write_config(&config(&[ClusterSpec::default()]));
    let created = env.cmd(&["apply", "--auto-approve"]).output().unwrap();
    assert!(created.status.success(), "{}", stderr(&created));
    let journal = env.path().join(".clusterform/journal.json");
    let interrupted = interrupted_once_journaled(&env, &["destroy", "--auto-approve"], &journal);
    insta::assert_snapshot!(env.transcript_of(&interrupted).normalized_with(destroyed_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be destroyed: declared in this configuration, and destroy was requested
      - cluster "train01" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    [HH:MM:SS] train01: destroying… [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    Interrupted: no longer waiting for operations; they keep running, and the next `clusterform destroy` waits for them. Press Ctrl-C again to exit at once.
    [exit status: 1]
    "#);
}

/// One run has one Ctrl-C listener: an apply that first waits for an earlier run's operation
/// and then starts its own says "Interrupted" once, whichever step the Ctrl-C stops.
#[test]
#[cfg(unix)]
fn an_apply_that_resumed_an_earlier_run_says_interrupted_once() {
    let env = Env::new(3_000);
    env.write_config(&config(&[ClusterSpec::default()]));
    let journal = interrupt_an_apply(&env);
    env.write_config(&config(&two_clusters()));
    let second_create_journaled = || {
        std::fs::read_to_string(&journal)
            .unwrap_or_default()
            .contains("train02")
    };
    let output = interrupted_once(&env, &["apply", "--auto-approve"], second_create_journaled);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let err = stderr(&output);
    let said = err
        .lines()
        .filter(|line| line.starts_with("Interrupted:"))
        .count();
    assert_eq!(said, 1, "{err}");
}
