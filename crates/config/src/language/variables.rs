//! Input variables: `variable` blocks (type, default, description, sensitive), their type
//! system, and the values from outside the configuration in increasing precedence, as
//! Terraform orders them: the declared default, the environment, `clusterform.cfvars`,
//! `*.auto.cfvars` (in name order), `--var-file` files, `--var` flags.

use std::fmt;
use std::path::{Path, PathBuf};

use hcl::Value;
use hcl::edit::Span;
use hcl::edit::expr::Expression;
use hcl::edit::structure::{Block, Body};

use crate::diagnostic::{
    CommandLineReason, Diagnostic, MissingVariable, Severity, SourceFile, detached_error,
};
use crate::language::block_schema::{AttributeSchema, BlockSchema, UnknownBlock};
use crate::language::expr::evaluate;
use crate::language::functions::{
    base_context, parse_number, scalar_text, type_name, with_base_dir,
};
use crate::language::source::{block_head, read_source};
use crate::{VariableInputs, diagnostic};

/// Pseudo-file name of diagnostics about `--var` flags.
pub(crate) const CLI_ORIGIN: &str = "<command line>";
/// Pseudo-file name of diagnostics about `CLUSTERFORM_VAR_*` values.
pub(crate) const ENV_ORIGIN: &str = "<environment>";
/// Pseudo-file name of diagnostics about the values a saved plan recorded.
const SAVED_PLAN_ORIGIN: &str = "<saved plan>";

/// The type constraint of a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VarType {
    Any,
    String,
    Number,
    Bool,
    List(Box<VarType>),
    Set(Box<VarType>),
    Map(Box<VarType>),
}

impl fmt::Display for VarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Any => f.write_str("any"),
            Self::String => f.write_str("string"),
            Self::Number => f.write_str("number"),
            Self::Bool => f.write_str("bool"),
            Self::List(inner) => write!(f, "list({inner})"),
            Self::Set(inner) => write!(f, "set({inner})"),
            Self::Map(inner) => write!(f, "map({inner})"),
        }
    }
}

impl VarType {
    /// Reads a type expression such as `string` or `map(list(string))`.
    fn parse(expr: &Expression) -> Result<Self, String> {
        match expr {
            Expression::Variable(name) => match name.as_str() {
                "any" => Ok(Self::Any),
                "string" => Ok(Self::String),
                "number" => Ok(Self::Number),
                "bool" => Ok(Self::Bool),
                other => Err(format!("unknown type `{other}`")),
            },
            Expression::FuncCall(call) if call.args.len() == 1 => {
                let inner = Box::new(Self::parse(call.args.iter().next().ok_or("")?)?);
                match call.name.name.as_str() {
                    "list" => Ok(Self::List(inner)),
                    "set" => Ok(Self::Set(inner)),
                    "map" => Ok(Self::Map(inner)),
                    other => Err(format!("unknown type constructor `{other}`")),
                }
            }
            _ => Err("not a type".to_owned()),
        }
    }

    /// Whether a value of this type may be a list (or set) of strings as they are, unconverted.
    pub fn may_be_list_of_strings(&self) -> bool {
        matches!(self, Self::List(element) | Self::Set(element)
            if matches!(**element, Self::String | Self::Any))
    }

    /// Whether a value of this type may be a single string, number or bool.
    pub fn may_be_scalar(&self) -> bool {
        matches!(self, Self::Any | Self::String | Self::Number | Self::Bool)
    }

    /// Converts a value to this type the way Terraform does (numbers and bools become strings,
    /// numeric strings become numbers, ...), or says why it cannot.
    pub fn convert(&self, value: Value) -> Result<Value, String> {
        let mismatch = |value: &Value| match scalar_text(value) {
            Some(text) => format!("expected {self}, found a {} (`{text}`)", type_name(value)),
            None => format!("expected {self}, found a {}", type_name(value)),
        };
        match (self, value) {
            (_, Value::Null) => Ok(Value::Null),
            (Self::Any, value) => Ok(value),
            (Self::String, value) => scalar_text(&value)
                .map(Value::String)
                .ok_or_else(|| mismatch(&value)),
            (Self::Number, Value::Number(n)) => Ok(Value::Number(n)),
            (Self::Number, Value::String(s)) => {
                parse_number(&s).ok_or_else(|| format!("expected a number, found `{s}`"))
            }
            (Self::Bool, Value::Bool(b)) => Ok(Value::Bool(b)),
            (Self::Bool, Value::String(s)) if s == "true" || s == "false" => {
                Ok(Value::Bool(s == "true"))
            }
            (Self::List(inner), Value::Array(items)) => items
                .into_iter()
                .map(|item| inner.convert(item))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            (Self::Set(inner), Value::Array(items)) => {
                let mut set: Vec<Value> = Vec::with_capacity(items.len());
                for item in items {
                    let item = inner.convert(item)?;
                    if !set.contains(&item) {
                        set.push(item);
                    }
                }
                Ok(Value::Array(set))
            }
            (Self::Map(inner), Value::Object(entries)) => entries
                .into_iter()
                .map(|(k, v)| Ok((k, inner.convert(v)?)))
                .collect::<Result<hcl::Map<_, _>, String>>()
                .map(Value::Object),
            (_, value) => Err(mismatch(&value)),
        }
    }

    /// Reads a `--var` or environment value: strings as they are, numbers and bools parsed,
    /// collections parsed as HCL expressions.
    fn parse_text(&self, text: &str) -> Result<Value, String> {
        match self {
            Self::Any | Self::String | Self::Number | Self::Bool => {
                self.convert(Value::String(text.to_owned()))
            }
            Self::List(_) | Self::Set(_) | Self::Map(_) => {
                let expr = hcl::edit::parser::parse_expr(text)
                    .map_err(|e| format!("`{text}` is not a valid {self}: {}", e.message()))?;
                self.convert(evaluate(&expr, &base_context())?)
            }
        }
    }
}

/// A `variable "NAME" { ... }` block.
#[derive(Debug, Clone)]
pub(crate) struct Declaration {
    pub name: String,
    pub ty: VarType,
    pub default: Option<Value>,
    pub description: Option<String>,
    pub sensitive: bool,
    /// Where its `variable "NAME"` head is, to point diagnostics at.
    pub head: Diagnostic,
}

/// What `variable "NAME" { ... }` accepts: every attribute is read as written, a literal.
static VARIABLE: BlockSchema = BlockSchema {
    name: "a variable block",
    member: "argument",
    attributes: &[
        AttributeSchema::expression("type"),
        AttributeSchema::expression("default"),
        AttributeSchema::expression("description"),
        AttributeSchema::expression("sensitive"),
    ],
    blocks: &[],
    accepts: "a variable accepts",
    unknown_block: UnknownBlock::LikeAnAttribute,
};

/// Reads a `variable` block; problems go to `diagnostics`. The texts of a sensitive
/// variable's `default` (as written, and each value in it) go to `secrets`, whether or not the
/// block is valid: no diagnostic may show them, and a snippet of the block may quote them.
pub(crate) fn declare(
    file: &SourceFile,
    block: &Block,
    diagnostics: &mut Vec<Diagnostic>,
    secrets: &mut Vec<String>,
) -> Option<Declaration> {
    let head = block_head(block);
    let [label] = block.labels.as_slice() else {
        diagnostics.push(file.error(
            head,
            "a variable block needs exactly one label, its name",
            Some("write `variable \"NAME\" { ... }`".to_owned()),
        ));
        return None;
    };
    let mut declaration = Declaration {
        name: label.as_str().to_owned(),
        ty: VarType::Any,
        default: None,
        description: None,
        sensitive: false,
        head: file.error(head, String::new(), None),
    };
    let errors_before = diagnostics.len();
    let members = VARIABLE.walk(file, block, diagnostics);
    if let Some(expr) = members.expression("type") {
        match VarType::parse(expr) {
            Ok(ty) => declaration.ty = ty,
            Err(message) => diagnostics.push(file.error(
                expr.span(),
                format!(
                    "invalid type for variable `{}`: {message}",
                    declaration.name
                ),
                Some("use string, number, bool, any, list(T), set(T) or map(T)".to_owned()),
            )),
        }
    }
    for key in ["description", "sensitive"] {
        let Some(expr) = members.expression(key) else {
            continue;
        };
        match (key, evaluate(expr, &base_context())) {
            ("description", Ok(Value::String(text))) => declaration.description = Some(text),
            ("sensitive", Ok(Value::Bool(flag))) => declaration.sensitive = flag,
            _ => diagnostics.push(file.error(
                expr.span(),
                format!(
                    "`{key}` of variable `{}` must be a literal {}",
                    declaration.name,
                    if key == "sensitive" { "bool" } else { "string" }
                ),
                None,
            )),
        }
    }
    if let Some(expr) = members.expression("default") {
        let written = evaluate(expr, &base_context());
        if declaration.sensitive {
            secrets.extend(
                expr.span()
                    .and_then(|span| file.text.get(span))
                    .map(str::to_owned),
            );
            secrets.extend(written.iter().flat_map(scalar_texts));
        }
        match written.and_then(|v| declaration.ty.convert(v)) {
            Ok(value) => declaration.default = Some(value),
            Err(message) => diagnostics.push(file.error(
                expr.span(),
                invalid_default(&declaration, &message),
                Some("a default is a constant of the variable's type".to_owned()),
            )),
        }
    }
    (diagnostics.len() == errors_before).then_some(declaration)
}

/// Why a default does not convert; for a sensitive variable without what the conversion read,
/// which is the value.
fn invalid_default(declaration: &Declaration, problem: &str) -> String {
    let name = &declaration.name;
    if declaration.sensitive {
        format!(
            "invalid default for variable `{name}`: it is not a {} (the value is not shown: the variable is sensitive)",
            declaration.ty
        )
    } else {
        format!("invalid default for variable `{name}`: {problem}")
    }
}

/// What a run makes of a declared variable that gets no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoValue {
    /// An error: `plan`, `apply` and the others need every value.
    Missing,
    /// Unknown, as `terraform validate` treats it: whatever depends on it is not evaluated.
    Unknown,
}

/// The variable values of a run.
#[derive(Debug, Default)]
pub(crate) struct Values {
    /// Name → value, for `var.*`.
    pub values: hcl::Map<String, Value>,
    /// Declared variables that got no value (with [`NoValue::Missing`]).
    pub missing: Vec<MissingVariable>,
    /// Declared variables that got no value (with [`NoValue::Unknown`]), with their types.
    pub unknown: Vec<(String, VarType)>,
    /// `--var-file` sources, for rendering their diagnostics.
    pub sources: Vec<SourceFile>,
    /// The texts of sensitive variables' values as given and as converted, which no
    /// diagnostic may show ([`crate::language::redact`]).
    pub secrets: Vec<String>,
}

/// A variables file to read, and the name its diagnostics show.
#[derive(Debug, Clone)]
pub(crate) struct VarFile {
    pub path: PathBuf,
    pub shown: PathBuf,
}

/// Gives every declared variable its value: a saved plan's > `--var` > `--var-file` >
/// `*.auto.cfvars` > `clusterform.cfvars` > environment > default. `auto_files` are the
/// configuration directory's variables files, in increasing precedence.
pub(crate) fn resolve(
    declarations: &[Declaration],
    inputs: &VariableInputs,
    auto_files: Vec<VarFile>,
    no_value: NoValue,
    diagnostics: &mut Vec<Diagnostic>,
) -> Values {
    let mut resolved = Values::default();
    let given = inputs.files.iter().map(|path| VarFile {
        path: path.clone(),
        shown: path.clone(),
    });
    let files: Vec<VarFile> = auto_files.into_iter().chain(given).collect();
    let from_files = read_var_files(&files, declarations, &mut resolved, diagnostics);
    check_undeclared_flags(inputs, declarations, diagnostics);
    for declaration in declarations {
        let name = declaration.name.as_str();
        let flag = inputs.cli.iter().rev().find(|(n, _)| n == name);
        let value = if let Some(saved) = inputs.saved.get(name) {
            saved_value(declaration, saved, diagnostics)
        } else if let Some((_, text)) = flag {
            text_value(declaration, text, Origin::CommandLine, diagnostics)
        } else if let Some(value) = from_files.iter().rev().find(|(n, _)| n == name) {
            Some(value.1.clone())
        } else if let Some(text) = inputs.env.get(name) {
            text_value(declaration, text, Origin::Environment, diagnostics)
        } else {
            declaration.default.clone()
        };
        if declaration.sensitive {
            let given = flag
                .map(|(_, text)| text.as_str())
                .or(inputs.env.get(name).map(String::as_str));
            resolved.secrets.extend(given.map(str::to_owned));
            resolved.secrets.extend(value.iter().flat_map(scalar_texts));
        }
        match value {
            Some(value) => {
                resolved.values.insert(declaration.name.clone(), value);
            }
            None if no_value == NoValue::Unknown => resolved
                .unknown
                .push((name.to_owned(), declaration.ty.clone())),
            None if !has_error_for(diagnostics, name) => {
                resolved.missing.push(MissingVariable {
                    name: declaration.name.clone(),
                    description: declaration.description.clone(),
                    sensitive: declaration.sensitive,
                });
                diagnostics.push(missing_value(declaration));
            }
            None => {}
        }
    }
    resolved
}

/// Every string and number inside a value, as text.
fn scalar_texts(value: &Value) -> Vec<String> {
    match value {
        Value::String(text) => vec![text.clone()],
        Value::Number(number) => vec![number.to_string()],
        Value::Array(items) => items.iter().flat_map(scalar_texts).collect(),
        Value::Object(entries) => entries
            .iter()
            .flat_map(|(key, value)| std::iter::once(key.clone()).chain(scalar_texts(value)))
            .collect(),
        Value::Null | Value::Bool(_) => Vec::new(),
    }
}

fn has_error_for(diagnostics: &[Diagnostic], name: &str) -> bool {
    let needle = format!("variable `{name}`");
    diagnostics.iter().any(|d| d.message.contains(&needle))
}

fn missing_value(declaration: &Declaration) -> Diagnostic {
    let name = &declaration.name;
    Diagnostic {
        message: format!("no value for variable `{name}`"),
        hint: None,
        ..declaration.head.clone()
    }
    .because(CommandLineReason::MissingValue {
        variable: name.clone(),
    })
}

/// A variable's value as JSON, as a saved plan records it.
pub(crate) fn to_json(value: &Value) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// A value a saved plan recorded, converted to the declared type again (a plan file edited by
/// hand must not slip a value of the wrong type past the declaration).
fn saved_value(
    declaration: &Declaration,
    saved: &serde_json::Value,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Value> {
    hcl::to_value(saved)
        .map_err(|err| err.to_string())
        .and_then(|value| declaration.ty.convert(value))
        .map_err(|message| {
            let problem = format!(
                "invalid value for variable `{}` in the saved plan: {}",
                declaration.name,
                shown_reason(declaration, &message)
            );
            diagnostics.push(
                detached_error(Path::new(SAVED_PLAN_ORIGIN), problem, None)
                    .because(CommandLineReason::InvalidSavedValue),
            );
        })
        .ok()
}

/// Where a variable's value given as text comes from.
#[derive(Clone, Copy)]
enum Origin {
    /// `VariableInputs::cli`.
    CommandLine,
    /// `VariableInputs::env`.
    Environment,
}

fn text_value(
    declaration: &Declaration,
    text: &str,
    origin: Origin,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Value> {
    let name = &declaration.name;
    declaration
        .ty
        .parse_text(text)
        .map_err(|message| {
            let problem = shown_reason(declaration, &message).to_owned();
            let hint = Some(format!("the variable's type is {}", declaration.ty));
            let diagnostic = match origin {
                Origin::CommandLine => detached_error(
                    Path::new(CLI_ORIGIN),
                    format!("invalid value for variable `{name}` from the command line: {problem}"),
                    hint,
                )
                .because(CommandLineReason::InvalidValue {
                    variable: name.clone(),
                    problem,
                }),
                Origin::Environment => detached_error(
                    Path::new(ENV_ORIGIN),
                    format!(
                        "invalid value for variable `{name}` from CLUSTERFORM_VAR_{name}: {problem}"
                    ),
                    hint,
                ),
            };
            diagnostics.push(diagnostic);
        })
        .ok()
}

/// Why a value does not fit its variable, in words that never quote a sensitive value: the
/// parser's and the conversion's messages quote what they read.
fn shown_reason<'m>(declaration: &Declaration, message: &'m str) -> &'m str {
    if declaration.sensitive {
        "(sensitive value) does not fit the variable's type"
    } else {
        message
    }
}

fn check_undeclared_flags(
    inputs: &VariableInputs,
    declarations: &[Declaration],
    diagnostics: &mut Vec<Diagnostic>,
) {
    let names = || declarations.iter().map(|d| d.name.as_str());
    for (name, _) in &inputs.cli {
        if !names().any(|n| n == name) {
            let hint = diagnostic::did_you_mean(name, names())
                .or_else(|| Some(format!("declare it with `variable \"{name}\" {{}}`")));
            diagnostics.push(
                detached_error(
                    Path::new(CLI_ORIGIN),
                    format!("the command line sets `{name}`, which no variable block declares"),
                    hint,
                )
                .because(CommandLineReason::UndeclaredVariable {
                    variable: name.clone(),
                }),
            );
        }
    }
}

/// Reads every variables file, in increasing precedence: each attribute is one variable value.
fn read_var_files(
    files: &[VarFile],
    declarations: &[Declaration],
    resolved: &mut Values,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<(String, Value)> {
    let mut values = Vec::new();
    for VarFile { path, shown } in files {
        let source = match read_source(path, shown.clone()) {
            Ok(source) => source,
            Err(diagnostic) => {
                diagnostics.push(*diagnostic);
                continue;
            }
        };
        let body = match crate::language::source::parse(&source) {
            Ok(body) => body,
            Err(diagnostic) => {
                diagnostics.push(*diagnostic);
                resolved.sources.push(source);
                continue;
            }
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        with_base_dir(dir, || {
            var_file_values(&source, &body, declarations, &mut values, diagnostics);
        });
        // The value as written, whether or not it converts: a snippet quotes this text.
        let written = body
            .attributes()
            .filter(|a| {
                declarations
                    .iter()
                    .any(|d| d.sensitive && d.name == a.key.as_str())
            })
            .filter_map(|a| source.text.get(a.value.span()?).map(str::to_owned));
        resolved.secrets.extend(written);
        resolved.sources.push(source);
    }
    values
}

fn var_file_values(
    source: &SourceFile,
    body: &Body,
    declarations: &[Declaration],
    values: &mut Vec<(String, Value)>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let ctx = base_context();
    for block in body.blocks() {
        diagnostics.push(source.error(
            block_head(block),
            "a variable file holds only `name = value` lines",
            None,
        ));
    }
    for attribute in body.attributes() {
        let name = attribute.key.as_str();
        let Some(declaration) = declarations.iter().find(|d| d.name == name) else {
            let names = declarations.iter().map(|d| d.name.as_str());
            diagnostics.push(source.diagnostic(
                Severity::Warning,
                attribute.key.span(),
                format!("the variable file sets `{name}`, which no variable block declares"),
                diagnostic::did_you_mean(name, names),
            ));
            continue;
        };
        match evaluate(&attribute.value, &ctx).and_then(|v| declaration.ty.convert(v)) {
            Ok(value) => values.push((name.to_owned(), value)),
            Err(message) => diagnostics.push(source.error(
                attribute.value.span(),
                format!(
                    "invalid value for variable `{name}`: {}",
                    shown_reason(declaration, &message)
                ),
                Some(format!("the variable's type is {}", declaration.ty)),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> VarType {
        VarType::parse(&hcl::edit::parser::parse_expr(text).unwrap()).unwrap()
    }

    #[test]
    fn types_parse_and_print() {
        assert_eq!(ty("map(list(string))").to_string(), "map(list(string))");
        assert!(VarType::parse(&hcl::edit::parser::parse_expr("tuple(string)").unwrap()).is_err());
    }

    #[test]
    fn conversions_follow_terraform() {
        assert_eq!(ty("string").convert(Value::from(3)), Ok(Value::from("3")));
        assert_eq!(ty("number").convert(Value::from("3")), Ok(Value::from(3)));
        assert_eq!(
            ty("bool").convert(Value::from("true")),
            Ok(Value::Bool(true))
        );
        assert!(ty("number").convert(Value::from("x")).is_err());
        assert!(ty("string").convert(Value::Array(vec![])).is_err());
        assert_eq!(
            ty("set(string)").parse_text(r#"["a", "b", "a"]"#),
            Ok(Value::from(vec!["a", "b"]))
        );
        assert_eq!(
            ty("list(number)").parse_text("[1, 2]"),
            Ok(Value::from(vec![1, 2]))
        );
    }
}
