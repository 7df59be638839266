//! Reading the configuration directory: every `*.hcl` file is read and parsed (in parallel),
//! and the top-level blocks of the bodies that parse are sorted by kind, with a diagnostic for
//! a top-level attribute or an unknown block.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use hcl::edit::Span;
use hcl::edit::structure::{Attribute, Body, Structure};
use rayon::iter::IntoParallelIterator;

use super::{FileBlock, Place};
use crate::diagnostic::{Diagnostic, SourceFile, closest_or_all, detached_error};
use crate::language::evaluator::LocalDef;
use crate::language::parallel::in_parallel;
use crate::language::source::{
    MAX_CONFIGURATION_BYTES, block_head, list_hcl_files, parse, read_source,
};

/// The top-level blocks of every file, by kind and in file order, taken out of the files'
/// bodies (so that whoever decodes a block also frees it).
#[derive(Default)]
pub(super) struct TopLevel<'a> {
    pub(super) variables: Vec<FileBlock<'a>>,
    pub(super) locals: Vec<FileBlock<'a>>,
    pub(super) providers: Vec<FileBlock<'a>>,
    pub(super) clusters: Vec<FileBlock<'a>>,
    pub(super) removed: Vec<FileBlock<'a>>,
    /// The attributes written at the top level, by file: errors, unless the file is a
    /// misnamed variables file (see `inputs`).
    pub(super) stray: Vec<StrayAttributes<'a>>,
}

/// The top-level attributes of one file, and whether the file has blocks too.
pub(super) struct StrayAttributes<'a> {
    pub(super) file: &'a SourceFile,
    pub(super) attributes: Vec<Attribute>,
    pub(super) has_blocks: bool,
}

impl<'a> TopLevel<'a> {
    /// The head of the first `cluster` block, else of the first `removed` block.
    pub(super) fn first_declaration(&self) -> Option<Place<'a>> {
        self.clusters
            .first()
            .or(self.removed.first())
            .map(|(file, block)| Place {
                file,
                range: block_head(block),
            })
    }

    /// Every `name = expr` of the `locals` blocks.
    pub(super) fn local_defs(&self) -> Vec<LocalDef<'_>> {
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

/// Reads every file in parallel, and how many bytes they hold together. Once that total is
/// past [`MAX_CONFIGURATION_BYTES`] the texts read are counted but not kept (`None`), so that a
/// directory of many large files is refused without first holding all of them in memory.
fn read_all(dir: &Path, paths: Vec<PathBuf>) -> (Vec<ReadFile>, u64) {
    let total = AtomicU64::new(0);
    let read = |path: PathBuf| -> ReadFile {
        let shown = path.strip_prefix(dir).unwrap_or(&path).to_path_buf();
        let source = read_source(&path, shown)?;
        let len = source.text.len() as u64;
        let before = total.fetch_add(len, Ordering::Relaxed);
        Ok((before + len <= MAX_CONFIGURATION_BYTES).then_some(source))
    };
    let sources = in_parallel(paths.into_par_iter(), read);
    (sources, total.into_inner())
}

/// A file read by [`read_all`].
type ReadFile = Result<Option<SourceFile>, Box<Diagnostic>>;

fn too_large(dir: &Path, total: u64) -> Diagnostic {
    detached_error(
        dir,
        format!(
            "the configuration's *.hcl files hold {total} bytes together, more than the limit \
             of {MAX_CONFIGURATION_BYTES} bytes"
        ),
        Some(
            "look for generated or data files named *.hcl in the directory, or split the \
             clusters into several configuration directories"
                .to_owned(),
        ),
    )
}

const TOP_LEVEL_BLOCKS: [&str; 5] = ["variable", "locals", "provider", "cluster", "removed"];

/// The files of a configuration directory that parse, with their bodies, and the text of every
/// file read, for the snippets of diagnostics.
pub(super) struct ReadFiles {
    pub(super) files: Vec<SourceFile>,
    pub(super) bodies: Vec<Body>,
    pub(super) sources: BTreeMap<PathBuf, Arc<str>>,
}

/// Reads and parses every file. `None` when the directory cannot be listed or the files
/// together are larger than [`MAX_CONFIGURATION_BYTES`]: then nothing is parsed.
pub(super) fn read_files(dir: &Path, diagnostics: &mut Vec<Diagnostic>) -> Option<ReadFiles> {
    let paths = match list_hcl_files(dir) {
        Ok(paths) => paths,
        Err(diagnostic) => {
            diagnostics.push(*diagnostic);
            return None;
        }
    };
    let (read, total) = read_all(dir, paths);
    if total > MAX_CONFIGURATION_BYTES {
        diagnostics.push(too_large(dir, total));
        return None;
    }
    let mut sources = BTreeMap::new();
    let mut readable = Vec::new();
    for source in read {
        match source {
            Ok(Some(source)) => {
                sources.insert(source.path.clone(), source.text.clone());
                readable.push(source);
            }
            // Not kept only once the total was past the limit, which returned above.
            Ok(None) => {}
            Err(diagnostic) => diagnostics.push(*diagnostic),
        }
    }
    let parsed = in_parallel(readable.into_par_iter(), |source| {
        let body = parse(&source);
        (source, body)
    });
    let mut files = Vec::new();
    let mut bodies = Vec::new();
    for (source, body) in parsed {
        match body {
            Ok(body) => {
                files.push(source);
                bodies.push(body);
            }
            Err(diagnostic) => diagnostics.push(*diagnostic),
        }
    }
    Some(ReadFiles {
        files,
        bodies,
        sources,
    })
}

/// Sorts the top-level blocks of `bodies` (those of `files`, in the same order) by kind.
pub(super) fn sort_blocks<'a>(
    files: &'a [SourceFile],
    bodies: Vec<Body>,
    diagnostics: &mut Vec<Diagnostic>,
) -> TopLevel<'a> {
    let mut top = TopLevel::default();
    for (source, body) in files.iter().zip(bodies) {
        let mut stray = StrayAttributes {
            file: source,
            attributes: Vec::new(),
            has_blocks: false,
        };
        for structure in body {
            let block = match structure {
                Structure::Block(block) => block,
                Structure::Attribute(attribute) => {
                    stray.attributes.push(attribute);
                    continue;
                }
            };
            stray.has_blocks = true;
            let kind = match block.ident.as_str() {
                "variable" => &mut top.variables,
                "provider" => &mut top.providers,
                "cluster" => &mut top.clusters,
                "locals" => &mut top.locals,
                "removed" => &mut top.removed,
                other => {
                    diagnostics.push(source.error(
                        block.ident.span(),
                        format!("unknown block `{other}`"),
                        Some(closest_or_all(other, &TOP_LEVEL_BLOCKS)),
                    ));
                    continue;
                }
            };
            kind.push((source, block));
        }
        if !stray.attributes.is_empty() {
            top.stray.push(stray);
        }
    }
    top
}
