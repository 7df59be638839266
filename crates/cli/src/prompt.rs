//! Questions asked on a terminal: the apply/destroy and force-unlock confirmations, missing variables, and the
//! stack of a configuration `import` writes.

use std::io::IsTerminal;

use clusterform_config::MissingVariable;
use dialoguer::{Input, Password};

use crate::error::CliError;

/// Asks Terraform's question; only `yes` approves. Without a terminal this is an error, never a
/// silent yes.
pub fn confirm(question: &str) -> Result<bool, CliError> {
    approve(&format!(
        "{question}\n  clusterform will perform the actions described above."
    ))
}

/// Asks `question`; only `yes` approves. Without a terminal this is an error, never a silent
/// yes.
pub fn approve(question: &str) -> Result<bool, CliError> {
    if !std::io::stdin().is_terminal() {
        return Err(CliError::NoTerminalToConfirm);
    }
    let answer: String = Input::new()
        .with_prompt(format!(
            "{question}\n  Only 'yes' will be accepted to approve.\n\n  Enter a value"
        ))
        .allow_empty(true)
        .interact_text()?;
    Ok(answer.trim() == "yes")
}

/// Asks for the stack of the configuration `import` writes into a directory without one;
/// `None` without a terminal.
pub fn stack() -> Result<Option<String>, CliError> {
    if !std::io::stdin().is_terminal() {
        return Ok(None);
    }
    let stack: String = Input::new()
        .with_prompt("stack (the owner of the clusters of this configuration, e.g. ml-prod)")
        .interact_text()?;
    Ok(Some(stack))
}

/// Asks for the value of a variable that has none; sensitive ones are not echoed.
pub fn variable(missing: &MissingVariable) -> Result<String, CliError> {
    let mut prompt = format!("var.{}", missing.name);
    if let Some(description) = &missing.description {
        prompt.push_str(&format!("\n  {description}\n\n  Enter a value"));
    }
    let value = if missing.sensitive {
        Password::new().with_prompt(prompt).interact()?
    } else {
        Input::new().with_prompt(prompt).interact_text()?
    };
    Ok(value)
}
