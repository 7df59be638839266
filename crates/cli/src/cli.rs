//! The command line as typed: clap definitions of every command, flag and help text. These raw
//! flags become validated arguments in one step ([`crate::arguments`]) before any command runs;
//! Terraform's single-dash spellings are rewritten before clap sees them
//! ([`crate::arguments::terraform_spellings`]).

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use clusterform_emulator::EmulatorOptions;
use clusterform_model::{Endpoint, EndpointError, UpdateMode};

/// Plan and apply Vertex AI Model Development Clusters (Slurm training clusters) from HCL.
#[derive(Debug, Parser)]
#[command(name = "clusterform", version, about, long_about = None)]
#[command(after_help = "Example:\n  clusterform apply --auto-approve examples/quickstart")]
pub struct Cli {
    /// Options every command accepts.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// Configuration directory, given before the command as Terraform's -chdir=DIR is
    #[arg(long, value_name = "DIR")]
    pub chdir: Option<PathBuf>,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Where the global options start in `--help`: after every command's own.
const GLOBAL_ORDER: usize = 1000;

/// Options every command accepts: how clusterform speaks, never what it works on. They are
/// listed after each command's own options.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Never colour the output (also: NO_COLOR)
    #[arg(long, global = true, display_order = GLOBAL_ORDER)]
    pub no_color: bool,
    /// Log what clusterform does on stderr (-vv for more)
    #[arg(short, long, global = true, action = clap::ArgAction::Count, display_order = GLOBAL_ORDER + 1)]
    pub verbose: u8,
    /// Print only errors and what was asked for
    #[arg(short, long, global = true, display_order = GLOBAL_ORDER + 2)]
    pub quiet: bool,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check the configuration offline and report every problem
    #[command(after_help = "Example:\n  clusterform validate examples/gpu-a4")]
    Validate(ValidateArgs),
    /// Rewrite configuration files in the canonical format
    #[command(after_help = "Example:\n  clusterform fmt --check --diff .")]
    Fmt(FmtArgs),
    /// Show what apply would change, field by field, with masks and impacts
    #[command(after_help = "Example:\n  clusterform plan --out plan.json examples/quickstart")]
    Plan(PlanArgs),
    /// Make the changes of a plan, following every operation to the end
    #[command(
        after_help = "Example:\n  clusterform apply examples/quickstart\n  clusterform apply plan.json"
    )]
    Apply(ApplyArgs),
    /// Delete the declared clusters, or only those idle for a while
    #[command(after_help = "Example:\n  clusterform destroy --idle-for 2h examples/quickstart")]
    Destroy(DestroyArgs),
    /// Show each cluster's health: state, nodes, events, Slurm's jobs and nodes
    #[command(
        after_help = "Example:\n  clusterform status --detailed-exitcode examples/quickstart"
    )]
    Status(StatusArgs),
    /// Print a saved plan
    #[command(after_help = "Example:\n  clusterform show plan.json")]
    Show(ShowArgs),
    /// List the live clusters in every region of the configuration's projects
    #[command(
        after_help = "Example:\n  clusterform list --project my-project --region us-central1"
    )]
    List(ListArgs),
    /// Take over an existing cluster: add the stack label and print its HCL
    #[command(after_help = "Example:\n  clusterform import train01 --out train01.hcl")]
    Import(ImportArgs),
    /// Remove a stack lock on Cloud Storage left by a run that died
    #[command(
        name = "force-unlock",
        after_help = "Example:\n  clusterform force-unlock 0b7e4f6c-2a7d-4c1e-9d43-5b8f0e6a1c2d ."
    )]
    ForceUnlock(ForceUnlockArgs),
    /// Serve the local API emulator
    #[command(
        after_help = "Example:\n  clusterform emulator --listen 127.0.0.1:8089 --state emulator.json"
    )]
    Emulator(EmulatorArgs),
    /// Print shell completions
    #[command(
        after_help = "Example:\n  clusterform completions bash > /etc/bash_completion.d/clusterform"
    )]
    Completions(CompletionsArgs),
    /// Print clusterform's version and the plan file format it writes
    #[command(after_help = "Example:\n  clusterform version --json")]
    Version(VersionArgs),
}

/// Where the configuration is: the positional `DIR` or `--chdir DIR`, not both.
#[derive(Debug, Args)]
pub struct DirArg {
    /// Configuration directory (default: current directory)
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    #[command(flatten)]
    pub chdir: ChdirArg,
}

/// `--chdir DIR`, for commands whose positional argument is something else as well.
#[derive(Debug, Args)]
pub struct ChdirArg {
    /// Configuration directory (instead of the positional DIR)
    #[arg(long, value_name = "DIR")]
    pub chdir: Option<PathBuf>,
}

/// Where the API is, for the commands that call it.
#[derive(Debug, Args)]
pub struct EndpointArg {
    /// API base URL, or "local" for the built-in emulator
    #[arg(
        long,
        env = "CLUSTERFORM_ENDPOINT",
        hide_env_values = true,
        value_name = "URL",
        value_parser = EndpointParser
    )]
    pub endpoint: Option<Endpoint>,
}

/// How long a command that changes clusters waits for another run's lock.
#[derive(Debug, Args)]
pub struct LockArgs {
    /// Wait this long for a lock another run holds, e.g. 5m (0s: fail at once)
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = parse_duration)]
    pub lock_timeout: std::time::Duration,
}

/// Prices the user gives, for the costs shown beside GPU counts.
#[derive(Debug, Args)]
pub struct PricesArg {
    /// Hourly prices per machine and accelerator type (HCL, or JSON when named *.json), as the provider's pricing block holds them; wins over that block
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
}

/// Variable values.
#[derive(Debug, Args)]
pub struct VarArgs {
    /// Set a variable: --var name=value
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Read variables from a variables file (NAME.cfvars; clusterform.cfvars and *.auto.cfvars load by themselves)
    #[arg(long = "var-file", value_name = "FILE")]
    pub var_files: Vec<PathBuf>,
}

/// `validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub dir: DirArg,
    #[command(flatten)]
    pub vars: VarArgs,
    /// Print the diagnostics as JSON
    #[arg(long)]
    pub json: bool,
}

/// `fmt`.
#[derive(Debug, Args)]
pub struct FmtArgs {
    /// Files or directories (default: the configuration directory); `-` alone reads
    /// standard input and writes the formatted text on standard output
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// Also format the directories inside the directories named, at any depth (hidden ones,
    /// such as `.git`, are skipped)
    #[arg(long)]
    pub recursive: bool,
    #[command(flatten)]
    pub chdir: ChdirArg,
    /// Change nothing; exit 1 when a file is not formatted
    #[arg(long)]
    pub check: bool,
    /// Show the changes as a diff
    #[arg(long)]
    pub diff: bool,
}

/// What to plan.
#[derive(Debug, Args)]
pub struct PlanningArgs {
    #[command(flatten)]
    pub vars: VarArgs,
    /// Plan only this cluster (repeatable)
    #[arg(long = "target", value_name = "ID")]
    pub targets: Vec<String>,
    /// Replace this cluster even if nothing forces it (repeatable)
    #[arg(long = "replace", value_name = "ID")]
    pub replace: Vec<String>,
    /// Update mode of every PATCH
    #[arg(long, value_parser = update_mode_parser())]
    pub update_mode: Option<UpdateMode>,
    /// Go ahead although preflight finds what would make a create fail (its errors become
    /// warnings)
    #[arg(long)]
    pub skip_preflight: bool,
}

/// `--endpoint`: the model's [`Endpoint`], read once here. A value that is not UTF-8, or not
/// an endpoint, is refused with a message naming where it may have come from and never
/// showing it (a URL may carry a password).
#[derive(Debug, Clone, Copy)]
struct EndpointParser;

/// Where an endpoint that is refused may have come from.
const ENDPOINT_SOURCES: &str = "the endpoint (--endpoint or the CLUSTERFORM_ENDPOINT variable)";

impl TypedValueParser for EndpointParser {
    type Value = Endpoint;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Endpoint, clap::Error> {
        let refused = |kind, why: &str| {
            clap::Error::raw(kind, format!("{ENDPOINT_SOURCES} {why}\n")).with_cmd(cmd)
        };
        let text = value
            .to_str()
            .ok_or_else(|| refused(clap::error::ErrorKind::InvalidUtf8, "is not valid UTF-8"))?;
        text.parse().map_err(|problem| {
            let why = match problem {
                EndpointError::Neither(_) => {
                    "is neither \"local\" nor an http(s) URL; use \"local\" for the built-in \
                     emulator, or a base URL"
                        .to_owned()
                }
                EndpointError::Malformed { reason, .. } => {
                    format!("is not a valid URL: {reason}")
                }
            };
            refused(clap::error::ErrorKind::InvalidValue, &why)
        })
    }
}

/// `--update-mode`: the API's three values, read into the model's [`UpdateMode`] (its own
/// `UPDATE_MODE_UNSPECIFIED` too, which a user copying the API's reference types).
fn update_mode_parser() -> impl TypedValueParser<Value = UpdateMode> {
    PossibleValuesParser::new([
        PossibleValue::new(UpdateMode::UserOnly.as_str()).help("Apply only the fields you set"),
        PossibleValue::new(UpdateMode::UserAndService.as_str())
            .help("Apply your fields and let the service refresh its managed fields"),
        PossibleValue::new(UpdateMode::Unspecified.as_str())
            .help("Send the API's unspecified mode: the service picks"),
    ])
    .try_map(|text| text.parse::<UpdateMode>())
}

/// `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub dir: DirArg,
    #[command(flatten)]
    pub endpoint: EndpointArg,
    #[command(flatten)]
    pub prices: PricesArg,
    #[command(flatten)]
    pub planning: PlanningArgs,
    /// Save the plan to this file for `apply FILE`
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print the plan as JSON
    #[arg(long)]
    pub json: bool,
    /// Print one line per changing cluster (action, changes, impact, running jobs stopped,
    /// GPUs), then the totals, instead of the whole plan
    #[arg(long, conflicts_with_all = ["json", "refresh_only"])]
    pub summary: bool,
    /// Exit 2 when the plan has changes, 0 when it has none (with --refresh-only: when
    /// something changed outside clusterform)
    #[arg(long)]
    pub detailed_exitcode: bool,
    /// Show only what changed outside clusterform since its last apply, field by field, and
    /// propose nothing
    #[arg(long)]
    pub refresh_only: bool,
    /// Plan the deletion of the declared clusters, as destroy does
    #[arg(long)]
    pub destroy: bool,
    /// With --destroy: only clusters with no job for this long, e.g. 2h (the evidence, the GPUs
    /// and their idle hours, and what destroy would delete; with --out, an idle destroy whose
    /// apply checks idleness again)
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "destroy")]
    pub idle_for: Option<std::time::Duration>,
}

/// `apply`.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// Configuration directory or saved plan file (default: current directory)
    #[arg(value_name = "DIR|PLANFILE")]
    pub target: Option<PathBuf>,
    #[command(flatten)]
    pub chdir: ChdirArg,
    #[command(flatten)]
    pub endpoint: EndpointArg,
    #[command(flatten)]
    pub planning: PlanningArgs,
    /// Do not ask for confirmation
    #[arg(long)]
    pub auto_approve: bool,
    /// Go ahead without a person to ask even when a change stops running Slurm jobs (or jobs
    /// that cannot be read)
    #[arg(long)]
    pub allow_disruption: bool,
    #[command(flatten)]
    pub parallelism: ParallelismArgs,
    /// Print one JSON event per line instead of progress (needs --auto-approve or a plan file)
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub lock: LockArgs,
}

/// Clusters `apply` and `destroy` change at the same time when `--parallelism` is not given.
pub const DEFAULT_PARALLELISM: u16 = 10;

/// How many clusters `apply` and `destroy` change at the same time.
#[derive(Debug, Args)]
pub struct ParallelismArgs {
    /// Clusters changed at the same time
    #[arg(long, default_value_t = DEFAULT_PARALLELISM, value_parser = clap::value_parser!(u16).range(1..))]
    pub parallelism: u16,
    /// Clusters of one project and region changed at the same time (within --parallelism)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub parallelism_per_location: Option<u16>,
}

/// `destroy`.
#[derive(Debug, Args)]
pub struct DestroyArgs {
    #[command(flatten)]
    pub dir: DirArg,
    #[command(flatten)]
    pub endpoint: EndpointArg,
    #[command(flatten)]
    pub prices: PricesArg,
    #[command(flatten)]
    pub vars: VarArgs,
    /// Destroy only this cluster (repeatable)
    #[arg(long = "target", value_name = "ID")]
    pub targets: Vec<String>,
    /// Destroy only clusters with no job for this long, e.g. 2h
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub idle_for: Option<std::time::Duration>,
    /// Do not ask for confirmation
    #[arg(long)]
    pub auto_approve: bool,
    /// Go ahead without a person to ask even when a cluster has running Slurm jobs (or jobs
    /// that cannot be read)
    #[arg(long)]
    pub allow_disruption: bool,
    #[command(flatten)]
    pub parallelism: ParallelismArgs,
    /// Print one JSON event per line instead of progress (needs --auto-approve)
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub lock: LockArgs,
}

/// Recent events `status` shows per cluster when `--events` is not given.
pub const DEFAULT_STATUS_EVENTS: usize = 5;

/// `status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub dir: DirArg,
    #[command(flatten)]
    pub endpoint: EndpointArg,
    #[command(flatten)]
    pub prices: PricesArg,
    #[command(flatten)]
    pub vars: VarArgs,
    /// Show only this cluster (repeatable)
    #[arg(long = "target", value_name = "ID")]
    pub targets: Vec<String>,
    /// Print one JSON document
    #[arg(long)]
    pub json: bool,
    /// Exit 2 when something needs attention, 0 when nothing does
    #[arg(long)]
    pub detailed_exitcode: bool,
    /// Recent events shown per cluster, newest first
    #[arg(long, value_name = "N", default_value_t = DEFAULT_STATUS_EVENTS)]
    pub events: usize,
    /// Read and show the report again every INTERVAL (`--watch=1m`; default 30s, at least
    /// 10s) until Ctrl-C, marking what changed: redrawn on a terminal, one report per interval
    /// in a pipe
    #[arg(
        long,
        value_name = "INTERVAL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "30s",
        value_parser = parse_duration
    )]
    pub watch: Option<std::time::Duration>,
}

/// `show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A plan saved with `plan --out`
    pub planfile: PathBuf,
    #[command(flatten)]
    pub prices: PricesArg,
    /// Print the plan as JSON
    #[arg(long)]
    pub json: bool,
    /// Print one line per changing cluster (action, changes, impact, running jobs stopped,
    /// GPUs), then the totals; with --format markdown, the table without the whole plan
    #[arg(long, conflicts_with = "json")]
    pub summary: bool,
    /// `markdown`: a pull-request comment (the summary table, then the whole plan folded in a
    /// <details> section, no colour)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = ShowFormat::Text, conflicts_with = "json")]
    pub format: ShowFormat,
}

/// How `show` writes a saved plan. (The values carry no doc comments: clap would list them
/// in a long help of its own.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowFormat {
    // The plan as `plan` shows it.
    Text,
    // A pull-request comment.
    Markdown,
}

/// `list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub dir: DirArg,
    #[command(flatten)]
    pub endpoint: EndpointArg,
    #[command(flatten)]
    pub prices: PricesArg,
    #[command(flatten)]
    pub vars: VarArgs,
    /// List only this project (default: every project the configuration names; required
    /// without a configuration)
    #[arg(long)]
    pub project: Option<String>,
    /// List only this region (default: every region the service runs in and every region the
    /// configuration names)
    #[arg(long)]
    pub region: Option<String>,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

/// `import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The cluster ID
    pub id: String,
    #[command(flatten)]
    pub dir: DirArg,
    #[command(flatten)]
    pub endpoint: EndpointArg,
    #[command(flatten)]
    pub vars: VarArgs,
    /// Project (default: the configuration's provider)
    #[arg(long)]
    pub project: Option<String>,
    /// Region (default: the configuration's provider)
    #[arg(long)]
    pub region: Option<String>,
    /// Stack of the configuration written into an empty directory
    #[arg(long)]
    pub stack: Option<String>,
    /// Write the HCL to this file (default: stdout; DIR/main.hcl in an empty directory)
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Write each pool's live node_image into the HCL, which keeps the pool on that image
    /// (by default it is left out: the service fills it in, and a pool without it follows
    /// the default image)
    #[arg(long)]
    pub keep_node_image: bool,
    #[command(flatten)]
    pub lock: LockArgs,
}

/// `emulator`.
#[derive(Debug, Args)]
pub struct EmulatorArgs {
    /// Address to serve on: HOST:PORT, the host a name or an IP address (loopback only,
    /// unless --allow-remote)
    #[arg(long, default_value = "127.0.0.1:8089", value_name = "HOST:PORT")]
    pub listen: String,
    /// Keep clusters in this JSON file between runs
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// How long create, update and delete operations take, in seconds
    #[arg(long, default_value_t = 5.0, value_name = "S")]
    pub op_seconds: f64,
    /// Latency added to every request, in milliseconds
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub latency_ms: u64,
    /// The most clusters one List page holds, whatever the request asks for (the service's
    /// own cap is not documented)
    #[arg(long, default_value_t = EmulatorOptions::default().max_page_size, value_name = "N")]
    pub max_page_size: usize,
    /// Fault injection, e.g. "503=0.1,429=0.05,drop=0.01,opfail=0.1,seed=7"
    #[arg(long, value_name = "SPEC")]
    pub faults: Option<String>,
    /// Require this bearer token (default: any non-empty token)
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Allow listening on a non-loopback address
    #[arg(long)]
    pub allow_remote: bool,
    /// Answer with project numbers where requests name project IDs, as Google does
    #[arg(long)]
    pub project_numbers: bool,
    /// Serve this Cloud Storage bucket (repeatable)
    #[arg(long = "bucket", value_name = "NAME")]
    pub buckets: Vec<String>,
    /// Create a Cloud Storage bucket the first time a request names it
    #[arg(long)]
    pub create_buckets: bool,
    /// Refuse (429) a change to a Cloud Storage object asked within a second of the previous
    /// one, as Cloud Storage limits each object to about one change a second
    #[arg(long)]
    pub object_rate_limit: bool,
    /// The Slurm REST versions every cluster serves, e.g. "v0.0.44,v0.0.43"; others answer 404
    /// (default: v0.0.40 to v0.0.42, those of Slurm 24.11)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub slurm_versions: Vec<String>,
    /// Fail a create whose node pool has machine TYPE, or an update adding such a pool;
    /// FAILURE is [KIND:]TYPE[@ZONE][/TIMES]: only pools in ZONE, only TIMES requests, KIND
    /// "stockout" (the default: accepted, then the operation fails with code 8), "quota"
    /// (refused at once, 429, in Vertex AI's words), "compute-quota" (the same in Compute
    /// Engine's words, with a QuotaFailure detail) or "not-allowed" (the operation fails with
    /// code 3) (repeatable)
    #[arg(long = "capacity-failure", value_name = "FAILURE")]
    pub capacity_failures: Vec<String>,
    /// Keep the dynamic nodes (those above min_node_count) of pools with machine TYPE from
    /// starting, as a shortage on day two: Slurm lists them DOWN with the stockout text, and
    /// each running cluster records an event; FAILURE is TYPE[@ZONE] (repeatable)
    #[arg(long = "start-failure", value_name = "FAILURE")]
    pub start_failures: Vec<String>,
    /// Keep a cluster ID taken (409 ALREADY_EXISTS) for S seconds after its delete completed
    #[arg(long, value_name = "S", default_value_t = 0.0)]
    pub id_blocked_after_delete: f64,
    /// Refuse (400 INVALID_ARGUMENT) an update whose mask names PATH, as a service that does
    /// not update that field in place would (repeatable)
    #[arg(long = "refuse-update-path", value_name = "PATH")]
    pub refused_update_paths: Vec<String>,
    /// Store and answer Slurm configuration map keys folded (`DefMemPerCPU` → `defmempercpu`),
    /// as a service that does not echo the request's spelling would
    #[arg(long)]
    pub fold_slurm_keys: bool,
    /// Refuse every cluster API request for a location, as the service refuses a caller
    /// without permission there or a project not allowlisted in the region; REFUSAL is
    /// [KIND:][PROJECT/]LOCATION: only PROJECT's requests (default: every project's), KIND
    /// "permission" (the default: 403 PERMISSION_DENIED) or "not-allowlisted" (400
    /// INVALID_ARGUMENT) (repeatable)
    #[arg(long = "refuse-location", value_name = "REFUSAL")]
    pub refused_locations: Vec<String>,
    /// Answer preflight's Service Usage read of SERVICE (`projects/{P}/services/{NAME}`)
    /// `DISABLED`, as for a project that has not enabled it (repeatable)
    #[arg(long = "disabled-service", value_name = "SERVICE")]
    pub disabled_services: Vec<String>,
    /// What preflight's reads find, from FILE: the JSON `PUT /emulator/v1/preflight` takes
    /// (docs/emulator.md); --disabled-service adds to its disabled services
    #[arg(long = "preflight-world", value_name = "FILE")]
    pub preflight_world: Option<PathBuf>,
}

/// `force-unlock LOCK_ID`.
#[derive(Debug, Args)]
pub struct ForceUnlockArgs {
    /// The lock ID the refused run printed (the lock is only removed if it still has this ID)
    #[arg(value_name = "LOCK_ID")]
    pub lock_id: String,
    #[command(flatten)]
    pub dir: DirArg,
    #[command(flatten)]
    pub vars: VarArgs,
    /// Remove the lock without asking for confirmation
    #[arg(long)]
    pub auto_approve: bool,
}

/// `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    pub shell: clap_complete::Shell,
}

/// `version`.
#[derive(Debug, Args)]
pub struct VersionArgs {
    /// Print it as JSON
    #[arg(long)]
    pub json: bool,
}

/// Parses `2h`, `90m`, `1d`, `3600s`.
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    clusterform_model::duration::parse(text)
        .map(|s| std::time::Duration::from_secs(s.0))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn durations_parse() {
        assert_eq!(
            parse_duration("2h"),
            Ok(std::time::Duration::from_secs(7200))
        );
        assert!(parse_duration("soon").is_err());
        let huge = parse_duration("99999999999999999999h").unwrap_err();
        assert!(huge.contains("too long a duration"), "{huge}");
    }
}
