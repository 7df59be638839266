//! The flags a saved plan was made with, as the command line that made it spells them.

use clusterform_model::duration::Seconds;
use clusterform_planner::PlanFlags;

/// `Made with: clusterform plan --target train01 --update-mode USER_ONLY`: the line `show`
/// heads a saved plan with, since `apply FILE` plans again with exactly these flags.
pub fn made_with(flags: &PlanFlags) -> String {
    let mut line = "Made with: clusterform plan".to_owned();
    if flags.destroy {
        line.push_str(" --destroy");
    }
    if let Some(seconds) = flags.idle_for {
        line.push_str(&format!(" --idle-for {}", Seconds(seconds)));
    }
    for target in &flags.targets {
        line.push_str(&format!(" --target {target}"));
    }
    for replace in &flags.replace {
        line.push_str(&format!(" --replace {replace}"));
    }
    if let Some(mode) = flags.update_mode {
        line.push_str(&format!(" --update-mode {mode}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use clusterform_model::UpdateMode;

    use super::*;

    #[test]
    fn every_recorded_flag_is_spelled_as_given() {
        assert_eq!(
            made_with(&PlanFlags::default()),
            "Made with: clusterform plan"
        );
        let converging = PlanFlags {
            targets: vec!["train01".to_owned(), "train02".to_owned()],
            replace: vec!["train02".to_owned()],
            update_mode: Some(UpdateMode::UserOnly),
            ..PlanFlags::default()
        };
        assert_eq!(
            made_with(&converging),
            "Made with: clusterform plan --target train01 --target train02 --replace train02 \
             --update-mode USER_ONLY"
        );
        let idle = PlanFlags {
            destroy: true,
            idle_for: Some(7200),
            ..PlanFlags::default()
        };
        assert_eq!(
            made_with(&idle),
            "Made with: clusterform plan --destroy --idle-for 2h"
        );
    }
}
