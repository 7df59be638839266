//! Crash safety: `apply` and `destroy` killed (SIGKILL) or interrupted (SIGINT) at seeded
//! random moments — before the first request, around a create and its journal write, while
//! waiting, during deletes — are finished by re-runs without a second create, a second PATCH
//! of the same change or a second DELETE, and the journal is always absent or readable JSON.
//! Some SIGKILL trials also delete the journal after the kill: that is the state a crash
//! between an accepted request and its journal write leaves, which a random kill rarely hits.

use std::collections::BTreeMap;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use clusterform_emulator::RecordedRequest;

use crate::support::{
    Env, SeededRng, cluster_name, created_id, fleet_config, stderr, stdout, target_id,
};

const OPERATION_MS: u64 = 500;
const IDS: [&str; 5] = ["k00", "k01", "k02", "k03", "k04"];
/// Signals land anywhere from before the process has started to after its last operation
/// (an apply of a few changes runs about 0.9 s here, a destroy about 0.6 s).
const APPLY_WINDOW_MS: (u64, u64) = (0, 900);
const DESTROY_WINDOW_MS: (u64, u64) = (0, 700);
const RERUNS: usize = 4;

#[derive(Clone, Copy, Debug)]
enum Signal {
    Kill,
    Interrupt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Command {
    Apply,
    Destroy,
}

impl Command {
    fn args(self) -> [&'static str; 2] {
        match self {
            Command::Apply => ["apply", "--auto-approve"],
            Command::Destroy => ["destroy", "--auto-approve"],
        }
    }
}

/// Where the run was when the signal arrived, judged from the emulator's log and the journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Moment {
    BeforeAnyRequest,
    BeforeAnyChange,
    /// A change was accepted and the journal is empty: its write is still to come, or every
    /// operation has finished already.
    ChangeAcceptedJournalEmpty,
    Waiting,
    Exited,
}

fn mutations(requests: &[RecordedRequest]) -> impl Iterator<Item = &RecordedRequest> {
    requests.iter().filter(|r| {
        matches!(r.method.as_str(), "PATCH" | "DELETE")
            || (r.method == "POST" && r.path.ends_with("/modelDevelopmentClusters"))
    })
}

fn journal_entries(env: &Env) -> usize {
    let Ok(text) = std::fs::read_to_string(env.journal_path()) else {
        return 0;
    };
    let journal: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the journal is not JSON ({e}):\n{text}"));
    assert_eq!(journal["version"], 1, "{text}");
    journal["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("no entries:\n{text}"))
        .len()
}

fn moment(env: &Env, run: &[RecordedRequest], exited_already: bool) -> Moment {
    let accepted = mutations(run).filter(|r| r.status == 200).count();
    if exited_already {
        Moment::Exited
    } else if run.is_empty() {
        Moment::BeforeAnyRequest
    } else if accepted == 0 {
        Moment::BeforeAnyChange
    } else if journal_entries(env) > 0 {
        Moment::Waiting
    } else {
        Moment::ChangeAcceptedJournalEmpty
    }
}

fn send(child: &mut Child, signal: Signal) {
    match signal {
        Signal::Kill => child.kill().unwrap(),
        Signal::Interrupt => {
            let sent = std::process::Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status()
                .unwrap();
            assert!(sent.success());
        }
    }
}

/// Waits for the child, at most 30 s: an interrupted run must stop by itself.
fn wait_bounded(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the run did not stop within 30 s of the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// What an interrupted run may end with: done (0), stopped with the journal kept (1), or the
/// default action of SIGINT when it came before the handler was installed.
#[cfg(unix)]
fn assert_interrupt_status(status: ExitStatus, output: &str) {
    use std::os::unix::process::ExitStatusExt as _;
    assert!(
        matches!(status.code(), Some(0 | 1)) || status.signal() == Some(2),
        "{status:?}\n{output}"
    );
}

/// Re-runs `command` until it succeeds, checking the journal after every run.
fn converge(env: &Env, command: Command) {
    for _ in 0..RERUNS {
        let output = env.run(&command.args());
        journal_entries(env);
        if output.status.success() {
            return;
        }
    }
    panic!("{command:?} did not converge in {RERUNS} re-runs");
}

/// Waits until the emulator holds exactly `clusters` (each with its max node count), running.
fn assert_settled(env: &Env, clusters: &[(String, u32)]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let matches = IDS.iter().all(|id| {
            let live = env.emulator().cluster(&cluster_name(id));
            let wanted = clusters.iter().find(|(want, _)| want == id);
            match (live, wanted) {
                (None, None) => true,
                (Some(live), Some((_, max_nodes))) => {
                    live["clusterStatus"]["state"] == "RUNNING"
                        && cpu_max_nodes(&live) == Some(max_nodes.to_string())
                }
                _ => false,
            }
        });
        if matches {
            return;
        }
        assert!(Instant::now() < deadline, "never settled on {clusters:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn cpu_max_nodes(cluster: &serde_json::Value) -> Option<String> {
    let pools = cluster["nodePools"].as_array()?;
    let cpu = pools.iter().find(|pool| pool["id"] == "cpu")?;
    // int64 fields travel as JSON strings.
    cpu["scalingSpec"]["maxNodeCount"]
        .as_str()
        .map(str::to_owned)
}

/// Per cluster: successful creates, creates refused as `ALREADY_EXISTS`, accepted PATCHes and
/// accepted DELETEs. One trial makes at most one change of each kind per cluster, even when
/// the journal was lost.
fn assert_nothing_twice(run: &[RecordedRequest]) {
    let mut counts: BTreeMap<(String, &str, u16), usize> = BTreeMap::new();
    for request in mutations(run) {
        let id = if request.method == "POST" {
            created_id(request)
        } else {
            target_id(request)
        };
        *counts
            .entry((
                id.unwrap_or_default(),
                request.method.as_str(),
                request.status,
            ))
            .or_default() += 1;
    }
    for ((id, method, status), count) in &counts {
        assert!(
            *status != 409 || *method != "POST",
            "{id}: a second create met ALREADY_EXISTS"
        );
        assert!(
            *status != 200 || *count == 1,
            "{id}: {count} accepted {method} requests"
        );
    }
}

fn random_fleet(rng: &mut SeededRng) -> Vec<(String, u32)> {
    let mut fleet = Vec::new();
    for id in IDS {
        let max_nodes = rng.between(2, 6) as u32;
        if rng.between(0, 10) < 6 {
            fleet.push((id.to_owned(), max_nodes));
        }
    }
    fleet
}

/// What one trial did.
#[derive(Clone, Copy)]
struct Trial {
    moment: Moment,
    lost_journal: bool,
}

/// One trial: starts `command` on the current configuration, sends `signal` after `delay_ms`,
/// optionally loses the journal, re-runs until done, and checks what the API received.
fn trial(env: &Env, command: Command, signal: Signal, delay_ms: u64, lose_journal: bool) -> Trial {
    let seen = env.emulator().requests().len();
    let mut child = env.spawn(&command.args(), &[]);
    std::thread::sleep(Duration::from_millis(delay_ms));
    let exited_already = child.try_wait().unwrap().is_some();
    let moment = moment(env, &env.emulator().requests()[seen..], exited_already);
    if !exited_already {
        send(&mut child, signal);
    }
    let status = wait_bounded(&mut child);
    let output = child.wait_with_output().unwrap();
    if let Signal::Interrupt = signal {
        assert_interrupt_status(status, &format!("{}{}", stdout(&output), stderr(&output)));
    }
    journal_entries(env);
    if lose_journal {
        let _ = std::fs::remove_file(env.journal_path());
    }
    converge(env, command);
    let requests = env.emulator().requests();
    assert_nothing_twice(&requests[seen..]);
    Trial {
        moment,
        lost_journal: lose_journal,
    }
}

/// How often each moment was hit, and how often the journal was lost.
#[derive(Debug, Default)]
struct Tally {
    moments: BTreeMap<Moment, usize>,
    lost_journals: usize,
}

impl Tally {
    fn add(&mut self, trial: Trial) {
        *self.moments.entry(trial.moment).or_default() += 1;
        self.lost_journals += usize::from(trial.lost_journal);
    }

    /// The seeded moments must have caught runs in the middle of their operations, or the
    /// trials would prove nothing about crashes while waiting.
    fn assert_some_while_waiting(&self) {
        assert!(self.moments.contains_key(&Moment::Waiting), "{self:?}");
    }
}

fn crash_applies(seed: u64, signal: Signal, trials: usize) -> Tally {
    let env = Env::new(OPERATION_MS);
    let mut rng = SeededRng::new(seed);
    let mut tally = Tally::default();
    for _ in 0..trials {
        let fleet = random_fleet(&mut rng);
        env.write_config(&fleet_config(&fleet));
        let delay = rng.between(APPLY_WINDOW_MS.0, APPLY_WINDOW_MS.1);
        let lose_journal = matches!(signal, Signal::Kill) && rng.between(0, 3) == 0;
        tally.add(trial(&env, Command::Apply, signal, delay, lose_journal));
        let plan = env.run(&["plan", "--detailed-exitcode"]);
        assert_eq!(
            plan.status.code(),
            Some(0),
            "{}{}",
            stdout(&plan),
            stderr(&plan)
        );
        assert_settled(&env, &fleet);
    }
    tally
}

fn crash_destroys(seed: u64, signal: Signal, trials: usize) -> Tally {
    let env = Env::new(OPERATION_MS);
    let mut rng = SeededRng::new(seed);
    let mut tally = Tally::default();
    for _ in 0..trials {
        let fleet: Vec<(String, u32)> = IDS[..3].iter().map(|id| ((*id).to_owned(), 3)).collect();
        env.write_config(&fleet_config(&fleet));
        converge(&env, Command::Apply);
        let delay = rng.between(DESTROY_WINDOW_MS.0, DESTROY_WINDOW_MS.1);
        let lose_journal = matches!(signal, Signal::Kill) && rng.between(0, 3) == 0;
        tally.add(trial(&env, Command::Destroy, signal, delay, lose_journal));
        assert_settled(&env, &[]);
    }
    tally
}

#[test]
#[cfg(unix)]
fn killed_applies_converge_without_repeating_a_change() {
    let tally = crash_applies(1201, Signal::Kill, 16);
    tally.assert_some_while_waiting();
    assert!(tally.lost_journals > 0, "{tally:?}");
}

#[test]
#[cfg(unix)]
fn killed_destroys_converge_without_a_second_delete() {
    let tally = crash_destroys(1202, Signal::Kill, 12);
    tally.assert_some_while_waiting();
    assert!(tally.lost_journals > 0, "{tally:?}");
}

#[test]
#[cfg(unix)]
fn interrupted_applies_and_destroys_converge() {
    let applies = crash_applies(1203, Signal::Interrupt, 5);
    let destroys = crash_destroys(1204, Signal::Interrupt, 4);
    applies.assert_some_while_waiting();
    destroys.assert_some_while_waiting();
}
