//! Expressions: which `var.*`, `local.*` and `each.*` names an expression refers to (found on
//! the hcl-edit tree, so references inside string templates count), and evaluation of one
//! expression with hcl-rs's evaluator, with shortcuts for plain literals, plain references and
//! string templates made of them.

use std::ops::Range;

use hcl::Value;
use hcl::edit::Span;
use hcl::edit::expr::{Expression, ObjectKey, Traversal, TraversalOperator};
use hcl::edit::template::Element;
use hcl::edit::visit::{self, Visit};
use hcl::eval::{Context, Evaluate};

use crate::language::evaluator::Bindings;
use crate::language::guard::{charge, error_message, guard_expression};

/// The namespace a reference starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Root {
    /// `var.NAME`
    Var,
    /// `local.NAME`
    Local,
    /// `each.key` / `each.value`
    Each,
}

/// One `root.name` reference and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reference {
    pub root: Root,
    pub name: String,
    pub range: Option<Range<usize>>,
}

/// Every `var.*`, `local.*` and `each.*` reference in an expression, in source order.
pub(crate) fn references(expr: &Expression) -> Vec<Reference> {
    let mut collector = Collector::default();
    collector.visit_expr(expr);
    collector.found
}

#[derive(Default)]
struct Collector {
    found: Vec<Reference>,
}

impl Visit for Collector {
    fn visit_traversal(&mut self, traversal: &Traversal) {
        if let (Expression::Variable(root), Some(first)) =
            (&traversal.expr, traversal.operators.first())
            && let TraversalOperator::GetAttr(name) = first.value()
        {
            let root = match root.as_str() {
                "var" => Some(Root::Var),
                "local" => Some(Root::Local),
                "each" => Some(Root::Each),
                _ => None,
            };
            if let Some(root) = root {
                self.found.push(Reference {
                    root,
                    name: name.as_str().to_owned(),
                    range: traversal.span(),
                });
                // The root is recorded: only index expressions remain to be searched.
                for operator in &traversal.operators {
                    self.visit_traversal_operator(operator);
                }
                return;
            }
        }
        visit::visit_traversal(self, traversal);
    }

    fn visit_expr(&mut self, expr: &Expression) {
        if let Expression::Variable(name) = expr
            && name.as_str() == "each"
        {
            self.found.push(Reference {
                root: Root::Each,
                name: String::new(),
                range: expr.span(),
            });
        }
        visit::visit_expr(self, expr);
    }
}

/// Evaluates an expression; the error is hcl-rs's message.
/// The expression is first rewritten so that its evaluation is bounded (see [`crate::language::guard`]).
pub(crate) fn evaluate(expr: &Expression, ctx: &Context<'_>) -> Result<Value, String> {
    if let Some(value) = literal(expr) {
        // Charged like the values the guarded evaluator builds (a variables file may hold
        // nothing but literals).
        charge(&value)?;
        return Ok(value);
    }
    let mut expr = expr.clone();
    guard_expression(&mut expr);
    if let Expression::StringTemplate(template) = expr {
        // hcl-rs would print the template back to text and parse it again; convert the
        // parsed template directly instead.
        let template = hcl::Template::from(hcl::edit::template::Template::from(template));
        return template
            .evaluate(ctx)
            .map(Value::String)
            .map_err(|e| error_message(&e));
    }
    hcl::Expression::from(expr)
        .evaluate(ctx)
        .map_err(|e| error_message(&e))
}

/// The value of a plain reference such as `local.zone`, or of a string template made of
/// literals and plain references to strings, read from `bindings`; `None` for anything else
/// (or a reference that does not resolve), which the evaluator handles and reports.
pub(crate) fn plain_value(expr: &Expression, bindings: &Bindings) -> Option<Value> {
    match expr {
        Expression::Traversal(traversal) => plain_reference(traversal, bindings).cloned(),
        Expression::StringTemplate(template) => {
            let mut text = String::new();
            for element in template.iter() {
                match element {
                    Element::Literal(literal) => text.push_str(literal.value()),
                    // Strip markers (`${~ x ~}`) trim the neighbouring literals: left to hcl-rs.
                    Element::Interpolation(interpolation)
                        if !interpolation.strip.strip_start()
                            && !interpolation.strip.strip_end() =>
                    {
                        let Expression::Traversal(traversal) = &interpolation.expr else {
                            return None;
                        };
                        text.push_str(plain_reference(traversal, bindings)?.as_str()?);
                    }
                    Element::Interpolation(_) | Element::Directive(_) => return None,
                }
            }
            Some(Value::String(text))
        }
        _ => None,
    }
}

/// The value `root.a.b` refers to, when the traversal has only attribute steps.
fn plain_reference<'v>(traversal: &Traversal, bindings: &'v Bindings) -> Option<&'v Value> {
    let Expression::Variable(root) = &traversal.expr else {
        return None;
    };
    let mut value = bindings.get(root.as_str())?;
    for operator in &traversal.operators {
        let TraversalOperator::GetAttr(name) = operator.value() else {
            return None;
        };
        value = value.as_object()?.get(name.as_str())?;
    }
    Some(value)
}

/// The value of an expression made only of literals, without going through the evaluator
/// (most attributes are literals, and converting them is the bulk of the cost of a load).
pub(crate) fn literal(expr: &Expression) -> Option<Value> {
    match expr {
        Expression::Null(_) => Some(Value::Null),
        Expression::Bool(b) => Some(Value::Bool(*b.value())),
        Expression::Number(n) => Some(Value::Number(*n.value())),
        Expression::String(s) => Some(Value::String(s.value().clone())),
        Expression::Array(items) => items
            .iter()
            .map(literal)
            .collect::<Option<Vec<_>>>()
            .map(Value::Array),
        Expression::Object(object) => object
            .iter()
            .map(|(key, value)| {
                let key = match key {
                    ObjectKey::Ident(ident) => ident.as_str().to_owned(),
                    ObjectKey::Expression(Expression::String(s)) => s.value().clone(),
                    ObjectKey::Expression(_) => return None,
                };
                Some((key, literal(value.expr())?))
            })
            .collect::<Option<hcl::Map<_, _>>>()
            .map(Value::Object),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Expression {
        hcl::edit::parser::parse_expr(text).unwrap()
    }

    #[test]
    fn references_inside_templates_are_found() {
        let refs = references(&parse(
            r#""${var.a}-${local.b}" == each.key ? var.a : each"#,
        ));
        let names: Vec<_> = refs.iter().map(|r| (r.root, r.name.as_str())).collect();
        assert_eq!(
            names,
            [
                (Root::Var, "a"),
                (Root::Local, "b"),
                (Root::Each, "key"),
                (Root::Var, "a"),
                (Root::Each, ""),
            ]
        );
    }

    #[test]
    fn literals_skip_the_evaluator() {
        let value = literal(&parse(r#"{ a = [1, "x", true], "b-c" = null }"#)).unwrap();
        let mut expected = hcl::Map::new();
        expected.insert(
            "a".to_owned(),
            Value::Array(vec![Value::from(1), Value::from("x"), Value::Bool(true)]),
        );
        expected.insert("b-c".to_owned(), Value::Null);
        assert_eq!(value, Value::Object(expected));
        assert!(literal(&parse("var.x")).is_none());
    }

    fn bindings() -> Bindings {
        let mut bindings = Bindings::new(crate::language::functions::base_context());
        let mut var = hcl::Map::new();
        var.insert("region".to_owned(), Value::from("us-central1"));
        var.insert("count".to_owned(), Value::from(3));
        let mut nested = hcl::Map::new();
        nested.insert("b".to_owned(), Value::from("deep"));
        var.insert("a".to_owned(), Value::Object(nested));
        bindings.declare("var", Value::Object(var));
        bindings
    }

    #[test]
    fn plain_references_and_templates_match_the_evaluator() {
        let bindings = bindings();
        for text in [
            "var.region",
            "var.a.b",
            "var.a",
            r#""${var.region}-a""#,
            r#""x/${var.a.b}/${var.region}/y""#,
        ] {
            let expr = parse(text);
            let expected = evaluate(&expr, bindings.context()).unwrap();
            assert_eq!(plain_value(&expr, &bindings), Some(expected), "{text}");
        }
    }

    #[test]
    fn anything_else_is_left_to_the_evaluator() {
        let bindings = bindings();
        for text in [
            r#""n${var.count}""#,
            r#""${~ var.region}""#,
            r#""%{ if true }x%{ endif }""#,
            "var.missing",
            "var.region.x",
            r#"var["region"]"#,
            "upper(var.region)",
        ] {
            assert_eq!(plain_value(&parse(text), &bindings), None, "{text}");
        }
    }
}
