//! Fuzz target: arbitrary bytes as a configuration file go through parse, evaluate, decode
//! and validate (`load`), then through the formatter; neither may panic, and formatting a
//! formatted file must change nothing.
#![no_main]

use std::path::Path;

use clusterform_config::{VariableInputs, format_source, load};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().expect("temporary directory");
    std::fs::write(dir.path().join("main.hcl"), data).expect("write the input");
    if let Err(diagnostics) = load(dir.path(), &VariableInputs::default()) {
        let _ = diagnostics.render(false);
    }
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(formatted) = format_source(text, Path::new("main.hcl"))
    {
        let again = format_source(&formatted, Path::new("main.hcl")).expect("formatted text parses");
        assert_eq!(again, formatted, "formatting is not idempotent");
    }
});
