//! Loading a configuration directory: reads and parses every `*.hcl` file, sorts the top-level
//! blocks (`variable`, `locals`, `provider`, `cluster`, `removed`), gives variables their
//! values, resolves locals, decodes the provider and every `removed` block, expands every
//! cluster's `for_each`, decodes every cluster instance, runs the checks, and returns either the [`Config`] with its
//! warnings or every diagnostic of the run.
//!
//! Each step is a function of its own submodule that takes what it reads and returns what it
//! found, its problems going to the run's [`Evaluator`]: `files` (reading and sorting blocks),
//! `inputs` (variable declarations), `provider` (with `remote_state`, its `lock` block, and
//! `pricing`, its prices, also read from a prices file),
//! `removed`, `for_each`, `cluster` (one instance),
//! `schedule` (decoding clusters on all cores) and `digest`.

mod cluster;
mod digest;
mod files;
mod for_each;
mod inputs;
mod preflight_endpoints;
mod pricing;
mod provider;
mod remote_state;
mod removed;
mod schedule;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hcl::Value;
use hcl::edit::structure::Block;

use crate::config::{Config, Provider, SourceLocation, VariableInputs};
use crate::diagnostic::{Diagnostic, Diagnostics, MissingVariable, Severity, SourceFile};
use crate::language::evaluator::{Bindings, Evaluator};
use crate::language::functions::{base_context, with_base_dir};
use crate::language::guard::with_budget;
use crate::language::redact::Redaction;
use crate::language::variables::{self, NoValue};

use self::digest::{digest, file_digests};
use self::files::{ReadFiles, read_files, sort_blocks};
pub use self::pricing::{LoadedPrices, load_prices};

/// A successfully loaded configuration.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The validated configuration.
    pub config: Config,
    /// Problems that do not stop the configuration from being used (e.g. unused variables).
    pub warnings: Vec<Diagnostic>,
    /// The texts of its sensitive values, which nothing the binary prints may show: a
    /// server's or an operation's message may quote them (a `400` echoing a startup script).
    pub secrets: Redaction,
}

/// A configuration that passed [`validate`]: what can be said of it while some variables
/// have no value. Deliberately not a [`Config`]: values that depend on unknown variables are
/// missing, so it cannot be planned.
#[derive(Debug, Clone)]
pub struct Validated {
    /// How many clusters it declares (instances of a `for_each` over an unknown value are not
    /// counted).
    pub clusters: usize,
    /// Problems that do not make it invalid (e.g. unused variables).
    pub warnings: Vec<Diagnostic>,
}

/// Loads, evaluates and validates the configuration in `dir`.
///
/// # Errors
///
/// Every problem of the run (errors and warnings), plus the variables that have no value.
pub fn load(dir: &Path, inputs: &VariableInputs) -> Result<Loaded, Diagnostics> {
    run(dir, inputs, NoValue::Missing).map(|run| run.loaded)
}

/// Validates the configuration in `dir` as `terraform validate` does, without requiring
/// variable values: a variable without one is unknown, never reported as missing, and the
/// expressions that depend on it are not evaluated (so they cannot fail). Values that are
/// given are checked as by [`load`].
///
/// # Errors
///
/// Every problem of the run (errors and warnings); `missing_variables` is always empty.
pub fn validate(dir: &Path, inputs: &VariableInputs) -> Result<Validated, Diagnostics> {
    run(dir, inputs, NoValue::Unknown).map(|run| Validated {
        clusters: run.declared,
        warnings: run.loaded.warnings,
    })
}

/// What a run found: the configuration, and how many clusters it declares, counting those
/// whose location depends on unknown variables, which the configuration leaves out.
struct Run {
    loaded: Loaded,
    declared: usize,
}

fn run(dir: &Path, inputs: &VariableInputs, no_value: NoValue) -> Result<Run, Diagnostics> {
    // Every load has its own evaluation budget, shared by its worker threads.
    with_budget(Arc::default(), || {
        with_base_dir(dir, || load_dir(dir, inputs, no_value))
    })
}

/// A top-level block and the file it is in.
type FileBlock<'a> = (&'a SourceFile, Block);

/// A block's head in its file, where a diagnostic about the block points.
struct Place<'a> {
    file: &'a SourceFile,
    range: Option<Range<usize>>,
}

/// What a cluster or `removed` block takes from the provider when it does not set it.
struct ProviderDefaults {
    provider: Provider,
    /// Whether the provider's project and region depend on unknown variables: a block that
    /// takes them from the provider then has an unknown location, not none.
    unknown: UnknownLocations,
    /// What is wrong with the provider's project and region, at their attributes: a block that
    /// takes them is reported where it does, so these stand only when no block does (the
    /// provider's location is then the one the refresh lists).
    location_problems: Vec<Diagnostic>,
}

#[derive(Debug, Default, Clone, Copy)]
struct UnknownLocations {
    project: bool,
    region: bool,
}

/// Reports the provider location's problems that no block reported already (a block whose
/// location is malformed reports it at its head, and is then not among the clusters).
fn report_provider_location(diagnostics: &mut Vec<Diagnostic>, problems: Vec<Diagnostic>) {
    for problem in problems {
        if !diagnostics.iter().any(|d| d.message == problem.message) {
            diagnostics.push(problem);
        }
    }
}

fn load_dir(dir: &Path, inputs: &VariableInputs, no_value: NoValue) -> Result<Run, Diagnostics> {
    let mut eval = Evaluator::default();
    let Some(ReadFiles {
        files,
        bodies,
        mut sources,
    }) = read_files(dir, &mut eval.diagnostics)
    else {
        return Err(report(
            eval.diagnostics,
            Vec::new(),
            BTreeMap::new(),
            &Redaction::default(),
        ));
    };
    let mut top = sort_blocks(&files, bodies, &mut eval.diagnostics);
    let mut default_secrets = Vec::new();
    let declarations = inputs::declarations(&top, &mut eval.diagnostics, &mut default_secrets);
    if inputs::report_stray_attributes(&top.stray, &declarations, &mut eval.diagnostics) {
        return Err(report(
            eval.diagnostics,
            Vec::new(),
            sources,
            &Redaction::new(default_secrets),
        ));
    }
    let auto_files = inputs::directory_var_files(dir);
    let values = variables::resolve(
        &declarations,
        inputs,
        auto_files,
        no_value,
        &mut eval.diagnostics,
    );
    for source in &values.sources {
        sources.insert(source.path.clone(), source.text.clone());
    }
    let redaction = Redaction::new(values.secrets.iter().cloned().chain(default_secrets));
    if !values.missing.is_empty() {
        return Err(report(
            eval.diagnostics,
            values.missing,
            sources,
            &redaction,
        ));
    }
    eval.declare_variables(declarations.iter().map(|d| (d.name.clone(), d.sensitive)));
    eval.declare_unknown(values.unknown);
    let mut ctx = Bindings::new(base_context());
    ctx.declare("var", Value::Object(values.values.clone()));
    eval.resolve_locals(&top.local_defs(), &mut ctx);
    let defaults = provider::provider(
        &mut eval,
        &top.providers,
        top.first_declaration(),
        &ctx,
        dir,
    );
    let removed = removed::removed(&mut eval, &top.removed, &ctx, &defaults);
    let blocks = for_each::expand(&mut eval, std::mem::take(&mut top.clusters), &ctx);
    let clusters = schedule::clusters(&mut eval, blocks, &ctx, &defaults);
    if clusters.is_empty() && removed.is_empty() {
        report_provider_location(&mut eval.diagnostics, defaults.location_problems);
    }
    removed::check_removed_not_declared(&removed, &clusters, &mut eval.diagnostics);
    inputs::warn_unused(&declarations, &eval.used_variables, &mut eval.diagnostics);
    let digest = digest(&files, &values.values);
    if error_count(&eval.diagnostics) > 0 {
        return Err(report(eval.diagnostics, Vec::new(), sources, &redaction));
    }
    let warnings = report(eval.diagnostics, Vec::new(), sources, &redaction).items;
    let declared = clusters.len();
    let loaded = Loaded {
        config: Config {
            root: dir.to_path_buf(),
            provider: defaults.provider,
            clusters: clusters.into_iter().filter_map(|c| c.named).collect(),
            removed: removed.into_iter().filter_map(|(r, _)| r.named).collect(),
            digest,
            file_digests: file_digests(&files),
            variables: values
                .values
                .iter()
                .map(|(name, value)| (name.clone(), variables::to_json(value)))
                .collect(),
        },
        warnings,
        secrets: redaction,
    };
    Ok(Run { loaded, declared })
}

/// The diagnostics of a run as it returns them: in position order, each problem once, no
/// sensitive value shown.
fn report(
    mut items: Vec<Diagnostic>,
    missing_variables: Vec<MissingVariable>,
    sources: BTreeMap<PathBuf, Arc<str>>,
    redaction: &Redaction,
) -> Diagnostics {
    // The instances of a `for_each` block report at the same places: sorted with their
    // messages, the same problem at the same place is adjacent and kept once, however the
    // instances interleave (the region warning of a fleet dealt over regions).
    items.sort_by(|a, b| {
        (&a.file, a.line, a.column, &a.message).cmp(&(&b.file, b.line, b.column, &b.message))
    });
    items.dedup_by(|a, b| a.file == b.file && a.range == b.range && a.message == b.message);
    Diagnostics {
        items: items
            .into_iter()
            .map(|item| redaction.diagnostic(item))
            .collect(),
        missing_variables,
        sources: redaction.sources(sources),
    }
}

fn error_count(diagnostics: &[Diagnostic]) -> usize {
    diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count()
}

/// Where a block whose head is at `head` is declared.
fn source_location(source: &SourceFile, head: Option<Range<usize>>) -> SourceLocation {
    let (line, column) = source.position(head.map_or(0, |r| r.start));
    SourceLocation {
        file: source.path.clone(),
        line,
        column,
    }
}

/// `file:line:col` of a location.
fn at(location: &SourceLocation) -> String {
    format!(
        "{}:{}:{}",
        location.file.display(),
        location.line,
        location.column
    )
}
