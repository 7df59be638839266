//! Where a field of a loaded cluster is written, found again after the load: an API error that
//! names a field (a `BadRequest` field violation) is shown at the configuration's `file:line`.
//! Positions are not kept while loading (a large fleet would pay for them on every run), so the
//! cluster's file is read and parsed again, once, when an error needs it.

use std::path::Path;
use std::sync::Arc;

use hcl::edit::structure::Body;

use crate::cluster::spans::Spans;
use crate::config::{DesiredCluster, SourceLocation};
use crate::diagnostic::SourceFile;
use crate::language::source::{MAX_SOURCE_BYTES, block_head};

/// Where `path` (e.g. `node_pools[gpu].boot_disk.boot_disk_type`) of `cluster` is written,
/// else its nearest enclosing field that is, else the cluster block's head; `None` when the
/// cluster's file cannot be read again or no longer holds its block (`dir` is the
/// configuration directory).
pub fn field_location(dir: &Path, cluster: &DesiredCluster, path: &str) -> Option<SourceLocation> {
    let file = dir.join(&cluster.location.file);
    if std::fs::metadata(&file).ok()?.len() > MAX_SOURCE_BYTES {
        return None;
    }
    let text: Arc<str> = std::fs::read_to_string(&file).ok()?.into();
    let source = SourceFile::new(cluster.location.file.clone(), text);
    let body: Body = hcl::edit::parser::parse_body(&source.text).ok()?;
    let block = body.blocks().find(|block| {
        block.ident.as_str() == "cluster"
            && block_head(block).is_some_and(|head| {
                source.position(head.start) == (cluster.location.line, cluster.location.column)
            })
    })?;
    let spans = Spans::new(&block.body);
    let range = enclosing(path).find_map(|p| spans.get(p))?;
    let (line, column) = source.position(range.start);
    Some(SourceLocation {
        file: cluster.location.file.clone(),
        line,
        column,
    })
}

/// `path`, then each of its enclosing fields, nearest first.
fn enclosing(path: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(Some(path), |p| p.rfind(['.', '[']).map(|cut| &p[..cut]))
        .filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enclosing_paths_go_outwards() {
        let paths: Vec<&str> = enclosing("node_pools[gpu].boot_disk.boot_disk_type").collect();
        assert_eq!(
            paths,
            [
                "node_pools[gpu].boot_disk.boot_disk_type",
                "node_pools[gpu].boot_disk",
                "node_pools[gpu]",
                "node_pools"
            ]
        );
    }
}
