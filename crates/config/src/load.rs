//! Loading a configuration directory: reads and parses every `*.hcl` file, sorts the top-level
//! blocks (`variable`, `locals`, `provider`, `cluster`, `removed`), gives variables their
//! values, resolves locals, decodes the provider, every cluster (and `for_each` instance) and
//! every `removed` block, runs the checks, and returns either the [`Config`] with its warnings
//! or every diagnostic of the run.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clusterform_model::fields::UPDATE_MODES;
use clusterform_model::{ClusterId, validate_location, validate_project};
use hcl::Value;
use hcl::edit::Span;
use hcl::edit::structure::{Block, Body, Structure};
use sha2::{Digest, Sha256};

use crate::config::{
    Config, DesiredCluster, Provider, RemovedCluster, SourceLocation, StackOrigin, VariableInputs,
};
use crate::decode::{decode_cluster, string_text};
use crate::diagnostic::{
    Diagnostic, Diagnostics, MissingVariable, Severity, SourceFile, did_you_mean,
};
use crate::evaluator::{Bindings, Evaluator, LocalDef, Scope};
use crate::functions::{base_context, type_name, with_base_dir};
use crate::guard::with_budget;
use crate::parallel::{Done, Task, in_parallel};
use crate::source::{block_head, label_range, list_hcl_files, parse, read_source};
use crate::spans::Spans;
use crate::validate::{ClusterChecks, label_value_problem};
use crate::variables::{self, Declaration};

/// A successfully loaded configuration.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The validated configuration.
    pub config: Config,
    /// Problems that do not stop the configuration from being used (e.g. unused variables).
    pub warnings: Vec<Diagnostic>,
}

/// Loads, evaluates and validates the configuration in `dir`.
///
/// # Errors
///
/// Every problem of the run (errors and warnings), plus the variables that have no value.
pub fn load(dir: &Path, inputs: &VariableInputs) -> Result<Loaded, Diagnostics> {
    // Every load has its own evaluation budget, shared by its worker threads.
    with_budget(Arc::default(), || {
        with_base_dir(dir, || Run::default().load(dir, inputs))
    })
}

/// A top-level block and the file it is in.
type FileBlock<'a> = (&'a SourceFile, Block);

/// A parsed file's body and the thread that parsed it.
type ParsedBody = Done<Body>;

/// The top-level blocks of every file, by kind, taken out of the files' bodies. Cluster blocks
/// come in tasks of up to [`CLUSTERS_PER_TASK`] blocks of one file, for the thread that parsed
/// the file, which decodes them and frees each one when done with it.
#[derive(Default)]
struct TopLevel<'a> {
    variables: Vec<FileBlock<'a>>,
    locals: Vec<FileBlock<'a>>,
    providers: Vec<FileBlock<'a>>,
    clusters: Vec<Task<Vec<FileBlock<'a>>>>,
    removed: Vec<FileBlock<'a>>,
}

impl<'a> TopLevel<'a> {
    /// The head of the first `cluster` block, else of the first `removed` block.
    fn first_declaration(&self) -> Option<Place<'a>> {
        let first_cluster = self.clusters.first().and_then(|task| task.item.first());
        first_cluster
            .or(self.removed.first())
            .map(|(file, block)| Place {
                file,
                range: block_head(block),
            })
    }

    /// Every `name = expr` of the `locals` blocks.
    fn local_defs(&self) -> Vec<LocalDef<'_>> {
        self.locals
            .iter()
            .flat_map(|(source, block)| {
                block.body.attributes().map(|attribute| LocalDef {
                    name: attribute.key.as_str(),
                    expr: &attribute.value,
                    key_range: attribute.key.span(),
                    file: source,
                })
            })
            .collect()
    }
}

const TOP_LEVEL_BLOCKS: [&str; 5] = ["variable", "locals", "provider", "cluster", "removed"];
const PROVIDER_ATTRIBUTES: [&str; 5] = ["project", "region", "stack", "update_mode", "endpoint"];

/// The endpoint value that selects the built-in emulator, the only one where the stack may
/// default to the directory name.
const LOCAL_ENDPOINT: &str = "local";

const MISSING_STACK_HINT: &str = "add `stack = \"...\"` to `provider \"google\" { ... }`, e.g. `stack = \"ml-prod\"`. \
The stack names the owner of these clusters: clusterform labels every cluster it creates \
`clusterform-stack = <stack>` and destroys the clusters of its stack that the configuration no longer \
declares, so the name must be unique per configuration (at most 63 lowercase letters, digits, `_` and `-`). \
Only `endpoint = \"local\"` defaults it to the directory name.";

const REMOVED_ATTRIBUTES: [&str; 3] = ["cluster", "project", "region"];
const REMOVED_SHAPE_HINT: &str =
    "write `removed { cluster = \"ID\" }`, optionally with `project` and `region`";

/// The values of a `removed` block's attributes, each with where it is written.
#[derive(Default)]
struct RemovedValues {
    cluster: Option<(String, Option<Range<usize>>)>,
    project: Option<(String, Option<Range<usize>>)>,
    region: Option<(String, Option<Range<usize>>)>,
}

/// A block's head in its file, where a diagnostic about the block points.
struct Place<'a> {
    file: &'a SourceFile,
    range: Option<Range<usize>>,
}

/// Which provider attributes were written (even with a value that is reported as wrong).
#[derive(Default)]
struct ProviderSeen {
    stack: bool,
    endpoint: bool,
}

#[derive(Default)]
struct Run {
    eval: Evaluator,
    sources: BTreeMap<PathBuf, Arc<str>>,
    missing: Vec<MissingVariable>,
}

impl Run {
    fn load(mut self, dir: &Path, inputs: &VariableInputs) -> Result<Loaded, Diagnostics> {
        let (files, bodies) = self.read_files(dir)?;
        let mut top = self.sort_blocks(&files, bodies);
        let declarations = self.declarations(&top);
        let values = variables::resolve(&declarations, inputs, &mut self.eval.diagnostics);
        for source in &values.sources {
            self.sources
                .insert(source.path.clone(), source.text.clone());
        }
        if !values.missing.is_empty() {
            self.missing = values.missing;
            return Err(self.finish());
        }
        self.eval
            .declare_variables(declarations.iter().map(|d| (d.name.clone(), d.sensitive)));
        let mut ctx = Bindings::new(base_context());
        ctx.declare("var", Value::Object(values.values.clone()));
        self.eval.resolve_locals(&top.local_defs(), &mut ctx);
        let provider = self.provider(&top.providers, top.first_declaration(), &ctx, dir);
        let removed = self.removed(&top.removed, &ctx, &provider);
        let clusters = self.clusters(std::mem::take(&mut top.clusters), &ctx, &provider);
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
        items.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
        items.dedup_by(|a, b| a.file == b.file && a.range == b.range && a.message == b.message);
        Diagnostics {
            items,
            missing_variables: self.missing,
            sources: self.sources,
        }
    }

    /// Reads and parses every file: the sources, and the bodies of those that parse.
    fn read_files(
        &mut self,
        dir: &Path,
    ) -> Result<(Vec<SourceFile>, Vec<ParsedBody>), Diagnostics> {
        let paths = match list_hcl_files(dir) {
            Ok(paths) => paths,
            Err(diagnostic) => {
                self.eval.diagnostics.push(*diagnostic);
                return Err(std::mem::take(self).finish());
            }
        };
        let read = |path: PathBuf| -> Result<_, Box<Diagnostic>> {
            let shown = path.strip_prefix(dir).unwrap_or(&path).to_path_buf();
            let source = read_source(&path, shown)?;
            let body = parse(&source);
            Ok((source, body))
        };
        // Any thread may take any file: files are handed out one at a time.
        let tasks = paths
            .into_iter()
            .map(|path| Task {
                thread: 0,
                item: path,
            })
            .collect();
        let mut files = Vec::new();
        let mut bodies = Vec::new();
        for Done { thread, result } in in_parallel(tasks, read) {
            match result {
                Ok((source, body)) => {
                    self.sources
                        .insert(source.path.clone(), source.text.clone());
                    match body {
                        Ok(body) => {
                            files.push(source);
                            bodies.push(Done {
                                thread,
                                result: body,
                            });
                        }
                        Err(diagnostic) => self.eval.diagnostics.push(*diagnostic),
                    }
                }
                Err(diagnostic) => self.eval.diagnostics.push(*diagnostic),
            }
        }
        Ok((files, bodies))
    }

    /// Sorts the top-level blocks of `bodies` (those of `files`, in the same order) by kind.
    fn sort_blocks<'a>(
        &mut self,
        files: &'a [SourceFile],
        bodies: Vec<ParsedBody>,
    ) -> TopLevel<'a> {
        let mut top = TopLevel::default();
        for (source, body) in files.iter().zip(bodies) {
            let mut clusters = Vec::new();
            for structure in body.result {
                let block = match structure {
                    Structure::Block(block) => block,
                    Structure::Attribute(attribute) => {
                        self.eval.diagnostics.push(
                            source.error(
                                attribute.key.span(),
                                format!(
                                    "unexpected attribute `{}` at the top level",
                                    attribute.key.as_str()
                                ),
                                Some(
                                    "attributes belong inside a block such as `locals { ... }`"
                                        .to_owned(),
                                ),
                            ),
                        );
                        continue;
                    }
                };
                let kind = match block.ident.as_str() {
                    "variable" => &mut top.variables,
                    "provider" => &mut top.providers,
                    "cluster" => &mut clusters,
                    "locals" => &mut top.locals,
                    "removed" => &mut top.removed,
                    other => {
                        self.eval.diagnostics.push(source.error(
                            block.ident.span(),
                            format!("unknown block `{other}`"),
                            did_you_mean(other, TOP_LEVEL_BLOCKS).or_else(|| {
                                Some(format!("expected one of: {}", TOP_LEVEL_BLOCKS.join(", ")))
                            }),
                        ));
                        continue;
                    }
                };
                kind.push((source, block));
            }
            top.clusters.extend(cluster_tasks(clusters, body.thread));
        }
        top
    }

    fn declarations(&mut self, top: &TopLevel<'_>) -> Vec<Declaration> {
        let mut declarations: Vec<Declaration> = Vec::new();
        for (source, block) in &top.variables {
            let Some(declaration) = variables::declare(source, block, &mut self.eval.diagnostics)
            else {
                continue;
            };
            if declarations.iter().any(|d| d.name == declaration.name) {
                self.eval.diagnostics.push(Diagnostic {
                    message: format!("variable `{}` is declared twice", declaration.name),
                    hint: Some("remove one of the declarations".to_owned()),
                    ..declaration.head
                });
            } else {
                declarations.push(declaration);
            }
        }
        declarations
    }

    fn warn_unused(&mut self, declarations: &[Declaration]) {
        for declaration in declarations {
            if !self.eval.used_variables.contains(&declaration.name) {
                self.eval.diagnostics.push(Diagnostic {
                    severity: Severity::Warning,
                    message: format!("variable `{}` is declared but never used", declaration.name),
                    hint: Some(format!(
                        "remove it, or use it as `var.{}`",
                        declaration.name
                    )),
                    ..declaration.head.clone()
                });
            }
        }
    }

    /// Decodes the provider block. `first_declaration` (the first `cluster` or `removed`
    /// block) is where a missing stack is reported when there is no provider block.
    fn provider(
        &mut self,
        blocks: &[FileBlock<'_>],
        first_declaration: Option<Place<'_>>,
        ctx: &Bindings,
        dir: &Path,
    ) -> Provider {
        let mut provider = Provider::default();
        let mut seen = ProviderSeen::default();
        let mut google_block = None;
        for (index, (source, block)) in blocks.iter().enumerate() {
            let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
            if labels != ["google"] {
                self.eval.diagnostics.push(source.error(
                    block_head(block),
                    format!("unknown provider `{}`", labels.join(" ")),
                    Some("the only provider is `provider \"google\" { ... }`".to_owned()),
                ));
                continue;
            }
            if index > 0 {
                self.eval.diagnostics.push(source.error(
                    block_head(block),
                    "the provider block is declared more than once",
                    Some("keep one `provider \"google\"` block".to_owned()),
                ));
                continue;
            }
            seen = self.provider_attributes(source, block, ctx, &mut provider);
            google_block = Some(Place {
                file: source,
                range: block_head(block),
            });
        }
        if seen.stack {
            provider.stack_origin = StackOrigin::Explicit;
        } else if provider.endpoint.as_deref() == Some(LOCAL_ENDPOINT) {
            provider.stack = self.default_stack(dir);
            provider.stack_origin = StackOrigin::DirectoryName;
        } else {
            provider.stack_origin = StackOrigin::DirectoryName;
            // A broken `endpoint` is reported already: it may have meant "local".
            let endpoint_broken = seen.endpoint && provider.endpoint.is_none();
            if !endpoint_broken {
                self.missing_stack(google_block.is_some(), google_block.or(first_declaration));
            }
        }
        provider
    }

    /// Reports a configuration that may own clusters of a real endpoint without naming its
    /// stack; `place` is the provider block, else the first declaration (none: nothing to own).
    fn missing_stack(&mut self, in_provider: bool, place: Option<Place<'_>>) {
        let Some(Place { file, range }) = place else {
            return;
        };
        let message = if in_provider {
            "the provider block sets no `stack`; it is required unless `endpoint = \"local\"`"
        } else {
            "no provider block sets `stack`; it is required unless `endpoint = \"local\"`"
        };
        self.eval
            .diagnostics
            .push(file.error(range, message, Some(MISSING_STACK_HINT.to_owned())));
    }

    /// Fills `provider` from the block; which attributes it wrote, even with a broken value.
    fn provider_attributes(
        &mut self,
        source: &SourceFile,
        block: &Block,
        ctx: &Bindings,
        provider: &mut Provider,
    ) -> ProviderSeen {
        for nested in block.body.blocks() {
            self.eval.diagnostics.push(source.error(
                nested.ident.span(),
                format!("unknown block `{}` in the provider", nested.ident.as_str()),
                Some(format!(
                    "the provider accepts {}",
                    PROVIDER_ATTRIBUTES.join(", ")
                )),
            ));
        }
        let mut seen = ProviderSeen::default();
        for attribute in block.body.attributes() {
            let name = attribute.key.as_str();
            if !PROVIDER_ATTRIBUTES.contains(&name) {
                self.eval.diagnostics.push(source.error(
                    attribute.key.span(),
                    format!("unknown attribute `{name}` in the provider"),
                    did_you_mean(name, PROVIDER_ATTRIBUTES).or_else(|| {
                        Some(format!(
                            "expected one of: {}",
                            PROVIDER_ATTRIBUTES.join(", ")
                        ))
                    }),
                ));
                continue;
            }
            let range = attribute.value.span();
            // A broken `stack` is reported; the directory name must not stand in for it.
            seen.stack |= name == "stack";
            seen.endpoint |= name == "endpoint";
            let Some(evaluated) =
                self.eval
                    .value(source, &attribute.value, Scope { ctx, each: false })
            else {
                continue;
            };
            let text = match string_text(&evaluated.value) {
                Ok(text) => text,
                Err(message) => {
                    self.eval.diagnostics.push(source.error(
                        range,
                        format!("wrong value for `{name}`: {message}"),
                        None,
                    ));
                    continue;
                }
            };
            if let Some((message, hint)) = provider_value_problem(name, &text) {
                self.eval
                    .diagnostics
                    .push(source.error(range, message, hint));
                continue;
            }
            match name {
                "project" => provider.project = Some(text),
                "region" => provider.region = Some(text),
                // `provider_value_problem` has checked the mode, so it parses.
                "update_mode" => provider.update_mode = text.parse().ok(),
                "endpoint" => provider.endpoint = Some(text),
                _ => provider.stack = text,
            }
        }
        seen
    }

    /// The directory name as a label value: lowercased, other characters replaced by `-`.
    fn default_stack(&mut self, dir: &Path) -> String {
        let name = std::fs::canonicalize(dir)
            .ok()
            .and_then(|path| path.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default();
        let stack: String = name
            .to_lowercase()
            .chars()
            .map(|c| {
                if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .take(63)
            .collect();
        if stack.is_empty() {
            self.eval
                .diagnostics
                .push(crate::diagnostic::detached_error(
                    dir,
                    "the configuration directory has no name to use as the stack name",
                    Some("set `stack = \"...\"` in the provider block".to_owned()),
                ));
        }
        stack
    }

    /// Decodes and checks the `removed` blocks, each with where its `cluster` value is
    /// written; a cluster removed twice is reported at the second block.
    fn removed<'a>(
        &mut self,
        blocks: &[FileBlock<'a>],
        ctx: &Bindings,
        provider: &Provider,
    ) -> Vec<(RemovedCluster, Place<'a>)> {
        let mut removed: Vec<(RemovedCluster, Place<'a>)> = Vec::new();
        for (source, block) in blocks {
            let Some((cluster, place)) = self.removed_block(source, block, ctx, provider) else {
                continue;
            };
            if let Some((first, _)) = removed.iter().find(|(r, _)| r.id == cluster.id) {
                let message = format!("cluster `{}` is removed more than once", cluster.id);
                let hint = format!("already removed at {}", at(&first.location));
                self.eval
                    .diagnostics
                    .push(place.file.error(place.range, message, Some(hint)));
                continue;
            }
            removed.push((cluster, place));
        }
        removed
    }

    /// One `removed { cluster = "ID" project = ... region = ... }` block.
    fn removed_block<'a>(
        &mut self,
        source: &'a SourceFile,
        block: &Block,
        ctx: &Bindings,
        provider: &Provider,
    ) -> Option<(RemovedCluster, Place<'a>)> {
        let head = block_head(block);
        if !block.labels.is_empty() {
            self.eval.diagnostics.push(source.error(
                label_range(block),
                "a `removed` block takes no label",
                Some(REMOVED_SHAPE_HINT.to_owned()),
            ));
            return None;
        }
        let values = self.removed_attributes(source, block, ctx)?;
        let Some((id, id_range)) = values.cluster else {
            self.eval.diagnostics.push(source.error(
                head,
                "a `removed` block needs `cluster`, the ID of the cluster to release",
                Some(REMOVED_SHAPE_HINT.to_owned()),
            ));
            return None;
        };
        if let Err(error) = ClusterId::parse(&id, false) {
            self.eval.diagnostics.push(source.error(
                id_range,
                error.to_string(),
                Some("use the ID of the cluster as it is in the API".to_owned()),
            ));
            return None;
        }
        let (project, project_range) = values
            .project
            .map_or((provider.project.clone(), head.clone()), |(v, r)| {
                (Some(v), r)
            });
        let (region, region_range) = values
            .region
            .map_or((provider.region.clone(), head.clone()), |(v, r)| {
                (Some(v), r)
            });
        let (project, region) = self.required_locations(
            source,
            &id,
            (project, project_range),
            (region, region_range),
        );
        let (line, column) = source.position(head.map_or(0, |r| r.start));
        let removed = RemovedCluster {
            id,
            project: project?,
            region: region?,
            location: SourceLocation {
                file: source.path.clone(),
                line,
                column,
            },
        };
        Some((
            removed,
            Place {
                file: source,
                range: id_range,
            },
        ))
    }

    /// The string attributes of a `removed` block with where their values are written;
    /// `None` when one of them is wrong.
    fn removed_attributes(
        &mut self,
        source: &SourceFile,
        block: &Block,
        ctx: &Bindings,
    ) -> Option<RemovedValues> {
        let errors_before = self.error_count();
        for nested in block.body.blocks() {
            self.eval.diagnostics.push(source.error(
                nested.ident.span(),
                format!("unknown block `{}` in `removed`", nested.ident.as_str()),
                Some(REMOVED_SHAPE_HINT.to_owned()),
            ));
        }
        let mut values = RemovedValues::default();
        for attribute in block.body.attributes() {
            let name = attribute.key.as_str();
            let slot = match name {
                "cluster" => &mut values.cluster,
                "project" => &mut values.project,
                "region" => &mut values.region,
                _ => {
                    self.eval.diagnostics.push(source.error(
                        attribute.key.span(),
                        format!("unknown attribute `{name}` in `removed`"),
                        did_you_mean(name, REMOVED_ATTRIBUTES).or_else(|| {
                            Some(format!(
                                "expected one of: {}",
                                REMOVED_ATTRIBUTES.join(", ")
                            ))
                        }),
                    ));
                    continue;
                }
            };
            let range = attribute.value.span();
            let Some(evaluated) =
                self.eval
                    .value(source, &attribute.value, Scope { ctx, each: false })
            else {
                continue;
            };
            match string_text(&evaluated.value) {
                Ok(text) => *slot = Some((text, range)),
                Err(message) => self.eval.diagnostics.push(source.error(
                    range,
                    format!("wrong value for `{name}`: {message}"),
                    None,
                )),
            }
        }
        (self.error_count() == errors_before).then_some(values)
    }

    /// A cluster cannot be both declared and released.
    fn check_removed_not_declared(
        &mut self,
        removed: &[(RemovedCluster, Place<'_>)],
        clusters: &[DesiredCluster],
    ) {
        for (released, place) in removed {
            let Some(declared) = clusters.iter().find(|c| c.id == released.id) else {
                continue;
            };
            self.eval.diagnostics.push(place.file.error(
                place.range.clone(),
                format!("cluster `{}` is both declared and removed", released.id),
                Some(format!(
                    "it is declared at {}: delete that `cluster` block to stop managing the cluster \
                     without destroying it, or this `removed` block to keep managing it",
                    at(&declared.location)
                )),
            ));
        }
    }

    /// Decodes and checks the cluster blocks on parallel threads, which also free them.
    fn clusters<'a>(
        &mut self,
        tasks: Vec<Task<Vec<FileBlock<'a>>>>,
        ctx: &Bindings,
        provider: &Provider,
    ) -> Vec<DesiredCluster> {
        let decoded = in_parallel(tasks, |chunk: Vec<FileBlock<'a>>| {
            let mut worker = Run {
                eval: self.eval.fork(),
                ..Run::default()
            };
            let mut clusters = Vec::new();
            for (source, block) in &chunk {
                for (id, each_ctx) in worker.instances(source, block, ctx) {
                    let each = each_ctx.is_some();
                    let instance_ctx = each_ctx.as_ref().unwrap_or(ctx);
                    if let Some(cluster) =
                        worker.cluster(source, block, id, instance_ctx, each, provider)
                    {
                        clusters.push((cluster, *source, label_range(block)));
                    }
                }
            }
            (clusters, worker.eval)
        });
        let mut clusters: Vec<DesiredCluster> = Vec::new();
        let mut first_seen: HashMap<String, SourceLocation> = HashMap::new();
        for Done {
            result: (chunk, eval),
            ..
        } in decoded
        {
            self.eval.absorb(eval);
            for (cluster, source, label) in chunk {
                if let Some(first) = first_seen.get(&cluster.id) {
                    self.eval.diagnostics.push(source.error(
                        label,
                        format!("duplicate cluster ID `{}`", cluster.id),
                        Some(format!("already declared at {}", at(first))),
                    ));
                } else {
                    first_seen.insert(cluster.id.clone(), cluster.location.clone());
                    clusters.push(cluster);
                }
            }
        }
        clusters
    }

    /// The instances of a cluster block: its ID and, with `for_each`, the context that has
    /// `each` (without, the shared context serves, uncloned).
    fn instances(
        &mut self,
        source: &SourceFile,
        block: &Block,
        ctx: &Bindings,
    ) -> Vec<(String, Option<Bindings>)> {
        let [label] = block.labels.as_slice() else {
            self.eval.diagnostics.push(source.error(
                block_head(block),
                "a cluster block needs exactly one label, its ID",
                Some("write `cluster \"ID\" { ... }`".to_owned()),
            ));
            return Vec::new();
        };
        let Some(for_each) = block.body.get_attribute("for_each") else {
            if let Some(id) = block.body.get_attribute("id") {
                self.eval.diagnostics.push(source.error(
                    id.key.span(),
                    "`id` is only used with `for_each`; the ID of a single cluster is its label",
                    Some("remove `id`".to_owned()),
                ));
            }
            return vec![(label.as_str().to_owned(), None)];
        };
        let Some(entries) = self.for_each_entries(source, &for_each.value, ctx) else {
            return Vec::new();
        };
        let mut instances = Vec::new();
        for (key, value) in entries {
            let mut instance_ctx = ctx.clone();
            let mut each = hcl::Map::new();
            each.insert("key".to_owned(), Value::String(key.clone()));
            each.insert("value".to_owned(), value);
            instance_ctx.declare("each", Value::Object(each));
            let id = match block.body.get_attribute("id") {
                None => Some(key),
                Some(id) => self
                    .eval
                    .value(
                        source,
                        &id.value,
                        Scope {
                            ctx: &instance_ctx,
                            each: true,
                        },
                    )
                    .and_then(|evaluated| match string_text(&evaluated.value) {
                        Ok(text) => Some(text),
                        Err(message) => {
                            self.eval.diagnostics.push(source.error(
                                id.value.span(),
                                format!("wrong value for `id`: {message}"),
                                None,
                            ));
                            None
                        }
                    }),
            };
            if let Some(id) = id {
                instances.push((id, Some(instance_ctx)));
            }
        }
        instances
    }

    /// The `(each.key, each.value)` pairs of a `for_each` value, in key order.
    fn for_each_entries(
        &mut self,
        source: &SourceFile,
        expr: &hcl::edit::expr::Expression,
        ctx: &Bindings,
    ) -> Option<Vec<(String, Value)>> {
        let evaluated = self.eval.value(source, expr, Scope { ctx, each: false })?;
        let mut entries: Vec<(String, Value)> = match evaluated.value {
            Value::Object(map) => map.into_iter().collect(),
            Value::Array(items) => {
                let mut keys = Vec::new();
                for item in items {
                    let Value::String(key) = item else {
                        self.eval.diagnostics.push(source.error(
                            expr.span(),
                            format!(
                                "for_each over a set needs strings, found a {}",
                                type_name(&item)
                            ),
                            None,
                        ));
                        return None;
                    };
                    keys.push((key.clone(), Value::String(key)));
                }
                keys
            }
            other => {
                self.eval.diagnostics.push(source.error(
                    expr.span(),
                    format!("for_each needs a map or a set of strings, found a {}", type_name(&other)),
                    Some("e.g. `for_each = { a = {...}, b = {...} }` or `for_each = toset([...])`".to_owned()),
                ));
                return None;
            }
        };
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|a, b| a.0 == b.0);
        Some(entries)
    }

    fn cluster(
        &mut self,
        source: &SourceFile,
        block: &Block,
        id: String,
        ctx: &Bindings,
        each: bool,
        provider: &Provider,
    ) -> Option<DesiredCluster> {
        let errors_before = self.error_count();
        let decoded = decode_cluster(&mut self.eval, source, block, Scope { ctx, each })?;
        let head = block_head(block);
        let spans = Spans::new(&block.body);
        let project = decoded.project.clone().or_else(|| provider.project.clone());
        let region = decoded.region.clone().or_else(|| provider.region.clone());
        let project_range = spans.get("project").or_else(|| head.clone());
        let region_range = spans.get("region").or_else(|| head.clone());
        let (project, region) = self.required_locations(
            source,
            &id,
            (project, project_range),
            (region, region_range),
        );
        let label = if each {
            block
                .body
                .get_attribute("id")
                .and_then(|a| a.value.span())
                .or_else(|| label_range(block))
        } else {
            label_range(block)
        };
        ClusterChecks {
            file: source,
            spans,
            head: head.clone(),
            label,
            region: region.as_deref(),
            diagnostics: &mut self.eval.diagnostics,
        }
        .run(&id, &decoded.cluster);
        if self.error_count() > errors_before {
            return None;
        }
        let (line, column) = source.position(head.map_or(0, |r| r.start));
        Some(DesiredCluster {
            id,
            project: project?,
            region: region?,
            cluster: decoded.cluster,
            update_mode: decoded.update_mode.or(provider.update_mode),
            timeouts: decoded.timeouts,
            lifecycle: decoded.lifecycle,
            sensitive_paths: decoded.sensitive_paths,
            location: SourceLocation {
                file: source.path.clone(),
                line,
                column,
            },
        })
    }

    fn error_count(&self) -> usize {
        self.eval
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }

    /// The project and region a cluster or `removed` block resolves to (its own, else the
    /// provider's), each checked, with a diagnostic at `range` for what is missing or invalid.
    fn required_locations(
        &mut self,
        source: &SourceFile,
        id: &str,
        (project, project_range): (Option<String>, Option<Range<usize>>),
        (region, region_range): (Option<String>, Option<Range<usize>>),
    ) -> (Option<String>, Option<String>) {
        let project = self.required_location(
            source,
            id,
            "project",
            project,
            project_range,
            validate_project,
        );
        let region = self.required_location(
            source,
            id,
            "region",
            region,
            region_range,
            validate_location,
        );
        (project, region)
    }

    fn required_location<E: std::fmt::Display>(
        &mut self,
        source: &SourceFile,
        id: &str,
        what: &str,
        value: Option<String>,
        range: Option<Range<usize>>,
        validate: fn(&str) -> Result<(), E>,
    ) -> Option<String> {
        let Some(value) = value else {
            self.eval.diagnostics.push(source.error(
                range,
                format!("cluster `{id}` has no {what}"),
                Some(format!(
                    "set `{what}` in the provider block or in the cluster"
                )),
            ));
            return None;
        };
        if let Err(error) = validate(&value) {
            self.eval
                .diagnostics
                .push(source.error(range, error.to_string(), None));
            return None;
        }
        Some(value)
    }
}

/// How many cluster blocks one task decodes: small configurations stay on one thread.
const CLUSTERS_PER_TASK: usize = 32;

/// The cluster blocks of one file in tasks for `thread`, in order.
fn cluster_tasks(mut blocks: Vec<FileBlock<'_>>, thread: usize) -> Vec<Task<Vec<FileBlock<'_>>>> {
    let mut tasks = Vec::with_capacity(blocks.len().div_ceil(CLUSTERS_PER_TASK));
    while !blocks.is_empty() {
        let rest = blocks.split_off(blocks.len().min(CLUSTERS_PER_TASK));
        tasks.push(Task {
            thread,
            item: std::mem::replace(&mut blocks, rest),
        });
    }
    tasks
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

/// Checks a provider attribute's value.
fn provider_value_problem(name: &str, text: &str) -> Option<(String, Option<String>)> {
    match name {
        "update_mode" if !UPDATE_MODES.contains(&text) => Some((
            format!("`{text}` is not a valid update_mode"),
            Some(format!("expected one of: {}", UPDATE_MODES.join(", "))),
        )),
        "stack" => label_value_problem(text).map(|problem| {
            (
                format!("stack `{text}` is not a valid label value: {problem}"),
                Some(
                    "the stack name becomes the value of the `clusterform-stack` label".to_owned(),
                ),
            )
        }),
        "endpoint"
            if text != "local" && !text.starts_with("https://") && !text.starts_with("http://") =>
        {
            Some((
                format!("endpoint `{text}` is neither \"local\" nor an http(s) URL"),
                Some("use \"local\" for the built-in emulator, or a base URL".to_owned()),
            ))
        }
        _ => None,
    }
}

/// SHA-256 over every file's name and text and every variable value.
fn digest(files: &[SourceFile], values: &hcl::Map<String, Value>) -> String {
    let mut hasher = Sha256::new();
    for file in files {
        hasher.update(file.path.to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update(file.text.as_bytes());
        hasher.update([0]);
    }
    let mut names: Vec<&String> = values.keys().collect();
    names.sort();
    for name in names {
        hasher.update(format!("{name}={}\0", values[name]).as_bytes());
    }
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}
