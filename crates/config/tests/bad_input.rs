//! Bad input gets a diagnostic, never a panic or a hang.

use std::io::Write;

use clusterform_config::{CommandLineReason, MAX_SOURCE_BYTES, VariableInputs, load};

use crate::support::{dir_with, errors, failure, find, reason, with_temp_dirs_filtered};

#[test]
fn syntax_errors_have_a_location() {
    let diagnostics = errors("cluster \"a\" {\n  display_name = = 1\n}\n");
    assert_eq!(diagnostics.len(), 1);
    let d = &diagnostics[0];
    assert_eq!((d.line, d.column), (2, 18));
    assert!(d.message.starts_with("syntax error"), "{}", d.message);
}

#[test]
fn a_syntax_error_inside_a_multibyte_character_is_reported() {
    // Found by the fuzz target: the parser's offset fell inside `ߵ`.
    let diagnostics = errors("m\tm\t\u{6be}\u{7f5}");
    assert_eq!(diagnostics.len(), 1);
    assert!(
        diagnostics[0].message.starts_with("syntax error"),
        "{}",
        diagnostics[0].message
    );
}

#[test]
fn invalid_utf8_points_at_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("main.hcl"),
        b"locals {\n  a = \"\xff\"\n}\n",
    )
    .unwrap();
    let diagnostics = load(dir.path(), &VariableInputs::default()).unwrap_err();
    insta::assert_snapshot!(find(&diagnostics, "UTF-8"));
}

#[test]
fn a_50_mb_file_is_refused_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = std::fs::File::create(dir.path().join("big.hcl")).unwrap();
    let line = "locals {\n  padding = \"0123456789012345678901234567890123456789\"\n}\n";
    for _ in 0..(50 * 1024 * 1024 / line.len() + 1) {
        file.write_all(line.as_bytes()).unwrap();
    }
    drop(file);
    let diagnostics = load(dir.path(), &VariableInputs::default()).unwrap_err();
    let message = find(&diagnostics, "too large");
    assert!(message.contains(&MAX_SOURCE_BYTES.to_string()), "{message}");
}

#[test]
fn deep_nesting_is_a_syntax_error() {
    for (open, close) in [("[", "]"), ("{ a = ", " }"), ("(", ")")] {
        let depth = 10_000;
        let text = format!(
            "locals {{\n  a = {}1{}\n}}\n",
            open.repeat(depth),
            close.repeat(depth)
        );
        let diagnostics = errors(&text);
        assert!(
            diagnostics[0].message.contains("nest"),
            "{}",
            diagnostics[0].message
        );
    }
    let unary = format!("locals {{\n  a = {}true\n}}\n", "!".repeat(10_000));
    assert!(!errors(&unary).is_empty());
    let template = format!(
        "locals {{\n  a = \"{}x{}\"\n}}\n",
        "${\"".repeat(5_000),
        "\"}".repeat(5_000)
    );
    assert!(!errors(&template).is_empty());
}

#[test]
fn an_empty_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let diagnostics = load(dir.path(), &VariableInputs::default()).unwrap_err();
    let missing = load(&dir.path().join("absent"), &VariableInputs::default()).unwrap_err();
    with_temp_dirs_filtered(|| {
        insta::assert_snapshot!(diagnostics.render(false));
        insta::assert_snapshot!(missing.render(false));
    });
    assert_eq!(
        reason(&diagnostics, "no *.hcl files"),
        Some(CommandLineReason::NoConfigurationFiles)
    );
}

#[test]
fn a_file_given_for_the_directory_names_the_directory() {
    let dir = dir_with(&[("main.hcl", &crate::support::valid_file())]);
    let diagnostics = load(&dir.path().join("main.hcl"), &VariableInputs::default()).unwrap_err();
    assert_eq!(
        reason(&diagnostics, "this is a file"),
        Some(CommandLineReason::FileForDirectory {
            parent: dir.path().display().to_string()
        })
    );
    with_temp_dirs_filtered(|| {
        insta::assert_snapshot!(diagnostics.render(false), @"
        [TMP]/main.hcl

          × this is a file; the configuration is a directory
        ");
    });
}

#[test]
fn a_missing_var_file_is_an_error() {
    let dir = dir_with(&[("main.hcl", &crate::support::valid_file())]);
    let inputs = VariableInputs {
        files: vec![dir.path().join("absent.vars")],
        ..VariableInputs::default()
    };
    let diagnostics = load(dir.path(), &inputs).unwrap_err();
    with_temp_dirs_filtered(|| insta::assert_snapshot!(diagnostics.render(false)));
}

#[test]
fn runaway_expressions_are_bounded() {
    let text = crate::support::valid_with(
        "  network {",
        "  display_name = join(\",\", [for i in range(100000) : i])\n  network {",
    );
    insta::assert_snapshot!(find(&failure(&text), "range"));
}

#[test]
fn rendering_shows_the_snippet_and_the_hint() {
    let text = crate::support::valid_with("max_node_count = 4", "max_node_cont = 4");
    let dir = dir_with(&[("main.hcl", &text)]);
    let diagnostics = load(dir.path(), &VariableInputs::default());
    insta::assert_snapshot!(diagnostics.unwrap_err().render(false));
}
