//! Helpers: write a configuration into a temporary directory and load it. The provider block
//! and the project are the testkit's ([`PROVIDER`], `clusterform_testkit::PROJECT`).

use std::path::Path;

use clusterform_config::{
    CommandLineReason, Diagnostic, Diagnostics, Loaded, VariableInputs, load,
};
use tempfile::TempDir;

/// A provider block that makes a cluster loadable without variables.
pub use clusterform_testkit::hcl::PROVIDER_HCL as PROVIDER;

/// A small valid cluster body (without the `cluster "ID" {` line), to be edited by tests: the
/// canonical cluster with only what a cluster requires.
pub use clusterform_testkit::hcl::REQUIRED_BODY_HCL as CLUSTER_BODY;

/// A complete valid file: the provider and cluster `train01`.
pub fn valid_file() -> String {
    format!("{PROVIDER}\ncluster \"train01\" {{{CLUSTER_BODY}}}\n")
}

/// A directory holding `files` (name, text).
pub fn dir_with(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// Loads `text` as `main.hcl` with no inputs.
pub fn load_text(text: &str) -> Result<Loaded, Diagnostics> {
    load_with(&[("main.hcl", text)], &VariableInputs::default())
}

/// Loads several files with inputs.
pub fn load_with(files: &[(&str, &str)], inputs: &VariableInputs) -> Result<Loaded, Diagnostics> {
    let dir = dir_with(files);
    load(dir.path(), inputs)
}

/// The diagnostics of a configuration that must fail.
pub fn errors(text: &str) -> Vec<Diagnostic> {
    match load_text(text) {
        Ok(_) => panic!("expected errors, the configuration loaded:\n{text}"),
        Err(diagnostics) => diagnostics.items,
    }
}

/// The diagnostics of a configuration that must fail, with the sources to render them.
pub fn failure(text: &str) -> Diagnostics {
    match load_text(text) {
        Ok(_) => panic!("expected errors, the configuration loaded:\n{text}"),
        Err(diagnostics) => diagnostics,
    }
}

/// The first diagnostic whose message contains `needle`, rendered as the user sees it
/// (without colour): message, `file:line:col`, the source line underlined, the hint.
pub fn find(diagnostics: &Diagnostics, needle: &str) -> String {
    let Some(found) = diagnostics
        .items
        .iter()
        .find(|d| d.message.contains(needle))
    else {
        panic!(
            "no diagnostic contains {needle:?}; got:\n{}",
            diagnostics.render(false)
        );
    };
    found.render(diagnostics.sources.get(&found.file).map(|s| &**s), false)
}

/// The reason of the first diagnostic whose message contains `needle`: what the binary words
/// with its flags and commands.
pub fn reason(diagnostics: &Diagnostics, needle: &str) -> Option<CommandLineReason> {
    diagnostics
        .items
        .iter()
        .find(|d| d.message.contains(needle))
        .and_then(|d| d.reason.clone())
}

/// Runs `assert` with the paths of temporary directories replaced by `[TMP]` in snapshots.
pub fn with_temp_dirs_filtered(assert: impl FnOnce()) {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"/[^\s:`]*/\.tmp[0-9A-Za-z]+", "[TMP]");
    settings.bind(assert);
}

/// The cluster file with `from` replaced by `to` (which must occur).
pub fn valid_with(from: &str, to: &str) -> String {
    let text = valid_file();
    assert!(text.contains(from), "{from:?} is not in the valid file");
    text.replacen(from, to, 1)
}

/// The valid file with `block` inside its provider block.
pub fn with_provider_block(block: &str) -> String {
    valid_with(
        "  stack   = \"research\"\n",
        &format!("  stack   = \"research\"\n{block}\n"),
    )
}

/// An example directory of the repository.
pub fn example(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}
