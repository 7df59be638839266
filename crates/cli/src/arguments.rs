//! The step from raw flags to validated arguments, as ripgrep takes it: [`Arguments::from_cli`]
//! turns what clap parsed ([`crate::cli`]) into the form the commands run on, once, before any
//! of them starts: the configuration directory resolved (positional `DIR` or `--chdir`, never
//! both), `--var` pairs split, the emulator's address resolved and its options built, and
//! flags that conflict or do nothing refused as usage errors. No command reads a raw flag.
//!
//! Before clap, [`terraform_spellings`] rewrites Terraform's single-dash long options
//! (`-auto-approve`, `-out=F`, `-var 'a=b'`) so that muscle memory works.

use std::cell::OnceCell;
use std::ffi::OsString;
use std::net::{SocketAddr, ToSocketAddrs as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::CommandFactory as _;
use clusterform_emulator::{
    CapacityFailure, EmulatorOptions, FaultSpec, PreflightWorld, RefusedLocation, StartFailure,
};
use clusterform_model::fields::UpdateMaskPath;
use clusterform_model::{ClusterId, Endpoint};
use clusterform_planner::PlanOptions;

use crate::cli::{self, ChdirArg, Cli, DirArg, VarArgs};
use crate::error::CliError;

/// The command to run, validated.
#[derive(Debug)]
pub enum Arguments {
    /// `validate`.
    Validate(Validate),
    /// `fmt`.
    Fmt(Fmt),
    /// `plan`.
    Plan(Plan),
    /// `apply`.
    Apply(Apply),
    /// `destroy`.
    Destroy(Destroy),
    /// `status`.
    Status(Status),
    /// `show PLANFILE`.
    Show(cli::ShowArgs),
    /// `list`.
    List(List),
    /// `import ID`.
    Import(Import),
    /// `force-unlock LOCK_ID`.
    ForceUnlock(ForceUnlock),
    /// `emulator` (boxed: its options are many times the size of any other command's).
    Emulator(Box<Emulator>),
    /// `completions SHELL`.
    Completions(clap_complete::Shell),
    /// `version`: `--json` or not.
    Version { json: bool },
}

/// Variable values given on the command line; `CLUSTERFORM_VAR_*` are read when loading.
#[derive(Debug, Clone, Default)]
pub struct Variables {
    /// `--var NAME=VALUE`, split.
    pub pairs: Vec<(String, String)>,
    /// `--var-file FILE`.
    pub files: Vec<PathBuf>,
}

/// What to plan: the same for `plan`, `apply` and `destroy`.
#[derive(Debug, Clone, Default)]
pub struct Planning {
    /// Variable values.
    pub variables: Variables,
    /// `--target`, `--replace`, `--update-mode`, and whether the plan destroys (`destroy`,
    /// `plan --destroy`).
    pub options: PlanOptions,
    /// `--skip-preflight`: preflight's errors are warnings.
    pub skip_preflight: bool,
}

/// `validate`.
#[derive(Debug)]
pub struct Validate {
    /// The configuration directory.
    pub dir: PathBuf,
    /// Variable values.
    pub variables: Variables,
    /// `--json`.
    pub json: bool,
}

/// `fmt`.
#[derive(Debug)]
pub struct Fmt {
    /// What to format.
    pub input: FmtInput,
    /// `--check`: change nothing.
    pub check: bool,
    /// `--diff`: show the changes.
    pub diff: bool,
}

/// What `fmt` reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FmtInput {
    /// `fmt -`: standard input, formatted onto standard output.
    Stdin,
    /// Files and directories (the configuration directory when none is named).
    Paths {
        /// The files and directories named.
        roots: Vec<PathBuf>,
        /// `--recursive`: directories inside them too.
        recursive: bool,
    },
}

/// `plan`.
#[derive(Debug)]
pub struct Plan {
    /// The configuration directory.
    pub dir: PathBuf,
    /// `--endpoint` / `CLUSTERFORM_ENDPOINT`.
    pub endpoint: Option<Endpoint>,
    /// What to plan.
    pub planning: Planning,
    /// `--out FILE`.
    pub out: Option<PathBuf>,
    /// `--json`.
    pub json: bool,
    /// `--detailed-exitcode`.
    pub detailed_exitcode: bool,
    /// `--idle-for` (with `--destroy`): plan only the deletion of clusters idle this long.
    pub idle_for: Option<Duration>,
    /// `--refresh-only`: show only what changed outside clusterform, propose nothing.
    pub refresh_only: bool,
    /// `--summary`: one line per changing cluster instead of the whole plan.
    pub summary: bool,
    /// `--prices FILE`: the prices costs are shown at (wins over the provider's `pricing`).
    pub prices: Option<PathBuf>,
}

/// What `apply` applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplySource {
    /// Plan the configuration of this directory, then apply.
    Directory(PathBuf),
    /// A saved plan, applied to the configuration directory it records.
    SavedPlan {
        /// The plan file.
        file: PathBuf,
        /// `--chdir`, when given: it must be the directory the plan records.
        dir: Option<PathBuf>,
    },
}

/// `apply`.
#[derive(Debug)]
pub struct Apply {
    /// What to apply.
    pub source: ApplySource,
    /// `--endpoint` / `CLUSTERFORM_ENDPOINT`.
    pub endpoint: Option<Endpoint>,
    /// What to plan (for a directory).
    pub planning: Planning,
    /// `--auto-approve`.
    pub auto_approve: bool,
    /// `--allow-disruption`: unattended, stop running jobs all the same.
    pub allow_disruption: bool,
    /// `--parallelism` and `--parallelism-per-location`: clusters changed at the same time.
    pub parallelism: Parallelism,
    /// `--json`: JSON events on stdout instead of the plan and progress.
    pub json: bool,
    /// `--lock-timeout`: how long to wait for another run's lock.
    pub lock_timeout: Duration,
}

/// How many clusters an apply or destroy changes at the same time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parallelism {
    /// `--parallelism`: across all locations.
    pub global: u16,
    /// `--parallelism-per-location`: within one (project, region), whose quotas the service
    /// counts separately; `None` for no limit but the global one.
    pub per_location: Option<u16>,
}

impl Default for Parallelism {
    /// `--parallelism`'s default, without a limit per location.
    fn default() -> Self {
        Self {
            global: cli::DEFAULT_PARALLELISM,
            per_location: None,
        }
    }
}

impl From<cli::ParallelismArgs> for Parallelism {
    fn from(args: cli::ParallelismArgs) -> Self {
        Self {
            global: args.parallelism,
            per_location: args.parallelism_per_location,
        }
    }
}

/// `destroy`.
#[derive(Debug)]
pub struct Destroy {
    /// The configuration directory.
    pub dir: PathBuf,
    /// `--endpoint` / `CLUSTERFORM_ENDPOINT`.
    pub endpoint: Option<Endpoint>,
    /// What to plan: the variables and `--target`.
    pub planning: Planning,
    /// `--idle-for`: only clusters idle for this long.
    pub idle_for: Option<Duration>,
    /// `--auto-approve`.
    pub auto_approve: bool,
    /// `--allow-disruption`: unattended, delete clusters with running jobs all the same.
    pub allow_disruption: bool,
    /// `--parallelism` and `--parallelism-per-location`: clusters deleted at the same time.
    pub parallelism: Parallelism,
    /// `--json`: JSON events on stdout instead of the plan and progress.
    pub json: bool,
    /// `--lock-timeout`: how long to wait for another run's lock.
    pub lock_timeout: Duration,
    /// `--prices FILE`: the prices costs are shown at (wins over the provider's `pricing`).
    pub prices: Option<PathBuf>,
}

/// `status`.
#[derive(Debug)]
pub struct Status {
    /// The configuration directory.
    pub dir: PathBuf,
    /// `--endpoint` / `CLUSTERFORM_ENDPOINT`.
    pub endpoint: Option<Endpoint>,
    /// Variable values.
    pub variables: Variables,
    /// `--target`: only these clusters.
    pub targets: Vec<String>,
    /// `--json`.
    pub json: bool,
    /// `--detailed-exitcode`: exit 2 when something needs attention.
    pub detailed_exitcode: bool,
    /// `--events`: how many recent events to show per cluster.
    pub events: usize,
    /// `--watch`: read and show again every this long, until Ctrl-C.
    pub watch: Option<Duration>,
    /// `--prices FILE`: the prices costs are shown at (wins over the provider's `pricing`).
    pub prices: Option<PathBuf>,
}

/// `list`.
#[derive(Debug)]
pub struct List {
    /// The configuration directory.
    pub dir: PathBuf,
    /// `--endpoint` / `CLUSTERFORM_ENDPOINT`.
    pub endpoint: Option<Endpoint>,
    /// Variable values.
    pub variables: Variables,
    /// `--project`.
    pub project: Option<String>,
    /// `--region`.
    pub region: Option<String>,
    /// `--json`.
    pub json: bool,
    /// `--prices FILE`: the prices costs are shown at (wins over the provider's `pricing`).
    pub prices: Option<PathBuf>,
}

/// `import ID`.
#[derive(Debug)]
pub struct Import {
    /// The cluster ID.
    pub id: String,
    /// The configuration directory.
    pub dir: PathBuf,
    /// `--endpoint` / `CLUSTERFORM_ENDPOINT`.
    pub endpoint: Option<Endpoint>,
    /// Variable values.
    pub variables: Variables,
    /// `--project`.
    pub project: Option<String>,
    /// `--region`.
    pub region: Option<String>,
    /// `--stack`: the stack of the configuration written into a directory without one.
    pub stack: Option<String>,
    /// `--out FILE`.
    pub out: Option<PathBuf>,
    /// `--keep-node-image`: write the pools' live node images, which pins them.
    pub keep_node_image: bool,
    /// `--lock-timeout`: how long to wait for another run's lock.
    pub lock_timeout: Duration,
}

/// `force-unlock LOCK_ID`.
#[derive(Debug)]
pub struct ForceUnlock {
    /// The ID the lock must still have.
    pub lock_id: String,
    /// The configuration directory.
    pub dir: PathBuf,
    /// Variable values (the provider block may use them).
    pub variables: Variables,
    /// `--auto-approve`.
    pub auto_approve: bool,
}

/// `emulator`.
#[derive(Debug)]
pub struct Emulator {
    /// The address to serve on, resolved.
    pub listen: SocketAddr,
    /// How the emulator behaves.
    pub options: EmulatorOptions,
}

impl Arguments {
    /// The configuration directory as the user gave it (one `fmt` path), which hints that
    /// name a command repeat; `None` for commands that read none.
    pub fn config_dir(&self) -> Option<&Path> {
        match self {
            Self::Validate(Validate { dir, .. })
            | Self::Plan(Plan { dir, .. })
            | Self::Apply(Apply {
                source: ApplySource::Directory(dir),
                ..
            })
            | Self::Destroy(Destroy { dir, .. })
            | Self::Status(Status { dir, .. })
            | Self::List(List { dir, .. })
            | Self::Import(Import { dir, .. })
            | Self::ForceUnlock(ForceUnlock { dir, .. }) => Some(dir),
            Self::Apply(Apply {
                source: ApplySource::SavedPlan { dir, .. },
                ..
            }) => dir.as_deref(),
            Self::Fmt(Fmt {
                input: FmtInput::Paths { roots, .. },
                ..
            }) if roots.len() == 1 => roots.first().map(PathBuf::as_path),
            Self::Fmt(_)
            | Self::Show(_)
            | Self::Emulator(_)
            | Self::Completions(_)
            | Self::Version { .. } => None,
        }
    }

    /// Validates what clap parsed.
    ///
    /// # Errors
    ///
    /// [`CliError::Usage`] for flags that conflict, do nothing for the command, or hold a value
    /// clap cannot check (a `--var` without `=`, an address that does not resolve).
    pub fn from_cli(cli: Cli) -> Result<Self, CliError> {
        let chdir = cli.chdir;
        Ok(match cli.command {
            cli::Command::Validate(args) => Self::Validate(Validate {
                dir: config_dir(chdir, args.dir)?,
                variables: Variables::from_args(args.vars)?,
                json: args.json,
            }),
            cli::Command::Fmt(args) => Self::Fmt(fmt(chdir, args)?),
            cli::Command::Plan(args) => Self::Plan(plan(chdir, args)?),
            cli::Command::Apply(args) => Self::Apply(apply(chdir, args)?),
            cli::Command::Destroy(args) => Self::Destroy(Destroy {
                dir: config_dir(chdir, args.dir)?,
                endpoint: args.endpoint.endpoint,
                // A destroy replaces and updates nothing: only variables and targets apply.
                planning: Planning {
                    variables: Variables::from_args(args.vars)?,
                    options: PlanOptions {
                        targets: cluster_ids("--target", args.targets)?,
                        destroy: true,
                        keep_protected: args.idle_for.is_some(),
                        ..PlanOptions::default()
                    },
                    // A destroy creates nothing: preflight has nothing to check.
                    skip_preflight: false,
                },
                idle_for: args.idle_for,
                auto_approve: args.auto_approve,
                allow_disruption: args.allow_disruption,
                parallelism: Parallelism::from(args.parallelism),
                json: refuse_unapproved_json("destroy", args.json, args.auto_approve)?,
                lock_timeout: args.lock.lock_timeout,
                prices: args.prices.prices,
            }),
            cli::Command::Status(args) => {
                let watch = watch_interval(&args)?;
                Self::Status(Status {
                    dir: status_dir(chdir, args.dir)?,
                    endpoint: args.endpoint.endpoint,
                    variables: Variables::from_args(args.vars)?,
                    targets: cluster_ids("--target", args.targets)?,
                    json: args.json,
                    detailed_exitcode: args.detailed_exitcode,
                    events: args.events,
                    watch,
                    prices: args.prices.prices,
                })
            }
            cli::Command::Show(args) => {
                refuse_chdir(chdir.as_deref(), "show")?;
                Self::Show(args)
            }
            cli::Command::List(args) => Self::List(List {
                dir: config_dir(chdir, args.dir)?,
                endpoint: args.endpoint.endpoint,
                variables: Variables::from_args(args.vars)?,
                project: args.project,
                region: args.region,
                json: args.json,
                prices: args.prices.prices,
            }),
            cli::Command::Import(args) => Self::Import(Import {
                id: args.id,
                dir: config_dir(chdir, args.dir)?,
                endpoint: args.endpoint.endpoint,
                variables: Variables::from_args(args.vars)?,
                project: args.project,
                region: args.region,
                stack: args.stack,
                out: args.out,
                keep_node_image: args.keep_node_image,
                lock_timeout: args.lock.lock_timeout,
            }),
            cli::Command::ForceUnlock(args) => Self::ForceUnlock(ForceUnlock {
                lock_id: args.lock_id,
                dir: config_dir(chdir, args.dir)?,
                variables: Variables::from_args(args.vars)?,
                auto_approve: args.auto_approve,
            }),
            cli::Command::Emulator(args) => {
                refuse_chdir(chdir.as_deref(), "emulator")?;
                Self::Emulator(Box::new(emulator(args)?))
            }
            cli::Command::Completions(args) => {
                refuse_chdir(chdir.as_deref(), "completions")?;
                Self::Completions(args.shell)
            }
            cli::Command::Version(args) => {
                refuse_chdir(chdir.as_deref(), "version")?;
                Self::Version { json: args.json }
            }
        })
    }
}

impl Variables {
    fn from_args(args: VarArgs) -> Result<Self, CliError> {
        let pairs = args
            .vars
            .iter()
            .map(|pair| {
                pair.split_once('=')
                    .map(|(name, value)| (name.trim().to_owned(), value.to_owned()))
                    .ok_or_else(|| {
                        CliError::Usage(format!("--var expects NAME=VALUE, got `{pair}`"))
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            pairs,
            files: args.var_files,
        })
    }
}

impl Planning {
    fn from_args(args: cli::PlanningArgs, destroy: bool) -> Result<Self, CliError> {
        Ok(Self {
            variables: Variables::from_args(args.vars)?,
            options: PlanOptions {
                targets: cluster_ids("--target", args.targets)?,
                replace: cluster_ids("--replace", args.replace)?,
                update_mode: args.update_mode,
                destroy,
                keep_protected: false,
            },
            skip_preflight: args.skip_preflight,
        })
    }
}

/// The shortest `status --watch` interval: every refresh reads every location and each
/// running cluster's Slurm.
pub const MIN_WATCH_INTERVAL: Duration = Duration::from_secs(10);

/// `status --watch [INTERVAL]`: at least [`MIN_WATCH_INTERVAL`], and a human view (a JSON
/// document and an exit code report once).
fn watch_interval(args: &cli::StatusArgs) -> Result<Option<Duration>, CliError> {
    let Some(interval) = args.watch else {
        return Ok(None);
    };
    if interval < MIN_WATCH_INTERVAL {
        return Err(CliError::Usage(format!(
            "--watch {}s: the interval is at least {}s, since every refresh reads every location and each running cluster's Slurm",
            interval.as_secs(),
            MIN_WATCH_INTERVAL.as_secs()
        )));
    }
    for (flag, given) in [
        ("--json", args.json),
        ("--detailed-exitcode", args.detailed_exitcode),
    ] {
        if given {
            return Err(CliError::Usage(format!(
                "--watch and {flag} do not go together: {flag} reports once; run it in a loop of your own to poll"
            )));
        }
    }
    Ok(Some(interval))
}

/// The IDs of `--target` or `--replace`, refusing Terraform's resource addresses
/// (`cluster.fleet["vision"]`), which clusterform does not read, with the ID they likely mean.
fn cluster_ids(flag: &str, ids: Vec<String>) -> Result<Vec<String>, CliError> {
    match ids.iter().find_map(|id| Some((id, terraform_address(id)?))) {
        None => Ok(ids),
        Some((address, (meant, instance))) => {
            let which = if instance {
                "the ID of a `for_each` instance is its key unless the block sets `id`"
            } else {
                "a cluster's ID is its block label"
            };
            Err(CliError::Usage(format!(
                "{flag} {address}: clusterform names clusters by ID, not by Terraform address; did you mean `{flag} {meant}`? ({which}; `clusterform list` shows the IDs)"
            )))
        }
    }
}

/// `cluster.LABEL` or `cluster.LABEL["KEY"]` (also `[KEY]`, `['KEY']`): the ID it likely
/// names (the key of an instance, else the label), and whether it names an instance.
fn terraform_address(text: &str) -> Option<(String, bool)> {
    let rest = text.strip_prefix("cluster.")?;
    match rest.split_once('[') {
        None => Some((rest.to_owned(), false)),
        Some((_, key)) => {
            let key = key
                .strip_suffix(']')?
                .trim_matches(|c| c == '"' || c == '\'');
            Some((key.to_owned(), true))
        }
    }
}

/// `plan`; `--destroy` plans with variables and targets only, as `destroy` does.
fn plan(before_command: Option<PathBuf>, args: cli::PlanArgs) -> Result<Plan, CliError> {
    if args.destroy {
        refuse_with_destroy(&args.planning)?;
    }
    if args.refresh_only {
        refuse_with_refresh_only(&args)?;
    }
    let mut planning = Planning::from_args(args.planning, args.destroy)?;
    planning.options.keep_protected = args.idle_for.is_some();
    Ok(Plan {
        dir: config_dir(before_command, args.dir)?,
        endpoint: args.endpoint.endpoint,
        planning,
        out: args.out,
        json: args.json,
        detailed_exitcode: args.detailed_exitcode,
        idle_for: args.idle_for,
        refresh_only: args.refresh_only,
        summary: args.summary,
        prices: args.prices.prices,
    })
}

/// A refresh-only plan proposes nothing: there is nothing to save, replace, destroy, update
/// in another mode or price.
fn refuse_with_refresh_only(args: &cli::PlanArgs) -> Result<(), CliError> {
    let refused = [
        ("--out", args.out.is_some()),
        ("--destroy", args.destroy),
        ("--replace", !args.planning.replace.is_empty()),
        ("--update-mode", args.planning.update_mode.is_some()),
        // What changed outside clusterform has no cost to show.
        ("--prices", args.prices.prices.is_some()),
    ];
    match refused.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(CliError::Usage(format!(
            "{flag} cannot be used with --refresh-only: a refresh-only plan only shows what changed outside clusterform and proposes nothing"
        ))),
        None => Ok(()),
    }
}

/// A destroy plan replaces and updates nothing: `--replace` and `--update-mode` would do nothing.
fn refuse_with_destroy(planning: &cli::PlanningArgs) -> Result<(), CliError> {
    let refused = [
        ("--replace", !planning.replace.is_empty()),
        ("--update-mode", planning.update_mode.is_some()),
    ];
    match refused.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(CliError::Usage(format!(
            "{flag} does nothing with --destroy: a destroy plan only deletes clusters"
        ))),
        None => Ok(()),
    }
}

/// `apply`; a saved plan refuses the planning flags: it fixed them when it was made.
fn apply(before_command: Option<PathBuf>, args: cli::ApplyArgs) -> Result<Apply, CliError> {
    let source = apply_source(before_command, args.target, args.chdir)?;
    let saved_plan = matches!(source, ApplySource::SavedPlan { .. });
    if saved_plan {
        refuse_with_saved_plan(&args.planning)?;
    }
    refuse_unapproved_json("apply", args.json, args.auto_approve || saved_plan)?;
    Ok(Apply {
        source,
        endpoint: args.endpoint.endpoint,
        planning: Planning::from_args(args.planning, false)?,
        auto_approve: args.auto_approve,
        allow_disruption: args.allow_disruption,
        parallelism: Parallelism::from(args.parallelism),
        json: args.json,
        lock_timeout: args.lock.lock_timeout,
    })
}

/// The planning flags `apply PLANFILE` refuses, each with what the saved plan fixed.
fn refuse_with_saved_plan(planning: &cli::PlanningArgs) -> Result<(), CliError> {
    let refused = [
        ("--target", !planning.targets.is_empty(), "the targets"),
        (
            "--replace",
            !planning.replace.is_empty(),
            "the replacements",
        ),
        (
            "--var",
            !planning.vars.vars.is_empty(),
            "the variable values",
        ),
        (
            "--var-file",
            !planning.vars.var_files.is_empty(),
            "the variable values",
        ),
        (
            "--update-mode",
            planning.update_mode.is_some(),
            "the update mode",
        ),
    ];
    match refused.iter().find(|(_, given, _)| *given) {
        Some((flag, _, fixed)) => Err(CliError::Usage(format!(
            "{flag} cannot be used when applying a saved plan: the saved plan fixed {fixed}; plan again with {flag}"
        ))),
        None => Ok(()),
    }
}

/// The configuration directory: the positional `DIR`, `--chdir DIR` (after the command or
/// before it, as Terraform's `-chdir`), else `.`; two of them is a usage error.
fn config_dir(before_command: Option<PathBuf>, args: DirArg) -> Result<PathBuf, CliError> {
    let given = [
        ("--chdir", before_command),
        ("--chdir", args.chdir.chdir),
        ("DIR", args.dir),
    ];
    one_directory(given.into_iter().filter_map(|(how, dir)| Some((how, dir?))))
}

/// `status`'s directory; `status train01`, where no directory `train01` is, asks for one
/// cluster as `kubectl get NAME` would: a usage error that names `--target`.
fn status_dir(before_command: Option<PathBuf>, dir: DirArg) -> Result<PathBuf, CliError> {
    if let Some(given) = dir.dir.as_deref().filter(|given| !given.exists()) {
        let text = given.to_string_lossy();
        if ClusterId::parse(&text, false).is_ok() {
            return Err(CliError::Usage(format!(
                "status takes a configuration directory, and there is no directory `{text}`; to show the cluster {text}, run `clusterform status --target {text}`"
            )));
        }
    }
    config_dir(before_command, dir)
}

/// The one directory given, `.` when none is; a usage error naming both when two are.
fn one_directory(
    mut given: impl Iterator<Item = (&'static str, PathBuf)>,
) -> Result<PathBuf, CliError> {
    match (given.next(), given.next()) {
        (None, _) => Ok(PathBuf::from(".")),
        (Some((_, dir)), None) => Ok(dir),
        (Some((first, one)), Some((second, other))) => Err(CliError::Usage(format!(
            "the configuration directory is given twice ({first} {} and {second} {}): give DIR or --chdir DIR, not both",
            one.display(),
            other.display()
        ))),
    }
}

/// `fmt PATHS` formats what is named; without paths, the configuration directory.
fn fmt(before_command: Option<PathBuf>, args: cli::FmtArgs) -> Result<Fmt, CliError> {
    let chdirs: Vec<PathBuf> = [before_command, args.chdir.chdir]
        .into_iter()
        .flatten()
        .collect();
    let roots = match (args.paths.is_empty(), chdirs.is_empty()) {
        (false, false) => {
            return Err(CliError::Usage(
                "fmt takes PATHS or --chdir DIR, not both".into(),
            ));
        }
        (false, true) => args.paths,
        (true, _) => vec![chdir_only(chdirs)?],
    };
    let input = if roots.iter().any(|root| root.as_os_str() == "-") {
        if roots.len() > 1 || args.recursive {
            return Err(CliError::Usage(
                "`fmt -` reads standard input alone: name no other path and no --recursive".into(),
            ));
        }
        FmtInput::Stdin
    } else {
        FmtInput::Paths {
            roots,
            recursive: args.recursive,
        }
    };
    Ok(Fmt {
        input,
        check: args.check,
        diff: args.diff,
    })
}

/// The directory of `--chdir`, given before the command or after it, `.` without one.
fn chdir_only(chdirs: impl IntoIterator<Item = PathBuf>) -> Result<PathBuf, CliError> {
    one_directory(chdirs.into_iter().map(|dir| ("--chdir", dir)))
}

/// `apply FILE` applies a saved plan to the directory it records (`--chdir`, when given, must
/// be that directory); `apply [DIR]` plans the directory first.
fn apply_source(
    before_command: Option<PathBuf>,
    target: Option<PathBuf>,
    chdir: ChdirArg,
) -> Result<ApplySource, CliError> {
    if let Some(kind) = target.as_deref().and_then(special_kind) {
        let path = target.as_deref().unwrap_or(Path::new("")).display();
        return Err(CliError::Usage(format!(
            "`{path}` is {kind}: apply takes a saved plan file or a configuration directory"
        )));
    }
    match target {
        Some(file) if file.is_file() => {
            let chdirs: Vec<PathBuf> = [before_command, chdir.chdir]
                .into_iter()
                .flatten()
                .collect();
            let dir = (!chdirs.is_empty())
                .then(|| chdir_only(chdirs))
                .transpose()?;
            Ok(ApplySource::SavedPlan { file, dir })
        }
        dir => config_dir(before_command, DirArg { dir, chdir }).map(ApplySource::Directory),
    }
}

/// What an existing path is when it is neither a regular file nor a directory (reading a FIFO
/// blocks, a device never ends): `None` for files, directories and paths that do not exist.
fn special_kind(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let kind = std::fs::metadata(path).ok()?.file_type();
    if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_char_device() || kind.is_block_device() {
        Some("a device")
    } else if kind.is_socket() {
        Some("a socket")
    } else {
        None
    }
}

/// `--json` prints events and nothing else, so there is no plan on the screen to approve and
/// no prompt to answer: as Terraform's `apply -json`, it needs `--auto-approve` or a saved plan.
/// Returns `json` when it may be used.
fn refuse_unapproved_json(command: &str, json: bool, approved: bool) -> Result<bool, CliError> {
    if json && !approved {
        return Err(CliError::Usage(format!(
            "`{command} --json` cannot ask for confirmation: give --auto-approve{}",
            if command == "apply" {
                ", or apply a saved plan (`plan --out FILE`, then `apply --json FILE`)"
            } else {
                ""
            }
        )));
    }
    Ok(json)
}

/// A command that reads no configuration refuses `--chdir` rather than ignoring it.
fn refuse_chdir(before_command: Option<&Path>, command: &str) -> Result<(), CliError> {
    match before_command {
        Some(_) => Err(CliError::Usage(format!(
            "`{command}` reads no configuration: --chdir does nothing for it"
        ))),
        None => Ok(()),
    }
}

fn emulator(args: cli::EmulatorArgs) -> Result<Emulator, CliError> {
    let listen = listen_address(&args.listen, args.allow_remote)?;
    if !args.op_seconds.is_finite() || args.op_seconds < 0.0 {
        return Err(CliError::Usage(
            "--op-seconds must be a non-negative number".into(),
        ));
    }
    let id_blocked_after_delete = Duration::try_from_secs_f64(args.id_blocked_after_delete)
        .map_err(|_| {
            CliError::Usage("--id-blocked-after-delete must be a non-negative number".into())
        })?;
    if args.max_page_size == 0 {
        return Err(CliError::Usage("--max-page-size must be at least 1".into()));
    }
    let faults = match &args.faults {
        Some(spec) => spec
            .parse::<FaultSpec>()
            .map_err(|err| CliError::Usage(format!("--faults: {err}")))?,
        None => FaultSpec::default(),
    };
    let capacity_failures = args
        .capacity_failures
        .iter()
        .map(|text| text.parse::<CapacityFailure>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| CliError::Usage(format!("--capacity-failure: {err}")))?;
    let start_failures = args
        .start_failures
        .iter()
        .map(|text| text.parse::<StartFailure>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| CliError::Usage(format!("--start-failure: {err}")))?;
    let refused_locations = args
        .refused_locations
        .iter()
        .map(|text| text.parse::<RefusedLocation>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| CliError::Usage(format!("--refuse-location: {err}")))?;
    let defaults = EmulatorOptions::default();
    let options = EmulatorOptions {
        operation_duration: Duration::from_secs_f64(args.op_seconds),
        latency: Duration::from_millis(args.latency_ms),
        max_page_size: args.max_page_size,
        faults,
        required_token: args.token,
        state_file: args.state,
        project_numbers: args.project_numbers,
        buckets: args.buckets,
        create_buckets_on_use: args.create_buckets,
        object_mutation_limit: args.object_rate_limit,
        slurm_api_versions: slurm_versions(args.slurm_versions)?
            .unwrap_or(defaults.slurm_api_versions),
        capacity_failures,
        start_failures,
        id_blocked_after_delete,
        refused_update_paths: refused_update_paths(args.refused_update_paths)?,
        fold_slurm_config_keys: args.fold_slurm_keys,
        refused_locations,
        preflight: preflight_world(args.preflight_world.as_deref(), args.disabled_services)?,
        ..defaults
    };
    Ok(Emulator { listen, options })
}

/// `--preflight-world FILE`, with the `--disabled-service`s added to it.
fn preflight_world(file: Option<&Path>, disabled: Vec<String>) -> Result<PreflightWorld, CliError> {
    let mut world = match file {
        None => PreflightWorld::default(),
        Some(path) => {
            let text = clusterform_files::read_capped(path, PREFLIGHT_WORLD_LIMIT)
                .map_err(|e| CliError::Usage(format!("--preflight-world: {e}")))?;
            let text = String::from_utf8_lossy(&text);
            PreflightWorld::from_json(&text).map_err(|e| {
                CliError::Usage(format!("--preflight-world {}: {e}", path.display()))
            })?
        }
    };
    world.disabled_services.extend(disabled_services(disabled)?);
    Ok(world)
}

/// The largest `--preflight-world` file read: a test world of a few hundred resources.
const PREFLIGHT_WORLD_LIMIT: u64 = 4 << 20;

/// `--disabled-service`: each a Service Usage name, `projects/{P}/services/{NAME}`.
fn disabled_services(names: Vec<String>) -> Result<Vec<String>, CliError> {
    let well_formed = |name: &str| {
        let parts: Vec<&str> = name.split('/').collect();
        matches!(parts.as_slice(), ["projects", project, "services", service] if !project.is_empty() && !service.is_empty())
    };
    match names.iter().find(|name| !well_formed(name)) {
        Some(bad) => Err(CliError::Usage(format!(
            "--disabled-service: `{bad}` is not a service name such as projects/my-proj/services/file.googleapis.com"
        ))),
        None => Ok(names),
    }
}

/// `--refuse-update-path`: each an update-mask path the emulator would otherwise apply.
fn refused_update_paths(paths: Vec<String>) -> Result<Vec<String>, CliError> {
    match paths
        .iter()
        .find(|path| path.parse::<UpdateMaskPath>().is_err())
    {
        Some(bad) => Err(CliError::Usage(format!(
            "--refuse-update-path: `{bad}` is not an update-mask path such as display_name"
        ))),
        None => Ok(paths),
    }
}

/// `--slurm-versions`: REST versions spelt as slurmrestd's paths spell them (`v0.0.44`);
/// `None` when not given.
fn slurm_versions(versions: Vec<String>) -> Result<Option<Vec<String>>, CliError> {
    let well_formed = |version: &str| {
        version
            .strip_prefix("v0.0.")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if let Some(bad) = versions.iter().find(|v| !well_formed(v)) {
        return Err(CliError::Usage(format!(
            "--slurm-versions: `{bad}` is not a Slurm REST version such as v0.0.44"
        )));
    }
    Ok((!versions.is_empty()).then_some(versions))
}

/// `--listen HOST:PORT`, the host a name (`localhost`) or an address. The emulator accepts
/// any token, so without `--allow-remote` only a loopback address is taken; of the addresses a
/// name resolves to, IPv4 comes first (clients that try `127.0.0.1` find it).
fn listen_address(text: &str, allow_remote: bool) -> Result<SocketAddr, CliError> {
    let resolved: Vec<SocketAddr> = text
        .to_socket_addrs()
        .map_err(|err| CliError::Usage(format!("--listen {text}: {err}")))?
        .collect();
    let mut allowed: Vec<SocketAddr> = resolved
        .iter()
        .copied()
        .filter(|address| allow_remote || address.ip().is_loopback())
        .collect();
    allowed.sort_by_key(SocketAddr::is_ipv6);
    allowed.first().copied().ok_or_else(|| {
        CliError::Usage(format!(
            "refusing to listen on {text}: the emulator accepts any token; use a loopback address or --allow-remote"
        ))
    })
}

/// Rewrites Terraform's single-dash long options for clap: a token `-name` or `-name=value`
/// whose `name` is one of our long options becomes `--name` / `--name=value`. Short flags
/// (`-v`, `-q`, `-vv`) are not long option names and stay as they are, and nothing after `--`
/// is touched.
///
/// The option names come from the whole command tree, which is built only when a token could
/// be such an option: most command lines have none, and the build costs as much as the parse.
pub fn terraform_spellings(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let long_names = OnceCell::new();
    let mut after_separator = false;
    args.into_iter()
        .map(|arg| {
            if arg == "--" {
                after_separator = true;
            }
            let single_dash_long = match arg.to_str().and_then(option_token) {
                Some(OptionToken {
                    name,
                    single_dash: true,
                }) if !after_separator => long_names
                    .get_or_init(long_option_names)
                    .iter()
                    .any(|long| long == name),
                _ => false,
            };
            if single_dash_long {
                let mut rewritten = OsString::from("-");
                rewritten.push(&arg);
                rewritten
            } else {
                arg
            }
        })
        .collect()
}

/// A command-line token that names an option: `--name`, `--name=value`, or Terraform's
/// `-name`, `-name=value`.
#[derive(Debug, PartialEq, Eq)]
struct OptionToken<'a> {
    /// The option's name, without dashes or value.
    name: &'a str,
    /// Spelled with one dash.
    single_dash: bool,
}

/// The option a token names, if it names one: `None` for a word, `-`, and the separator `--`.
fn option_token(text: &str) -> Option<OptionToken<'_>> {
    let (rest, single_dash) = match text.strip_prefix("--") {
        Some(rest) => (rest, false),
        None => (text.strip_prefix('-')?, true),
    };
    let name = rest.split_once('=').map_or(rest, |(name, _)| name);
    (!name.is_empty()).then_some(OptionToken { name, single_dash })
}

/// Every long option of every command (`help` and `version` included).
fn long_option_names() -> Vec<String> {
    let mut command = Cli::command();
    command.build();
    let mut names = Vec::new();
    collect_long_names(&command, &mut names);
    names.sort();
    names.dedup();
    names
}

/// Terraform options clusterform has no counterpart for, with what it does instead.
const TERRAFORM_ONLY_FLAGS: &[(&str, &str)] = &[
    (
        "lock",
        "clusterform always locks the stack while it changes clusters; `--lock-timeout` waits for a held lock and `force-unlock` removes one a dead run left",
    ),
    (
        "input",
        "clusterform never prompts for variable values: a missing one is an error (give it with `--var`, `--var-file` or CLUSTERFORM_VAR_NAME)",
    ),
    (
        "refresh",
        "every plan reads the live clusters, since clusterform keeps no state; `plan --refresh-only` shows only what changed outside clusterform",
    ),
    (
        "state",
        "clusterform keeps no state file: it reads the live clusters and their stack label",
    ),
    (
        "state-out",
        "clusterform keeps no state file: it reads the live clusters and their stack label",
    ),
    (
        "backup",
        "clusterform keeps no state file: it reads the live clusters and their stack label",
    ),
    (
        "compact-warnings",
        "warnings are always printed in full, on stderr; `--quiet` prints only errors and results",
    ),
];

/// A Terraform option clusterform does not have (`-lock=false`, `--refresh=false`), before
/// any `--`: says so and what to do instead, where clap would read `-lock` as the short flags
/// `-l -o -c -k`. `None` when the command line has none.
pub fn terraform_only_flag(argv: &[OsString]) -> Option<String> {
    argv.iter()
        .skip(1)
        .filter_map(|arg| arg.to_str())
        .take_while(|arg| *arg != "--")
        .find_map(|arg| {
            let name = option_token(arg)?.name;
            let (flag, instead) = TERRAFORM_ONLY_FLAGS
                .iter()
                .find(|(flag, _)| *flag == name)?;
            Some(format!(
                "`-{flag}` is a Terraform option, not a clusterform one: {instead}"
            ))
        })
}

/// `plan --auto-approve` (or Terraform's `-auto-approve`): a flag clap refused as unknown to
/// the command given, which other commands have. Says which, instead of clap's hint to pass
/// it as a value. `None` for any other usage error.
pub fn flag_of_other_commands(argv: &[OsString], error: &clap::Error) -> Option<String> {
    if error.kind() != clap::error::ErrorKind::UnknownArgument {
        return None;
    }
    let clap::error::ContextValue::String(given) =
        error.get(clap::error::ContextKind::InvalidArg)?
    else {
        return None;
    };
    let name = option_token(given).filter(|token| !token.single_dash)?.name;
    let tree = Cli::command();
    let used = argv
        .iter()
        .skip(1)
        .filter_map(|arg| arg.to_str())
        .find_map(|arg| tree.find_subcommand(arg))?;
    let owners: Vec<&str> = tree
        .get_subcommands()
        .filter(|command| command.get_name() != used.get_name())
        .filter(|command| command.get_arguments().any(|a| a.get_long() == Some(name)))
        .map(clap::Command::get_name)
        .collect();
    let (last, others) = owners.split_last()?;
    let commands = if others.is_empty() {
        (*last).to_owned()
    } else {
        format!("{} and {last}", others.join(", "))
    };
    Some(format!(
        "`--{name}` belongs to {commands}, not to {}",
        used.get_name()
    ))
}

fn collect_long_names(command: &clap::Command, names: &mut Vec<String>) {
    names.extend(
        command
            .get_arguments()
            .filter_map(clap::Arg::get_long)
            .map(str::to_owned),
    );
    for subcommand in command.get_subcommands() {
        collect_long_names(subcommand, names);
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_flag_of_other_commands_says_which() {
        let argv = terraform_spellings(os(&["clusterform", "plan", "-auto-approve"]));
        let error = Cli::try_parse_from(argv.clone()).unwrap_err();
        assert_eq!(
            flag_of_other_commands(&argv, &error).as_deref(),
            Some("`--auto-approve` belongs to apply, destroy and force-unlock, not to plan")
        );
        let unknown = os(&["clusterform", "plan", "--frobnicate"]);
        let error = Cli::try_parse_from(unknown.clone()).unwrap_err();
        assert_eq!(flag_of_other_commands(&unknown, &error), None);
    }

    fn parse(args: &[&str]) -> Result<Arguments, CliError> {
        let cli = Cli::try_parse_from(terraform_spellings(os(args))).unwrap();
        Arguments::from_cli(cli)
    }

    #[test]
    fn apply_refuses_a_device_or_a_fifo_before_reading_it() {
        let Err(CliError::Usage(device)) = parse(&["clusterform", "apply", "/dev/zero"]) else {
            panic!("a device is a usage error");
        };
        assert!(device.contains("`/dev/zero` is a device"), "{device}");
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("plan.fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let Err(CliError::Usage(piped)) = parse(&["clusterform", "apply", fifo.to_str().unwrap()])
        else {
            panic!("a FIFO is a usage error");
        };
        assert!(piped.contains("is a FIFO"), "{piped}");
    }

    #[test]
    fn single_dash_long_options_get_a_second_dash() {
        let rewritten = terraform_spellings(os(&[
            "clusterform",
            "-chdir=infra",
            "plan",
            "-out",
            "plan.json",
            "-var",
            "a=b",
            "-var-file=prod.cfvars",
            "-detailed-exitcode",
            "-no-color",
        ]));
        assert_eq!(
            rewritten,
            os(&[
                "clusterform",
                "--chdir=infra",
                "plan",
                "--out",
                "plan.json",
                "--var",
                "a=b",
                "--var-file=prod.cfvars",
                "--detailed-exitcode",
                "--no-color",
            ])
        );
    }

    #[test]
    fn a_token_names_an_option_with_one_dash_or_two() {
        let named = |name, single_dash| Some(OptionToken { name, single_dash });
        assert_eq!(option_token("--out=p"), named("out", false));
        assert_eq!(option_token("--out"), named("out", false));
        assert_eq!(option_token("-lock=false"), named("lock", true));
        assert_eq!(option_token("-v"), named("v", true));
        for word in ["plan", "-", "--", "-=x", "--=x"] {
            assert_eq!(option_token(word), None, "{word}");
        }
    }

    #[test]
    fn short_flags_unknown_names_and_what_follows_the_separator_stay() {
        let args = os(&["clusterform", "-v", "-vv", "-q", "-bogus", "--", "-json"]);
        assert_eq!(terraform_spellings(args.clone()), args);
    }

    #[test]
    fn the_directory_is_given_once() {
        let Arguments::Plan(plan) = parse(&["clusterform", "plan", "--chdir", "a"]).unwrap() else {
            panic!("not a plan");
        };
        assert_eq!(plan.dir, Path::new("a"));
        let Arguments::Plan(plan) = parse(&["clusterform", "-chdir=b", "plan"]).unwrap() else {
            panic!("not a plan");
        };
        assert_eq!(plan.dir, Path::new("b"));
        let twice = parse(&["clusterform", "plan", "--chdir", "a", "b"]).unwrap_err();
        assert!(twice.to_string().contains("given twice"), "{twice}");
        let twice = parse(&["clusterform", "-chdir=a", "validate", "b"]).unwrap_err();
        assert!(twice.to_string().contains("given twice"), "{twice}");
    }

    #[test]
    fn destroy_plans_with_its_variables_and_targets() {
        let Arguments::Destroy(destroy) = parse(&[
            "clusterform",
            "destroy",
            "--var",
            "region=us-east1",
            "--target",
            "train01",
        ])
        .unwrap() else {
            panic!("not a destroy");
        };
        assert_eq!(
            destroy.planning.variables.pairs,
            vec![("region".to_owned(), "us-east1".to_owned())]
        );
        assert_eq!(destroy.planning.options.targets, vec!["train01".to_owned()]);
    }

    #[test]
    fn a_terraform_address_is_refused_with_the_id_it_likely_names() {
        for (args, meant) in [
            (
                &["plan", "--target", "cluster.fleet[\"vision\"]"][..],
                "--target vision",
            ),
            (&["apply", "-target=cluster.train01"], "--target train01"),
            (&["plan", "--replace", "cluster.fleet['a']"], "--replace a"),
            (&["destroy", "--target", "cluster.x[b]"], "--target b"),
            (
                &["status", "--target", "cluster.fleet[\"c\"]"],
                "--target c",
            ),
        ] {
            let argv: Vec<&str> = ["clusterform"].iter().chain(args).copied().collect();
            let Err(CliError::Usage(message)) = parse(&argv) else {
                panic!("{args:?} is not refused");
            };
            assert!(
                message.contains(&format!("did you mean `{meant}`?")),
                "{message}"
            );
        }
        assert!(parse(&["clusterform", "plan", "--target", "cluster1"]).is_ok());
    }

    #[test]
    fn terraform_options_clusterform_lacks_are_named_with_what_to_do_instead() {
        for (argv, flag) in [
            (&["clusterform", "plan", "-lock=false"][..], "-lock"),
            (
                &["clusterform", "apply", "--refresh=false", "."],
                "-refresh",
            ),
            (&["clusterform", "plan", "-input=false"], "-input"),
            (&["clusterform", "apply", "-state", "x.tfstate"], "-state"),
        ] {
            let message = terraform_only_flag(&os(argv)).unwrap();
            assert!(
                message.starts_with(&format!("`{flag}` is a Terraform option")),
                "{message}"
            );
        }
        assert_eq!(
            terraform_only_flag(&os(&["clusterform", "plan", "--", "-lock"])),
            None,
            "after `--`, a word is no option"
        );
        assert_eq!(
            terraform_only_flag(&os(&["clusterform", "plan", "-out=p"])),
            None
        );
    }

    #[test]
    fn fmt_dash_reads_standard_input_alone() {
        let Arguments::Fmt(fmt) = parse(&["clusterform", "fmt", "-check", "-"]).unwrap() else {
            panic!("not fmt");
        };
        assert_eq!(fmt.input, FmtInput::Stdin);
        assert!(fmt.check);
        for argv in [
            &["clusterform", "fmt", "-", "a.hcl"][..],
            &["clusterform", "fmt", "-recursive", "-"],
        ] {
            assert!(matches!(parse(argv), Err(CliError::Usage(_))), "{argv:?}");
        }
        let Arguments::Fmt(fmt) = parse(&["clusterform", "fmt", "-recursive", "d"]).unwrap() else {
            panic!("not fmt");
        };
        assert_eq!(
            fmt.input,
            FmtInput::Paths {
                roots: vec![PathBuf::from("d")],
                recursive: true
            }
        );
    }

    #[test]
    fn a_saved_plan_refuses_the_flags_it_fixed() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let file = file.path().to_str().unwrap();
        for (flag, value) in [
            ("--target", "a"),
            ("--replace", "a"),
            ("--var", "a=b"),
            ("--var-file", "x.cfvars"),
            ("--update-mode", "USER_ONLY"),
        ] {
            let error = parse(&["clusterform", "apply", file, flag, value]).unwrap_err();
            assert!(matches!(error, CliError::Usage(_)), "{error}");
            let message = error.to_string();
            assert!(message.starts_with(flag), "{message}");
            assert!(message.contains("plan again with"), "{message}");
        }
        let Arguments::Apply(apply) = parse(&["clusterform", "apply", file]).unwrap() else {
            panic!("not an apply");
        };
        assert!(matches!(
            apply.source,
            ApplySource::SavedPlan { dir: None, .. }
        ));
    }

    #[test]
    fn a_destroy_plan_refuses_replace_and_update_mode() {
        for flag in [&["--replace", "a"][..], &["--update-mode", "USER_ONLY"]] {
            let mut args = vec!["clusterform", "plan", "--destroy"];
            args.extend_from_slice(flag);
            let error = parse(&args).unwrap_err();
            assert!(
                error.to_string().contains("does nothing with --destroy"),
                "{error}"
            );
        }
        let Arguments::Plan(plan) =
            parse(&["clusterform", "plan", "--destroy", "--target", "a"]).unwrap()
        else {
            panic!("not a plan");
        };
        assert!(plan.planning.options.destroy);
    }

    #[test]
    fn a_refresh_only_plan_refuses_what_would_propose_or_save_something() {
        for flag in [
            &["--out", "p.json"][..],
            &["--destroy"],
            &["--replace", "a"],
            &["--update-mode", "USER_ONLY"],
            &["--prices", "prices.json"],
        ] {
            let mut args = vec!["clusterform", "plan", "--refresh-only"];
            args.extend_from_slice(flag);
            let error = parse(&args).unwrap_err();
            assert!(matches!(error, CliError::Usage(_)), "{error}");
            assert!(
                error
                    .to_string()
                    .contains(&format!("{} cannot be used with --refresh-only", flag[0])),
                "{error}"
            );
        }
        let Arguments::Plan(plan) = parse(&[
            "clusterform",
            "plan",
            "--refresh-only",
            "--json",
            "--detailed-exitcode",
            "--target",
            "a",
        ])
        .unwrap() else {
            panic!("not a plan");
        };
        assert!(plan.refresh_only && plan.json && plan.detailed_exitcode);
    }

    #[test]
    fn a_summary_is_neither_json_nor_refresh_only() {
        let refused = |args: &[&str]| Cli::try_parse_from(os(args)).is_err();
        for other in ["--json", "--refresh-only"] {
            assert!(refused(&["clusterform", "plan", "--summary", other]));
        }
        assert!(refused(&[
            "clusterform",
            "show",
            "p.json",
            "--summary",
            "--json"
        ]));
        assert!(refused(&[
            "clusterform",
            "show",
            "p.json",
            "--format",
            "markdown",
            "--json"
        ]));
        assert!(!refused(&[
            "clusterform",
            "show",
            "p.json",
            "--format",
            "markdown",
            "--summary"
        ]));
        let Arguments::Plan(plan) = parse(&["clusterform", "plan", "--summary"]).unwrap() else {
            panic!("not a plan");
        };
        assert!(plan.summary && !plan.json);
    }

    #[test]
    fn json_events_need_approval_given_beforehand() {
        for command in ["apply", "destroy"] {
            let error = parse(&["clusterform", command, "--json"]).unwrap_err();
            assert!(matches!(error, CliError::Usage(_)), "{error}");
            assert!(error.to_string().contains("--auto-approve"), "{error}");
            parse(&["clusterform", command, "--json", "--auto-approve"]).unwrap();
        }
        let plan_file = tempfile::NamedTempFile::new().unwrap();
        let path = plan_file.path().to_str().unwrap();
        let Arguments::Apply(apply) = parse(&["clusterform", "apply", "--json", path]).unwrap()
        else {
            panic!("not an apply");
        };
        assert!(apply.json && !apply.auto_approve);
    }

    #[test]
    fn the_lock_timeout_defaults_to_failing_at_once() {
        let Arguments::Apply(apply) = parse(&["clusterform", "apply"]).unwrap() else {
            panic!("not an apply");
        };
        assert_eq!(apply.lock_timeout, Duration::ZERO);
        let Arguments::Import(import) =
            parse(&["clusterform", "import", "train01", "-lock-timeout=2m"]).unwrap()
        else {
            panic!("not an import");
        };
        assert_eq!(import.lock_timeout, Duration::from_secs(120));
    }

    #[test]
    fn the_emulator_serves_the_buckets_given_or_creates_them_on_use() {
        let Arguments::Emulator(plain) = parse(&["clusterform", "emulator"]).unwrap() else {
            panic!("not the emulator");
        };
        assert!(plain.options.buckets.is_empty());
        assert!(!plain.options.create_buckets_on_use);
        assert!(!plain.options.object_mutation_limit);
        let Arguments::Emulator(emulator) = parse(&[
            "clusterform",
            "emulator",
            "--bucket",
            "team-infra",
            "--bucket",
            "ci-state",
            "--create-buckets",
            "--object-rate-limit",
        ])
        .unwrap() else {
            panic!("not the emulator");
        };
        assert_eq!(emulator.options.buckets, ["team-infra", "ci-state"]);
        assert!(emulator.options.create_buckets_on_use);
        assert!(emulator.options.object_mutation_limit);
    }

    #[test]
    fn the_emulator_takes_refused_locations() {
        let Arguments::Emulator(emulator) = parse(&[
            "clusterform",
            "emulator",
            "--refuse-location",
            "us-east5",
            "--refuse-location",
            "not-allowlisted:my-proj/asia-south2",
        ])
        .unwrap() else {
            panic!("not the emulator");
        };
        let refused: Vec<String> = emulator
            .options
            .refused_locations
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            refused,
            ["permission:us-east5", "not-allowlisted:my-proj/asia-south2"]
        );
        let error =
            parse(&["clusterform", "emulator", "--refuse-location", "x:us-east5"]).unwrap_err();
        assert!(error.to_string().contains("--refuse-location"), "{error}");
    }

    #[test]
    fn the_emulator_takes_start_failures() {
        let Arguments::Emulator(emulator) = parse(&[
            "clusterform",
            "emulator",
            "--start-failure",
            "a4-highgpu-8g@us-central1-a",
            "--start-failure",
            "a3-megagpu-8g",
        ])
        .unwrap() else {
            panic!("not the emulator");
        };
        let failures: Vec<String> = emulator
            .options
            .start_failures
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(failures, ["a4-highgpu-8g@us-central1-a", "a3-megagpu-8g"]);
        let error = parse(&["clusterform", "emulator", "--start-failure", "quota:a4"]).unwrap_err();
        assert!(error.to_string().contains("--start-failure"), "{error}");
    }

    #[test]
    fn the_emulator_takes_a_preflight_world_file_and_refuses_a_bad_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("world.json");
        std::fs::write(
            &file,
            r#"{"deniedPermissions": ["iam.serviceAccounts.actAs"]}"#,
        )
        .unwrap();
        let name = "projects/p/services/file.googleapis.com";
        let path = file.to_str().unwrap();
        let Arguments::Emulator(emulator) = parse(&[
            "clusterform",
            "emulator",
            "--preflight-world",
            path,
            "--disabled-service",
            name,
        ])
        .unwrap() else {
            panic!("not the emulator");
        };
        let world = &emulator.options.preflight;
        assert_eq!(world.denied_permissions, ["iam.serviceAccounts.actAs"]);
        assert_eq!(world.disabled_services, [name]);
        std::fs::write(&file, r#"{"forbiddenApis": ["dns"]}"#).unwrap();
        let error = parse(&["clusterform", "emulator", "--preflight-world", path]).unwrap_err();
        assert!(error.to_string().contains("not a preflight API"), "{error}");
    }

    #[test]
    fn the_emulator_takes_disabled_services() {
        let name = "projects/my-proj/services/file.googleapis.com";
        let Arguments::Emulator(emulator) =
            parse(&["clusterform", "emulator", "--disabled-service", name]).unwrap()
        else {
            panic!("not the emulator");
        };
        assert_eq!(emulator.options.preflight.disabled_services, [name]);
        let error = parse(&[
            "clusterform",
            "emulator",
            "--disabled-service",
            "file.googleapis.com",
        ])
        .unwrap_err();
        assert!(error.to_string().contains("--disabled-service"), "{error}");
    }

    #[test]
    fn the_emulator_takes_slurm_versions_capacity_failures_and_the_blocked_id_time() {
        let Arguments::Emulator(plain) = parse(&["clusterform", "emulator"]).unwrap() else {
            panic!("not the emulator");
        };
        assert_eq!(
            plain.options.slurm_api_versions,
            EmulatorOptions::default().slurm_api_versions
        );
        assert!(plain.options.capacity_failures.is_empty());
        let Arguments::Emulator(emulator) = parse(&[
            "clusterform",
            "emulator",
            "--slurm-versions",
            "v0.0.44,v0.0.43",
            "--capacity-failure",
            "a4-highgpu-8g@us-central1-b",
            "--capacity-failure",
            "a3-megagpu-8g",
            "--capacity-failure",
            "quota:a4-highgpu-8g@us-central1-a/1",
            "--capacity-failure",
            "not-allowed:a3-highgpu-8g",
            "--id-blocked-after-delete",
            "2.5",
        ])
        .unwrap() else {
            panic!("not the emulator");
        };
        assert_eq!(emulator.options.slurm_api_versions, ["v0.0.44", "v0.0.43"]);
        let failures: Vec<String> = emulator
            .options
            .capacity_failures
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            failures,
            [
                "a4-highgpu-8g@us-central1-b",
                "a3-megagpu-8g",
                "quota:a4-highgpu-8g@us-central1-a/1",
                "not-allowed:a3-highgpu-8g"
            ]
        );
        assert_eq!(
            emulator.options.id_blocked_after_delete,
            Duration::from_millis(2_500)
        );
        assert_eq!(plain.options.id_blocked_after_delete, Duration::ZERO);
        for bad in [
            &["--slurm-versions", "44"][..],
            &["--slurm-versions", "v0.0.44,v1"],
            &["--capacity-failure", "a4-highgpu-8g@"],
            &["--capacity-failure", "full:a4-highgpu-8g"],
            &["--capacity-failure", "a4-highgpu-8g/0"],
            &["--id-blocked-after-delete=-1"],
        ] {
            let args = [&["clusterform", "emulator"][..], bad].concat();
            assert!(matches!(parse(&args), Err(CliError::Usage(_))), "{bad:?}");
        }
    }

    #[test]
    fn force_unlock_takes_the_lock_id_and_a_directory() {
        let Arguments::ForceUnlock(args) = parse(&[
            "clusterform",
            "force-unlock",
            "0b7e",
            "infra",
            "--auto-approve",
        ])
        .unwrap() else {
            panic!("not force-unlock");
        };
        assert_eq!(args.lock_id, "0b7e");
        assert_eq!(args.dir.to_str(), Some("infra"));
        assert!(args.auto_approve);
    }

    #[test]
    fn a_var_without_equals_is_a_usage_error() {
        let error = parse(&["clusterform", "validate", "--var", "region"]).unwrap_err();
        assert!(matches!(error, CliError::Usage(_)), "{error}");
    }

    #[test]
    fn commands_without_a_configuration_refuse_chdir() {
        for command in [
            &["emulator"][..],
            &["completions", "bash"],
            &["show", "p.json"],
        ] {
            let mut args = vec!["clusterform", "--chdir", "x"];
            args.extend_from_slice(command);
            let error = parse(&args).unwrap_err();
            assert!(error.to_string().contains("does nothing"), "{error}");
        }
    }

    #[test]
    fn the_emulator_resolves_localhost_and_stays_on_loopback() {
        let listen = listen_address("localhost:8089", false).unwrap();
        assert!(listen.ip().is_loopback());
        assert_eq!(listen.port(), 8089);
        let remote = listen_address("0.0.0.0:8089", false).unwrap_err();
        assert!(remote.to_string().contains("--allow-remote"), "{remote}");
        assert!(listen_address("0.0.0.0:8089", true).is_ok());
    }
}
