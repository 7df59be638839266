//! Loading a configuration directory: reads and parses every `*.hcl` file, sorts the top-level
//! blocks (`variable`, `locals`, `provider`, `cluster`, `removed`), gives variables their
//! values, resolves locals, decodes the provider and every `removed` block, expands every
//! cluster's `for_each`, announces the locations to a caller that asked ([`load_with`]),
//! decodes every cluster instance, runs the checks, and returns either the [`Config`] with its
//! warnings or every diagnostic of the run.
//!
//! [`Run`] carries the state of one load; each concern adds its own methods in a submodule:
//! `files` (reading and sorting blocks), `inputs` (variable declarations), `provider`,
//! `removed`, `for_each`, `locations` (the early locations), `cluster` (one instance),
//! `schedule` (decoding clusters on all cores) and `digest`.

mod cluster;
mod digest;
mod files;
mod for_each;
mod inputs;
mod locations;
mod provider;
mod remote_state;
mod removed;
mod schedule;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hcl::Value;
use hcl::edit::structure::Block;

use crate::config::{Config, Provider, SourceLocation, VariableInputs};
use crate::diagnostic::{Diagnostic, Diagnostics, MissingVariable, Severity, SourceFile};
use crate::evaluator::{Bindings, Evaluator};
use crate::functions::{base_context, with_base_dir};
use crate::guard::with_budget;
use crate::redact::Redaction;
use crate::variables::{self, NoValue};

use self::digest::digest;

/// A successfully loaded configuration.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The validated configuration.
    pub config: Config,
    /// Problems that do not stop the configuration from being used (e.g. unused variables).
    pub warnings: Vec<Diagnostic>,
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
    run(dir, inputs, NoValue::Missing, None)
}

/// What [`load_with`] tells its caller early: the provider and every (project, region) the
/// configuration lists.
pub type OnLocations<'a> = Box<dyn FnOnce(&Provider, &BTreeSet<(String, String)>) + 'a>;

/// [`load`], telling `on_locations` the provider and the locations as soon as they are known:
/// after the variables, locals, provider, `removed` blocks and every cluster's `for_each`,
/// `project` and `region`, before the cluster bodies are decoded. It is called on the loading
/// thread, at most once, and only when the run has found no error so far; whenever the load
/// then succeeds, the locations equal its [`Config::locations`] and the provider its
/// `provider`. A load that fails may have called it (a cluster body can still be wrong): the
/// caller must not act on the locations beyond reading the live state.
///
/// # Errors
///
/// As [`load`].
pub fn load_with(
    dir: &Path,
    inputs: &VariableInputs,
    on_locations: OnLocations<'_>,
) -> Result<Loaded, Diagnostics> {
    run(dir, inputs, NoValue::Missing, Some(on_locations))
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
    run(dir, inputs, NoValue::Unknown, None).map(|loaded| Validated {
        clusters: loaded.config.clusters.len(),
        warnings: loaded.warnings,
    })
}

fn run(
    dir: &Path,
    inputs: &VariableInputs,
    no_value: NoValue,
    on_locations: Option<OnLocations<'_>>,
) -> Result<Loaded, Diagnostics> {
    // Every load has its own evaluation budget, shared by its worker threads.
    with_budget(Arc::default(), || {
        with_base_dir(dir, || {
            Run::default().load(dir, inputs, no_value, on_locations)
        })
    })
}

/// A top-level block and the file it is in.
type FileBlock<'a> = (&'a SourceFile, Block);

/// A block's head in its file, where a diagnostic about the block points.
struct Place<'a> {
    file: &'a SourceFile,
    range: Option<Range<usize>>,
}

/// Whether the provider's project and region depend on unknown variables: clusters and
/// `removed` blocks that take them from the provider then have an unknown location, not none.
#[derive(Debug, Default, Clone, Copy)]
struct UnknownLocations {
    project: bool,
    region: bool,
}

#[derive(Default)]
struct Run {
    eval: Evaluator,
    sources: BTreeMap<PathBuf, Arc<str>>,
    missing: Vec<MissingVariable>,
    unknown_locations: UnknownLocations,
    /// Sensitive variables' values, kept out of every diagnostic.
    redaction: Redaction,
}

impl Run {
    fn load(
        mut self,
        dir: &Path,
        inputs: &VariableInputs,
        no_value: NoValue,
        on_locations: Option<OnLocations<'_>>,
    ) -> Result<Loaded, Diagnostics> {
        let (files, bodies) = self.read_files(dir)?;
        let mut top = self.sort_blocks(&files, bodies);
        let declarations = self.declarations(&top);
        if self.report_stray_attributes(&top.stray, &declarations) {
            return Err(self.finish());
        }
        let auto_files = inputs::directory_var_files(dir);
        let values = variables::resolve(
            &declarations,
            inputs,
            auto_files,
            no_value,
            &mut self.eval.diagnostics,
        );
        for source in &values.sources {
            self.sources
                .insert(source.path.clone(), source.text.clone());
        }
        self.redaction = Redaction::new(values.secrets.iter().cloned());
        if !values.missing.is_empty() {
            self.missing = values.missing;
            return Err(self.finish());
        }
        self.eval
            .declare_variables(declarations.iter().map(|d| (d.name.clone(), d.sensitive)));
        self.eval.declare_unknown(values.unknown);
        let mut ctx = Bindings::new(base_context());
        ctx.declare("var", Value::Object(values.values.clone()));
        self.eval.resolve_locals(&top.local_defs(), &mut ctx);
        let provider = self.provider(&top.providers, top.first_declaration(), &ctx, dir);
        let removed = self.removed(&top.removed, &ctx, &provider);
        let blocks = self.expand(std::mem::take(&mut top.clusters), &ctx);
        if let Some(on_locations) = on_locations
            && let Some(locations) = self.early_locations(&blocks, &removed, &ctx, &provider)
        {
            on_locations(&provider, &locations);
        }
        let clusters = self.clusters(blocks, &ctx, &provider);
        self.check_removed_not_declared(&removed, &clusters);
        self.warn_unused(&declarations);
        let digest = digest(&files, &values.values);
        if self
            .eval
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
        {
            return Err(self.finish());
        }
        let warnings = self.finish().items;
        Ok(Loaded {
            config: Config {
                root: dir.to_path_buf(),
                provider,
                clusters,
                removed: removed.into_iter().map(|(removed, _)| removed).collect(),
                digest,
                variables: values
                    .values
                    .iter()
                    .map(|(name, value)| (name.clone(), variables::to_json(value)))
                    .collect(),
            },
            warnings,
        })
    }

    fn finish(mut self) -> Diagnostics {
        let mut items = std::mem::take(&mut self.eval.diagnostics);
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
                .map(|item| self.redaction.diagnostic(item))
                .collect(),
            missing_variables: self.missing,
            sources: self.redaction.sources(self.sources),
        }
    }

    fn error_count(&self) -> usize {
        self.eval
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
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
