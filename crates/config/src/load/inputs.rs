//! The `variable` blocks of a run: their declarations (a name declared twice is reported at
//! the second), and the warning for a declared variable that nothing uses. Values are given by
//! `crate::variables`.

use super::Run;
use super::files::TopLevel;
use crate::diagnostic::{Diagnostic, Severity};
use crate::variables::{self, Declaration};

impl Run {
    pub(super) fn declarations(&mut self, top: &TopLevel<'_>) -> Vec<Declaration> {
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

    pub(super) fn warn_unused(&mut self, declarations: &[Declaration]) {
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
}
