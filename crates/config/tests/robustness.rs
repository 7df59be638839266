//! Generated near-valid configurations (mutations of a valid file) never make `load` panic.

use clusterform_config::{VariableInputs, load};
use proptest::prelude::*;

use crate::support::valid_file;

/// One edit of the text: delete, duplicate or replace a slice, or insert a token.
#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize, usize),
    Duplicate(usize, usize),
    Insert(usize, &'static str),
}

const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    "=",
    "${",
    "var.x",
    "local.y",
    "each.key",
    "null",
    "-1",
    "node_pool \"x\" {}",
    "for_each = [1]",
    "\n",
    "#",
    "/*",
    "99999999999999999999",
    "file(\"x\")",
];

fn mutation(len: usize) -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0..len, 1..40usize).prop_map(|(at, n)| Mutation::Delete(at, n)),
        (0..len, 1..80usize).prop_map(|(at, n)| Mutation::Duplicate(at, n)),
        (0..len, proptest::sample::select(TOKENS)).prop_map(|(at, t)| Mutation::Insert(at, t)),
    ]
}

fn apply(text: &str, mutation: &Mutation) -> String {
    let clamp = |i: usize| {
        let mut i = i.min(text.len());
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    match *mutation {
        Mutation::Delete(at, n) => format!("{}{}", &text[..clamp(at)], &text[clamp(at + n)..]),
        Mutation::Duplicate(at, n) => {
            let (start, end) = (clamp(at), clamp(at + n));
            format!("{}{}{}", &text[..end], &text[start..end], &text[end..])
        }
        Mutation::Insert(at, token) => {
            format!("{}{token}{}", &text[..clamp(at)], &text[clamp(at)..])
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn load_never_panics(mutations in proptest::collection::vec(mutation(valid_file().len()), 1..4)) {
        let text = mutations.iter().fold(valid_file(), |text, m| apply(&text, m));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("main.hcl"), &text).unwrap();
        if let Err(diagnostics) = load(dir.path(), &VariableInputs::default()) {
            prop_assert!(!diagnostics.items.is_empty());
            let _ = diagnostics.render(false);
        }
    }
}
