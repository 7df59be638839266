//! What works on configuration files besides loading them: formatting (`fmt`), writing a live
//! cluster as HCL (for `import`), and finding where a loaded cluster writes a field.

pub(crate) mod export;
pub(crate) mod format;
pub(crate) mod locate;
