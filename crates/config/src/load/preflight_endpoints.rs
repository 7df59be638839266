//! The `preflight_endpoints { compute = "…", service_usage = "…", … }` block inside the
//! provider: the base URL of each Google API that preflight reads, for a private endpoint or an
//! emulator. Each is checked offline to be an http(s) URL, at its attribute; the transport
//! applies the rest of the endpoint rules (https, or http only to loopback).

use std::collections::BTreeMap;

use clusterform_model::preflight::PreflightApi;
use hcl::edit::structure::Block;

use crate::diagnostic::SourceFile;
use crate::language::block_schema::{AttributeSchema, BlockSchema, UnknownBlock};
use crate::language::evaluator::{Bindings, Evaluator, Scope};

/// The nested block of the provider that holds the preflight endpoints.
pub(super) const PREFLIGHT_ENDPOINTS_BLOCK: &str = "preflight_endpoints";

/// What `preflight_endpoints { ... }` accepts: one attribute per [`PreflightApi`], in its order.
static PREFLIGHT_ENDPOINTS: BlockSchema = BlockSchema {
    name: "`preflight_endpoints`",
    member: "attribute",
    attributes: &[
        AttributeSchema::string("compute"),
        AttributeSchema::string("service_usage"),
        AttributeSchema::string("filestore"),
        AttributeSchema::string("lustre"),
        AttributeSchema::string("resource_manager"),
        AttributeSchema::string("iam"),
        AttributeSchema::string("storage"),
    ],
    blocks: &[],
    accepts: "expected one of:",
    unknown_block: UnknownBlock::Hint(|schema| {
        format!(
            "`preflight_endpoints` accepts the attributes {}",
            schema.attribute_names().join(", ")
        )
    }),
};

/// Decodes `preflight_endpoints { ... }`: the endpoints whose values are right (the others are
/// reported).
pub(super) fn preflight_endpoints(
    eval: &mut Evaluator,
    source: &SourceFile,
    block: &Block,
    ctx: &Bindings,
) -> BTreeMap<PreflightApi, String> {
    let members = PREFLIGHT_ENDPOINTS.walk(source, block, &mut eval.diagnostics);
    let strings = members.strings(eval, source, Scope { ctx, each: false });
    let mut endpoints = BTreeMap::new();
    for (name, text, range) in strings.values {
        if !text.starts_with("https://") && !text.starts_with("http://") {
            let message = format!(
                "`{name}` endpoint `{text}` is not an http(s) URL (the API's base URL, e.g. {})",
                PreflightApi::from_key(name).map_or("https://…", PreflightApi::google_endpoint)
            );
            eval.diagnostics.push(source.error(range, message, None));
            continue;
        }
        if let Some(api) = PreflightApi::from_key(name) {
            endpoints.insert(api, text);
        }
    }
    endpoints
}

#[cfg(test)]
mod tests {
    use clusterform_model::preflight::PreflightApi;

    use super::PREFLIGHT_ENDPOINTS;

    #[test]
    fn the_block_accepts_every_api_and_only_those() {
        let keys: Vec<&str> = PreflightApi::ALL.iter().map(|api| api.key()).collect();
        assert_eq!(PREFLIGHT_ENDPOINTS.attribute_names(), keys);
    }
}
