//! The `lock "gcs" { bucket, prefix, endpoint }` block inside the provider: where a team keeps
//! the stack's lock (and journal) on Cloud Storage. Everything is checked offline, at the
//! attribute that is wrong: Cloud Storage's bucket naming rules, a prefix that stays a plain
//! folder, an endpoint that is an http(s) URL.

use clusterform_model::{Endpoint, EndpointError, EndpointUrl};
use hcl::edit::structure::Block;

use super::error_count;
use crate::config::RemoteState;
use crate::diagnostic::SourceFile;
use crate::language::block_schema::{AttributeSchema, BlockSchema, UnknownBlock};
use crate::language::evaluator::{Bindings, Evaluator, Scope};
use crate::language::source::block_head;

/// The nested block of the provider that holds the remote state.
pub(super) const LOCK_BLOCK: &str = "lock";

/// The only kind of remote lock.
const LOCK_KIND: &str = "gcs";

/// What `lock "gcs" { ... }` accepts.
static LOCK: BlockSchema = BlockSchema {
    name: "the lock",
    member: "attribute",
    attributes: &[
        AttributeSchema::string("bucket")
            .required("add `bucket = \"...\"`: the Cloud Storage bucket that holds the lock"),
        AttributeSchema::string("prefix"),
        AttributeSchema::string("endpoint"),
    ],
    blocks: &[],
    accepts: "expected one of:",
    unknown_block: UnknownBlock::Hint(|schema| {
        format!("the lock accepts {}", schema.attribute_names().join(", "))
    }),
};

/// Decodes `lock "gcs" { ... }`; `None` when it is broken (the problem is reported).
pub(super) fn remote_state(
    eval: &mut Evaluator,
    source: &SourceFile,
    block: &Block,
    ctx: &Bindings,
) -> Option<RemoteState> {
    let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
    if labels != [LOCK_KIND] {
        eval.diagnostics.push(source.error(
            block_head(block),
            format!("unknown lock kind `{}`", labels.join(" ")),
            Some(format!(
                "the only lock is `lock \"{LOCK_KIND}\" {{ bucket = \"...\", prefix = \"...\" }}` (Cloud Storage)"
            )),
        ));
        return None;
    }
    let errors_before = error_count(&eval.diagnostics);
    let members = LOCK.walk(source, block, &mut eval.diagnostics);
    let strings = members.strings(eval, source, Scope { ctx, each: false });
    let mut state = RemoteState::default();
    for (name, text, range) in strings.values {
        if let Some(problem) = lock_value_problem(name, &text) {
            eval.diagnostics.push(source.error(range, problem, None));
            continue;
        }
        match name {
            "bucket" => state.bucket = text,
            "prefix" => state.prefix = text,
            _ => match storage_endpoint(&text) {
                Ok(url) => state.endpoint = Some(url),
                Err(problem) => eval.diagnostics.push(source.error(range, problem, None)),
            },
        }
    }
    let complete = error_count(&eval.diagnostics) == errors_before && strings.unknown.is_empty();
    complete.then_some(state)
}

/// What is wrong with a lock attribute's value, if anything.
fn lock_value_problem(name: &str, text: &str) -> Option<String> {
    match name {
        "bucket" => bucket_problem(text)
            .map(|rule| format!("bucket `{text}` is not a valid bucket name: {rule}")),
        "prefix" => prefix_problem(text).map(|rule| format!("prefix `{text}` {rule}")),
        _ => None,
    }
}

/// The Cloud Storage base URL `text` names: an http(s) URL that parses (never `local`: the
/// in-process Storage follows the API's `endpoint = "local"`).
fn storage_endpoint(text: &str) -> Result<EndpointUrl, String> {
    match text.parse::<Endpoint>() {
        Ok(Endpoint::Url(url)) => Ok(url),
        Err(malformed @ EndpointError::Malformed { .. }) => Err(malformed.to_string()),
        Ok(Endpoint::Local) | Err(EndpointError::Neither(_)) => Err(format!(
            "endpoint `{text}` is not an http(s) URL (the Cloud Storage base URL, e.g. https://storage.googleapis.com)"
        )),
    }
}

/// Cloud Storage's rule: 3 to 63 characters of lowercase letters, digits, `-`, `_` and `.`,
/// starting and ending with a letter or digit.
fn bucket_problem(bucket: &str) -> Option<&'static str> {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c);
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !(3..=63).contains(&bucket.len()) {
        Some("it must be 3 to 63 characters long")
    } else if !bucket.chars().all(allowed) {
        Some("only lowercase letters, digits, `-`, `_` and `.` are allowed")
    } else if !edge(bucket.chars().next()) || !edge(bucket.chars().last()) {
        Some("it must start and end with a letter or digit")
    } else {
        None
    }
}

/// A prefix is a folder: no `/` at either end (the object names join it with one), no empty
/// or `..` segment (which some tools would read as another folder).
fn prefix_problem(prefix: &str) -> Option<&'static str> {
    if prefix.starts_with('/') || prefix.ends_with('/') {
        Some("must not start or end with `/`")
    } else if prefix.split('/').any(|segment| segment == "..") {
        Some("must not contain a `..` segment")
    } else if !prefix.is_empty() && prefix.split('/').any(str::is_empty) {
        Some("must not contain an empty segment (`//`)")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_names_follow_cloud_storages_rules() {
        for valid in ["abc", "team-infra", "a.b_c-1", &"a".repeat(63)] {
            assert_eq!(bucket_problem(valid), None, "{valid}");
        }
        for invalid in [
            "ab",
            &"a".repeat(64),
            "Team",
            "-abc",
            "abc_",
            "a b c",
            "ab/c",
        ] {
            assert!(bucket_problem(invalid).is_some(), "{invalid}");
        }
    }

    #[test]
    fn prefixes_are_plain_folders() {
        for valid in ["", "clusterform", "clusterform/prod", "a..b/c"] {
            assert_eq!(prefix_problem(valid), None, "{valid}");
        }
        for invalid in ["/prod", "prod/", "a/../b", "..", "a//b"] {
            assert!(prefix_problem(invalid).is_some(), "{invalid}");
        }
    }
}
