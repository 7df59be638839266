//! The `provider "google"` block: its attributes (project, region, stack, update_mode,
//! endpoint, the `lock` block of `remote_state`, `preflight_endpoints` and `pricing`), each
//! checked, and the stack rule: a
//! stack must be named unless the endpoint is the built-in emulator, where it defaults to the
//! directory name.

use std::path::Path;

use clusterform_model::fields::UPDATE_MODES;
use clusterform_model::{Endpoint, validate_location, validate_project};
use hcl::edit::Span;
use hcl::edit::structure::Block;

use super::preflight_endpoints::{PREFLIGHT_ENDPOINTS_BLOCK, preflight_endpoints};
use super::pricing::{PRICING_BLOCK, pricing};
use super::remote_state::{LOCK_BLOCK, remote_state};
use super::{FileBlock, Place, ProviderDefaults, UnknownLocations};
use crate::cluster::validate::label_value_problem;
use crate::cluster::validate::regions;
use crate::config::{Provider, StackOrigin};
use crate::diagnostic::{Diagnostic, Severity, SourceFile, detached_error};
use crate::language::block_schema::{AttributeSchema, BlockSchema, UnknownBlock};
use crate::language::evaluator::{Bindings, Evaluator, Scope};
use crate::language::source::block_head;

/// What `provider "google" { ... }` accepts.
static PROVIDER: BlockSchema = BlockSchema {
    name: "the provider",
    member: "attribute",
    attributes: &[
        AttributeSchema::string("project"),
        AttributeSchema::string("region"),
        AttributeSchema::string("stack"),
        AttributeSchema::string("update_mode"),
        AttributeSchema::string("endpoint"),
        AttributeSchema::expression("regions"),
    ],
    blocks: &[LOCK_BLOCK, PREFLIGHT_ENDPOINTS_BLOCK, PRICING_BLOCK],
    accepts: "expected one of:",
    unknown_block: UnknownBlock::Hint(|schema| {
        format!(
            "the provider accepts the attributes {}, a `{LOCK_BLOCK} \"gcs\" {{ ... }}` block, a `{PREFLIGHT_ENDPOINTS_BLOCK} {{ ... }}` block and a `{PRICING_BLOCK} {{ ... }}` block",
            schema.attribute_names().join(", ")
        )
    }),
};

const MISSING_STACK_HINT: &str = "add `stack = \"...\"` to `provider \"google\" { ... }`, e.g. `stack = \"ml-prod\"`. \
The stack names the owner of these clusters: clusterform labels every cluster it creates \
`clusterform-stack = <stack>` and destroys the clusters of its stack that the configuration no longer \
declares, so the name must be unique per configuration (at most 63 lowercase letters, digits, `_` and `-`). \
Only `endpoint = \"local\"` defaults it to the directory name.";

/// Which provider attributes were written (even with a value that is reported as wrong).
#[derive(Default)]
struct ProviderSeen {
    stack: bool,
    endpoint: bool,
}

/// Decodes the provider block. `first_declaration` (the first `cluster` or `removed` block) is
/// where a missing stack is reported when there is no provider block.
pub(super) fn provider(
    eval: &mut Evaluator,
    blocks: &[FileBlock<'_>],
    first_declaration: Option<Place<'_>>,
    ctx: &Bindings,
    dir: &Path,
) -> ProviderDefaults {
    let mut defaults = ProviderDefaults {
        provider: Provider::default(),
        unknown: UnknownLocations::default(),
        location_problems: Vec::new(),
    };
    let mut seen = ProviderSeen::default();
    let mut google_block = None;
    for (index, (source, block)) in blocks.iter().enumerate() {
        let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
        if labels != ["google"] {
            eval.diagnostics.push(source.error(
                block_head(block),
                format!("unknown provider `{}`", labels.join(" ")),
                Some("the only provider is `provider \"google\" { ... }`".to_owned()),
            ));
            continue;
        }
        if index > 0 {
            eval.diagnostics.push(source.error(
                block_head(block),
                "the provider block is declared more than once",
                Some("keep one `provider \"google\"` block".to_owned()),
            ));
            continue;
        }
        seen = provider_attributes(eval, source, block, ctx, &mut defaults);
        google_block = Some(Place {
            file: source,
            range: block_head(block),
        });
    }
    let provider = &mut defaults.provider;
    if seen.stack {
        provider.stack_origin = StackOrigin::Explicit;
    } else if provider.endpoint.as_ref().is_some_and(Endpoint::is_local) {
        provider.stack = default_stack(dir, &mut eval.diagnostics);
        provider.stack_origin = StackOrigin::DirectoryName;
    } else {
        provider.stack_origin = StackOrigin::DirectoryName;
        // A broken `endpoint` is reported already: it may have meant "local".
        let endpoint_broken = seen.endpoint && provider.endpoint.is_none();
        if !endpoint_broken {
            missing_stack(
                google_block.is_some(),
                google_block.or(first_declaration),
                &mut eval.diagnostics,
            );
        }
    }
    defaults
}

/// Reports a configuration that may own clusters of a real endpoint without naming its stack;
/// `place` is the provider block, else the first declaration (none: nothing to own).
fn missing_stack(in_provider: bool, place: Option<Place<'_>>, diagnostics: &mut Vec<Diagnostic>) {
    let Some(Place { file, range }) = place else {
        return;
    };
    let message = if in_provider {
        "the provider block sets no `stack`; it is required unless `endpoint = \"local\"`"
    } else {
        "no provider block sets `stack`; it is required unless `endpoint = \"local\"`"
    };
    diagnostics.push(file.error(range, message, Some(MISSING_STACK_HINT.to_owned())));
}

/// Fills `defaults` from the block; which attributes it wrote, even with a broken value.
fn provider_attributes(
    eval: &mut Evaluator,
    source: &SourceFile,
    block: &Block,
    ctx: &Bindings,
    defaults: &mut ProviderDefaults,
) -> ProviderSeen {
    let members = PROVIDER.walk(source, block, &mut eval.diagnostics);
    let provider = &mut defaults.provider;
    if let Some(lock) = members.block(LOCK_BLOCK) {
        provider.lock = remote_state(eval, source, lock, ctx);
    }
    if let Some(endpoints) = members.block(PREFLIGHT_ENDPOINTS_BLOCK) {
        provider.preflight_endpoints = preflight_endpoints(eval, source, endpoints, ctx);
    }
    if let Some(prices) = members.block(PRICING_BLOCK) {
        provider.pricing = pricing(eval, source, prices, ctx);
    }
    if let Some(expr) = members.expression("regions") {
        provider.regions = scanned_regions(eval, source, expr, ctx);
    }
    let strings = members.strings(eval, source, Scope { ctx, each: false });
    defaults.unknown = UnknownLocations {
        project: strings.unknown.contains(&"project"),
        region: strings.unknown.contains(&"region"),
    };
    for (name, text, range) in strings.values {
        if name == "endpoint" {
            match text.parse::<Endpoint>() {
                Ok(endpoint) => provider.endpoint = Some(endpoint),
                Err(problem) => eval.diagnostics.push(source.error(
                    range,
                    problem.to_string(),
                    Some("use \"local\" for the built-in emulator, or a base URL".to_owned()),
                )),
            }
            continue;
        }
        if let Some((message, hint)) = provider_value_problem(name, &text) {
            eval.diagnostics.push(source.error(range, message, hint));
            continue;
        }
        let malformed = match name {
            "project" => validate_project(&text).err(),
            "region" => validate_location(&text).err(),
            _ => None,
        };
        if let Some(problem) = malformed {
            let error = source.error(range.clone(), problem.to_string(), None);
            defaults.location_problems.push(error);
        }
        // A malformed region is reported at each cluster that uses it.
        if name == "region"
            && validate_location(&text).is_ok()
            && let Some((message, hint)) = regions::unknown_region(&text)
        {
            let warning = source.diagnostic(Severity::Warning, range, message, Some(hint));
            eval.diagnostics.push(warning);
        }
        match name {
            "project" => provider.project = Some(text),
            "region" => provider.region = Some(text),
            // `provider_value_problem` has checked the mode, so it parses.
            "update_mode" => provider.update_mode = text.parse().ok(),
            _ => provider.stack = text,
        }
    }
    // A broken `stack` is reported; the directory name must not stand in for it.
    ProviderSeen {
        stack: members.has("stack"),
        endpoint: members.has("endpoint"),
    }
}

/// `regions = [...]`: the regions of every configured project the stack's clusters are looked
/// for in. A region that is not a valid name is an error; one the Get started page does not
/// list is a warning (with a did-you-mean), never refused: the service adds regions.
fn scanned_regions(
    eval: &mut Evaluator,
    source: &SourceFile,
    expr: &hcl::edit::expr::Expression,
    ctx: &Bindings,
) -> Option<Vec<String>> {
    let range = expr.span();
    let evaluated = eval.value(source, expr, Scope { ctx, each: false })?;
    let Some(items) = evaluated.value.as_array() else {
        let message = "`regions` must be a list of region names, e.g. [\"us-central1\"]";
        eval.diagnostics.push(source.error(range, message, None));
        return None;
    };
    let mut regions = Vec::new();
    for item in items {
        let Some(region) = item.as_str() else {
            let message = format!("`regions` holds {item}, which is not a region name");
            eval.diagnostics
                .push(source.error(range.clone(), message, None));
            continue;
        };
        if let Err(problem) = validate_location(region) {
            let message = format!("`regions`: {problem}");
            eval.diagnostics
                .push(source.error(range.clone(), message, None));
            continue;
        }
        if let Some((message, hint)) = regions::unknown_region(region) {
            let warning = source.diagnostic(Severity::Warning, range.clone(), message, Some(hint));
            eval.diagnostics.push(warning);
        }
        if !regions.iter().any(|known: &String| known == region) {
            regions.push(region.to_owned());
        }
    }
    Some(regions)
}

/// The directory name as a label value: lowercased, other characters replaced by `-`.
fn default_stack(dir: &Path, diagnostics: &mut Vec<Diagnostic>) -> String {
    let name = std::fs::canonicalize(dir)
        .ok()
        .and_then(|path| path.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let stack: String = name
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(63)
        .collect();
    if stack.is_empty() {
        diagnostics.push(detached_error(
            dir,
            "the configuration directory has no name to use as the stack name",
            Some("set `stack = \"...\"` in the provider block".to_owned()),
        ));
    }
    stack
}

/// Checks a provider attribute's value.
fn provider_value_problem(name: &str, text: &str) -> Option<(String, Option<String>)> {
    match name {
        "update_mode" if !UPDATE_MODES.contains(&text) => Some((
            format!("`{text}` is not a valid update_mode"),
            Some(format!("expected one of: {}", UPDATE_MODES.join(", "))),
        )),
        "stack" => label_value_problem(text).map(|problem| {
            (
                format!("stack `{text}` is not a valid label value: {problem}"),
                Some(
                    "the stack name becomes the value of the `clusterform-stack` label".to_owned(),
                ),
            )
        }),
        _ => None,
    }
}
