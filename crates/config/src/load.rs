//! Loading a configuration directory: reads and parses every `*.hcl` file, sorts the top-level
//! blocks (`variable`, `locals`, `provider`, `cluster`), gives variables their values, resolves
//! locals, decodes the provider and every cluster (and `for_each` instance), runs the checks,
//! and returns either the [`Config`] with its warnings or every diagnostic of the run.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clusterform_model::fields::UPDATE_MODES;
use clusterform_model::{validate_location, validate_project};
use hcl::Value;
use hcl::edit::Span;
use hcl::edit::structure::{Block, Body, Structure};
use sha2::{Digest, Sha256};

use crate::config::{Config, DesiredCluster, Provider, SourceLocation, VariableInputs};
use crate::decode::{decode_cluster, string_text};
use crate::diagnostic::{
    Diagnostic, Diagnostics, MissingVariable, Severity, SourceFile, did_you_mean,
};
use crate::evaluator::{Bindings, Evaluator, LocalDef, Scope};
use crate::functions::{base_context, type_name, with_base_dir};
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
    with_base_dir(dir, || Run::default().load(dir, inputs))
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
}

impl TopLevel<'_> {
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

const TOP_LEVEL_BLOCKS: [&str; 4] = ["variable", "locals", "provider", "cluster"];
const PROVIDER_ATTRIBUTES: [&str; 5] = ["project", "region", "stack", "update_mode", "endpoint"];

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
        let provider = self.provider(&top.providers, &ctx, dir);
        let clusters = self.clusters(std::mem::take(&mut top.clusters), &ctx, &provider);
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
                digest,
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

    fn provider(&mut self, blocks: &[FileBlock<'_>], ctx: &Bindings, dir: &Path) -> Provider {
        let mut provider = Provider::default();
        let mut stack_set = false;
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
            stack_set = self.provider_attributes(source, block, ctx, &mut provider);
        }
        if !stack_set {
            provider.stack = self.default_stack(dir);
        }
        provider
    }

    /// Fills `provider` from the block; whether it set `stack`.
    fn provider_attributes(
        &mut self,
        source: &SourceFile,
        block: &Block,
        ctx: &Bindings,
        provider: &mut Provider,
    ) -> bool {
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
        let mut stack_set = false;
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
            stack_set |= name == "stack";
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
                "update_mode" => provider.update_mode = Some(text),
                "endpoint" => provider.endpoint = Some(text),
                _ => provider.stack = text,
            }
        }
        stack_set
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
                        Some(format!(
                            "already declared at {}:{}:{}",
                            first.file.display(),
                            first.line,
                            first.column
                        )),
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
        let project = self.required_location(
            source,
            &id,
            "project",
            project,
            project_range,
            validate_project,
        );
        let region = self.required_location(
            source,
            &id,
            "region",
            region,
            region_range,
            validate_location,
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
            update_mode: decoded.update_mode.or_else(|| provider.update_mode.clone()),
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
