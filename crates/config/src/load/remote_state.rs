//! The `lock "gcs" { bucket, prefix, endpoint }` block inside the provider: where a team keeps
//! the stack's lock (and journal) on Cloud Storage. Everything is checked offline, at the
//! attribute that is wrong: Cloud Storage's bucket naming rules, a prefix that stays a plain
//! folder, an endpoint that is an http(s) URL.

use hcl::edit::Span;
use hcl::edit::structure::Block;

use super::Run;
use crate::config::RemoteState;
use crate::decode::string_text;
use crate::diagnostic::{SourceFile, did_you_mean};
use crate::evaluator::{Bindings, Scope, takes_string};
use crate::source::block_head;

/// The nested block of the provider that holds the remote state.
pub(super) const LOCK_BLOCK: &str = "lock";

/// The only kind of remote lock.
const LOCK_KIND: &str = "gcs";

const LOCK_ATTRIBUTES: [&str; 3] = ["bucket", "prefix", "endpoint"];

impl Run {
    /// Decodes `lock "gcs" { ... }`; `None` when it is broken (the problem is reported).
    pub(super) fn remote_state(
        &mut self,
        source: &SourceFile,
        block: &Block,
        ctx: &Bindings,
    ) -> Option<RemoteState> {
        let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
        if labels != [LOCK_KIND] {
            self.eval.diagnostics.push(source.error(
                block_head(block),
                format!("unknown lock kind `{}`", labels.join(" ")),
                Some(format!(
                    "the only lock is `lock \"{LOCK_KIND}\" {{ bucket = \"...\", prefix = \"...\" }}` (Cloud Storage)"
                )),
            ));
            return None;
        }
        for nested in block.body.blocks() {
            self.eval.diagnostics.push(source.error(
                nested.ident.span(),
                format!("unknown block `{}` in the lock", nested.ident.as_str()),
                Some(format!("the lock accepts {}", LOCK_ATTRIBUTES.join(", "))),
            ));
        }
        let mut state = RemoteState::default();
        let mut broken = false;
        let mut has_bucket = false;
        for attribute in block.body.attributes() {
            let name = attribute.key.as_str();
            if !LOCK_ATTRIBUTES.contains(&name) {
                self.eval.diagnostics.push(source.error(
                    attribute.key.span(),
                    format!("unknown attribute `{name}` in the lock"),
                    did_you_mean(name, LOCK_ATTRIBUTES).or_else(|| {
                        Some(format!("expected one of: {}", LOCK_ATTRIBUTES.join(", ")))
                    }),
                ));
                broken = true;
                continue;
            }
            has_bucket |= name == "bucket";
            let range = attribute.value.span();
            let Some(evaluated) =
                self.eval
                    .value(source, &attribute.value, Scope { ctx, each: false })
            else {
                self.eval
                    .check_unknown_type(source, name, &attribute.value, takes_string);
                broken = true;
                continue;
            };
            let problem = match string_text(&evaluated.value) {
                Ok(text) => match lock_value_problem(name, &text) {
                    None => {
                        match name {
                            "bucket" => state.bucket = text,
                            "prefix" => state.prefix = text,
                            _ => state.endpoint = Some(text),
                        }
                        continue;
                    }
                    Some(problem) => problem,
                },
                Err(message) => format!("wrong value for `{name}`: {message}"),
            };
            self.eval
                .diagnostics
                .push(source.error(range, problem, None));
            broken = true;
        }
        if !has_bucket {
            self.eval.diagnostics.push(
                source.error(
                    block_head(block),
                    "the lock block sets no `bucket`",
                    Some(
                        "add `bucket = \"...\"`: the Cloud Storage bucket that holds the lock"
                            .to_owned(),
                    ),
                ),
            );
            broken = true;
        }
        (!broken).then_some(state)
    }
}

/// What is wrong with a lock attribute's value, if anything.
fn lock_value_problem(name: &str, text: &str) -> Option<String> {
    match name {
        "bucket" => bucket_problem(text)
            .map(|rule| format!("bucket `{text}` is not a valid bucket name: {rule}")),
        "prefix" => prefix_problem(text).map(|rule| format!("prefix `{text}` {rule}")),
        _ if !text.starts_with("https://") && !text.starts_with("http://") => Some(format!(
            "endpoint `{text}` is not an http(s) URL (the Cloud Storage base URL, e.g. https://storage.googleapis.com)"
        )),
        _ => None,
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

    #[test]
    fn object_names_join_prefix_and_stack() {
        let state = RemoteState {
            bucket: "b".into(),
            prefix: "clusterform/prod".into(),
            endpoint: None,
        };
        assert_eq!(state.object("ml", ".lock"), "clusterform/prod/ml.lock");
        let root = RemoteState {
            prefix: String::new(),
            ..state
        };
        assert_eq!(root.object("ml", ".lock"), "ml.lock");
    }
}
