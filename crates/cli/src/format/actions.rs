//! The words and symbols of each plan action, in one place: the plan's symbol column, the
//! progress lines' verbs and the failure report's nouns.

use clusterform_model::Action;

/// The Terraform-style symbol: `+ ~ -/+ - .`, or a space for a no-op.
pub const fn symbol(action: Action) -> &'static str {
    match action {
        Action::Create => "+",
        Action::Update => "~",
        Action::Replace => "-/+",
        Action::Delete => "-",
        Action::Release => ".",
        Action::NoOp => " ",
    }
}

/// The present participle, e.g. `creating`.
pub const fn verb(action: Action) -> &'static str {
    match action {
        Action::Create => "creating",
        Action::Update => "updating",
        Action::Replace => "replacing",
        Action::Delete => "destroying",
        Action::Release => "releasing",
        Action::NoOp => "checking",
    }
}

/// The past participle, e.g. `created`.
pub const fn done_verb(action: Action) -> &'static str {
    match action {
        Action::Create => "created",
        Action::Update => "updated",
        Action::Replace => "replaced",
        Action::Delete => "destroyed",
        Action::Release => "released",
        Action::NoOp => "ready",
    }
}

/// The noun for a failure report, e.g. `Creation`.
pub const fn noun(action: Action) -> &'static str {
    match action {
        Action::Create => "Creation",
        Action::Update => "Update",
        Action::Replace => "Replacement",
        Action::Delete => "Deletion",
        Action::Release => "Release",
        Action::NoOp => "Check",
    }
}
