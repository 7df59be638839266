//! Test harness: the test kit's emulator on a loopback port, a configuration directory in a
//! tempdir, and a way to run the binary against both.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Output};
use std::time::Duration;

use assert_cmd::Command;
use clusterform_emulator::{Emulator, EmulatorOptions, RecordedRequest};
use clusterform_model::preflight::PreflightApi;
use clusterform_testkit::TestEmulator;
use clusterform_testkit::hcl::SEED_BODY_HCL;
pub use clusterform_testkit::{PROJECT, REGION, STACK, TOKEN, cluster_name};
use tempfile::TempDir;

pub mod gpu_fleet;

/// An emulator and a configuration directory.
pub struct Env {
    pub server: TestEmulator,
    pub dir: TempDir,
    /// Runs the emulator's server task for as long as the test holds the `Env`.
    _runtime: tokio::runtime::Runtime,
}

impl Env {
    /// An emulator whose operations take `operation_ms`, and an empty configuration directory.
    /// The emulator answers with project numbers where requests name project IDs, as Google
    /// does, so every flow is tested against names that differ from the configuration's.
    pub fn new(operation_ms: u64) -> Self {
        Self::with_options(EmulatorOptions {
            operation_duration: Duration::from_millis(operation_ms),
            required_token: Some(TOKEN.to_owned()),
            project_numbers: true,
            ..EmulatorOptions::default()
        })
    }

    /// An emulator with these options.
    pub fn with_options(options: EmulatorOptions) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(TestEmulator::start(options));
        Self {
            server,
            dir: tempfile::tempdir().unwrap(),
            _runtime: runtime,
        }
    }

    /// The emulator.
    pub fn emulator(&self) -> &Emulator {
        self.server.emulator()
    }

    /// The configuration directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `main.hcl` (replacing any earlier content).
    pub fn write_config(&self, hcl: &str) {
        std::fs::write(self.path().join("main.hcl"), hcl).unwrap();
    }

    /// Preflight's endpoints on the test's emulator, as `CLUSTERFORM_<API>_ENDPOINT` variables:
    /// a plan never reaches Google's.
    pub fn preflight_env(&self) -> Vec<(String, String)> {
        preflight_env_at(&self.server.base_url())
    }

    /// The binary, run in the configuration directory against the emulator.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_clusterform"));
        cmd.args(args)
            .current_dir(self.path())
            .envs(self.preflight_env())
            .env("CLUSTERFORM_ENDPOINT", self.server.base_url())
            .env("CLUSTERFORM_ACCESS_TOKEN", TOKEN)
            .env("NO_COLOR", "1")
            .env_remove("GOOGLE_OAUTH_ACCESS_TOKEN")
            .env_remove("RUST_LOG")
            .timeout(Duration::from_secs(60));
        cmd
    }

    /// The binary started in the background against the emulator, as `cmd` would run it
    /// (with `extra_env` on top), its output captured: for tests that interrupt or kill it.
    pub fn spawn(&self, args: &[&str], extra_env: &[(&str, &str)]) -> std::process::Child {
        std::process::Command::new(env!("CARGO_BIN_EXE_clusterform"))
            .args(args)
            .current_dir(self.path())
            .envs(self.preflight_env())
            .env("CLUSTERFORM_ENDPOINT", self.server.base_url())
            .env("CLUSTERFORM_ACCESS_TOKEN", TOKEN)
            .env("NO_COLOR", "1")
            .env_remove("GOOGLE_OAUTH_ACCESS_TOKEN")
            .env_remove("RUST_LOG")
            .envs(extra_env.iter().copied())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// The journal of operations in flight.
    pub fn journal_path(&self) -> PathBuf {
        self.path().join(".clusterform/journal.json")
    }

    /// Writes a journal whose one entry (an update of train01) names an operation no request
    /// may be sent to: every run warns about it and leaves it alone.
    pub fn write_unusable_journal_entry(&self) {
        let entry = serde_json::json!({
            "address": {"project": PROJECT, "region": REGION, "id": "train01"},
            "action": "update",
            "request": "update",
            "operation": "../../elsewhere",
            "started_at": "2026-11-30T00:00:00Z",
            "timeout_seconds": 60
        });
        let document = serde_json::json!({"version": 1, "entries": [entry]});
        std::fs::write(self.journal_path(), document.to_string()).unwrap();
    }

    /// Runs the binary and returns its output, whatever the exit status.
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// Every mutating request the emulator received (POST create, PATCH, DELETE).
    pub fn mutations(&self) -> Vec<RecordedRequest> {
        self.emulator()
            .requests()
            .into_iter()
            .filter(|r| {
                matches!(r.method.as_str(), "PATCH" | "DELETE")
                    || (r.method == "POST" && r.path.ends_with("/modelDevelopmentClusters"))
            })
            .collect()
    }
}

/// stdout as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Asserts that a run succeeded, showing both streams when it did not.
#[track_caller]
pub fn assert_succeeded(output: &Output) {
    assert!(
        output.status.success(),
        "{}{}",
        stdout(output),
        stderr(output)
    );
}

/// A CPU cluster: the testkit's canonical cluster ([`SEED_BODY_HCL`]), with knobs for what
/// tests change.
#[derive(Clone)]
pub struct ClusterSpec {
    pub id: &'static str,
    pub display_name: &'static str,
    pub max_nodes: u32,
    pub labels: &'static str,
    pub extra_partition: bool,
    pub extra_cluster_settings: &'static str,
}

impl Default for ClusterSpec {
    fn default() -> Self {
        Self {
            id: "train01",
            display_name: "Research training",
            max_nodes: 4,
            labels: r#"{ team = "ml" }"#,
            extra_partition: false,
            extra_cluster_settings: "",
        }
    }
}

impl ClusterSpec {
    /// The default cluster under another ID.
    pub fn named(id: &'static str) -> Self {
        Self {
            id,
            ..Self::default()
        }
    }

    /// The default cluster with `lifecycle { prevent_destroy = true }`.
    pub fn protected() -> Self {
        Self {
            extra_cluster_settings: "  lifecycle {\n    prevent_destroy = true\n  }\n",
            ..Self::default()
        }
    }
}

/// The default cluster, `train01`, and a second one like it, `train02`.
pub fn two_clusters() -> [ClusterSpec; 2] {
    [ClusterSpec::default(), ClusterSpec::named("train02")]
}

/// The provider block of every test configuration: the testkit's project, region and stack.
pub use clusterform_testkit::hcl::PROVIDER_HCL as PROVIDER;

/// `text` with its one `from` replaced by `to`.
fn edited(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from:?} in:\n{text}");
    text.replacen(from, to, 1)
}

/// One `cluster` block.
pub fn cluster_hcl(spec: &ClusterSpec) -> String {
    let mut body = edited(
        SEED_BODY_HCL,
        "display_name = \"Research training\"",
        &format!("display_name = \"{}\"", spec.display_name),
    );
    body = edited(
        &body,
        "labels       = { team = \"ml\" }",
        &format!("labels       = {}", spec.labels),
    );
    body = edited(
        &body,
        "max_node_count = 4",
        &format!("max_node_count = {}", spec.max_nodes),
    );
    if spec.extra_partition {
        body = edited(
            &body,
            "      prolog_bash_scripts",
            "      partition \"all\" {\n        node_pool_ids = [\"cpu\", \"login\"]\n      }\n      prolog_bash_scripts",
        );
    }
    format!(
        "\ncluster \"{}\" {{{body}{}}}\n",
        spec.id, spec.extra_cluster_settings
    )
}

/// A whole configuration: the provider and these clusters.
pub fn config(clusters: &[ClusterSpec]) -> String {
    let mut hcl = PROVIDER.to_owned();
    for spec in clusters {
        hcl.push_str(&cluster_hcl(spec));
    }
    hcl
}

/// Applies a configuration and asserts success.
pub fn apply_ok(env: &Env, clusters: &[ClusterSpec]) -> Output {
    env.write_config(&config(clusters));
    let output = env.run(&["apply", "--auto-approve"]);
    assert!(
        output.status.success(),
        "apply failed:\n{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    output
}

/// The repository's `examples/` directory.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// A configuration of many clusters from one `for_each` block: each `(id, max_nodes)` pair is
/// a CPU cluster like [`cluster_hcl`]'s. With no pairs, only the provider remains, so an
/// apply deletes every cluster of the stack.
pub fn fleet_config(clusters: &[(String, u32)]) -> String {
    if clusters.is_empty() {
        return PROVIDER.to_owned();
    }
    let entries: Vec<String> = clusters
        .iter()
        .map(|(id, max_nodes)| format!("    {id} = {max_nodes}"))
        .collect();
    let block = cluster_hcl(&ClusterSpec {
        id: "fleet",
        labels: "{ team = each.key }",
        ..ClusterSpec::default()
    })
    .replacen(
        "cluster \"fleet\" {",
        &format!(
            "cluster \"fleet\" {{\n  for_each = {{\n{}\n  }}\n",
            entries.join("\n")
        ),
        1,
    )
    .replacen("max_node_count = 4", "max_node_count = each.value", 1);
    format!("{PROVIDER}{block}")
}

/// The cluster ID a create request names (its `modelDevelopmentClusterId` parameter).
pub fn created_id(request: &RecordedRequest) -> Option<String> {
    request
        .query
        .split('&')
        .find_map(|pair| pair.strip_prefix("modelDevelopmentClusterId="))
        .map(str::to_owned)
}

/// The cluster ID a PATCH or DELETE names: the last segment of its path.
pub fn target_id(request: &RecordedRequest) -> Option<String> {
    request.path.rsplit('/').next().map(str::to_owned)
}

/// A small seeded generator (SplitMix64), so that trials are chosen the same way every run.
pub struct SeededRng(u64);

impl SeededRng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `low..high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next_u64() % (high - low)
    }
}

/// A cluster made without clusterform (no ownership label): a login pool, a CPU pool and its
/// partition, as the service returns them (int64 counts as strings).
pub fn hand_made_cluster() -> serde_json::Value {
    serde_json::json!({
        "displayName": "Made by hand",
        "network": {"network": format!("projects/{PROJECT}/global/networks/default")},
        "nodePools": [
            {"id": "login", "machineSpec": {"machineType": "n2-standard-8"},
             "scalingSpec": {"minNodeCount": "1", "maxNodeCount": "1"}, "zone": "us-central1-a"},
            {"id": "cpu", "machineSpec": {"machineType": "n2-standard-8"},
             "scalingSpec": {"maxNodeCount": "4"}, "zone": "us-central1-a"}
        ],
        "orchestratorSpec": {"slurmSpec": {
            "homeDirectoryStorage": format!("projects/{PROJECT}/locations/us-central1-a/instances/home"),
            "loginNodePoolId": "login",
            "partitions": [{"id": "cpu", "nodePoolIds": ["cpu"]}]}}
    })
}

/// Adds the subnetwork `other` beside `default` in the testkit's project and region (both on
/// the `default` network, with Private Google Access), for a test that moves a cluster there.
pub fn add_other_subnetwork(env: &Env) {
    let subnetwork = |name: &str| clusterform_emulator::SeededSubnetwork {
        name: format!("projects/my-proj/regions/us-central1/subnetworks/{name}"),
        network: "projects/my-proj/global/networks/default".to_owned(),
        private_ip_google_access: true,
    };
    env.emulator()
        .set_preflight_world(clusterform_emulator::PreflightWorld {
            subnetworks: Some(vec![subnetwork("default"), subnetwork("other")]),
            ..clusterform_emulator::PreflightWorld::default()
        });
}

/// The `CLUSTERFORM_<API>_ENDPOINT` variables that send preflight's reads to an emulator at
/// `base`, under the path prefixes it serves them at. Cloud Storage's variable is the lock's
/// too, so a test that reads a bucket sets it itself.
pub fn preflight_env_at(base: &str) -> Vec<(String, String)> {
    let storage = PreflightApi::Storage.environment_variable();
    let mut variables = clusterform_executor::emulator_preflight_variables(base);
    variables.retain(|(name, _)| *name != storage);
    variables
}

/// `clusterform ARGS DIR` on a pseudo-terminal, without colour, against the test's emulator.
#[cfg(unix)]
pub fn on_terminal(env: &Env, args: &str) -> rexpect::session::PtySession {
    let preflight: Vec<String> = env
        .preflight_env()
        .into_iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    let command = format!(
        "env NO_COLOR=1 {} CLUSTERFORM_ENDPOINT={} CLUSTERFORM_ACCESS_TOKEN={TOKEN} {} {args} {}",
        preflight.join(" "),
        env.server.base_url(),
        env!("CARGO_BIN_EXE_clusterform"),
        env.path().display()
    );
    rexpect::spawn(&command, Some(60_000)).unwrap()
}

/// Everything `session` printed until it ended.
#[cfg(unix)]
pub fn terminal_output(session: &mut rexpect::session::PtySession) -> String {
    // rexpect hands back each byte as a char.
    let bytes: Vec<u8> = session
        .exp_eof()
        .unwrap()
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The width of rexpect's pty, which reports no size: console (under indicatif) then assumes
/// 80 columns, and pads each progress line to them instead of ending it with a newline.
pub const TERMINAL_COLUMNS: usize = 80;

/// The lines a terminal shows after `output`: text wrapping at [`TERMINAL_COLUMNS`], `\r`,
/// `\n`, and the escape sequences indicatif draws with (cursor up and down, clear line);
/// colours and the like are ignored.
pub fn final_screen(output: &str) -> Vec<String> {
    let mut lines: Vec<Vec<char>> = vec![Vec::new()];
    let (mut row, mut column) = (0usize, 0usize);
    let mut chars = output.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => column = 0,
            '\n' => row += 1,
            '\u{1b}' if chars.peek() == Some(&'[') => {
                chars.next();
                let mut parameters = String::new();
                let mut command = ' ';
                for next in chars.by_ref() {
                    if next.is_ascii_alphabetic() {
                        command = next;
                        break;
                    }
                    parameters.push(next);
                }
                let n = parameters.parse::<usize>().unwrap_or(1);
                match command {
                    'A' => row = row.saturating_sub(n),
                    'B' => row += n,
                    'K' => {
                        lines.resize(lines.len().max(row + 1), Vec::new());
                        lines[row].clear();
                    }
                    _ => {}
                }
            }
            '\u{1b}' => {
                chars.next();
            }
            c if c.is_control() => {}
            c => {
                if column == TERMINAL_COLUMNS {
                    row += 1;
                    column = 0;
                }
                lines.resize(lines.len().max(row + 1), Vec::new());
                let line = &mut lines[row];
                line.resize(line.len().max(column + 1), ' ');
                line[column] = c;
                column += 1;
            }
        }
    }
    lines
        .into_iter()
        .map(|line| line.into_iter().collect::<String>().trim_end().to_owned())
        .collect()
}

/// A run of the binary as one block of text, for inline snapshots: stdout, then stderr under
/// `[stderr]`, then `[exit status: N]` when the run failed. What differs from run to run is
/// replaced: the configuration directory by `[DIR]`, the repository's `examples/` by
/// `[EXAMPLES]`, the emulator's URL by `[ENDPOINT]`, and each of [`PLACEHOLDERS`] (clock
/// times, elapsed seconds, RFC 3339 times, UUIDs, SHA-256 digests, process IDs); progress lines, which parallel actions print in any order, are grouped by cluster, each
/// cluster's lines in the order they were printed.
#[derive(Debug)]
pub struct Transcript {
    stdout: String,
    stderr: String,
    status: ExitStatus,
}

impl std::fmt::Display for Transcript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.stdout)?;
        if !self.stderr.is_empty() {
            if !self.stdout.is_empty() && !self.stdout.ends_with('\n') {
                writeln!(f)?;
            }
            writeln!(f, "[stderr]")?;
            write!(f, "{}", self.stderr)?;
        }
        if !self.status.success() {
            if !ends_a_line(&self.stdout, &self.stderr) {
                writeln!(f)?;
            }
            match self.status.code() {
                Some(code) => writeln!(f, "[exit status: {code}]")?,
                None => writeln!(f, "[exit status: {}]", self.status)?,
            }
        }
        Ok(())
    }
}

/// Whether the text printed so far (stdout, then stderr) is empty or ends a line.
fn ends_a_line(stdout: &str, stderr: &str) -> bool {
    let last = if stderr.is_empty() { stdout } else { stderr };
    last.is_empty() || last.ends_with('\n')
}

impl Env {
    /// Runs the binary and returns its transcript, whatever the exit status.
    pub fn transcript(&self, args: &[&str]) -> Transcript {
        self.transcript_of(&self.run(args))
    }

    /// The transcript of a run of the binary against this environment.
    pub fn transcript_of(&self, output: &Output) -> Transcript {
        Transcript::of(output, |text| self.normalize(text))
    }

    fn normalize(&self, text: &str) -> String {
        let mut text = text.to_owned();
        let dir = self.path();
        if let Ok(canonical) = dir.canonicalize() {
            text = text.replace(&canonical.display().to_string(), "[DIR]");
        }
        text = text.replace(&dir.display().to_string(), "[DIR]");
        let examples = examples_dir();
        if let Ok(canonical) = examples.canonicalize() {
            text = text.replace(&canonical.display().to_string(), "[EXAMPLES]");
        }
        text = text.replace(&examples.display().to_string(), "[EXAMPLES]");
        text.replace(&self.server.base_url(), "[ENDPOINT]")
    }
}

impl Transcript {
    /// The transcript of a run, `normalize` replacing what the test knows varies (its
    /// directories, its emulator's URL) before what varies in every run is replaced: for runs
    /// outside an [`Env`]; [`Env::transcript_of`] passes its own.
    pub fn of(output: &Output, normalize: impl Fn(&str) -> String) -> Self {
        Self {
            stdout: replace_what_varies(&normalize(&stdout(output))),
            stderr: group_progress_by_cluster(&replace_what_varies(&normalize(&stderr(output)))),
            status: output.status,
        }
    }

    /// The transcript with `normalize` applied to both streams: for what only the test knows
    /// varies (a lock holder's `user@host`, the seconds of an age).
    pub fn normalized_with(self, normalize: impl Fn(&str) -> String) -> Self {
        Self {
            stdout: normalize(&self.stdout),
            stderr: normalize(&self.stderr),
            status: self.status,
        }
    }
}

/// `text` with the whole seconds of each `FAILED after 12s` hidden: how long a failure takes
/// (a refusal at once, a retried error after its retries) depends on the machine.
pub fn failure_seconds_hidden(text: &str) -> String {
    const FAILED: &str = "FAILED after ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(FAILED) {
        out.push_str(&rest[..at + FAILED.len()]);
        rest = &rest[at + FAILED.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with("s:") {
            out.push_str("[N]");
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// `text` with the attributes of each cluster a plan destroys elided (`- cluster "ID" { … }`):
/// for tests about which clusters go, where `destroy` tests the whole block once.
pub fn destroyed_attributes_elided(text: &str) -> String {
    attributes_elided(text, "  - cluster \"")
}

/// `text` with the attributes of each cluster a plan creates elided (`+ cluster "ID" { … }`):
/// for tests about something else than what a create sends, where `apply` tests the whole
/// block once.
pub fn created_attributes_elided(text: &str) -> String {
    attributes_elided(text, "  + cluster \"")
}

/// `text` with the lines of each block that opens with a line starting with `opening` elided.
fn attributes_elided(text: &str, opening: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_block = false;
    for line in text.split_inclusive('\n') {
        if in_block {
            in_block = line != "    }\n";
        } else if line.starts_with(opening) && line.ends_with("{\n") {
            out.push_str(line.trim_end_matches('\n'));
            out.push_str(" … }\n");
            in_block = true;
        } else {
            out.push_str(line);
        }
    }
    out
}

/// `text` with the seconds of each age past a minute (`1h30m30s ago`, `5h30s ago`) replaced by `[S]`: the
/// run reads the clock a second or two after the test set the times.
pub fn seconds_of_ages_hidden(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("s ago") {
        let before = &rest[..at];
        let number = before.trim_end_matches(|c: char| c.is_ascii_digit());
        if number.len() < before.len() && (number.ends_with('m') || number.ends_with('h')) {
            out.push_str(number);
            out.push_str("[S]");
        } else {
            out.push_str(before);
        }
        out.push_str("s ago");
        rest = &rest[at + "s ago".len()..];
    }
    out.push_str(rest);
    out
}

/// `idle for 5h30s` → `idle for 5h[S]s`, `idle for 12s` → `idle for [N]s`, `(1s ago)` →
/// `([N]s ago)`: the seconds a run takes.
pub fn idle_seconds_hidden(text: &str) -> String {
    let young = young_ages_hidden(text);
    let text = young.as_str();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("idle for ") {
        let start = at + "idle for ".len();
        out.push_str(&rest[..start]);
        let token_end = rest[start..]
            .find([' ', ','])
            .map_or(rest.len(), |end| start + end);
        let token = &rest[start..token_end];
        let units = token
            .trim_end_matches('s')
            .trim_end_matches(|c: char| c.is_ascii_digit());
        match token.strip_suffix('s') {
            Some(_) if units.is_empty() => out.push_str("[N]s"),
            Some(_) if units.len() + 1 < token.len() => {
                out.push_str(units);
                out.push_str("[S]s");
            }
            _ => out.push_str(token),
        }
        rest = &rest[token_end..];
    }
    out.push_str(rest);
    out
}

/// `(12s ago)` → `([N]s ago)`.
fn young_ages_hidden(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('(') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && rest[digits..].starts_with("s ago)") {
            out.push_str("[N]");
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// The length of a match at the start of a text, if the text starts with one.
type MatchLength = fn(&str) -> Option<usize>;

/// What varies from run to run, each placeholder with its matches.
const PLACEHOLDERS: &[(&str, MatchLength)] = &[
    ("[HH:MM:SS]", clock_time),
    ("[Ns]", whole_seconds),
    ("[TIME]", rfc3339_time),
    ("[UUID]", uuid),
    ("[DIGEST]", sha256),
    ("(pid [PID])", pid),
    ("([K]/[N] done)", clusters_done),
];

/// `text` with each of [`PLACEHOLDERS`] in place of what it stands for.
fn replace_what_varies(text: &str) -> String {
    PLACEHOLDERS
        .iter()
        .fold(text.to_owned(), |text, (placeholder, length)| {
            replace_matches(&text, placeholder, *length)
        })
}

/// The length of the start of `text` that has `shape`: `d` a digit, `h` a lowercase hex digit,
/// any other character itself.
fn shaped(text: &str, shape: &str) -> Option<usize> {
    let fits = text.len() >= shape.len()
        && text.bytes().zip(shape.bytes()).all(|(c, s)| match s {
            b'd' => c.is_ascii_digit(),
            b'h' => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
            _ => c == s,
        });
    fits.then_some(shape.len())
}

/// The number of ASCII digits `text` starts with.
fn digits(text: &str) -> usize {
    text.bytes().take_while(u8::is_ascii_digit).count()
}

/// Whether `text` goes on with a letter or a digit (so that a match would cut a word).
fn goes_on(text: &str) -> bool {
    text.chars().next().is_some_and(char::is_alphanumeric)
}

/// `(3/10 done)`: which cluster of a fleet ends k-th depends on the machine's load.
fn clusters_done(text: &str) -> Option<usize> {
    let rest = text.strip_prefix('(')?;
    let done = digits(rest);
    let rest = rest[done..].strip_prefix('/')?;
    let total = digits(rest);
    let rest = rest[total..].strip_prefix(" done)")?;
    (done > 0 && total > 0).then(|| text.len() - rest.len())
}

/// `[12:34:56]`.
fn clock_time(text: &str) -> Option<usize> {
    shaped(text, "[dd:dd:dd]")
}

/// `[17s]`.
fn whole_seconds(text: &str) -> Option<usize> {
    let n = digits(text.strip_prefix('[')?);
    (n > 0 && text[1 + n..].starts_with("s]")).then_some(n + 3)
}

/// `2026-12-01T23:21:10Z`, with or without a fraction of a second.
fn rfc3339_time(text: &str) -> Option<usize> {
    let mut length = shaped(text, "dddd-dd-ddTdd:dd:dd")?;
    if text[length..].starts_with('.') {
        length += 1 + digits(&text[length + 1..]);
    }
    text[length..].starts_with('Z').then_some(length + 1)
}

/// `e7675f78-3e2d-4a56-acf0-c61dba35e83c`.
fn uuid(text: &str) -> Option<usize> {
    let length = shaped(text, "hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh")?;
    (!goes_on(&text[length..])).then_some(length)
}

/// 64 lowercase hex digits.
fn sha256(text: &str) -> Option<usize> {
    let length = shaped(text, &"h".repeat(64))?;
    (!goes_on(&text[length..])).then_some(length)
}

/// `(pid 10441)`.
fn pid(text: &str) -> Option<usize> {
    let n = digits(text.strip_prefix("(pid ")?);
    (n > 0 && text[5 + n..].starts_with(')')).then_some(n + 6)
}

/// `text` with each match of `length` that starts a word replaced by `placeholder`.
fn replace_matches(text: &str, placeholder: &str, length: MatchLength) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut after_word = false;
    while let Some(c) = rest.chars().next() {
        match length(rest).filter(|_| !after_word) {
            Some(n) => {
                out.push_str(placeholder);
                rest = &rest[n..];
                after_word = false;
            }
            None => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
                after_word = c.is_alphanumeric();
            }
        }
    }
    out
}

/// `text` with each run of consecutive progress lines (`[HH:MM:SS] ID: …`) stably sorted by
/// cluster: the clusters' lines interleave as their actions run in parallel, while each
/// cluster's own lines keep their order.
fn group_progress_by_cluster(text: &str) -> String {
    let cluster = |line: &str| {
        line.strip_prefix("[HH:MM:SS] ")
            .and_then(|rest| rest.split_once(": "))
            .map(|(id, _)| id.to_owned())
    };
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut start = 0;
    while start < lines.len() {
        let end = (start..lines.len())
            .find(|&i| cluster(lines[i]).is_none())
            .unwrap_or(lines.len());
        lines[start..end].sort_by_key(|line| cluster(line));
        start = end + 1;
    }
    lines.concat()
}

/// Starts `apply --auto-approve` and kills it once the journal names `cluster`: an earlier run
/// that left its operation in flight.
pub fn apply_killed_once_journaled(env: &Env, cluster: &str) {
    let mut killed = env.spawn(&["apply", "--auto-approve"], &[]);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(env.journal_path()).is_ok_and(|text| text.contains(cluster)) {
        assert!(std::time::Instant::now() < deadline, "never journaled");
        std::thread::sleep(Duration::from_millis(20));
    }
    killed.kill().unwrap();
    killed.wait().unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_varies_is_replaced_and_what_looks_like_it_is_kept() {
        let digest = "0123456789abcdef".repeat(4);
        let text = format!(
            "[12:34:56] a [17s] [x] [1.5s] [1:2:3]\n\
             2026-12-01T23:21:10Z 2026-12-01T23:21:10.53Z 2026-12-01\n\
             (pid 10441) (pid x) e7675f78-3e2d-4a56-acf0-c61dba35e83c\n\
             {digest} {digest}0 x{digest}\n"
        );
        assert_eq!(
            replace_what_varies(&text),
            format!(
                "[HH:MM:SS] a [Ns] [x] [1.5s] [1:2:3]\n\
                 [TIME] [TIME] 2026-12-01\n\
                 (pid [PID]) (pid x) [UUID]\n\
                 [DIGEST] {digest}0 x{digest}\n"
            )
        );
    }

    #[test]
    fn progress_lines_group_by_cluster_in_their_order() {
        let text = "Plan\n[HH:MM:SS] b: one\n[HH:MM:SS] a: one\n[HH:MM:SS] b: two\n\
                    [HH:MM:SS] a: two\nDone\n[HH:MM:SS] b: three\n[HH:MM:SS] a: three\n";
        assert_eq!(
            group_progress_by_cluster(text),
            "Plan\n[HH:MM:SS] a: one\n[HH:MM:SS] a: two\n[HH:MM:SS] b: one\n\
             [HH:MM:SS] b: two\nDone\n[HH:MM:SS] a: three\n[HH:MM:SS] b: three\n"
        );
    }
}
