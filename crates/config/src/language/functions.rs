//! The function library of the language (`file`, `templatefile`, `format`, `join`, `split`,
//! `lower`, `upper`, `replace`, `concat`, `merge`, `length`, `range`, `lookup`, `coalesce`,
//! `tostring`, `tonumber`), declared into hcl-rs evaluation contexts.
//!
//! hcl-rs takes functions as plain `fn` pointers, so `file` and `templatefile` cannot capture
//! the configuration directory; they read it from a thread-local that [`with_base_dir`] sets
//! around an evaluation. Evaluation never leaves the calling thread, so this is sound.

// Every library function has hcl-rs's fixed signature `fn(FuncArgs) -> Result<Value, String>`,
// whether or not it consumes its arguments.
#![allow(clippy::needless_pass_by_value)]

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use hcl::eval::{Context, Evaluate, FuncArgs, FuncDef, ParamType};
use hcl::{Map, Value};

use crate::language::guard::{declare_functions, error_message, guard_template};
use crate::language::source::{ReadError, read_capped};

/// The largest file `file` and `templatefile` read, so that a stray path cannot exhaust memory.
pub(crate) const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// Terraform's limit on the length of a `range` result.
const MAX_RANGE_LEN: usize = 1024;

thread_local! {
    static BASE_DIR: RefCell<PathBuf> = RefCell::new(PathBuf::from("."));
}

/// Runs `f` with relative paths of `file`/`templatefile` resolved against `dir`.
pub(crate) fn with_base_dir<T>(dir: &Path, f: impl FnOnce() -> T) -> T {
    let previous = BASE_DIR.with(|base| base.replace(dir.to_path_buf()));
    let result = f();
    BASE_DIR.with(|base| base.replace(previous));
    result
}

/// The directory `file` and `templatefile` currently resolve against.
pub(crate) fn base_dir() -> PathBuf {
    BASE_DIR.with(|base| base.borrow().clone())
}

/// A context with every function of the language and no variables.
pub(crate) fn base_context() -> Context<'static> {
    let mut ctx = template_context();
    ctx.declare_func(
        "templatefile",
        FuncDef::builder()
            .param(ParamType::String)
            .param(ParamType::object_of(ParamType::Any))
            .build(templatefile),
    );
    ctx
}

/// Every function except `templatefile`, which a template may not call (it could include
/// itself forever).
fn template_context() -> Context<'static> {
    let string = || ParamType::String;
    let mut ctx = Context::new();
    declare_functions(&mut ctx);
    let mut declare = |name: &str, def: FuncDef| ctx.declare_func(name, def);
    declare("file", FuncDef::builder().param(string()).build(file));
    declare(
        "format",
        FuncDef::builder()
            .param(string())
            .variadic_param(ParamType::Any)
            .build(format),
    );
    declare(
        "join",
        FuncDef::builder()
            .param(string())
            .variadic_param(ParamType::array_of(ParamType::Any))
            .build(join),
    );
    declare(
        "split",
        FuncDef::builder().params([string(), string()]).build(split),
    );
    declare("lower", FuncDef::builder().param(string()).build(lower));
    declare("upper", FuncDef::builder().param(string()).build(upper));
    declare(
        "replace",
        FuncDef::builder()
            .params([string(), string(), string()])
            .build(replace),
    );
    declare(
        "concat",
        FuncDef::builder()
            .variadic_param(ParamType::array_of(ParamType::Any))
            .build(concat),
    );
    declare(
        "merge",
        FuncDef::builder()
            .variadic_param(ParamType::object_of(ParamType::Any))
            .build(merge),
    );
    declare(
        "length",
        FuncDef::builder().param(ParamType::Any).build(length),
    );
    declare(
        "range",
        FuncDef::builder()
            .variadic_param(ParamType::Number)
            .build(range),
    );
    declare(
        "lookup",
        FuncDef::builder()
            .param(ParamType::object_of(ParamType::Any))
            .param(string())
            .variadic_param(ParamType::Any)
            .build(lookup),
    );
    declare(
        "coalesce",
        FuncDef::builder()
            .variadic_param(ParamType::Any)
            .build(coalesce),
    );
    declare(
        "tostring",
        FuncDef::builder().param(ParamType::Any).build(tostring),
    );
    declare(
        "tonumber",
        FuncDef::builder().param(ParamType::Any).build(tonumber),
    );
    declare(
        "toset",
        FuncDef::builder()
            .param(ParamType::array_of(ParamType::Any))
            .build(toset),
    );
    declare(
        "tolist",
        FuncDef::builder()
            .param(ParamType::array_of(ParamType::Any))
            .build(tolist),
    );
    ctx
}

/// The text of a scalar, as string interpolation would write it.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A string (numbers and bools are converted as in string interpolation).
pub(crate) fn string_text(value: &Value) -> Result<String, String> {
    scalar_text(value).ok_or_else(|| format!("expected a string, found a {}", type_name(value)))
}

/// A short name of a value's type for messages.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

fn str_arg(args: &FuncArgs, index: usize) -> &str {
    args[index].as_str().unwrap_or_default()
}

fn read_relative(path: &str) -> Result<String, String> {
    let full = BASE_DIR.with(|base| base.borrow().join(path));
    let bytes = read_capped(&full, MAX_FILE_BYTES).map_err(|e| match e {
        ReadError::TooLarge { .. } => {
            format!("`{path}` is too large; files read by functions are limited to {MAX_FILE_BYTES} bytes")
        }
        e => format!("cannot read `{path}`: {e}"),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "`{path}` is not valid UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

fn file(args: FuncArgs) -> Result<Value, String> {
    read_relative(str_arg(&args, 0)).map(Value::String)
}

fn templatefile(args: FuncArgs) -> Result<Value, String> {
    let path = str_arg(&args, 0);
    let text = read_relative(path)?;
    let mut template = hcl::edit::parser::parse_template(&text)
        .map_err(|e| format!("`{path}` is not a valid template: {e}"))?;
    guard_template(&mut template);
    let template = hcl::Template::from(template);
    let mut ctx = template_context();
    if let Some(vars) = args[1].as_object() {
        for (name, value) in vars {
            ctx.declare_var(name.as_str(), value.clone());
        }
    }
    template
        .evaluate(&ctx)
        .map(Value::String)
        .map_err(|e| format!("in template `{path}`: {}", error_message(&e)))
}

fn format(args: FuncArgs) -> Result<Value, String> {
    let spec = str_arg(&args, 0);
    let mut values = args.iter().skip(1);
    let mut out = String::with_capacity(spec.len());
    let mut chars = spec.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let verb = chars.next().ok_or("format string ends with a lone `%`")?;
        if verb == '%' {
            out.push('%');
            continue;
        }
        let value = values
            .next()
            .ok_or_else(|| format!("not enough arguments for `%{verb}`"))?;
        out.push_str(&format_verb(verb, value)?);
    }
    if values.next().is_some() {
        return Err("too many arguments for the format string".to_owned());
    }
    Ok(Value::String(out))
}

fn format_verb(verb: char, value: &Value) -> Result<String, String> {
    match verb {
        's' => scalar_text(value)
            .ok_or_else(|| format!("`%s` needs a string, not a {}", type_name(value))),
        'd' => value
            .as_number()
            .and_then(|n| n.as_i64())
            .map(|n| n.to_string())
            .ok_or_else(|| format!("`%d` needs a whole number, not `{value}`")),
        'q' => scalar_text(value)
            .map(|s| format!("{s:?}"))
            .ok_or_else(|| format!("`%q` needs a string, not a {}", type_name(value))),
        'v' => Ok(scalar_text(value).unwrap_or_else(|| value.to_string())),
        other => Err(format!(
            "unsupported format verb `%{other}` (use %s, %d, %q, %v or %%)"
        )),
    }
}

fn join(args: FuncArgs) -> Result<Value, String> {
    let separator = str_arg(&args, 0);
    let parts = args
        .iter()
        .skip(1)
        .filter_map(Value::as_array)
        .flatten()
        .map(|v| {
            scalar_text(v).ok_or_else(|| format!("join needs strings, not a {}", type_name(v)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Value::String(parts.join(separator)))
}

fn split(args: FuncArgs) -> Result<Value, String> {
    let (separator, text) = (str_arg(&args, 0), str_arg(&args, 1));
    if separator.is_empty() {
        return Err("the separator of split must not be empty".to_owned());
    }
    Ok(Value::Array(
        text.split(separator)
            .map(|s| Value::String(s.to_owned()))
            .collect(),
    ))
}

fn lower(args: FuncArgs) -> Result<Value, String> {
    Ok(Value::String(str_arg(&args, 0).to_lowercase()))
}

fn upper(args: FuncArgs) -> Result<Value, String> {
    Ok(Value::String(str_arg(&args, 0).to_uppercase()))
}

fn replace(args: FuncArgs) -> Result<Value, String> {
    let (text, search, replacement) = (str_arg(&args, 0), str_arg(&args, 1), str_arg(&args, 2));
    if search.is_empty() {
        return Err("the substring to replace must not be empty".to_owned());
    }
    Ok(Value::String(text.replace(search, replacement)))
}

fn concat(args: FuncArgs) -> Result<Value, String> {
    Ok(Value::Array(
        args.iter()
            .filter_map(Value::as_array)
            .flatten()
            .cloned()
            .collect(),
    ))
}

fn merge(args: FuncArgs) -> Result<Value, String> {
    let mut merged = Map::new();
    for object in args.iter().filter_map(Value::as_object) {
        merged.extend(object.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    Ok(Value::Object(merged))
}

fn length(args: FuncArgs) -> Result<Value, String> {
    match &args[0] {
        Value::String(s) => Ok(Value::from(s.chars().count())),
        Value::Array(items) => Ok(Value::from(items.len())),
        Value::Object(entries) => Ok(Value::from(entries.len())),
        other => Err(format!(
            "length needs a string, list or map, not a {}",
            type_name(other)
        )),
    }
}

fn range(args: FuncArgs) -> Result<Value, String> {
    let numbers: Vec<f64> = args
        .iter()
        .filter_map(|v| v.as_number().and_then(hcl::Number::as_f64))
        .collect();
    let (start, end, step) = match numbers[..] {
        [end] => (0.0, end, 1.0),
        [start, end] => (start, end, if end >= start { 1.0 } else { -1.0 }),
        [start, end, step] => (start, end, step),
        _ => return Err("range takes 1 to 3 numbers".to_owned()),
    };
    if step == 0.0 || (end > start && step < 0.0) || (end < start && step > 0.0) {
        return Err(format!("range({start}, {end}, {step}) would never end"));
    }
    let mut items = Vec::new();
    let mut current = start;
    while (step > 0.0 && current < end) || (step < 0.0 && current > end) {
        if items.len() == MAX_RANGE_LEN {
            return Err(format!(
                "range would produce more than {MAX_RANGE_LEN} elements"
            ));
        }
        items.push(number(current));
        current += step;
    }
    Ok(Value::Array(items))
}

fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        // Whole numbers stay integers so that they print without a fraction.
        Value::from(value as i64)
    } else {
        hcl::Number::from_f64(value).map_or(Value::Null, Value::Number)
    }
}

fn lookup(args: FuncArgs) -> Result<Value, String> {
    let key = str_arg(&args, 1);
    let found = args[0].as_object().and_then(|map| map.get(key));
    match (found, args.get(2)) {
        (Some(value), _) => Ok(value.clone()),
        (None, Some(default)) => Ok(default.clone()),
        (None, None) => Err(format!("no key `{key}` in the map and no default given")),
    }
}

fn coalesce(args: FuncArgs) -> Result<Value, String> {
    args.iter()
        .find(|v| !v.is_null() && v.as_str() != Some(""))
        .cloned()
        .ok_or_else(|| "all arguments of coalesce are null or empty".to_owned())
}

fn tostring(args: FuncArgs) -> Result<Value, String> {
    match &args[0] {
        Value::Null => Ok(Value::Null),
        value => scalar_text(value)
            .map(Value::String)
            .ok_or_else(|| format!("cannot convert a {} to a string", type_name(value))),
    }
}

/// Terraform's `toset`, as `for_each = toset([...])` is written: the list without repeats, in
/// the order of first appearance (a set has no order; `for_each` orders its keys anyway).
fn toset(args: FuncArgs) -> Result<Value, String> {
    let mut set: Vec<Value> = Vec::new();
    for item in args[0].as_array().into_iter().flatten() {
        if !set.contains(item) {
            set.push(item.clone());
        }
    }
    Ok(Value::Array(set))
}

/// Terraform's `tolist`: a list (or a set, which is a list here) as it is.
fn tolist(args: FuncArgs) -> Result<Value, String> {
    Ok(args[0].clone())
}

fn tonumber(args: FuncArgs) -> Result<Value, String> {
    match &args[0] {
        Value::Null => Ok(Value::Null),
        Value::Number(n) => Ok(Value::Number(*n)),
        Value::String(s) => parse_number(s).ok_or_else(|| format!("`{s}` is not a number")),
        other => Err(format!("cannot convert a {} to a number", type_name(other))),
    }
}

/// Parses a decimal number the way `tonumber` and typed variables do.
pub(crate) fn parse_number(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(int) = text.parse::<i64>() {
        return Some(Value::from(int));
    }
    text.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .and_then(hcl::Number::from_f64)
        .map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(expr: &str) -> Result<Value, String> {
        let expr: hcl::Expression = hcl::edit::parser::parse_expr(expr)
            .map_err(|e| e.to_string())?
            .into();
        expr.evaluate(&base_context()).map_err(|e| e.to_string())
    }

    #[test]
    fn format_supports_the_common_verbs() {
        assert_eq!(
            eval(r#"format("%s-%d %q %v %%", "a", 4, "b", true)"#),
            Ok(Value::from("a-4 \"b\" true %"))
        );
        assert!(
            eval(r#"format("%x", 1)"#)
                .unwrap_err()
                .contains("unsupported format verb")
        );
        assert!(
            eval(r#"format("%s")"#)
                .unwrap_err()
                .contains("not enough arguments")
        );
    }

    #[test]
    fn range_is_bounded() {
        assert_eq!(eval("range(3)"), Ok(Value::from(vec![0, 1, 2])));
        assert_eq!(eval("range(3, 0)"), Ok(Value::from(vec![3, 2, 1])));
        assert!(
            eval("range(100000)")
                .unwrap_err()
                .contains("more than 1024")
        );
        assert!(eval("range(0, 4, -1)").unwrap_err().contains("never end"));
    }

    #[test]
    fn number_conversions() {
        assert_eq!(eval(r#"tonumber("12")"#), Ok(Value::from(12)));
        assert_eq!(eval("tostring(12)"), Ok(Value::from("12")));
        assert!(eval(r#"tonumber("x")"#).is_err());
    }
}
