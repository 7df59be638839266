//! Evaluation of attributes with positions: references are checked first (undefined variables
//! and locals, `each` outside `for_each`) so that each problem points at the reference itself,
//! then the expression is evaluated and failures point at the attribute's value. Also resolves
//! `locals` in dependency order and names any cycle.
//!
//! A variable may be *unknown* (`validate` without values, as `terraform validate`): an
//! expression that refers to one, directly or through locals, is not evaluated and reports
//! nothing; [`Evaluator::depends_on_unknown`] tells callers that its value is unknown rather
//! than broken, and [`Evaluator::unknown_type`] what type it is sure to have when the variable
//! declares one, so that a value no declared type could fit is still reported.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use hcl::Value;
use hcl::edit::Span;
use hcl::edit::expr::{Expression, TraversalOperator};
use hcl::edit::visit;
use hcl::eval::Context;

use crate::diagnostic::{Diagnostic, SourceFile, did_you_mean};
use crate::language::expr::{Reference, Root, evaluate, literal, plain_value, references};
use crate::language::guard::charge;
use crate::language::variables::VarType;

/// What the evaluator knows about the names an expression may use.
#[derive(Debug, Default, Clone)]
pub(crate) struct Evaluator {
    /// Every problem found so far.
    pub diagnostics: Vec<Diagnostic>,
    /// Declared variables and whether each is sensitive.
    variables: BTreeMap<String, bool>,
    /// Declared locals: `Some(sensitive)` once evaluated, `None` when evaluation failed (so
    /// that uses of a broken local do not repeat its error).
    locals: BTreeMap<String, Option<bool>>,
    /// Variables referenced anywhere, for the unused-variable warning.
    pub used_variables: BTreeSet<String>,
    /// Declared variables without a value, in a run that allows that, with their types.
    unknown_variables: BTreeMap<String, VarType>,
    /// Locals whose value depends on an unknown variable, with the type the value is sure to
    /// have when one is (see [`Evaluator::unknown_type`]).
    unknown_locals: BTreeMap<String, Option<VarType>>,
}

/// An evaluated attribute.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Evaluated {
    pub value: Value,
    /// The value depends on a sensitive variable.
    pub sensitive: bool,
}

/// Where an expression is evaluated: its context and whether `each` exists there.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope<'c> {
    pub ctx: &'c Bindings,
    pub each: bool,
}

/// An evaluation context whose variables (`var`, `local`, `each`) are also kept where plain
/// references can read them: hcl-rs's evaluator clones the whole `var` or `local` object for
/// every `var.NAME`, and most attributes are such references or templates of them.
#[derive(Debug, Clone)]
pub(crate) struct Bindings {
    ctx: Context<'static>,
    variables: hcl::Map<String, Value>,
}

impl Bindings {
    /// Bindings over `ctx`, which must declare no variables itself.
    pub fn new(ctx: Context<'static>) -> Self {
        Self {
            ctx,
            variables: hcl::Map::new(),
        }
    }

    /// Declares (or replaces) the variable `name`.
    pub fn declare(&mut self, name: &str, value: Value) {
        self.ctx.declare_var(name, value.clone());
        self.variables.insert(name.to_owned(), value);
    }

    /// The context for hcl-rs's evaluator.
    pub fn context(&self) -> &Context<'static> {
        &self.ctx
    }

    /// The value of the variable `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.variables.get(name)
    }
}

/// One `name = expr` of a `locals` block.
#[derive(Debug, Clone)]
pub(crate) struct LocalDef<'a> {
    pub name: &'a str,
    pub expr: &'a Expression,
    pub key_range: Option<Range<usize>>,
    pub file: &'a SourceFile,
}

impl Evaluator {
    /// A copy that knows the same names but has no diagnostics and no uses yet, for a worker
    /// thread; [`Evaluator::absorb`] merges its findings back.
    pub fn fork(&self) -> Self {
        Self {
            diagnostics: Vec::new(),
            variables: self.variables.clone(),
            locals: self.locals.clone(),
            used_variables: BTreeSet::new(),
            unknown_variables: self.unknown_variables.clone(),
            unknown_locals: self.unknown_locals.clone(),
        }
    }

    /// Marks declared variables (with their types) as having no value yet: expressions using
    /// them are skipped.
    pub fn declare_unknown(&mut self, variables: impl IntoIterator<Item = (String, VarType)>) {
        self.unknown_variables.extend(variables);
    }

    /// The type an unknown value is sure to have: `expr` refers to an unknown variable whose
    /// declared type is not `any` (directly, or through a local that is such a reference),
    /// perhaps indexed into (`var.sizes[0]`, `var.labels.team`). `None` for anything else,
    /// whose type is not sure until the value is known.
    pub fn unknown_type(&self, expr: &Expression) -> Option<VarType> {
        let mut expr = expr;
        while let Expression::Parenthesis(inner) = expr {
            expr = inner.inner();
        }
        let Expression::Traversal(traversal) = expr else {
            return None;
        };
        let Expression::Variable(root) = &traversal.expr else {
            return None;
        };
        let mut operators = traversal.operators.iter().map(|operator| operator.value());
        let Some(TraversalOperator::GetAttr(name)) = operators.next() else {
            return None;
        };
        let mut ty = match root.as_str() {
            "var" => self.unknown_variables.get(name.as_str())?.clone(),
            "local" => self.unknown_locals.get(name.as_str())?.clone()?,
            _ => return None,
        };
        for operator in operators {
            ty = match (operator, ty) {
                (
                    TraversalOperator::Index(_) | TraversalOperator::LegacyIndex(_),
                    VarType::List(element),
                )
                | (
                    TraversalOperator::Index(_) | TraversalOperator::GetAttr(_),
                    VarType::Map(element),
                ) => *element,
                _ => return None,
            };
        }
        (ty != VarType::Any).then_some(ty)
    }

    /// Reports `expr`, the value of the attribute `name`, when it is unknown and the type it is
    /// sure to have ([`Evaluator::unknown_type`]) never fits: `takes` says of a type whether
    /// some value of it could fit, or what is wrong with all of them.
    pub fn check_unknown_type(
        &mut self,
        file: &SourceFile,
        name: &str,
        expr: &Expression,
        takes: impl FnOnce(&VarType) -> Result<(), String>,
    ) {
        let Some(ty) = self.unknown_type(expr) else {
            return;
        };
        if let Err(message) = takes(&ty) {
            self.diagnostics.push(
                file.error(
                    expr.span(),
                    format!("wrong value for `{name}`: {message}"),
                    Some(
                        "the value is not known until the variable has one, but no value of the \
                     type the variable declares fits here"
                            .to_owned(),
                    ),
                ),
            );
        }
    }

    /// Whether `expr` refers to an unknown variable, directly or through locals: its value is
    /// unknown, not wrong, when [`Evaluator::value`] gave none.
    pub fn depends_on_unknown(&self, expr: &Expression) -> bool {
        if self.unknown_variables.is_empty() {
            return false;
        }
        references(expr)
            .iter()
            .any(|reference| match reference.root {
                Root::Var => self.unknown_variables.contains_key(&reference.name),
                Root::Local => self.unknown_locals.contains_key(&reference.name),
                Root::Each => false,
            })
    }

    /// Takes over the diagnostics and variable uses of a fork.
    pub fn absorb(&mut self, fork: Self) {
        self.diagnostics.extend(fork.diagnostics);
        self.used_variables.extend(fork.used_variables);
    }

    /// Declares the variables the configuration has.
    pub fn declare_variables(&mut self, variables: impl IntoIterator<Item = (String, bool)>) {
        self.variables.extend(variables);
    }

    /// Evaluates an expression in `scope`; `None` after reporting a problem (or when it uses a
    /// local whose own evaluation failed).
    pub fn value(
        &mut self,
        file: &SourceFile,
        expr: &Expression,
        scope: Scope<'_>,
    ) -> Option<Evaluated> {
        // A literal is built here, not by the guarded evaluator, so it is charged below like
        // any other value: a file of literals is as large as a file of expressions.
        let (value, sensitive) = match literal(expr) {
            Some(value) => (Ok(value), false),
            None => {
                let sensitive = self.check_references(file, &references(expr), scope.each)?;
                let value = match plain_value(expr, scope.ctx) {
                    Some(value) => Ok(value),
                    None => evaluate(expr, scope.ctx.context()),
                };
                (value, sensitive)
            }
        };
        // The value as a whole is checked too: a template of plain references is built here,
        // not by the guarded evaluator.
        match value.and_then(|value| charge(&value).map(|()| value)) {
            Ok(value) => Some(Evaluated { value, sensitive }),
            Err(message) => {
                self.diagnostics
                    .push(file.error(expr.span(), message, None));
                None
            }
        }
    }

    /// Checks every reference; `Some(sensitive)` when all resolve.
    fn check_references(
        &mut self,
        file: &SourceFile,
        references: &[Reference],
        each: bool,
    ) -> Option<bool> {
        let mut sensitive = false;
        let mut usable = true;
        for reference in references {
            match self.check_reference(file, reference, each) {
                Some(flag) => sensitive |= flag,
                None => usable = false,
            }
        }
        usable.then_some(sensitive)
    }

    fn check_reference(
        &mut self,
        file: &SourceFile,
        reference: &Reference,
        each: bool,
    ) -> Option<bool> {
        let name = reference.name.as_str();
        let range = reference.range.clone();
        match reference.root {
            Root::Var => {
                if !self.used_variables.contains(name) {
                    self.used_variables.insert(name.to_owned());
                }
                if self.unknown_variables.contains_key(name) {
                    return None;
                }
                if let Some(sensitive) = self.variables.get(name) {
                    return Some(*sensitive);
                }
                let hint = did_you_mean(name, self.variables.keys().map(String::as_str))
                    .unwrap_or_else(|| format!("declare it with `variable \"{name}\" {{}}`"));
                self.diagnostics.push(file.error(
                    range,
                    format!("undefined variable `var.{name}`"),
                    Some(hint),
                ));
                None
            }
            Root::Local => match self.locals.get(name) {
                Some(state) => *state,
                None => {
                    let hint = did_you_mean(name, self.locals.keys().map(String::as_str))
                        .unwrap_or_else(|| {
                            format!("define it in a `locals {{ {name} = ... }}` block")
                        });
                    self.diagnostics.push(file.error(
                        range,
                        format!("undefined local `local.{name}`"),
                        Some(hint),
                    ));
                    None
                }
            },
            Root::Each if !each => {
                self.diagnostics.push(file.error(
                    range,
                    "`each` is only available inside a cluster block with `for_each`",
                    Some("add `for_each = ...` to the cluster, or remove the reference".to_owned()),
                ));
                None
            }
            Root::Each if !matches!(name, "" | "key" | "value") => {
                self.diagnostics.push(
                    file.error(
                        range,
                        format!("`each.{name}` does not exist"),
                        did_you_mean(name, ["key", "value"])
                            .or_else(|| Some("use `each.key` or `each.value`".to_owned())),
                    ),
                );
                None
            }
            Root::Each => Some(false),
        }
    }

    /// Evaluates every local in dependency order into `ctx` (as the `local` object). A cycle
    /// is one error naming it; a local that fails leaves its dependents unevaluated.
    pub fn resolve_locals(&mut self, defs: &[LocalDef<'_>], ctx: &mut Bindings) {
        let mut by_name: BTreeMap<&str, &LocalDef<'_>> = BTreeMap::new();
        for def in defs {
            if let Some(first) = by_name.insert(def.name, def) {
                by_name.insert(first.name, first);
                self.diagnostics.push(def.file.error(
                    def.key_range.clone(),
                    format!("local `{}` is defined twice", def.name),
                    Some("give each local a distinct name".to_owned()),
                ));
            }
        }
        let order = self.evaluation_order(&by_name);
        let mut values = hcl::Map::new();
        for name in order {
            let def = by_name[name];
            // Only the locals this one uses are copied into its scope, so that a chain of
            // locals is evaluated in linear time.
            ctx.declare("local", Value::Object(used_locals(def.expr, &values)));
            let evaluated = self.value(def.file, def.expr, Scope { ctx, each: false });
            if evaluated.is_none() && self.depends_on_unknown(def.expr) {
                let ty = self.unknown_type(def.expr);
                self.unknown_locals.insert(name.to_owned(), ty);
            }
            let state = evaluated.map(|evaluated| {
                values.insert(name.to_owned(), evaluated.value);
                evaluated.sensitive
            });
            self.locals.insert(name.to_owned(), state);
        }
        ctx.declare("local", Value::Object(values));
    }

    /// Orders locals so that each comes after those it uses; locals on a cycle or using an
    /// undefined local are left out (after reporting) and marked failed.
    fn evaluation_order<'a>(&mut self, defs: &BTreeMap<&'a str, &LocalDef<'a>>) -> Vec<&'a str> {
        let mut order = Vec::new();
        let mut state: BTreeMap<&str, Visit> = BTreeMap::new();
        for name in defs.keys() {
            let mut stack = Vec::new();
            self.visit_local(name, defs, &mut state, &mut stack, &mut order);
        }
        for (name, visit) in &state {
            if *visit == Visit::Failed {
                self.locals.insert((*name).to_owned(), None);
            }
        }
        for name in &order {
            // Declared with a placeholder so that references to it resolve while ordering.
            self.locals.entry((*name).to_owned()).or_insert(Some(false));
        }
        order
    }

    fn visit_local<'a>(
        &mut self,
        name: &'a str,
        defs: &BTreeMap<&'a str, &LocalDef<'a>>,
        state: &mut BTreeMap<&'a str, Visit>,
        stack: &mut Vec<&'a str>,
        order: &mut Vec<&'a str>,
    ) -> bool {
        match state.get(name) {
            Some(Visit::Done) => return true,
            Some(Visit::Failed) => return false,
            Some(Visit::InProgress) => {
                self.report_cycle(name, defs, stack);
                return false;
            }
            None => {}
        }
        state.insert(name, Visit::InProgress);
        stack.push(name);
        let def = defs[name];
        let mut ok = true;
        for reference in references(def.expr) {
            if reference.root != Root::Local {
                continue;
            }
            match defs.get_key_value(reference.name.as_str()) {
                Some((dependency, _)) => {
                    ok &= self.visit_local(dependency, defs, state, stack, order);
                }
                None => {
                    let names = defs.keys().copied();
                    self.diagnostics.push(def.file.error(
                        reference.range.clone(),
                        format!("undefined local `local.{}`", reference.name),
                        did_you_mean(&reference.name, names).or_else(|| {
                            Some(format!(
                                "define it in a `locals {{ {} = ... }}` block",
                                reference.name
                            ))
                        }),
                    ));
                    ok = false;
                }
            }
        }
        stack.pop();
        // A local already marked failed by a cycle report stays failed.
        if state.get(name) == Some(&Visit::Failed) {
            return false;
        }
        state.insert(name, if ok { Visit::Done } else { Visit::Failed });
        if ok {
            order.push(name);
        }
        ok
    }

    fn report_cycle<'a>(
        &mut self,
        name: &'a str,
        defs: &BTreeMap<&'a str, &LocalDef<'a>>,
        stack: &[&'a str],
    ) {
        let start = stack.iter().position(|n| *n == name).unwrap_or(0);
        let cycle: Vec<String> = stack[start..]
            .iter()
            .chain(std::iter::once(&name))
            .map(|n| format!("local.{n}"))
            .collect();
        let def = defs[name];
        self.diagnostics.push(def.file.error(
            def.key_range.clone(),
            format!(
                "locals refer to each other in a cycle: {}",
                cycle.join(" -> ")
            ),
            Some("break the cycle by computing one of them without the others".to_owned()),
        ));
    }
}

/// The locals among `values` that `expr` refers to; all of them when it uses `local` other than
/// as `local.NAME` (`local["name"]`, or the whole object).
fn used_locals(expr: &Expression, values: &hcl::Map<String, Value>) -> hcl::Map<String, Value> {
    let named: Vec<Reference> = references(expr)
        .into_iter()
        .filter(|reference| reference.root == Root::Local)
        .collect();
    if named.len() < local_roots(expr) {
        return values.clone();
    }
    named
        .iter()
        .filter_map(|reference| {
            let value = values.get(&reference.name)?;
            Some((reference.name.clone(), value.clone()))
        })
        .collect()
}

/// How many times `expr` names the variable `local`, in any form.
fn local_roots(expr: &Expression) -> usize {
    struct Count(usize);
    impl visit::Visit for Count {
        fn visit_expr(&mut self, expr: &Expression) {
            if let Expression::Variable(name) = expr
                && name.as_str() == "local"
            {
                self.0 += 1;
            }
            visit::visit_expr(self, expr);
        }
    }
    let mut count = Count(0);
    visit::Visit::visit_expr(&mut count, expr);
    count.0
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visit {
    InProgress,
    Done,
    Failed,
}

/// Whether some value of type `ty` reads as a string (any string, number or bool does); else
/// what is wrong with every value of it.
pub(crate) fn takes_string(ty: &VarType) -> Result<(), String> {
    if ty.may_be_scalar() {
        return Ok(());
    }
    Err(format!("expected a string, found a value of type `{ty}`"))
}
