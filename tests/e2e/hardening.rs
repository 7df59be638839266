//! Hostile environments and local state: environment variables that are not UTF-8, Ctrl-C
//! while a client holds a half-sent request, a umask that would make clusterform's files
//! world-readable, two emulators on one state file, clusters still provisioning after a
//! run was killed before it journaled anything, and a certificate store that cannot be read.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::emulator_command::{free_port, wait_until_listening};
use crate::support::{
    ClusterSpec, Env, apply_ok, assert_succeeded, cluster_name, config, created_attributes_elided,
    failure_seconds_hidden, stderr, stdout,
};

/// Not UTF-8: `café` in Latin-1.
fn latin1(text: &str) -> OsString {
    let mut bytes = text.as_bytes().to_vec();
    bytes.push(0xe9);
    OsString::from_vec(bytes)
}

fn run_with(env: &Env, args: &[&str], name: &str, value: OsString) -> Output {
    env.cmd(args).env(name, value).output().unwrap()
}

#[test]
fn a_non_utf8_variable_clusterform_does_not_read_changes_nothing() {
    let env = Env::new(50);
    env.write_config(&config(&[ClusterSpec::default()]));
    for args in [
        &["validate"][..],
        &["plan"],
        &["apply", "--auto-approve"],
        &["destroy", "--auto-approve"],
    ] {
        let output = run_with(&env, args, "X", latin1("caf"));
        assert!(
            output.status.success(),
            "{args:?}: {}{}",
            stdout(&output),
            stderr(&output)
        );
    }
}

#[test]
fn a_non_utf8_variable_clusterform_reads_is_an_error_naming_it_never_showing_it() {
    let env = Env::new(50);
    env.write_config(&config(&[ClusterSpec::default()]));
    let mut transcripts = String::new();
    for (name, args, code) in [
        ("CLUSTERFORM_VAR_region", &["validate"][..], 1),
        ("CLUSTERFORM_VAR_region", &["plan"][..], 1),
        ("CLUSTERFORM_ACCESS_TOKEN", &["plan"][..], 1),
        (
            "GOOGLE_OAUTH_ACCESS_TOKEN",
            &["apply", "--auto-approve"][..],
            1,
        ),
        ("CLUSTERFORM_ENDPOINT", &["plan"][..], 1),
    ] {
        let mut cmd = env.cmd(args);
        if name == "GOOGLE_OAUTH_ACCESS_TOKEN" {
            cmd.env_remove("CLUSTERFORM_ACCESS_TOKEN");
        }
        let output = cmd.env(name, latin1("hunter2-caf")).output().unwrap();
        let text = format!("{}{}", stdout(&output), stderr(&output));
        assert_eq!(output.status.code(), Some(code), "{name} {args:?}: {text}");
        assert!(!text.contains("hunter2"), "{name} shows its value: {text}");
        transcripts.push_str(&format!(
            "$ {name}=… clusterform {}\n{}",
            args.join(" "),
            env.transcript_of(&output)
        ));
    }
    insta::assert_snapshot!(transcripts, @"
    $ CLUSTERFORM_VAR_region=… clusterform validate
    [stderr]
    Error: the environment variable CLUSTERFORM_VAR_region is not valid UTF-8
      hint: set CLUSTERFORM_VAR_region to UTF-8 text, or unset it
    [exit status: 1]
    $ CLUSTERFORM_VAR_region=… clusterform plan
    [stderr]
    Error: the environment variable CLUSTERFORM_VAR_region is not valid UTF-8
      hint: set CLUSTERFORM_VAR_region to UTF-8 text, or unset it
    [exit status: 1]
    $ CLUSTERFORM_ACCESS_TOKEN=… clusterform plan
    [stderr]
    Error: the environment variable CLUSTERFORM_ACCESS_TOKEN is not valid UTF-8
      hint: set CLUSTERFORM_ACCESS_TOKEN to UTF-8 text, or unset it
    [exit status: 1]
    $ GOOGLE_OAUTH_ACCESS_TOKEN=… clusterform apply --auto-approve
    [stderr]
    Error: the environment variable GOOGLE_OAUTH_ACCESS_TOKEN is not valid UTF-8
      hint: set GOOGLE_OAUTH_ACCESS_TOKEN to UTF-8 text, or unset it
    [exit status: 1]
    $ CLUSTERFORM_ENDPOINT=… clusterform plan
    [stderr]
    Error: the endpoint (--endpoint or the CLUSTERFORM_ENDPOINT variable) is not valid UTF-8
    [exit status: 1]
    ");
    assert!(env.mutations().is_empty());
}

fn start_emulator(port: u16, extra: &[&std::ffi::OsStr]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_clusterform"))
        .args(["emulator", "--listen", &format!("127.0.0.1:{port}")])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for the child to exit, at most `bound`; kills it and fails the test otherwise.
fn exits_within(child: &mut Child, bound: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("still running {bound:?} after Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_c_stops_the_emulator_while_a_client_holds_a_half_sent_request() {
    use std::io::Write as _;

    let port = free_port();
    let mut child = start_emulator(port, &[]);
    wait_until_listening(port, &mut child);
    let mut half_open = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    half_open
        .write_all(b"GET /v1/projects HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    // Give the server time to accept the connection and start reading the request.
    std::thread::sleep(Duration::from_millis(300));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    // The emulator gives connections 5 s; anything far beyond means it ignored the signal.
    let status = exits_within(&mut child, Duration::from_secs(30));
    assert!(status.success(), "{status}");
    drop(half_open);
}

#[test]
fn a_second_emulator_on_the_same_state_file_fails_at_once_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let port = free_port();
    let mut first = start_emulator(port, &["--state".as_ref(), state.as_os_str()]);
    wait_until_listening(port, &mut first);
    let mut second = start_emulator(free_port(), &["--state".as_ref(), state.as_os_str()]);
    let status = exits_within(&mut second, Duration::from_secs(20));
    let mut message = String::new();
    std::io::Read::read_to_string(&mut second.stderr.take().unwrap(), &mut message).unwrap();
    assert_eq!(status.code(), Some(1), "{message}");
    insta::assert_snapshot!(message.replace(&*state.to_string_lossy(), "[STATE]"), @"Error: the local emulator failed: the emulator state file [STATE] is in use by another emulator (locked through [STATE].lock)");
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first keeps serving"
    );

    // The built-in emulator of a configuration using the same file is refused the same way.
    let config_dir = tempfile::tempdir().unwrap();
    let local_state = config_dir.path().join(".clusterform/emulator.json");
    std::fs::create_dir(config_dir.path().join(".clusterform")).unwrap();
    let port = free_port();
    let mut holder = start_emulator(port, &["--state".as_ref(), local_state.as_os_str()]);
    wait_until_listening(port, &mut holder);
    std::fs::write(
        config_dir.path().join("main.hcl"),
        config(&[ClusterSpec::default()]),
    )
    .unwrap();
    let plan = Command::new(env!("CARGO_BIN_EXE_clusterform"))
        .arg("plan")
        .arg(config_dir.path())
        .env("NO_COLOR", "1")
        .env("CLUSTERFORM_ENDPOINT", "local")
        .output()
        .unwrap();
    assert_eq!(plan.status.code(), Some(1), "{}", stderr(&plan));
    insta::assert_snapshot!(
        stderr(&plan).replace(&*config_dir.path().to_string_lossy(), "[DIR]"),
        @r#"
    Error: another clusterform command in [DIR] is using the built-in emulator (`endpoint = "local"`): it serves one command at a time from [DIR]/.clusterform/emulator.json
      hint: wait for that command to finish; if it is a `clusterform emulator` serving this state, give this command the `--endpoint` it printed; to run commands side by side, serve the state with `clusterform emulator --state [DIR]/.clusterform/emulator.json` and give each command that `--endpoint`
    "#
    );
    for mut child in [first, holder] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The binary run by `sh` after `umask 000`, in `dir`, with `endpoint`.
fn with_open_umask(dir: &Path, endpoint: &str, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("umask 000 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_clusterform"))
        .args(args)
        .current_dir(dir)
        .env("CLUSTERFORM_ENDPOINT", endpoint)
        .env("CLUSTERFORM_ACCESS_TOKEN", crate::support::TOKEN)
        .env("CLUSTERFORM_LOCAL_OPERATION_SECONDS", "0.1")
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn under_umask_000_the_state_directory_and_its_files_are_private() {
    let env = Env::new(50);
    env.write_config(&config(&[ClusterSpec::default()]));
    let url = env.server.base_url();
    let apply = with_open_umask(env.path(), &url, &["apply", "--auto-approve"]);
    assert!(apply.status.success(), "{}", stderr(&apply));
    let state_dir = env.path().join(".clusterform");
    assert_eq!(mode(&state_dir), 0o700);
    assert_eq!(mode(&state_dir.join("lock")), 0o600);
    assert_eq!(mode(&state_dir.join("applied.json")), 0o600);
    let plan = with_open_umask(env.path(), &url, &["plan", "--out", "saved.json"]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    assert_eq!(mode(&env.path().join("saved.json")), 0o600);

    // The built-in emulator's state and lock, in a directory an earlier run left open.
    let local = tempfile::tempdir().unwrap();
    let state_dir = local.path().join(".clusterform");
    std::fs::create_dir(&state_dir).unwrap();
    std::fs::set_permissions(&state_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::write(
        local.path().join("main.hcl"),
        config(&[ClusterSpec::default()]),
    )
    .unwrap();
    let apply = with_open_umask(local.path(), "local", &["apply", "--auto-approve"]);
    assert!(apply.status.success(), "{}", stderr(&apply));
    assert_eq!(mode(&state_dir), 0o700);
    for file in [
        "emulator.json",
        "emulator.json.lock",
        "lock",
        "applied.json",
    ] {
        assert_eq!(mode(&state_dir.join(file)), 0o600, "{file}");
    }
}

/// Puts `train01` in `state` now (as a run killed before journaling would leave it), and in
/// `then` (with `detail`) after `delay`, from another thread; the flag says when that is done.
fn change_state_later(
    env: &Env,
    state: &str,
    then: &'static str,
    detail: Option<&'static str>,
    delay: Duration,
) -> (std::thread::JoinHandle<()>, Arc<AtomicBool>) {
    let emulator = env.emulator().clone();
    assert!(emulator.set_cluster_status(&cluster_name("train01"), state, None));
    let done = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&done);
    let thread = std::thread::spawn(move || {
        std::thread::sleep(delay);
        assert!(emulator.set_cluster_status(&cluster_name("train01"), then, detail));
        flag.store(true, Ordering::SeqCst);
    });
    (thread, done)
}

#[test]
fn apply_waits_for_an_unchanged_cluster_still_provisioning() {
    let env = Env::new(50);
    apply_ok(&env, &[ClusterSpec::default()]);
    let (thread, done) = change_state_later(
        &env,
        "PROVISIONING",
        "RUNNING",
        None,
        Duration::from_secs(2),
    );
    let output = env.run(&["apply", "--auto-approve"]);
    assert_succeeded(&output);
    assert!(
        done.load(Ordering::SeqCst),
        "apply returned while the cluster was still provisioning"
    );
    insta::assert_snapshot!(env.transcript_of(&output), @"
    No changes. Your clusters match the configuration.
    Note: train01: the cluster is PROVISIONING right now: an operation is in flight on it (started by another run)
    [stderr]
    Waiting for unchanged clusters with an operation in flight (started by another run)…
    [HH:MM:SS] train01: checking… [Ns]
    [HH:MM:SS] train01: waiting for the cluster to leave PROVISIONING… [Ns]
    [HH:MM:SS] train01: ready [Ns]
    Apply complete! The clusters' earlier operations finished.
    ");
    assert!(env.mutations().len() == 1, "only the first apply's create");
    thread.join().unwrap();
}

#[test]
fn apply_fails_when_an_unchanged_cluster_still_updating_ends_in_error() {
    let env = Env::new(50);
    apply_ok(&env, &[ClusterSpec::default()]);
    let (thread, done) = change_state_later(
        &env,
        "UPDATING",
        "ERROR",
        Some("quota exhausted"),
        Duration::from_secs(2),
    );
    let output = env.run(&["apply", "--auto-approve"]);
    assert!(done.load(Ordering::SeqCst));
    insta::assert_snapshot!(env.transcript_of(&output).normalized_with(failure_seconds_hidden), @"
    No changes. Your clusters match the configuration.
    Note: train01: the cluster is UPDATING right now: an operation is in flight on it (started by another run)
    [stderr]
    Waiting for unchanged clusters with an operation in flight (started by another run)…
    [HH:MM:SS] train01: checking… [Ns]
    [HH:MM:SS] train01: waiting for the cluster to leave UPDATING… [Ns]
    [HH:MM:SS] train01: FAILED after [N]s: projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01 is in state ERROR: quota exhausted
    Error: Check of cluster train01 failed: projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01 is in state ERROR: quota exhausted
      hint: see the cluster's state, node errors and events with `clusterform status --target train01`; fix the configuration and apply again
    Error: 1 of 1 actions failed
      hint: fix the cause above and run `clusterform apply` again; finished clusters are not touched twice
    [exit status: 1]
    ");
    thread.join().unwrap();
}

#[test]
fn destroy_waits_for_a_cluster_still_provisioning_then_deletes_it() {
    let env = Env::new(50);
    apply_ok(&env, &[ClusterSpec::default()]);
    let (thread, done) = change_state_later(
        &env,
        "PROVISIONING",
        "RUNNING",
        None,
        Duration::from_secs(2),
    );
    let output = env.run(&["destroy", "--auto-approve"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(done.load(Ordering::SeqCst));
    assert!(
        env.emulator().cluster(&cluster_name("train01")).is_none(),
        "deleted once it was free"
    );
    thread.join().unwrap();
}

/// The system's CA roots are read only for an https endpoint: a plain-http endpoint (the
/// emulator) never makes a TLS connection, so a certificate store that cannot be read does
/// not stop it, while an https endpoint still reports that it found no root certificate.
#[test]
fn an_unreadable_certificate_store_stops_only_https_endpoints() {
    let env = Env::new(0);
    env.write_config(&config(&[ClusterSpec::default()]));
    let unreadable = [
        ("SSL_CERT_FILE", "/nonexistent/ca-certificates.crt"),
        ("SSL_CERT_DIR", "/nonexistent/certs"),
    ];
    let plan = env.cmd(&["plan"]).envs(unreadable).output().unwrap();
    insta::assert_snapshot!(created_attributes_elided(&env.transcript_of(&plan).to_string()), @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    "#);

    let https = env
        .cmd(&["plan"])
        .envs(unreadable)
        .env("CLUSTERFORM_ENDPOINT", "https://127.0.0.1:9")
        .output()
        .unwrap();
    insta::assert_snapshot!(env.transcript_of(&https), @"
    [stderr]
    Error: invalid endpoint `https://127.0.0.1:9`: cannot build the HTTP client: builder error: unexpected error: No CA certificates were loaded from the system
      hint: an endpoint is a base URL such as https://host:port
    [exit status: 1]
    ");
}
