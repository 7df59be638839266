//! The stack lock on Cloud Storage between processes and directories: an external
//! `clusterform emulator --create-buckets` serves the API and Storage; two applies of one stack
//! from two directories (two "machines") with a `lock "gcs"` block: one proceeds, the other is
//! refused naming the holder and the lock object, or with `--lock-timeout` waits and proceeds
//! after; a lock left by a killed run is removed with `force-unlock`, after which apply
//! proceeds.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clusterform_executor::{
    ClientOptions, HeldLock, LockInfo, StaticToken, StorageClient, StorageLock,
};
use tempfile::TempDir;

use crate::emulator_command::ServedEmulator;
use crate::support::{ClusterSpec, Env, assert_succeeded, cluster_hcl, config, stderr, stdout};

const BUCKET: &str = "team-infra";
const OBJECT: &str = "clusterform/prod/research.lock";
const LOCATION: &str = "gs://team-infra/clusterform/prod/research.lock";
const JOURNAL: &str = "clusterform/prod/research.journal.json";

/// `clusterform emulator --create-buckets` in the background, stopped when dropped.
struct ExternalEmulator {
    base_url: String,
    /// Kept to the end: dropping it stops the emulator.
    _served: ServedEmulator,
}

impl ExternalEmulator {
    fn start() -> Self {
        let served = ServedEmulator::start("127.0.0.1", &["--op-seconds", "3", "--create-buckets"]);
        Self {
            base_url: served.base_url(),
            _served: served,
        }
    }

    fn storage(&self) -> StorageClient {
        StorageClient::new(
            BUCKET,
            ClientOptions {
                endpoint: Some(self.base_url.clone()),
                ..ClientOptions::default()
            },
            Arc::new(StaticToken::new("any-token")),
        )
        .unwrap()
    }

    fn block_on<T>(future: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    }

    /// The lock object as it is now.
    fn held(&self) -> Option<HeldLock> {
        Self::block_on(StorageLock::holder(&self.storage(), OBJECT)).unwrap()
    }

    /// The journal object's text, when there is one.
    fn journal(&self) -> Option<String> {
        Self::block_on(self.storage().read(JOURNAL))
            .unwrap()
            .map(|(bytes, _)| String::from_utf8(bytes).unwrap())
    }

    /// Waits until a run holds the lock; answers its record.
    fn wait_for_holder(&self) -> LockInfo {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(info) = self.held().and_then(|held| held.info) {
                return info;
            }
            assert!(Instant::now() < deadline, "no run took the lock");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A configuration directory (another "machine") of stack `e2e` with the lock block.
    fn machine(&self) -> TempDir {
        let dir = tempfile::tempdir().unwrap();
        let lock = format!(
            "  stack   = \"research\"\n  lock \"gcs\" {{\n    bucket   = \"{BUCKET}\"\n    prefix   = \"clusterform/prod\"\n    endpoint = \"{}\"\n  }}\n",
            self.base_url
        );
        let hcl = config(&[ClusterSpec::default()]).replace("  stack   = \"research\"\n", &lock);
        assert!(hcl.contains("lock \"gcs\""), "{hcl}");
        std::fs::write(dir.path().join("main.hcl"), hcl).unwrap();
        dir
    }

    fn command(&self, dir: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_clusterform"));
        command
            .args(args)
            .current_dir(dir)
            .env("CLUSTERFORM_ENDPOINT", &self.base_url)
            .env("CLUSTERFORM_ACCESS_TOKEN", "any-token")
            .env("NO_COLOR", "1")
            .env_remove("CLUSTERFORM_STORAGE_ENDPOINT")
            .env_remove("GOOGLE_OAUTH_ACCESS_TOKEN")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn spawn(&self, dir: &Path, args: &[&str]) -> Child {
        self.command(dir, args).spawn().unwrap()
    }

    fn run(&self, dir: &Path, args: &[&str]) -> Output {
        self.command(dir, args).output().unwrap()
    }
}

#[test]
#[cfg(unix)]
fn of_two_machines_one_applies_and_the_other_is_refused_or_waits() {
    let emulator = ExternalEmulator::start();
    let (one, two) = (emulator.machine(), emulator.machine());
    let first = emulator.spawn(one.path(), &["apply", "--auto-approve"]);
    let holder = emulator.wait_for_holder();
    assert_eq!(holder.pid, first.id());
    assert_eq!(holder.command, "apply");

    let refused = emulator.run(two.path(), &["apply", "--auto-approve"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    let message = stderr(&refused);
    for part in [
        "the stack is locked by ",
        &format!("{} (pid {}) running `apply` since ", holder.who, holder.pid),
        &format!("(lock ID {})", holder.id),
        LOCATION,
        "force-unlock",
    ] {
        assert!(message.contains(part), "{part:?} missing: {message}");
    }

    let waited = emulator.run(
        two.path(),
        &["apply", "--auto-approve", "--lock-timeout", "60s"],
    );
    let first = first.wait_with_output().unwrap();
    assert_succeeded(&first);
    assert_succeeded(&waited);
    let said = format!("{}{}", stdout(&waited), stderr(&waited));
    assert!(
        said.contains("Waiting up to 1m for the lock, held by "),
        "{said}"
    );
    assert!(
        said.contains("No changes"),
        "the second machine planned after the first applied: {said}"
    );
    assert_eq!(emulator.held(), None, "both runs released the lock");
}

#[test]
#[cfg(unix)]
fn force_unlock_removes_the_lock_of_a_killed_run_after_which_apply_proceeds() {
    let emulator = ExternalEmulator::start();
    let (one, two) = (emulator.machine(), emulator.machine());
    let mut killed = emulator.spawn(one.path(), &["apply", "--auto-approve"]);
    let holder = emulator.wait_for_holder();
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(emulator.held().is_some(), "a killed run leaves its lock");

    let refused = emulator.run(two.path(), &["apply", "--auto-approve"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains(&holder.id),
        "{}",
        stderr(&refused)
    );

    let wrong = emulator.run(
        two.path(),
        &["force-unlock", "not-the-id", "--auto-approve"],
    );
    assert_eq!(wrong.status.code(), Some(1));
    assert!(stderr(&wrong).contains(&holder.id), "{}", stderr(&wrong));
    let unconfirmed = emulator.run(two.path(), &["force-unlock", &holder.id]);
    assert_eq!(unconfirmed.status.code(), Some(1));
    assert!(
        stderr(&unconfirmed).contains("no terminal to ask for confirmation"),
        "{}",
        stderr(&unconfirmed)
    );
    assert!(
        stderr(&unconfirmed).contains("--auto-approve")
            && !stderr(&unconfirmed).contains("plan --out"),
        "the hint is about the lock, not saved plans: {}",
        stderr(&unconfirmed)
    );
    assert!(emulator.held().is_some(), "neither removed the lock");

    let unlocked = emulator.run(two.path(), &["force-unlock", &holder.id, "--auto-approve"]);
    assert_succeeded(&unlocked);
    assert!(
        stderr(&unlocked).contains("was removed"),
        "{}",
        stderr(&unlocked)
    );
    assert_eq!(emulator.held(), None);

    let applied = emulator.run(two.path(), &["apply", "--auto-approve"]);
    assert_succeeded(&applied);
    assert_eq!(emulator.held(), None, "the apply released its lock");
}

#[test]
fn force_unlock_of_a_local_lock_explains_that_the_os_releases_it() {
    let env = Env::new(0);
    env.write_config(&format!(
        "{}{}",
        crate::support::PROVIDER,
        cluster_hcl(&ClusterSpec::default())
    ));
    let output = env.run(&["force-unlock", "some-id", "--auto-approve"]);
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(message.contains("has no remote lock"), "{message}");
    assert!(
        message.contains("operating system releases it"),
        "{message}"
    );
}

#[test]
#[cfg(unix)]
fn the_lock_is_released_after_an_error_and_after_ctrl_c() {
    let emulator = ExternalEmulator::start();
    let machine = emulator.machine();
    let unconfirmed = emulator.run(machine.path(), &["apply"]);
    assert_eq!(unconfirmed.status.code(), Some(1));
    assert!(
        stderr(&unconfirmed).contains("no terminal to ask for confirmation"),
        "{}",
        stderr(&unconfirmed)
    );
    assert_eq!(emulator.held(), None, "released after the error");

    let interrupted = emulator.spawn(machine.path(), &["apply", "--auto-approve"]);
    emulator.wait_for_holder();
    std::thread::sleep(Duration::from_millis(500));
    let status = Command::new("kill")
        .args(["-INT", &interrupted.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = interrupted.wait_with_output().unwrap();
    assert!(!output.status.success(), "{}", stderr(&output));
    assert_eq!(
        emulator.held(),
        None,
        "released after Ctrl-C: {}",
        stderr(&output)
    );
}

#[test]
#[cfg(unix)]
fn a_run_killed_on_one_machine_is_resumed_from_another_through_the_shared_journal() {
    let emulator = ExternalEmulator::start();
    let (one, two) = (emulator.machine(), emulator.machine());
    let mut killed = emulator.spawn(one.path(), &["apply", "--auto-approve"]);
    let holder = emulator.wait_for_holder();
    let deadline = Instant::now() + Duration::from_secs(30);
    while emulator.journal().is_none() {
        assert!(Instant::now() < deadline, "the create was never journaled");
        std::thread::sleep(Duration::from_millis(20));
    }
    killed.kill().unwrap();
    killed.wait().unwrap();
    let journal = emulator.journal().expect("a killed run leaves its journal");
    assert!(journal.contains("\"train01\""), "{journal}");
    assert!(
        !one.path().join(".clusterform/journal.json").exists(),
        "the journal is the object, not a local file"
    );

    let unlocked = emulator.run(two.path(), &["force-unlock", &holder.id, "--auto-approve"]);
    assert_succeeded(&unlocked);
    let resumed = emulator.run(two.path(), &["apply", "--auto-approve"]);
    assert_succeeded(&resumed);
    let log = stderr(&resumed);
    assert!(
        log.contains("Waiting for operations started by an earlier run"),
        "{log}"
    );
    assert!(!log.contains("ALREADY_EXISTS"), "{log}");
    assert!(
        stdout(&resumed).contains("No changes."),
        "the other machine's create finished the cluster: {}",
        stdout(&resumed)
    );
    assert_eq!(
        emulator.journal(),
        None,
        "the finished operation left the journal"
    );
}

/// The lock ID a refused run printed: the text after `(lock ID ` up to the next `,` or `)`.
fn printed_lock_id(message: &str) -> &str {
    let start = message.find("(lock ID ").expect("no lock ID shown") + "(lock ID ".len();
    let rest = &message[start..];
    &rest[..rest.find([',', ')']).unwrap()]
}

#[test]
#[cfg(unix)]
fn a_lock_without_a_readable_record_is_removed_by_the_id_its_refusal_shows() {
    let emulator = ExternalEmulator::start();
    let machine = emulator.machine();
    let written = ExternalEmulator::block_on(
        emulator
            .storage()
            .create_if_absent(OBJECT, b"\x00 not a lock record"),
    )
    .unwrap();

    let refused = emulator.run(machine.path(), &["apply", "--auto-approve"]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    let message = stderr(&refused);
    let id = printed_lock_id(&message);
    assert_eq!(
        id,
        written.to_string(),
        "the generation is the ID: {message}"
    );
    for part in [LOCATION, &format!("clusterform force-unlock {id}")] {
        assert!(message.contains(part), "{part:?} missing: {message}");
    }

    let unlocked = emulator.run(machine.path(), &["force-unlock", id, "--auto-approve"]);
    assert_succeeded(&unlocked);
    assert_eq!(emulator.held(), None);
    let applied = emulator.run(machine.path(), &["apply", "--auto-approve"]);
    assert_succeeded(&applied);
}
