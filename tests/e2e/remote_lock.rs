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
use crate::support::{
    ClusterSpec, Env, PROJECT, REGION, Transcript, assert_succeeded, cluster_hcl, config,
    created_attributes_elided, stderr,
};

const BUCKET: &str = "team-infra";
const OBJECT: &str = "clusterform/prod/research.lock";
const JOURNAL: &str = "clusterform/prod/research.journal.json";
const APPLIED: &str = "clusterform/prod/research.applied.json";

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
        self.object(JOURNAL)
    }

    /// An object's text, when there is one.
    fn object(&self, object: &str) -> Option<String> {
        Self::block_on(self.storage().read(object))
            .unwrap()
            .map(|(bytes, _)| String::from_utf8(bytes).unwrap())
    }

    /// Changes train01's `team` label through the API, as the console would, and waits
    /// until the cluster has it.
    fn label_outside(&self) {
        let cluster = format!(
            "{}/v1beta1/projects/{PROJECT}/locations/{REGION}/modelDevelopmentClusters/train01",
            self.base_url
        );
        let labels = serde_json::json!({
            "labels": {"team": "oncall", "clusterform-stack": "research"}
        });
        Self::block_on(async {
            let client = reqwest::Client::new();
            client
                .patch(format!("{cluster}?updateMask=labels"))
                .bearer_auth("any-token")
                .json(&labels)
                .send()
                .await
                .unwrap()
                .error_for_status()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let live: serde_json::Value = client
                    .get(&cluster)
                    .bearer_auth("any-token")
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                if live["labels"]["team"] == "oncall" && live["clusterStatus"]["state"] == "RUNNING"
                {
                    return;
                }
                assert!(Instant::now() < deadline, "the label never arrived: {live}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
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
            .envs(crate::support::preflight_env_at(&self.base_url))
            .env("CLUSTERFORM_ACCESS_TOKEN", "any-token")
            .env("NO_COLOR", "1")
            .env_remove("CLUSTERFORM_STORAGE_ENDPOINT")
            .env_remove("GOOGLE_OAUTH_ACCESS_TOKEN")
            .env_remove("RUST_LOG")
            // As in a CI container: the holder is still named, from the OS's account.
            .env_remove("USER")
            .env_remove("USERNAME")
            .env_remove("LOGNAME")
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

    /// The transcript of `output`, the emulator's URL shown as `[ENDPOINT]` and, when a run
    /// holds the lock, its `user@host` as `[WHO]`, its process ID as `[HOLDER PID]` and its
    /// lock ID as `[LOCK ID]`: a run's own process ID stays `[PID]`.
    fn transcript_of(&self, output: &Output, holder: Option<&LockInfo>) -> Transcript {
        Transcript::of(output, |text| {
            let text = text.replace(&self.base_url, "[ENDPOINT]");
            match holder {
                Some(holder) => text
                    .replace(&holder.who, "[WHO]")
                    .replace(&format!("(pid {})", holder.pid), "(pid [HOLDER PID])")
                    .replace(&holder.id, "[LOCK ID]"),
                None => text,
            }
        })
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
    assert!(!holder.who.starts_with("unknown@"), "{}", holder.who);

    let refused = emulator.run(two.path(), &["apply", "--auto-approve"]);
    insta::assert_snapshot!(emulator.transcript_of(&refused, Some(&holder)), @"
    [stderr]
    Error: the stack is locked by [WHO] (pid [HOLDER PID]) running `apply` since [TIME] (lock ID [LOCK ID]) at gs://team-infra/clusterform/prod/research.lock
      hint: wait for the other run to finish (`--lock-timeout 10m` waits for it); if it died, remove its lock with `clusterform force-unlock [LOCK ID]`
    [exit status: 1]
    ");

    let waited = emulator.run(
        two.path(),
        &["apply", "--auto-approve", "--lock-timeout", "60s"],
    );
    let first = first.wait_with_output().unwrap();
    assert_succeeded(&first);
    // The second machine planned after the first applied.
    insta::assert_snapshot!(emulator.transcript_of(&waited, Some(&holder)), @"
    No changes. Your clusters match the configuration.
    [stderr]
    Waiting up to 1m for the lock, held by [WHO] (pid [HOLDER PID]) running `apply` since [TIME] (lock ID [LOCK ID])…
    ");
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
    insta::assert_snapshot!(emulator.transcript_of(&refused, Some(&holder)), @"
    [stderr]
    Error: the stack is locked by [WHO] (pid [HOLDER PID]) running `apply` since [TIME] (lock ID [LOCK ID]) at gs://team-infra/clusterform/prod/research.lock
      hint: wait for the other run to finish (`--lock-timeout 10m` waits for it); if it died, remove its lock with `clusterform force-unlock [LOCK ID]`
    [exit status: 1]
    ");

    let wrong = emulator.run(
        two.path(),
        &["force-unlock", "not-the-id", "--auto-approve"],
    );
    insta::assert_snapshot!(emulator.transcript_of(&wrong, Some(&holder)), @"
    [stderr]
    Error: the lock gs://team-infra/clusterform/prod/research.lock has another ID than not-the-id: it is held by [WHO] (pid [HOLDER PID]) running `apply` since [TIME] (lock ID [LOCK ID])
      hint: the lock was taken again since that ID was printed; only remove a lock whose run is known to be dead, by the ID shown now
    [exit status: 1]
    ");
    let unconfirmed = emulator.run(two.path(), &["force-unlock", &holder.id]);
    // The hint is about the lock, not saved plans.
    insta::assert_snapshot!(emulator.transcript_of(&unconfirmed, Some(&holder)), @"
    [stderr]
    The lock gs://team-infra/clusterform/prod/research.lock is held by [WHO] (pid [HOLDER PID]) running `apply` since [TIME] (lock ID [LOCK ID]).
    Error: no terminal to ask for confirmation, and --auto-approve was not given
      hint: check that no run holds the lock any more, then run `clusterform force-unlock [LOCK ID] --auto-approve`
    [exit status: 1]
    ");
    assert!(emulator.held().is_some(), "neither removed the lock");

    let unlocked = emulator.run(two.path(), &["force-unlock", &holder.id, "--auto-approve"]);
    insta::assert_snapshot!(emulator.transcript_of(&unlocked, Some(&holder)), @"
    [stderr]
    The lock gs://team-infra/clusterform/prod/research.lock is held by [WHO] (pid [HOLDER PID]) running `apply` since [TIME] (lock ID [LOCK ID]).
    The lock gs://team-infra/clusterform/prod/research.lock was removed.
    ");
    assert_eq!(emulator.held(), None);

    let applied = emulator.run(two.path(), &["apply", "--auto-approve"]);
    assert_succeeded(&applied);
    assert_eq!(emulator.held(), None, "the apply released its lock");
}

#[test]
#[cfg(unix)]
fn the_applied_record_is_an_object_beside_the_journal_and_words_another_machines_plan() {
    let emulator = ExternalEmulator::start();
    let (one, two) = (emulator.machine(), emulator.machine());
    assert_succeeded(&emulator.run(one.path(), &["apply", "--auto-approve"]));
    let record = emulator
        .object(APPLIED)
        .expect("the record is an object beside the journal");
    assert!(record.contains("\"train01\""), "{record}");
    assert!(!one.path().join(".clusterform/applied.json").exists());

    emulator.label_outside();
    let plan = emulator.run(two.path(), &["plan"]);
    assert_succeeded(&plan);
    let text = String::from_utf8(plan.stdout).unwrap();
    assert!(
        text.contains("  # train01 changed outside clusterform: labels.team changed\n  # train01 will be updated in place\n"),
        "{text}"
    );
}

#[test]
fn force_unlock_of_a_local_lock_explains_that_the_os_releases_it() {
    let env = Env::new(0);
    env.write_config(&format!(
        "{}{}",
        crate::support::PROVIDER,
        cluster_hcl(&ClusterSpec::default())
    ));
    insta::assert_snapshot!(env.transcript(&["force-unlock", "some-id", "--auto-approve"]), @"
    [stderr]
    Error: . has no remote lock: its lock is local, and the operating system releases it when the run holding it ends
      hint: nothing to remove: a local lock never outlives its run; wait for that run to finish (`--lock-timeout`)
    [exit status: 1]
    ");
}

#[test]
#[cfg(unix)]
fn the_lock_is_released_after_an_error_and_after_ctrl_c() {
    let emulator = ExternalEmulator::start();
    let machine = emulator.machine();
    let unconfirmed = emulator.run(machine.path(), &["apply"]);
    insta::assert_snapshot!(emulator.transcript_of(&unconfirmed, None).normalized_with(created_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    Error: no terminal to ask for confirmation, and --auto-approve was not given
      hint: run with --auto-approve, or save a plan with `plan --out FILE` and `apply FILE`
    [exit status: 1]
    "#);
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
    // The other machine's create finished the cluster: no second create, no ALREADY_EXISTS.
    insta::assert_snapshot!(emulator.transcript_of(&resumed, None), @"
    No changes. Your clusters match the configuration.
    [stderr]
    Warning: an earlier run left operation projects/123456789012/locations/us-central1/operations/1 (creating train01) in flight; `clusterform apply` and `destroy` wait for it before changing anything
    [HH:MM:SS] train01: waiting for projects/123456789012/locations/us-central1/operations/1, started by an earlier run… [Ns]
    [HH:MM:SS] train01: created [Ns]
    Apply complete! Resources: 1 added, 0 changed, 0 replaced, 0 destroyed.
    ");
    assert_eq!(
        emulator.journal(),
        None,
        "the finished operation left the journal"
    );
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
    let id = written.to_string();
    // The generation is the ID.
    insta::assert_snapshot!(emulator.transcript_of(&refused, None).normalized_with(|text| text.replace(&id, "[GENERATION]")), @"
    [stderr]
    Error: the stack is locked: gs://team-infra/clusterform/prod/research.lock exists but holds no lock record that can be read (lock ID [GENERATION], the object's generation)
      hint: nothing says which run wrote it: if no run is using the stack, remove it with `clusterform force-unlock [GENERATION]`
    [exit status: 1]
    ");

    let unlocked = emulator.run(machine.path(), &["force-unlock", &id, "--auto-approve"]);
    assert_succeeded(&unlocked);
    assert_eq!(emulator.held(), None);
    let applied = emulator.run(machine.path(), &["apply", "--auto-approve"]);
    assert_succeeded(&applied);
}
