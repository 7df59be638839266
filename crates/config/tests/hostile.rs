//! Hostile configurations: unreadable `*.hcl` entries, evaluation that would exhaust memory
//! or time, arithmetic that would panic, special files, out-of-range numbers and IDs that
//! could change a URL. Each must end in a diagnostic with a position, quickly, never a panic
//! or a silently skipped file.

use std::path::Path;
use std::process::Command;

use clusterform_config::{
    Diagnostics, MAX_COLLECTION_LEN, MAX_CONFIGURATION_BYTES, MAX_SOURCE_BYTES,
    MAX_TIMEOUT_SECONDS, VariableInputs, load,
};

use crate::support::{
    CLUSTER_BODY, PROVIDER, dir_with, errors, failure, find, load_text, valid_with,
    with_temp_dirs_filtered,
};

/// A cluster whose display_name is `expr`, after top-level `prelude`.
fn with_display_name(prelude: &str, expr: &str) -> String {
    format!(
        "{prelude}\n{PROVIDER}\ncluster \"train01\" {{\n  display_name = {expr}\n{CLUSTER_BODY}}}\n"
    )
}

/// The 1-based number of the line of `text` that starts with `start`.
fn line_of(text: &str, start: &str) -> usize {
    1 + text
        .lines()
        .position(|line| line.starts_with(start))
        .unwrap_or_else(|| panic!("no line starts with {start:?}"))
}

/// The diagnostics of loading `dir` with `inputs`, which must fail.
fn load_errors(dir: &Path, inputs: &VariableInputs) -> Diagnostics {
    match load(dir, inputs) {
        Ok(_) => panic!("expected errors, the configuration loaded"),
        Err(diagnostics) => diagnostics,
    }
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo failed");
}

#[cfg(unix)]
#[test]
fn hcl_entries_that_cannot_be_read_are_errors_never_skipped() {
    use std::os::unix::fs::symlink;
    let dir = dir_with(&[("main.hcl", &crate::support::valid_file())]);
    let root = dir.path();
    symlink(root.join("missing.hcl"), root.join("broken.hcl")).unwrap();
    symlink(root.join("loop2.hcl"), root.join("loop1.hcl")).unwrap();
    symlink(root.join("loop1.hcl"), root.join("loop2.hcl")).unwrap();
    std::fs::create_dir(root.join("folder.hcl")).unwrap();
    mkfifo(&root.join("pipe.hcl"));
    let diagnostics = load_errors(root, &VariableInputs::default());
    with_temp_dirs_filtered(|| insta::assert_snapshot!(diagnostics.render(false)));
}

#[cfg(unix)]
#[test]
fn an_unreadable_hcl_file_is_an_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = dir_with(&[
        ("main.hcl", &crate::support::valid_file()),
        ("secret.hcl", "locals {}\n"),
    ]);
    let path = dir.path().join("secret.hcl");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&path).is_ok() {
        // Running as root: permissions do not stop reading, nothing to test.
        return;
    }
    let diagnostics = load_errors(dir.path(), &VariableInputs::default());
    with_temp_dirs_filtered(|| insta::assert_snapshot!(diagnostics.render(false)));
}

/// Even as root some regular files cannot be read: `/proc/self/mem` fails at offset 0.
#[cfg(target_os = "linux")]
#[test]
fn a_regular_file_whose_read_fails_is_an_error() {
    let dir = dir_with(&[("main.hcl", &crate::support::valid_file())]);
    std::os::unix::fs::symlink("/proc/self/mem", dir.path().join("mem.hcl")).unwrap();
    let diagnostics = load_errors(dir.path(), &VariableInputs::default());
    with_temp_dirs_filtered(|| insta::assert_snapshot!(diagnostics.render(false)));
}

#[test]
fn self_doubling_locals_stop_at_the_limit() {
    let mut lists = String::from("locals {\n  l0 = [1]\n  s0 = \"ab\"\n");
    for i in 1..=40 {
        let p = i - 1;
        lists.push_str(&format!(
            "  l{i} = concat(local.l{p}, local.l{p})\n  s{i} = \"${{local.s{p}}}${{local.s{p}}}\"\n"
        ));
    }
    lists.push_str("}\n");
    let text = with_display_name(&lists, "\"${length(local.l40)}${local.s40}\"");
    let diagnostics = failure(&text);
    // 2^17 elements and 2^24 bytes are the first values past the limits.
    insta::assert_snapshot!(find(&diagnostics, "elements exceeds the limit of 100000"));
    insta::assert_snapshot!(find(&diagnostics, "bytes exceeds the limit of 10485760"));
}

#[test]
fn nested_for_over_large_ranges_stops_at_the_work_limit() {
    let expr =
        "length([for a in range(1024) : [for b in range(1024) : [for c in range(1024) : c]]])";
    let text = with_display_name("", &format!("tostring({expr})"));
    insta::assert_snapshot!(find(&failure(&text), "units of work"));
}

#[test]
fn template_for_directives_count_as_work() {
    let template = "%{ for a in range(1024) }%{ for b in range(1024) }%{ for c in range(1024) }x%{ endfor }%{ endfor }%{ endfor }";
    let dir = dir_with(&[
        ("t.tpl", template),
        (
            "main.hcl",
            &with_display_name("", "templatefile(\"t.tpl\", {})"),
        ),
    ]);
    let diagnostics = load_errors(dir.path(), &VariableInputs::default());
    insta::assert_snapshot!(find(&diagnostics, "units of work"));
}

/// The diagnostic whose message contains `needle`, which must exist.
fn diagnostic_with<'d>(
    diagnostics: &'d Diagnostics,
    needle: &str,
) -> &'d clusterform_config::Diagnostic {
    diagnostics
        .items
        .iter()
        .find(|d| d.message.contains(needle))
        .unwrap_or_else(|| panic!("no {needle:?} in:\n{}", diagnostics.render(false)))
}

#[test]
fn literal_lists_and_maps_longer_than_the_element_limit_are_errors_at_their_position() {
    let list = format!("[{}]", "0,".repeat(MAX_COLLECTION_LEN + 1));
    let map: String = (0..=MAX_COLLECTION_LEN)
        .map(|i| format!("k{i}=0,"))
        .collect();
    let locals = format!("locals {{\n  list = {list}\n  map = {{{map}}}\n}}\n");
    let text = with_display_name(&locals, "\"n-${length(local.list)}\"");
    let diagnostics = failure(&text);
    let too_long: Vec<_> = diagnostics
        .items
        .iter()
        .filter(|d| d.message.contains("elements exceeds the limit of 100000"))
        .map(|d| (d.line, d.column))
        .collect();
    assert_eq!(
        too_long,
        [
            (line_of(&text, "  list ="), 10),
            (line_of(&text, "  map ="), 9)
        ],
        "{}",
        diagnostics.render(false)
    );
}

#[test]
fn a_literal_list_in_a_variables_file_counts_against_the_element_limit() {
    let variable = "variable \"sizes\" {\n  type    = list(number)\n  default = []\n}\n";
    let values = format!("sizes = [{}]\n", "0,".repeat(MAX_COLLECTION_LEN + 1));
    let dir = dir_with(&[
        (
            "main.hcl",
            &format!("{variable}{}", crate::support::valid_file()),
        ),
        ("values.cfvars", &values),
    ]);
    let inputs = VariableInputs {
        files: vec![dir.path().join("values.cfvars")],
        ..VariableInputs::default()
    };
    let diagnostics = load_errors(dir.path(), &inputs);
    let found = diagnostic_with(&diagnostics, "elements exceeds the limit of 100000");
    assert_eq!((found.line, found.column), (1, 9), "{found}");
    assert!(found.file.ends_with("values.cfvars"), "{found}");
}

#[test]
fn literal_values_count_against_the_work_limit() {
    // 41 lists just under the element limit: 4.1 million units, past the budget of 4 million.
    let lists: String = (0..41)
        .map(|i| format!("  l{i} = [{}]\n", "0,".repeat(MAX_COLLECTION_LEN - 1)))
        .collect();
    let text = with_display_name(&format!("locals {{\n{lists}}}\n"), "\"x\"");
    assert!(text.len() as u64 <= MAX_SOURCE_BYTES);
    let diagnostics = failure(&text);
    let found = diagnostic_with(&diagnostics, "units of work");
    assert!(found.line > 0, "{found}");
}

#[test]
fn configuration_files_together_larger_than_the_total_limit_are_refused() {
    assert_eq!(MAX_CONFIGURATION_BYTES, 32 * 1024 * 1024);
    let line = format!("# {}\n", "x".repeat(1022));
    let filler = line.repeat(9 * 1024);
    let dir = dir_with(&[
        ("main.hcl", &crate::support::valid_file()),
        ("a.hcl", &filler),
        ("b.hcl", &filler),
        ("c.hcl", &filler),
        ("d.hcl", &filler),
    ]);
    let diagnostics = load_errors(dir.path(), &VariableInputs::default());
    let total = 4 * filler.len() + crate::support::valid_file().len();
    let found = diagnostic_with(&diagnostics, "more than the limit of 33554432 bytes");
    assert_eq!(found.file, dir.path(), "{found}");
    assert!(found.message.contains(&format!("{total} bytes")), "{found}");
    assert_eq!(diagnostics.items.len(), 1, "{}", diagnostics.render(false));
}

#[test]
fn ten_thousand_chained_locals_evaluate_correctly() {
    let mut locals = String::from("locals {\n  n0 = 0\n");
    for i in 1..10_000 {
        locals.push_str(&format!("  n{i} = local.n{} + 1\n", i - 1));
    }
    locals.push_str("}\n");
    let text = with_display_name(&locals, "\"n-${local.n9999}\"");
    let loaded = load_text(&text).unwrap_or_else(|d| panic!("{}", d.render(false)));
    let name = loaded.config.clusters[0].cluster.display_name.clone();
    assert_eq!(name.as_deref(), Some("n-9999"));
}

#[test]
fn division_and_modulo_by_zero_are_diagnostics() {
    for (expr, needle) in [
        ("5 % 0", "modulo by zero"),
        ("5 / 0", "division by zero"),
        (
            "-9223372036854775808 % -1 + 18446744073709551615 * 2",
            "integer overflow",
        ),
    ] {
        let text = with_display_name("", &format!("tostring({expr})"));
        insta::assert_snapshot!(find(&failure(&text), needle));
    }
}

#[test]
fn modulo_by_zero_from_every_variable_source_is_a_diagnostic() {
    // Numbers from the command line and the environment are not expressions; collections are.
    let declared = "variable \"n\" {\n  type = list(number)\n}\n";
    let text = with_display_name(declared, "tostring(length(var.n))");
    let cli = VariableInputs {
        cli: vec![("n".to_owned(), "[5 % 0]".to_owned())],
        ..VariableInputs::default()
    };
    let env = VariableInputs {
        env: [("n".to_owned(), "[7 % 0]".to_owned())].into(),
        ..VariableInputs::default()
    };
    let dir = dir_with(&[("main.hcl", &text), ("vars/in.tfvars", "n = [9 % 0]\n")]);
    let file = VariableInputs {
        files: vec![dir.path().join("vars/in.tfvars")],
        ..VariableInputs::default()
    };
    for inputs in [cli, env, file] {
        let diagnostics = load_errors(dir.path(), &inputs);
        with_temp_dirs_filtered(|| {
            insta::assert_snapshot!(find(&diagnostics, "modulo by zero"));
        });
    }
}

#[cfg(unix)]
#[test]
fn functions_and_var_files_refuse_special_files() {
    let dir = dir_with(&[("placeholder", "")]);
    mkfifo(&dir.path().join("fifo"));
    for (expr, needle) in [
        ("file(\"/dev/zero\")", "a character device"),
        ("file(\"fifo\")", "a FIFO"),
        ("file(\".\")", "a directory"),
        ("templatefile(\"fifo\", {})", "a FIFO"),
    ] {
        let text = with_display_name("", expr);
        std::fs::write(dir.path().join("main.hcl"), &text).unwrap();
        let diagnostics = load_errors(dir.path(), &VariableInputs::default());
        with_temp_dirs_filtered(|| insta::assert_snapshot!(find(&diagnostics, needle)));
    }
    std::fs::write(dir.path().join("main.hcl"), crate::support::valid_file()).unwrap();
    for path in ["/dev/zero", "fifo"] {
        let inputs = VariableInputs {
            files: vec![dir.path().join(path)],
            ..VariableInputs::default()
        };
        let diagnostics = load_errors(dir.path(), &inputs);
        with_temp_dirs_filtered(|| insta::assert_snapshot!(diagnostics.render(false)));
    }
}

#[test]
fn timeouts_longer_than_seven_days_are_refused() {
    assert_eq!(MAX_TIMEOUT_SECONDS, 604_800);
    for value in ["18446744073709551615s", "999999999999h", "8d"] {
        let text = valid_with(
            "  network {",
            &format!("  timeouts {{\n    create = \"{value}\"\n  }}\n  network {{"),
        );
        insta::assert_snapshot!(find(&failure(&text), "longest timeout"));
    }
    let text = valid_with(
        "  network {",
        "  timeouts {\n    create = \"7d\"\n  }\n  network {",
    );
    load_text(&text).unwrap_or_else(|d| panic!("{}", d.render(false)));
}

#[test]
fn integers_outside_their_api_range_are_refused_with_a_position() {
    for (from, to, needle) in [
        (
            "machine_type = \"n2-standard-8\"\n    }\n    scaling_spec {\n      min_node_count = 0",
            "machine_type = \"n2-standard-8\"\n      accelerator_count = 4294967297\n    }\n    scaling_spec {\n      min_node_count = 0",
            "4294967297 is out of range",
        ),
        (
            "max_node_count = 4",
            "max_node_count = 2147483648",
            "2147483648 is out of range",
        ),
        (
            "max_node_count = 4",
            "max_node_count = -3",
            "max_node_count ",
        ),
        (
            "min_node_count = 0",
            "min_node_count = -2147483649",
            "out of range",
        ),
        (
            "zone = \"us-central1-a\"\n  }\n  orchestrator_spec",
            "zone = \"us-central1-a\"\n    boot_disk {\n      boot_disk_size_gb = -1\n    }\n  }\n  orchestrator_spec",
            "boot_disk_size_gb of pool `cpu` is -1",
        ),
    ] {
        let text = valid_with(from, to);
        insta::assert_snapshot!(find(&failure(&text), needle));
    }
}

#[test]
fn ids_that_could_change_a_url_are_refused() {
    for id in ["a/b", "..", "a%2Fb", "a?b", "a#b", "a b", "../x", "A"] {
        let cluster = valid_with("cluster \"train01\"", &format!("cluster \"{id}\""));
        let pool = valid_with("node_pool \"cpu\"", &format!("node_pool \"{id}\"")).replace(
            "node_pool_ids = [\"cpu\"]",
            &format!("node_pool_ids = [\"{id}\"]"),
        );
        let partition = valid_with("partition \"cpu\"", &format!("partition \"{id}\""));
        for (what, text) in [
            ("cluster", cluster),
            ("pool", pool),
            ("partition", partition),
        ] {
            let diagnostics = errors(&text);
            assert!(
                diagnostics
                    .iter()
                    .any(|d| d.message.contains(&format!("`{id}`")) && d.line > 1),
                "{what} `{id}`: {diagnostics:#?}"
            );
        }
    }
}

#[test]
fn a_diagnostic_past_column_65535_renders_without_a_snippet() {
    let padding = "x".repeat(70_000);
    let text = format!("{PROVIDER}\nlocals {{\n  long = [\"{padding}\", local.missing]\n}}\n");
    let dir = dir_with(&[("main.hcl", &text)]);
    let diagnostics = load(dir.path(), &VariableInputs::default()).unwrap_err();
    let found = diagnostics
        .items
        .iter()
        .find(|d| d.column > 70_000)
        .unwrap_or_else(|| panic!("{diagnostics:#?}"));
    let line = line_of(&text, "  long = ");
    for color in [false, true] {
        let rendered = diagnostics.render(color);
        assert!(
            rendered.contains(&format!("main.hcl:{line}:{}", found.column)),
            "{rendered:.2000}"
        );
        assert!(rendered.contains(&found.message), "{rendered:.2000}");
        assert!(
            !rendered.contains(&padding),
            "the 70,000-character line is not shown"
        );
    }
}

#[test]
fn a_syntax_error_past_column_65535_renders_without_a_snippet() {
    let text = format!(
        "{PROVIDER}\nlocals {{\n  long = \"{}\" = \n}}\n",
        "y".repeat(70_000)
    );
    let rendered = find(&failure(&text), "syntax error");
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"y[y\s]{8,}y", "[y…]");
    settings.bind(|| insta::assert_snapshot!(rendered));
}

/// Fragments that once crashed or exhausted an evaluation, spliced into a valid file.
const HOSTILE: &[&str] = &[
    " % 0",
    " / 0",
    " * 18446744073709551615",
    "-9223372036854775808 % -1",
    "concat(local.d, local.d)",
    "[for a in range(1024) : [for b in range(1024) : range(1024)]]",
    "\"%{ for a in range(1024) }%{ for b in range(1024) }x%{ endfor }%{ endfor }\"",
    "file(\"/dev/zero\")",
    "templatefile(\".\", {})",
    "\"18446744073709551615s\"",
    "4294967297",
    "\"a/../b?c#d%2F e\"",
    "timeouts { create = \"999999999999h\" }",
    "locals { d = [1, 2] }",
    "\u{0}",
    "\t\t\t\t",
];

/// Values given to `--var`, `--var-file` and `CLUSTERFORM_VAR_*` for a variable of type `any`
/// used by the cluster's display name, and for one of type `list(number)`.
fn variable_text() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(HOSTILE).prop_map(str::to_owned),
        "[0-9%/*+ \\-\\[\\]{}\"=.a-z]{0,24}",
        any::<String>(),
    ]
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn hostile_text_and_values_end_in_positioned_errors(
        at in 0..crate::support::valid_file().len(),
        fragment in proptest::sample::select(HOSTILE),
        value in variable_text(),
        source in 0..3usize,
    ) {
        let mut text = crate::support::valid_file();
        let mut at = at;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.insert_str(at, fragment);
        // The fragment is also placed where it is evaluated: alone, and after a number.
        let text = format!(
            "variable \"v\" {{\n  type = list(number)\n  default = []\n}}\nlocals {{\n  n = length(var.v)\n  h = {fragment}\n  g = 7{fragment}\n}}\n{text}"
        );
        let dir = dir_with(&[("main.hcl", &text)]);
        let var_file = dir.path().join("values.tfvars");
        std::fs::write(&var_file, format!("v = {value}\n")).unwrap();
        let inputs = match source {
            0 => VariableInputs { cli: vec![("v".to_owned(), value)], ..VariableInputs::default() },
            1 => VariableInputs { env: [("v".to_owned(), value)].into(), ..VariableInputs::default() },
            _ => VariableInputs { files: vec![var_file], ..VariableInputs::default() },
        };
        if let Err(diagnostics) = load(dir.path(), &inputs) {
            prop_assert!(!diagnostics.items.is_empty());
            // Every problem of the configuration file itself has a position.
            for diagnostic in &diagnostics.items {
                if diagnostic.file == Path::new("main.hcl") {
                    prop_assert!(diagnostic.line > 0, "{diagnostic}");
                }
            }
            let _ = diagnostics.render(true);
        }
        if let Err(diagnostics) = clusterform_config::format_source(&text, Path::new("main.hcl")) {
            prop_assert!(diagnostics.items.iter().all(|d| d.line > 0));
            let _ = diagnostics.render(false);
        }
    }
}
