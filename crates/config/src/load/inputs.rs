//! The `variable` blocks of a run: their declarations (a name declared twice is reported at
//! the second), the warning for a declared variable that nothing uses, the variables files of
//! the configuration directory, and the diagnostic for a variables file misnamed `*.hcl`
//! (which would otherwise be read as configuration). Values are given by `crate::language::variables`.

use std::collections::BTreeSet;
use std::path::Path;

use hcl::edit::Span;

use super::files::{StrayAttributes, TopLevel};
use crate::diagnostic::{CommandLineReason, Diagnostic, Severity};
use crate::language::source::{VAR_FILE_EXTENSION, auto_var_files};
use crate::language::variables::{self, Declaration, VarFile};

const TOP_LEVEL_ATTRIBUTE_HINT: &str = "attributes belong inside a block such as `locals { ... }`";

/// The declared variables; a name declared twice is reported at the second declaration. The
/// texts of sensitive variables' defaults go to `secrets`.
pub(super) fn declarations(
    top: &TopLevel<'_>,
    diagnostics: &mut Vec<Diagnostic>,
    secrets: &mut Vec<String>,
) -> Vec<Declaration> {
    let mut declarations: Vec<Declaration> = Vec::new();
    for (source, block) in &top.variables {
        let Some(declaration) = variables::declare(source, block, diagnostics, secrets) else {
            continue;
        };
        if declarations.iter().any(|d| d.name == declaration.name) {
            diagnostics.push(Diagnostic {
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

/// Reports the top-level attributes; `true` when a file of them is a variables file named
/// `*.hcl`: only attributes, each a declared variable's name. Its values must not be taken,
/// and its attributes are not each an error: the file has the wrong name.
pub(super) fn report_stray_attributes(
    stray: &[StrayAttributes<'_>],
    declarations: &[Declaration],
    diagnostics: &mut Vec<Diagnostic>,
) -> bool {
    let mut misnamed = false;
    for file in stray {
        let declared = |name: &str| declarations.iter().any(|d| d.name == name);
        if !file.has_blocks && file.attributes.iter().all(|a| declared(a.key.as_str())) {
            misnamed = true;
            diagnostics.push(misnamed_var_file(file));
            continue;
        }
        for attribute in &file.attributes {
            diagnostics.push(file.file.error(
                attribute.key.span(),
                format!(
                    "unexpected attribute `{}` at the top level",
                    attribute.key.as_str()
                ),
                Some(TOP_LEVEL_ATTRIBUTE_HINT.to_owned()),
            ));
        }
    }
    misnamed
}

/// Warns of every declared variable that nothing in `used` refers to.
pub(super) fn warn_unused(
    declarations: &[Declaration],
    used: &BTreeSet<String>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    for declaration in declarations {
        if !used.contains(&declaration.name) {
            diagnostics.push(Diagnostic {
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

/// The error for a variables file named `*.hcl`, at its first attribute.
fn misnamed_var_file(stray: &StrayAttributes<'_>) -> Diagnostic {
    let path = &stray.file.path;
    let renamed = path.with_extension(VAR_FILE_EXTENSION);
    stray
        .file
        .error(
            stray.attributes.first().and_then(|a| a.key.span()),
            format!(
                "`{}` looks like a variables file: rename it to `{}`",
                path.display(),
                renamed.display()
            ),
            None,
        )
        .because(CommandLineReason::MisnamedVarFile)
}

/// The variables files of `dir` loaded without being named, shown by their names in it.
pub(super) fn directory_var_files(dir: &Path) -> Vec<VarFile> {
    auto_var_files(dir)
        .into_iter()
        .map(|path| {
            let shown = path.strip_prefix(dir).unwrap_or(&path).to_path_buf();
            VarFile { path, shown }
        })
        .collect()
}
