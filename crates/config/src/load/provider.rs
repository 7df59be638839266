//! The `provider "google"` block: its attributes (project, region, stack, update_mode,
//! endpoint, and the `lock` block of `remote_state`), each checked, and the stack rule: a
//! stack must be named unless the endpoint is the built-in emulator, where it defaults to the
//! directory name.

use std::path::Path;

use clusterform_model::fields::UPDATE_MODES;
use clusterform_model::validate_location;
use hcl::edit::Span;
use hcl::edit::structure::Block;

use super::remote_state::LOCK_BLOCK;
use super::{FileBlock, Place, Run};
use crate::config::{Provider, StackOrigin};
use crate::decode::string_text;
use crate::diagnostic::{Severity, SourceFile, closest_or_all, did_you_mean};
use crate::evaluator::{Bindings, Scope, takes_string};
use crate::source::block_head;
use crate::validate::label_value_problem;
use crate::validate::regions;

const PROVIDER_ATTRIBUTES: [&str; 5] = ["project", "region", "stack", "update_mode", "endpoint"];

/// The endpoint value that selects the built-in emulator, the only one where the stack may
/// default to the directory name.
const LOCAL_ENDPOINT: &str = "local";

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

impl Run {
    /// Decodes the provider block. `first_declaration` (the first `cluster` or `removed`
    /// block) is where a missing stack is reported when there is no provider block.
    pub(super) fn provider(
        &mut self,
        blocks: &[FileBlock<'_>],
        first_declaration: Option<Place<'_>>,
        ctx: &Bindings,
        dir: &Path,
    ) -> Provider {
        let mut provider = Provider::default();
        let mut seen = ProviderSeen::default();
        let mut google_block = None;
        for (index, (source, block)) in blocks.iter().enumerate() {
            let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
            if labels != ["google"] {
                self.eval.diagnostics.push(source.error(
                    block_head(block),
                    format!("unknown provider `{}`", labels.join(" ")),
                    Some("the only provider is `provider \"google\" { ... }`".to_owned()),
                ));
                continue;
            }
            if index > 0 {
                self.eval.diagnostics.push(source.error(
                    block_head(block),
                    "the provider block is declared more than once",
                    Some("keep one `provider \"google\"` block".to_owned()),
                ));
                continue;
            }
            seen = self.provider_attributes(source, block, ctx, &mut provider);
            google_block = Some(Place {
                file: source,
                range: block_head(block),
            });
        }
        if seen.stack {
            provider.stack_origin = StackOrigin::Explicit;
        } else if provider.endpoint.as_deref() == Some(LOCAL_ENDPOINT) {
            provider.stack = self.default_stack(dir);
            provider.stack_origin = StackOrigin::DirectoryName;
        } else {
            provider.stack_origin = StackOrigin::DirectoryName;
            // A broken `endpoint` is reported already: it may have meant "local".
            let endpoint_broken = seen.endpoint && provider.endpoint.is_none();
            if !endpoint_broken {
                self.missing_stack(google_block.is_some(), google_block.or(first_declaration));
            }
        }
        provider
    }

    /// Reports a configuration that may own clusters of a real endpoint without naming its
    /// stack; `place` is the provider block, else the first declaration (none: nothing to own).
    fn missing_stack(&mut self, in_provider: bool, place: Option<Place<'_>>) {
        let Some(Place { file, range }) = place else {
            return;
        };
        let message = if in_provider {
            "the provider block sets no `stack`; it is required unless `endpoint = \"local\"`"
        } else {
            "no provider block sets `stack`; it is required unless `endpoint = \"local\"`"
        };
        self.eval
            .diagnostics
            .push(file.error(range, message, Some(MISSING_STACK_HINT.to_owned())));
    }

    /// Fills `provider` from the block; which attributes it wrote, even with a broken value.
    fn provider_attributes(
        &mut self,
        source: &SourceFile,
        block: &Block,
        ctx: &Bindings,
        provider: &mut Provider,
    ) -> ProviderSeen {
        for nested in block.body.blocks() {
            let name = nested.ident.as_str();
            if name == LOCK_BLOCK && provider.lock.is_none() {
                provider.lock = self.remote_state(source, nested, ctx);
                continue;
            }
            let hint = if name == LOCK_BLOCK {
                "keep one `lock` block".to_owned()
            } else {
                did_you_mean(name, [LOCK_BLOCK]).unwrap_or_else(|| {
                    format!(
                        "the provider accepts the attributes {} and a `{LOCK_BLOCK} \"gcs\" {{ ... }}` block",
                        PROVIDER_ATTRIBUTES.join(", ")
                    )
                })
            };
            let message = if name == LOCK_BLOCK {
                "the lock block is declared more than once".to_owned()
            } else {
                format!("unknown block `{name}` in the provider")
            };
            self.eval
                .diagnostics
                .push(source.error(nested.ident.span(), message, Some(hint)));
        }
        let mut seen = ProviderSeen::default();
        for attribute in block.body.attributes() {
            let name = attribute.key.as_str();
            if !PROVIDER_ATTRIBUTES.contains(&name) {
                self.eval.diagnostics.push(source.error(
                    attribute.key.span(),
                    format!("unknown attribute `{name}` in the provider"),
                    Some(closest_or_all(name, &PROVIDER_ATTRIBUTES)),
                ));
                continue;
            }
            let range = attribute.value.span();
            // A broken `stack` is reported; the directory name must not stand in for it.
            seen.stack |= name == "stack";
            seen.endpoint |= name == "endpoint";
            let Some(evaluated) =
                self.eval
                    .value(source, &attribute.value, Scope { ctx, each: false })
            else {
                if self.eval.depends_on_unknown(&attribute.value) {
                    self.unknown_locations.project |= name == "project";
                    self.unknown_locations.region |= name == "region";
                    self.eval
                        .check_unknown_type(source, name, &attribute.value, takes_string);
                }
                continue;
            };
            let text = match string_text(&evaluated.value) {
                Ok(text) => text,
                Err(message) => {
                    self.eval.diagnostics.push(source.error(
                        range,
                        format!("wrong value for `{name}`: {message}"),
                        None,
                    ));
                    continue;
                }
            };
            if let Some((message, hint)) = provider_value_problem(name, &text) {
                self.eval
                    .diagnostics
                    .push(source.error(range, message, hint));
                continue;
            }
            // A malformed region is reported at each cluster that uses it.
            if name == "region"
                && validate_location(&text).is_ok()
                && let Some((message, hint)) = regions::unknown_region(&text)
            {
                let warning = source.diagnostic(Severity::Warning, range, message, Some(hint));
                self.eval.diagnostics.push(warning);
            }
            match name {
                "project" => provider.project = Some(text),
                "region" => provider.region = Some(text),
                // `provider_value_problem` has checked the mode, so it parses.
                "update_mode" => provider.update_mode = text.parse().ok(),
                "endpoint" => provider.endpoint = Some(text),
                _ => provider.stack = text,
            }
        }
        seen
    }

    /// The directory name as a label value: lowercased, other characters replaced by `-`.
    fn default_stack(&mut self, dir: &Path) -> String {
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
            self.eval
                .diagnostics
                .push(crate::diagnostic::detached_error(
                    dir,
                    "the configuration directory has no name to use as the stack name",
                    Some("set `stack = \"...\"` in the provider block".to_owned()),
                ));
        }
        stack
    }
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
        "endpoint"
            if text != "local" && !text.starts_with("https://") && !text.starts_with("http://") =>
        {
            Some((
                format!("endpoint `{text}` is neither \"local\" nor an http(s) URL"),
                Some("use \"local\" for the built-in emulator, or a base URL".to_owned()),
            ))
        }
        _ => None,
    }
}
