//! Bounds on evaluation, so that a hostile or mistaken configuration fails with a diagnostic
//! instead of exhausting memory, time or the process: checked arithmetic and a work budget.
//!
//! hcl-rs's evaluator is a black box that panics on `x % 0` and integer overflow and never
//! stops a loop, so every expression is rewritten before it is evaluated: arithmetic becomes
//! calls to checked functions, the collection of every `for` (expression or template
//! directive) goes through a function that charges its iterations, and every reference,
//! function result and `for` body value through one that charges its size and checks it
//! against the per-value limits. Charges are drawn from one budget per load, shared by its
//! worker threads through a thread-local (hcl-rs takes functions as plain `fn` pointers).

// Every internal function has hcl-rs's fixed signature `fn(FuncArgs) -> Result<Value, String>`.
#![allow(clippy::needless_pass_by_value)]

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use hcl::edit::Ident;
use hcl::edit::expr::{
    BinaryOperator, Expression, ForExpr, FuncArgs as CallArgs, FuncCall, Traversal,
    TraversalOperator,
};
use hcl::edit::template::{ForDirective, Template};
use hcl::edit::visit_mut::{self, VisitMut};
use hcl::eval::{Context, FuncArgs, FuncDef, ParamType};
use hcl::{Number, Value};

/// The longest string an expression may produce (the same as the largest file `file` reads).
pub const MAX_STRING_BYTES: usize = 10 * 1024 * 1024;

/// The most elements one list or map produced by an expression may hold.
pub const MAX_COLLECTION_LEN: usize = 100_000;

/// The work one load may do: one unit per value produced or copied (each element of a list or
/// map counts) and per [`BYTES_PER_UNIT`] bytes of string, plus [`UNITS_PER_ITERATION`] per
/// `for` iteration. Legitimate configurations use a few thousand.
pub const MAX_EVALUATION_WORK: u64 = 4_000_000;

/// How many bytes of string text count as one unit of work.
pub const BYTES_PER_UNIT: usize = 256;

/// The units one `for` iteration costs besides the value it produces: an iteration builds a
/// scope and evaluates its body, which costs more than copying a value.
pub const UNITS_PER_ITERATION: u64 = 8;

/// The prefix of the internal functions the rewrite calls; errors of these functions are
/// reported with their message only, since the user never wrote the call.
const INTERNAL: &str = "__clusterform_";
const CHARGE: &str = "__clusterform_charge";
const ITERATE: &str = "__clusterform_iterate";

/// Work done so far by one load.
#[derive(Debug, Default)]
pub(crate) struct Budget {
    used: AtomicU64,
}

thread_local! {
    static BUDGET: RefCell<Arc<Budget>> = RefCell::new(Arc::default());
}

/// Runs `f` with evaluations on this thread drawing on `budget`.
pub(crate) fn with_budget<T>(budget: Arc<Budget>, f: impl FnOnce() -> T) -> T {
    let previous = BUDGET.with(|current| current.replace(budget));
    let result = f();
    BUDGET.with(|current| current.replace(previous));
    result
}

/// The budget evaluations on this thread draw on.
pub(crate) fn current_budget() -> Arc<Budget> {
    BUDGET.with(|current| Arc::clone(&current.borrow()))
}

/// Checks `value` against the per-value limits and charges its size to the current budget.
pub(crate) fn charge(value: &Value) -> Result<(), String> {
    let units = size(value)?;
    spend(units)
}

fn spend(units: u64) -> Result<(), String> {
    let used = BUDGET.with(|budget| budget.borrow().used.fetch_add(units, Ordering::Relaxed));
    if used.saturating_add(units) > MAX_EVALUATION_WORK {
        return Err(format!(
            "evaluation exceeds the limit of {MAX_EVALUATION_WORK} units of work per \
             configuration (a unit is a value produced or copied or {BYTES_PER_UNIT} bytes of \
             string; a `for` iteration costs {UNITS_PER_ITERATION}); look for nested `for` over large collections or \
             values that double in size"
        ));
    }
    Ok(())
}

/// The units `value` is worth, or the per-value limit it breaks.
fn size(value: &Value) -> Result<u64, String> {
    let mut units: u64 = 0;
    // A scalar, which most values are, is sized without allocating the stack.
    let mut pending: Vec<&Value> = Vec::new();
    let mut next = Some(value);
    while let Some(value) = next.take().or_else(|| pending.pop()) {
        units += 1;
        match value {
            Value::String(text) => {
                if text.len() > MAX_STRING_BYTES {
                    return Err(format!(
                        "a string of {} bytes exceeds the limit of {MAX_STRING_BYTES} bytes",
                        text.len()
                    ));
                }
                units += (text.len() / BYTES_PER_UNIT) as u64;
            }
            Value::Array(items) => {
                check_len(items.len())?;
                pending.extend(items);
            }
            Value::Object(items) => {
                check_len(items.len())?;
                pending.extend(items.values());
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
        if units > MAX_EVALUATION_WORK {
            break;
        }
    }
    Ok(units)
}

fn check_len(len: usize) -> Result<(), String> {
    if len > MAX_COLLECTION_LEN {
        return Err(format!(
            "a collection of {len} elements exceeds the limit of {MAX_COLLECTION_LEN} elements"
        ));
    }
    Ok(())
}

/// The message of an evaluation error, without the rewritten expression hcl-rs would print.
pub(crate) fn error_message(error: &hcl::eval::Error) -> String {
    if let hcl::eval::ErrorKind::FuncCall(name, message) = error.kind()
        && name.name.as_str().starts_with(INTERNAL)
    {
        return message.clone();
    }
    match error.expr() {
        Some(expr) if expr.to_string().contains(INTERNAL) => error.kind().to_string(),
        _ => error.to_string(),
    }
}

/// Declares the internal functions the rewrite calls.
pub(crate) fn declare_functions(ctx: &mut Context<'static>) {
    let any = || ParamType::Any;
    let one = |f| FuncDef::builder().param(any()).build(f);
    let two = |f| FuncDef::builder().param(any()).param(any()).build(f);
    ctx.declare_func(CHARGE, one(charged));
    ctx.declare_func(ITERATE, one(iterated));
    for (operator, f) in ARITHMETIC {
        ctx.declare_func(function_name(*operator), two(*f));
    }
}

type Arithmetic = fn(FuncArgs) -> Result<Value, String>;

const ARITHMETIC: &[(BinaryOperator, Arithmetic)] = &[
    (BinaryOperator::Plus, add),
    (BinaryOperator::Minus, subtract),
    (BinaryOperator::Mul, multiply),
    (BinaryOperator::Div, divide),
    (BinaryOperator::Mod, modulo),
];

fn function_name(operator: BinaryOperator) -> &'static str {
    match operator {
        BinaryOperator::Plus => "__clusterform_add",
        BinaryOperator::Minus => "__clusterform_subtract",
        BinaryOperator::Mul => "__clusterform_multiply",
        BinaryOperator::Div => "__clusterform_divide",
        _ => "__clusterform_modulo",
    }
}

fn charged(args: FuncArgs) -> Result<Value, String> {
    charge(&args[0])?;
    Ok(args[0].clone())
}

fn iterated(args: FuncArgs) -> Result<Value, String> {
    let len = match &args[0] {
        Value::Array(items) => items.len(),
        Value::Object(items) => items.len(),
        _ => 0,
    };
    spend(len as u64 * UNITS_PER_ITERATION)?;
    Ok(args[0].clone())
}

/// Two numbers, or the error hcl-rs would have given for the operator.
fn operands(args: &FuncArgs, symbol: &str) -> Result<(Number, Number), String> {
    match (&args[0], &args[1]) {
        (Value::Number(a), Value::Number(b)) => Ok((*a, *b)),
        (a, b) => Err(format!(
            "operator `{symbol}` is not applicable to `{a}` and `{b}`"
        )),
    }
}

/// Both operands as integers, when they are.
fn integers(a: Number, b: Number) -> Option<(i128, i128)> {
    let int = |n: Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    if a.is_f64() || b.is_f64() {
        return None;
    }
    Some((int(a)?, int(b)?))
}

fn integer_result(value: i128, symbol: &str) -> Result<Value, String> {
    if let Ok(n) = i64::try_from(value) {
        return Ok(Value::from(n));
    }
    u64::try_from(value)
        .map(Value::from)
        .map_err(|_| format!("integer overflow in `{symbol}`: the result does not fit in 64 bits"))
}

fn float_result(value: f64, symbol: &str) -> Result<Value, String> {
    Number::from_f64(value)
        .map(Value::Number)
        .ok_or_else(|| format!("`{symbol}` does not produce a finite number"))
}

fn integer_op(
    args: &FuncArgs,
    symbol: &str,
    ints: fn(i128, i128) -> Option<i128>,
    floats: fn(f64, f64) -> f64,
) -> Result<Value, String> {
    let (a, b) = operands(args, symbol)?;
    match integers(a, b) {
        Some((a, b)) => match ints(a, b) {
            Some(value) => integer_result(value, symbol),
            None => Err(format!("integer overflow in `{symbol}`")),
        },
        None => float_result(floats(as_f64(a), as_f64(b)), symbol),
    }
}

fn as_f64(n: Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

fn add(args: FuncArgs) -> Result<Value, String> {
    integer_op(&args, "+", i128::checked_add, |a, b| a + b)
}

fn subtract(args: FuncArgs) -> Result<Value, String> {
    integer_op(&args, "-", i128::checked_sub, |a, b| a - b)
}

fn multiply(args: FuncArgs) -> Result<Value, String> {
    integer_op(&args, "*", i128::checked_mul, |a, b| a * b)
}

fn divide(args: FuncArgs) -> Result<Value, String> {
    let (a, b) = operands(&args, "/")?;
    if as_f64(b) == 0.0 {
        return Err(format!("division by zero: `{a} / {b}`"));
    }
    float_result(as_f64(a) / as_f64(b), "/")
}

fn modulo(args: FuncArgs) -> Result<Value, String> {
    let (a, b) = operands(&args, "%")?;
    if as_f64(b) == 0.0 {
        return Err(format!("modulo by zero: `{a} % {b}`"));
    }
    integer_op(&args, "%", i128::checked_rem, |a, b| a % b)
}

/// Rewrites `expr` so that evaluating it is bounded (see the module documentation).
pub(crate) fn guard_expression(expr: &mut Expression) {
    Guard.visit_expr_mut(expr);
}

/// Rewrites a template the same way.
pub(crate) fn guard_template(template: &mut Template) {
    Guard.visit_template_mut(template);
}

struct Guard;

fn call(name: &str, args: Vec<Expression>) -> Expression {
    let mut call_args = CallArgs::new();
    for arg in args {
        call_args.push(arg);
    }
    Expression::from(FuncCall::new(Ident::new(name), call_args))
}

fn wrap(expr: &mut Expression, name: &str) {
    let inner = std::mem::replace(expr, Expression::from(false));
    *expr = call(name, vec![inner]);
}

impl VisitMut for Guard {
    fn visit_expr_mut(&mut self, expr: &mut Expression) {
        match expr {
            Expression::Traversal(traversal) => {
                self.visit_traversal_mut(traversal);
                wrap(expr, CHARGE);
            }
            Expression::Variable(_) => wrap(expr, CHARGE),
            Expression::FuncCall(call) => {
                visit_mut::visit_func_call_mut(self, call);
                wrap(expr, CHARGE);
            }
            Expression::BinaryOp(op) => {
                visit_mut::visit_binary_op_mut(self, op);
                let operator = *op.operator.value();
                if ARITHMETIC.iter().any(|(o, _)| *o == operator) {
                    let lhs = std::mem::replace(&mut op.lhs_expr, Expression::from(false));
                    let rhs = std::mem::replace(&mut op.rhs_expr, Expression::from(false));
                    *expr = call(function_name(operator), vec![lhs, rhs]);
                }
            }
            _ => visit_mut::visit_expr_mut(self, expr),
        }
    }

    /// The root of a reference stays as it is (charging it would charge every variable);
    /// index expressions are rewritten like any other.
    fn visit_traversal_mut(&mut self, traversal: &mut Traversal) {
        if !matches!(traversal.expr, Expression::Variable(_)) {
            self.visit_expr_mut(&mut traversal.expr);
        }
        for operator in traversal.operators.iter_mut() {
            if let TraversalOperator::Index(index) = operator.value_mut() {
                self.visit_expr_mut(index);
            }
        }
    }

    fn visit_for_expr_mut(&mut self, for_expr: &mut ForExpr) {
        visit_mut::visit_for_expr_mut(self, for_expr);
        wrap(&mut for_expr.intro.collection_expr, ITERATE);
        wrap(&mut for_expr.value_expr, CHARGE);
    }

    fn visit_for_directive_mut(&mut self, directive: &mut ForDirective) {
        visit_mut::visit_for_directive_mut(self, directive);
        wrap(&mut directive.for_expr.collection_expr, ITERATE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str) -> Result<Value, String> {
        let ctx = crate::language::functions::base_context();
        crate::language::expr::evaluate(&hcl::edit::parser::parse_expr(text).unwrap(), &ctx)
    }

    #[test]
    fn arithmetic_is_checked() {
        assert_eq!(eval("7 % 3"), Ok(Value::from(1)));
        assert_eq!(eval("-7 % 3"), Ok(Value::from(-1)));
        assert_eq!(eval("7 / 2"), Ok(Value::from(3.5)));
        assert_eq!(eval("2 * 3 - 10 + 1"), Ok(Value::from(-3)));
        assert_eq!(eval("1.5 + 1"), Ok(Value::from(2.5)));
        assert_eq!(
            eval("18446744073709551615 - 1"),
            Ok(Value::from(u64::MAX - 1))
        );
        for (text, expected) in [
            ("5 % 0", "modulo by zero"),
            ("5.5 % 0", "modulo by zero"),
            ("5 / 0", "division by zero"),
            ("0 / 0.0", "division by zero"),
            ("18446744073709551615 + 1", "integer overflow"),
            (
                "18446744073709551615 * 18446744073709551615",
                "integer overflow",
            ),
            (
                "-9223372036854775807 - 9223372036854775807",
                "integer overflow",
            ),
            ("1e300 * 1e300", "finite"),
            ("\"a\" + 1", "not applicable"),
        ] {
            let error = eval(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
        assert_eq!(eval("-9223372036854775808 % -1"), Ok(Value::from(0)));
    }

    #[test]
    fn rewritten_templates_and_keys_keep_their_meaning() {
        let heredoc = "<<EOT\n${upper(\"a\")}%{ for x in [1, 2] }${x % 2}%{ endfor }\nEOT";
        assert_eq!(eval(heredoc), Ok(Value::from("A10\n")));
        let object =
            eval("{ (lower(\"K\")) = 6 / 3, plain = [for k, v in { a = 1 } : \"${k}${v}\"] }")
                .unwrap();
        let object = object.as_object().unwrap();
        assert_eq!(object["k"], Value::from(2));
        assert_eq!(object["plain"], Value::Array(vec![Value::from("a1")]));
        assert_eq!(eval("true ? 1 : 1 % 0"), Ok(Value::from(1)));
    }

    #[test]
    fn values_and_iterations_are_bounded() {
        let long = eval(&format!("\"{}\"", "x".repeat(MAX_STRING_BYTES / 2)));
        assert!(long.is_ok());
        with_budget(Arc::default(), || {
            let error =
                eval("[for a in range(1024): [for b in range(1024): [for c in range(1024): 1]]]")
                    .unwrap_err();
            assert!(error.contains("units of work"), "{error}");
        });
        with_budget(Arc::default(), || {
            // Moderate work stays well inside the budget.
            let value =
                eval("concat(range(1000), range(1000), [for i in range(1000): range(100)])");
            assert!(matches!(value, Ok(Value::Array(ref items)) if items.len() == 3000));
        });
        let big = Value::Array(vec![Value::Null; MAX_COLLECTION_LEN + 1]);
        assert!(charge(&big).unwrap_err().contains("elements"));
    }

    #[test]
    fn internal_errors_hide_the_rewrite() {
        let error = eval("[for x in [1]: x % 0]").unwrap_err();
        assert!(!error.contains(INTERNAL), "{error}");
        let error = eval("[for x in [1]: x.y]").unwrap_err();
        assert!(!error.contains(INTERNAL), "{error}");
    }
}
