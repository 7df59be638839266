//! The machine types and accelerators documented for Vertex AI training clusters, read from
//! `data/machines.json`, and the warnings a pool's `machine_spec` gets when it strays from
//! them: an unknown machine or accelerator type (with a "did you mean"), a GPU machine type
//! whose built-in accelerators the configuration contradicts, an accelerator on a CPU machine,
//! and a documented type known to be refused in practice (a caution). These are warnings,
//! never errors: the service adds machine types over time, and a catalogue that refused them
//! would block users until we caught up.

use clusterform_model::catalogue::{BuiltIn, MachineCatalogue, machine_catalogue};

use crate::diagnostic::did_you_mean;

/// The machine spec fields a warning can point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MachineField {
    MachineType,
    AcceleratorType,
    AcceleratorCount,
}

impl MachineField {
    /// The attribute's name inside `machine_spec`.
    pub fn attribute(self) -> &'static str {
        match self {
            Self::MachineType => "machine_type",
            Self::AcceleratorType => "accelerator_type",
            Self::AcceleratorCount => "accelerator_count",
        }
    }
}

/// One way a machine spec strays from the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CatalogueWarning {
    pub field: MachineField,
    pub message: String,
    pub hint: String,
}

/// The machine spec being checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MachineChoice<'a> {
    pub machine_type: &'a str,
    pub accelerator_type: Option<&'a str>,
    pub accelerator_count: Option<i64>,
}

/// Said after every warning about a type the catalogue lacks: it may be behind the service.
const NEWER_TYPES: &str = "The service may offer types newer than clusterform's catalogue (the Compute resources page lists the documented ones): if this one exists, ignore this warning.";

/// The catalogue shipped in the binary.
pub(crate) fn catalogue() -> Catalogue {
    Catalogue(machine_catalogue())
}

/// The catalogue's advice for a documented machine type known to be refused in practice
/// ("use a3-megagpu-8g (8 × NVIDIA_H100_MEGA_80GB) for H100 nodes"), if it has some.
pub fn machine_caution_hint(machine_type: &str) -> Option<&'static str> {
    let machine = machine_catalogue().machine(machine_type)?;
    machine
        .caution
        .as_ref()
        .map(|caution| caution.hint.as_str())
}

/// The two lists of types the catalogue holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TypeList {
    /// The training machine types.
    MachineTypes,
    /// The accelerator types.
    Accelerators,
}

/// What is said of a type the catalogue lacks, wherever it is written (a pool, a price): that
/// it is not listed, and a hint with the closest listed type and [`NEWER_TYPES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unlisted {
    /// "machine type `x` is not in clusterform's catalogue of training machine types".
    pub message: String,
    pub hint: String,
}

impl Unlisted {
    fn new(catalogue: &Catalogue, list: TypeList, name: &str) -> Self {
        let message = match list {
            TypeList::MachineTypes => format!(
                "machine type `{name}` is not in clusterform's catalogue of training machine types"
            ),
            TypeList::Accelerators => {
                format!("accelerator type `{name}` is not in clusterform's catalogue")
            }
        };
        Self {
            message,
            hint: with_suggestion(did_you_mean(name, catalogue.types(list))),
        }
    }
}

/// The model's catalogue, as the warnings read it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Catalogue(&'static MachineCatalogue);

impl Catalogue {
    /// The warning for `name` when `list` lacks it; `None` when it holds it.
    pub fn unlisted(&self, list: TypeList, name: &str) -> Option<Unlisted> {
        (!self.types(list).any(|known| known == name)).then(|| Unlisted::new(self, list, name))
    }

    /// The types of `list`.
    fn types(&self, list: TypeList) -> Box<dyn Iterator<Item = &'static str>> {
        match list {
            TypeList::MachineTypes => Box::new(self.0.machine_types()),
            TypeList::Accelerators => {
                Box::new(self.0.accelerator_types().iter().map(String::as_str))
            }
        }
    }

    /// Every way `choice` strays from the catalogue, most fundamental first.
    pub fn check(&self, choice: MachineChoice<'_>) -> Vec<CatalogueWarning> {
        let mut warnings = Vec::new();
        if let Some(kind) = choice.accelerator_type
            && let Some(Unlisted { message, hint }) = self.unlisted(TypeList::Accelerators, kind)
        {
            warnings.push(CatalogueWarning {
                field: MachineField::AcceleratorType,
                message,
                hint,
            });
            return warnings;
        }
        let Some(machine) = self.0.machine(choice.machine_type) else {
            let Unlisted { message, hint } =
                Unlisted::new(self, TypeList::MachineTypes, choice.machine_type);
            warnings.push(CatalogueWarning {
                field: MachineField::MachineType,
                message,
                hint,
            });
            return warnings;
        };
        if let Some(caution) = &machine.caution {
            warnings.push(CatalogueWarning {
                field: MachineField::MachineType,
                message: format!(
                    "machine type `{}` may be refused: {}",
                    choice.machine_type, caution.message
                ),
                hint: caution.hint.clone(),
            });
        }
        warnings.extend(match &machine.built_in {
            Some(BuiltIn { kind, count }) => built_in(choice, kind, i64::from(*count)),
            None => no_accelerators(choice),
        });
        warnings
    }
}

/// A machine type with built-in accelerators: the spec must name them and their count.
fn built_in(choice: MachineChoice<'_>, kind: &str, count: i64) -> Option<CatalogueWarning> {
    let machine = choice.machine_type;
    let set_both = format!("set accelerator_type = \"{kind}\" and accelerator_count = {count}");
    match (choice.accelerator_type, choice.accelerator_count) {
        (None, _) => Some(CatalogueWarning {
            field: MachineField::MachineType,
            message: format!(
                "`{machine}` comes with {count} × {kind}, but accelerator_type is not set"
            ),
            hint: set_both,
        }),
        (Some(other), _) if other != kind => Some(CatalogueWarning {
            field: MachineField::AcceleratorType,
            message: format!("`{machine}` comes with {kind}, not {other}"),
            hint: format!("use accelerator_type = \"{kind}\", or a machine type built for {other}"),
        }),
        (Some(_), Some(other)) if other != count => Some(CatalogueWarning {
            field: MachineField::AcceleratorCount,
            message: format!("`{machine}` has {count} × {kind}; accelerator_count is {other}"),
            hint: format!("use accelerator_count = {count}"),
        }),
        (Some(_), None) => Some(CatalogueWarning {
            field: MachineField::AcceleratorType,
            message: format!("`{machine}` has {count} × {kind}, but accelerator_count is not set"),
            hint: set_both,
        }),
        (Some(_), Some(_)) => None,
    }
}

/// A CPU machine type: the spec must not ask for accelerators.
fn no_accelerators(choice: MachineChoice<'_>) -> Option<CatalogueWarning> {
    let machine = choice.machine_type;
    match (choice.accelerator_type, choice.accelerator_count) {
        (Some(kind), _) => Some(CatalogueWarning {
            field: MachineField::AcceleratorType,
            message: format!("`{machine}` cannot attach {kind}"),
            hint: format!(
                "`{machine}` takes no accelerators: remove accelerator_type, or use a GPU machine type such as `a3-megagpu-8g` or `a4-highgpu-8g`"
            ),
        }),
        (None, Some(count)) if count > 0 => Some(CatalogueWarning {
            field: MachineField::AcceleratorCount,
            message: format!("accelerator_count is {count} but accelerator_type is not set"),
            hint: "set accelerator_type, or remove accelerator_count".to_owned(),
        }),
        (None, _) => None,
    }
}

fn with_suggestion(suggestion: Option<String>) -> String {
    match suggestion {
        Some(suggestion) => format!("{suggestion} {NEWER_TYPES}"),
        None => NEWER_TYPES.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(machine_type: &str, kind: Option<&str>, count: Option<i64>) -> Vec<String> {
        catalogue()
            .check(MachineChoice {
                machine_type,
                accelerator_type: kind,
                accelerator_count: count,
            })
            .into_iter()
            .map(|w| format!("{}: {} ({})", w.field.attribute(), w.message, w.hint))
            .collect()
    }

    #[test]
    fn the_shipped_file_parses_and_lists_every_documented_type() {
        let catalogue = catalogue();
        for known in [
            "a4x-highgpu-4g",
            "a4-highgpu-8g",
            "a3-ultragpu-8g",
            "a3-megagpu-8g",
            "a3-highgpu-8g",
            "n2-standard-8",
            "n2-highmem-16",
            "n2-highcpu-32",
        ] {
            assert!(catalogue.0.machine(known).is_some(), "{known} missing");
        }
        assert_eq!(
            catalogue.0.accelerator_types(),
            [
                "NVIDIA_H100_80GB",
                "NVIDIA_H100_MEGA_80GB",
                "NVIDIA_H200_141GB",
                "NVIDIA_B200",
                "NVIDIA_GB200"
            ]
        );
    }

    #[test]
    fn specs_that_match_the_catalogue_get_no_warning() {
        assert!(check("n2-standard-8", None, None).is_empty());
        assert!(check("a4-highgpu-8g", Some("NVIDIA_B200"), Some(8)).is_empty());
        assert!(check("a4x-highgpu-4g", Some("NVIDIA_GB200"), Some(4)).is_empty());
        assert!(check("a3-ultragpu-8g", Some("NVIDIA_H200_141GB"), Some(8)).is_empty());
    }

    #[test]
    fn undocumented_types_are_warned_about() {
        insta::assert_debug_snapshot!(
            [
                check("n2-standrad-8", None, None),
                check("g2-standard-8", Some("NVIDIA_L4"), Some(1)),
            ],
            @r#"
        [
            [
                "machine_type: machine type `n2-standrad-8` is not in clusterform's catalogue of training machine types (did you mean `n2-standard-8`? The service may offer types newer than clusterform's catalogue (the Compute resources page lists the documented ones): if this one exists, ignore this warning.)",
            ],
            [
                "accelerator_type: accelerator type `NVIDIA_L4` is not in clusterform's catalogue (did you mean `NVIDIA_B200`? The service may offer types newer than clusterform's catalogue (the Compute resources page lists the documented ones): if this one exists, ignore this warning.)",
            ],
        ]
        "#
        );
    }

    #[test]
    fn a3_highgpu_is_documented_but_cautioned() {
        insta::assert_debug_snapshot!(check("a3-highgpu-8g", Some("NVIDIA_H100_80GB"), Some(8)), @r#"
        [
            "machine_type: machine type `a3-highgpu-8g` may be refused: the Create cluster page lists it, but a real create failed with \"machine type a3-highgpu-8g is not allowed for VM\" about 20 s after it was accepted, leaving a cluster in ERROR to delete (the Compute resources page does not list it) (use a3-megagpu-8g (8 × NVIDIA_H100_MEGA_80GB) for H100 nodes)",
        ]
        "#);
    }

    #[test]
    fn built_in_accelerators_must_be_named_and_counted() {
        insta::assert_debug_snapshot!(
            [
                check("a3-megagpu-8g", None, None),
                check("a3-megagpu-8g", Some("NVIDIA_H100_80GB"), Some(8)),
                check("a3-megagpu-8g", Some("NVIDIA_H100_MEGA_80GB"), Some(4)),
                check("a3-megagpu-8g", Some("NVIDIA_H100_MEGA_80GB"), None),
            ],
            @r#"
        [
            [
                "machine_type: `a3-megagpu-8g` comes with 8 × NVIDIA_H100_MEGA_80GB, but accelerator_type is not set (set accelerator_type = \"NVIDIA_H100_MEGA_80GB\" and accelerator_count = 8)",
            ],
            [
                "accelerator_type: `a3-megagpu-8g` comes with NVIDIA_H100_MEGA_80GB, not NVIDIA_H100_80GB (use accelerator_type = \"NVIDIA_H100_MEGA_80GB\", or a machine type built for NVIDIA_H100_80GB)",
            ],
            [
                "accelerator_count: `a3-megagpu-8g` has 8 × NVIDIA_H100_MEGA_80GB; accelerator_count is 4 (use accelerator_count = 8)",
            ],
            [
                "accelerator_type: `a3-megagpu-8g` has 8 × NVIDIA_H100_MEGA_80GB, but accelerator_count is not set (set accelerator_type = \"NVIDIA_H100_MEGA_80GB\" and accelerator_count = 8)",
            ],
        ]
        "#
        );
    }

    #[test]
    fn cpu_machines_take_no_accelerators() {
        insta::assert_debug_snapshot!(
            [
                check("n2-standard-8", Some("NVIDIA_B200"), Some(1)),
                check("n2-standard-8", None, Some(2)),
                check("n2-standard-8", None, Some(0)),
                check("n2-standard-8", Some("NVIDIA_H100_MEGA"), Some(8)),
            ],
            @r#"
        [
            [
                "accelerator_type: `n2-standard-8` cannot attach NVIDIA_B200 (`n2-standard-8` takes no accelerators: remove accelerator_type, or use a GPU machine type such as `a3-megagpu-8g` or `a4-highgpu-8g`)",
            ],
            [
                "accelerator_count: accelerator_count is 2 but accelerator_type is not set (set accelerator_type, or remove accelerator_count)",
            ],
            [],
            [
                "accelerator_type: accelerator type `NVIDIA_H100_MEGA` is not in clusterform's catalogue (did you mean `NVIDIA_H100_MEGA_80GB`? The service may offer types newer than clusterform's catalogue (the Compute resources page lists the documented ones): if this one exists, ignore this warning.)",
            ],
        ]
        "#
        );
    }
}
