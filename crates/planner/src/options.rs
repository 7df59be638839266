//! What `plan` is asked to do beyond the configuration: the choices the command line makes
//! ([`PlanOptions`]), and the same choices as a plan records them ([`PlanFlags`]), so that a
//! saved plan is checked against the plan those flags make.

use clusterform_model::UpdateMode;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// Command-line choices that shape a plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// `--target ID`: consider only these cluster IDs (empty: every cluster).
    pub targets: Vec<String>,
    /// `--replace ID`: replace these clusters even if nothing differs.
    pub replace: Vec<String>,
    /// `--update-mode M`: overrides every cluster's and the provider's update mode.
    pub update_mode: Option<UpdateMode>,
    /// `destroy`: delete the declared (or targeted) clusters instead of converging them.
    pub destroy: bool,
    /// With `destroy`: leave out the clusters `lifecycle { prevent_destroy }` protects
    /// instead of refusing the plan (`destroy --idle-for`, which deletes only some clusters
    /// and shows the protected ones as kept).
    pub keep_protected: bool,
}

/// The flags a plan was made with, as its document records them (`flags`): the
/// [`PlanOptions`] it was planned with and, for an idle destroy, the threshold whose filter
/// ran after planning. `keep_protected` is not recorded: it follows from the threshold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanFlags {
    /// `--destroy` (or the `destroy` command): the plan only deletes.
    pub destroy: bool,
    /// `--idle-for D` of an idle destroy: D in seconds. Applying the plan asks each cluster's
    /// Slurm again and deletes only those still idle that long.
    #[serde(rename = "idle_for_seconds")]
    pub idle_for: Option<u64>,
    /// `--target ID`s, as given.
    pub targets: Vec<String>,
    /// `--replace ID`s, as given.
    pub replace: Vec<String>,
    /// `--update-mode M`.
    pub update_mode: Option<UpdateMode>,
}

impl PlanFlags {
    /// The flags of a plan made with `options` (no idle threshold yet: the idle filter runs
    /// after planning and records its own).
    pub fn of(options: &PlanOptions) -> Self {
        Self {
            destroy: options.destroy,
            idle_for: None,
            targets: options.targets.clone(),
            replace: options.replace.clone(),
            update_mode: options.update_mode,
        }
    }

    /// The options that plan again what these flags planned: an idle destroy leaves the
    /// protected clusters out, as `plan --destroy --idle-for` did.
    pub fn options(&self) -> PlanOptions {
        PlanOptions {
            targets: self.targets.clone(),
            replace: self.replace.clone(),
            update_mode: self.update_mode,
            destroy: self.destroy,
            keep_protected: self.idle_for.is_some(),
        }
    }

    /// SHA-256 (hex) of these flags together with the digest of the configuration they were
    /// used with: what binds a saved plan's flags to its configuration, so that flags edited
    /// alone no longer match. (Not a signature: anyone can compute it.)
    pub fn digest(&self, config_digest: &str) -> String {
        let mut hasher = Sha256::new();
        hasher.update(b"configuration\0");
        hasher.update(config_digest.as_bytes());
        hasher.update(b"\0flags\0");
        // A struct of strings, numbers and booleans always encodes, its fields in a fixed order.
        hasher.update(serde_json::to_string(self).unwrap_or_default().as_bytes());
        hasher
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_changes_with_every_flag_and_with_the_configuration() {
        let flags = PlanFlags {
            destroy: false,
            idle_for: None,
            targets: vec!["train01".to_owned()],
            replace: vec![],
            update_mode: Some(UpdateMode::UserOnly),
        };
        let digest = flags.digest("c0ffee");
        assert_eq!(digest, flags.digest("c0ffee"));
        assert_ne!(digest, flags.digest("c0ffef"));
        let edits: [fn(&mut PlanFlags); 5] = [
            |f| f.destroy = true,
            |f| f.idle_for = Some(7200),
            |f| f.targets.push("train02".to_owned()),
            |f| f.replace.push("train01".to_owned()),
            |f| f.update_mode = Some(UpdateMode::UserAndService),
        ];
        for edit in edits {
            let mut edited = flags.clone();
            edit(&mut edited);
            assert_ne!(edited.digest("c0ffee"), digest, "{edited:?}");
        }
    }

    #[test]
    fn the_options_planned_again_are_the_ones_recorded() {
        let options = PlanOptions {
            targets: vec!["a".to_owned()],
            replace: vec!["a".to_owned()],
            update_mode: Some(UpdateMode::UserOnly),
            destroy: false,
            keep_protected: false,
        };
        assert_eq!(PlanFlags::of(&options).options(), options);
        let idle = PlanFlags {
            destroy: true,
            idle_for: Some(60),
            ..PlanFlags::default()
        };
        assert!(idle.options().keep_protected);
    }
}
