//! How to get onto a cluster, for `status`: its login node's instance and zone, and the
//! `gcloud compute ssh` command that reaches it — through Identity-Aware Proxy
//! (`--tunnel-through-iap`) when the login pool's nodes have no external address — or why
//! there is none yet. Shared by `status`'s text and its JSON.

use clusterform_executor::{LoginInstance, LoginNode};
use clusterform_model::ClusterName;

/// The command that opens a shell on the login node of the cluster at `address`, when the
/// node is running, named and its pool names a zone.
pub fn login_command(address: &ClusterName, login: &LoginNode) -> Option<String> {
    let LoginInstance::Running { name } = &login.instance else {
        return None;
    };
    let zone = login.zone.as_deref()?;
    let tunnel = if login.public_ips {
        ""
    } else {
        " --tunnel-through-iap"
    };
    Some(format!(
        "gcloud compute ssh {} --zone {}{tunnel} --project {}",
        shell_word(name),
        shell_word(zone),
        address.project()
    ))
}

/// How to get onto the cluster at `address` (`login`: its login node, `None` when its Slurm
/// names no login pool): the command, or why there is none yet.
pub fn login_text(address: &ClusterName, login: Option<&LoginNode>) -> String {
    let Some(login) = login else {
        return "no login node: the cluster names no login pool".to_owned();
    };
    if let Some(command) = login_command(address, login) {
        return command;
    }
    let pool = &login.pool;
    match &login.instance {
        LoginInstance::Running { name } => format!(
            "login node {name} (pool {pool}) is running, but its pool names no zone to reach it in"
        ),
        LoginInstance::NotRunning { name, state } => {
            let node = name.as_deref().map_or_else(
                || format!("the login node of pool {pool}"),
                |name| format!("login node {name} (pool {pool})"),
            );
            let state = state.as_deref().unwrap_or("in no reported state");
            let unnamed = if name.is_none() {
                "; no instance name yet"
            } else {
                ""
            };
            format!("{node} is {state}, not running yet{unnamed}")
        }
        LoginInstance::Absent => {
            format!("the service reports no node of login pool {pool} yet: no instance name yet")
        }
    }
}

/// `word` as one shell word: as it is when it holds only characters no shell reads
/// specially (instance names and zones do), else single-quoted, since the name comes from
/// the service and the line is meant to be pasted into a shell.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address() -> ClusterName {
        ClusterName::new("acme-ml", "us-central1", "train01").unwrap()
    }

    fn login(instance: LoginInstance, public_ips: bool) -> LoginNode {
        LoginNode {
            pool: "login".to_owned(),
            zone: Some("us-central1-a".to_owned()),
            public_ips,
            instance,
        }
    }

    fn running(name: &str) -> LoginInstance {
        LoginInstance::Running {
            name: name.to_owned(),
        }
    }

    #[test]
    fn without_public_ips_the_command_tunnels_through_iap() {
        let text =
            |public_ips| login_text(&address(), Some(&login(running("t-login-0"), public_ips)));
        assert_eq!(
            text(false),
            "gcloud compute ssh t-login-0 --zone us-central1-a --tunnel-through-iap --project acme-ml"
        );
        assert_eq!(
            text(true),
            "gcloud compute ssh t-login-0 --zone us-central1-a --project acme-ml"
        );
    }

    #[test]
    fn a_login_node_not_running_gets_no_command_and_no_invented_name() {
        let preparing = LoginInstance::NotRunning {
            name: None,
            state: Some("PREPARING".to_owned()),
        };
        assert_eq!(
            login_text(&address(), Some(&login(preparing, false))),
            "the login node of pool login is PREPARING, not running yet; no instance name yet"
        );
        assert_eq!(
            login_text(&address(), Some(&login(LoginInstance::Absent, false))),
            "the service reports no node of login pool login yet: no instance name yet"
        );
        assert_eq!(
            login_text(&address(), None),
            "no login node: the cluster names no login pool"
        );
        let mut no_zone = login(running("t-login-0"), false);
        no_zone.zone = None;
        assert_eq!(login_command(&address(), &no_zone), None);
    }

    #[test]
    fn a_name_a_shell_would_read_is_quoted() {
        assert_eq!(shell_word("t-login-0"), "t-login-0");
        assert_eq!(shell_word("x; rm -rf ~"), "'x; rm -rf ~'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
