//! `clusterform force-unlock LOCK_ID [DIR]`: removes the stack's lock on Cloud Storage that a
//! run left behind when it died (a crash, SIGKILL, a lost CI runner). It only removes the lock
//! the user named: the lock is read, its ID compared, and it is deleted with the generation
//! read, so a lock taken again in between is never removed. A lock object that holds no readable
//! record is named by its generation, which the refused run showed as its lock ID.

use clusterform_executor::StorageLock;

use crate::arguments::ForceUnlock;
use crate::context;
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::printer::Printer;
use crate::prompt;

/// Reads, checks, confirms and removes the lock.
pub async fn run(args: &ForceUnlock, printer: &Printer) -> Result<ExitStatus, CliError> {
    let config = context::load_config(
        &args.dir,
        context::variable_inputs(&args.variables)?,
        printer,
    )
    .await?;
    let provider = &config.provider;
    let Some(remote) = &provider.lock else {
        return Err(CliError::LocalLockNotForced(args.dir.clone()));
    };
    let connection = context::connect_storage(remote, provider.endpoint.as_ref()).await?;
    let client = &connection.client;
    let object = clusterform_executor::StackObjects::new(&remote.prefix, &provider.stack).lock();
    let location = format!("gs://{}/{object}", remote.bucket);
    let Some(held) = StorageLock::holder(client, &object).await? else {
        return Err(CliError::NotLocked(location));
    };
    let holder = held.info.as_ref().map_or_else(
        || {
            format!(
                "a record that cannot be read as a lock (lock ID {}, the object's generation)",
                held.generation
            )
        },
        ToString::to_string,
    );
    if held.id() != args.lock_id {
        return Err(CliError::LockIdMismatch {
            given: args.lock_id.clone(),
            location,
            holder,
        });
    }
    printer.info(&format!("The lock {location} is held by {holder}."));
    let question = "Do you really want to remove this lock?\n  If the run that holds it is still running, two runs may then change the same clusters at once.";
    let approved = || {
        prompt::approve(question).map_err(|error| match error {
            CliError::NoTerminalToConfirm => CliError::NoTerminalToConfirmUnlock {
                lock_id: args.lock_id.clone(),
                dir: args.dir.clone(),
            },
            other => other,
        })
    };
    if !args.auto_approve && !approved()? {
        printer.info("Force-unlock cancelled.");
        return Ok(ExitStatus::Declined);
    }
    StorageLock::remove(client, &object, &held).await?;
    printer.info(&format!("The lock {location} was removed."));
    Ok(ExitStatus::Success)
}
