//! A node pool's `provisioningModel` and the rules the service holds a pool to for it, stated
//! once: the configuration's validation checks pools and their `fallback` alternatives with
//! them, and an alternative leaves behind what its model refuses by them.
//!
//! A value this version does not know is kept as [`ProvisioningModel::Other`] and written
//! back as it was read: a live cluster the service gave a newer model is still read, compared
//! and exported, never refused or rewritten. The configuration accepts only the known values
//! (the field table's enum, [`ProvisioningModel::NAMES`]).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::NodePool;

/// How a node pool's machines are obtained (`provisioningModel`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProvisioningModel {
    /// `ON_DEMAND`.
    OnDemand,
    /// `RESERVATION`: from the reservation its `reservation_affinity` names.
    Reservation,
    /// `SPOT`.
    Spot,
    /// `FLEX_START`: requests queued until the machines are available (Dynamic Workload
    /// Scheduler).
    FlexStart,
    /// A value this version does not know, kept as the service wrote it.
    Other(String),
}

impl ProvisioningModel {
    /// Every model this version knows, in the API's order.
    pub const KNOWN: [Self; 4] = [
        Self::OnDemand,
        Self::Reservation,
        Self::Spot,
        Self::FlexStart,
    ];

    /// The API spellings of [`Self::KNOWN`], the values the configuration accepts.
    pub const NAMES: [&'static str; 4] = ["ON_DEMAND", "RESERVATION", "SPOT", "FLEX_START"];

    /// The API spelling.
    pub fn as_str(&self) -> &str {
        match self {
            Self::OnDemand => Self::NAMES[0],
            Self::Reservation => Self::NAMES[1],
            Self::Spot => Self::NAMES[2],
            Self::FlexStart => Self::NAMES[3],
            Self::Other(text) => text,
        }
    }

    /// The model the API spells `text`; [`Self::Other`] when this version does not know it.
    pub fn from_api(text: &str) -> Self {
        Self::KNOWN
            .into_iter()
            .find(|model| model.as_str() == text)
            .unwrap_or_else(|| Self::Other(text.to_owned()))
    }

    /// Whether its pools need a `reservation_affinity`: only `RESERVATION` takes its
    /// machines from a reservation.
    pub fn needs_reservation_affinity(&self) -> bool {
        matches!(self, Self::Reservation)
    }

    /// Whether the service refuses a `reservation_affinity` with it. Nothing is known of a
    /// model this version does not know, so nothing is refused for it.
    pub fn refuses_reservation_affinity(&self) -> bool {
        matches!(self, Self::OnDemand | Self::Spot | Self::FlexStart)
    }

    /// Whether `flex_start_max_duration` belongs to it: only to `FLEX_START`.
    pub fn takes_flex_start_max_duration(&self) -> bool {
        matches!(self, Self::FlexStart)
    }

    /// Whether its requests wait in a queue until the machines are available rather than
    /// fail for a stockout.
    pub fn queues_requests(&self) -> bool {
        matches!(self, Self::FlexStart)
    }

    /// The known models a pool with accelerators may set without a reservation, in the API's
    /// order: what a GPU pool that names no reservation chooses from.
    pub fn without_reservation() -> impl Iterator<Item = Self> {
        Self::KNOWN
            .into_iter()
            .filter(|model| !model.needs_reservation_affinity())
    }
}

impl fmt::Display for ProvisioningModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ProvisioningModel {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProvisioningModel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(Self::from_api(&text))
    }
}

/// A way a node pool breaks a provisioning-model rule; the service refuses each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProvisioningProblem {
    /// Its model needs a `reservation_affinity` and it has none.
    NoReservationAffinity(ProvisioningModel),
    /// It has a `reservation_affinity` its model refuses.
    UnusedReservationAffinity(ProvisioningModel),
    /// Its machines have accelerators, and it sets neither a provisioning model nor a
    /// `reservation_affinity`.
    AcceleratorsWithoutModel,
    /// It sets `flex_start_max_duration` without the one model it belongs to.
    FlexStartDurationWithoutFlexStart,
}

impl NodePool {
    /// Every provisioning-model rule the pool breaks, in this order: the reservation rule
    /// (or, for a pool with accelerators, the need for a model), then the flex start duration.
    pub fn provisioning_problems(&self) -> Vec<ProvisioningProblem> {
        let machine = self.machine_spec.as_ref();
        let has_affinity = machine.is_some_and(|m| m.reservation_affinity.is_some());
        let mut problems = Vec::new();
        match &self.provisioning_model {
            Some(model) if model.needs_reservation_affinity() && !has_affinity => {
                problems.push(ProvisioningProblem::NoReservationAffinity(model.clone()));
            }
            Some(model) if model.refuses_reservation_affinity() && has_affinity => {
                problems.push(ProvisioningProblem::UnusedReservationAffinity(
                    model.clone(),
                ));
            }
            // A machine type with built-in accelerators is a GPU pool whether or not it names
            // them.
            None if !has_affinity && machine.is_some_and(|m| m.accelerators().is_some()) => {
                problems.push(ProvisioningProblem::AcceleratorsWithoutModel);
            }
            _ => {}
        }
        if self.flex_start_max_duration.is_some() && !self.takes_flex_start_max_duration() {
            problems.push(ProvisioningProblem::FlexStartDurationWithoutFlexStart);
        }
        problems
    }

    /// Whether its provisioning model takes a `flex_start_max_duration` (none set: no).
    pub fn takes_flex_start_max_duration(&self) -> bool {
        self.provisioning_model
            .as_ref()
            .is_some_and(ProvisioningModel::takes_flex_start_max_duration)
    }

    /// Whether its provisioning model refuses a `reservation_affinity` (none set: no).
    pub fn refuses_reservation_affinity(&self) -> bool {
        self.provisioning_model
            .as_ref()
            .is_some_and(ProvisioningModel::refuses_reservation_affinity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::PROVISIONING_MODELS;
    use crate::{MachineSpec, ReservationAffinity};

    #[test]
    fn reads_and_writes_the_api_spelling_and_keeps_what_it_does_not_know() {
        for model in ProvisioningModel::KNOWN {
            let json = serde_json::to_value(&model).unwrap();
            assert_eq!(json, serde_json::Value::from(model.as_str()));
            assert_eq!(
                serde_json::from_value::<ProvisioningModel>(json).unwrap(),
                model
            );
        }
        let newer: ProvisioningModel = serde_json::from_str("\"PREEMPTIBLE_QUEUED\"").unwrap();
        assert_eq!(
            newer,
            ProvisioningModel::Other("PREEMPTIBLE_QUEUED".to_owned())
        );
        assert_eq!(
            serde_json::to_string(&newer).unwrap(),
            "\"PREEMPTIBLE_QUEUED\""
        );
        assert_eq!(PROVISIONING_MODELS, ProvisioningModel::NAMES);
    }

    fn pool(model: Option<ProvisioningModel>, machine_type: &str, affinity: bool) -> NodePool {
        NodePool {
            id: "gpu".to_owned(),
            machine_spec: Some(MachineSpec {
                machine_type: Some(machine_type.to_owned()),
                reservation_affinity: affinity.then(ReservationAffinity::default),
                ..MachineSpec::default()
            }),
            provisioning_model: model,
            ..NodePool::default()
        }
    }

    #[test]
    fn a_pool_breaks_the_reservation_rule_of_its_model() {
        use ProvisioningModel as M;
        use ProvisioningProblem as P;
        let gpu = "a3-ultragpu-8g";
        assert_eq!(
            pool(Some(M::Reservation), gpu, false).provisioning_problems(),
            [P::NoReservationAffinity(M::Reservation)]
        );
        assert_eq!(
            pool(Some(M::Reservation), gpu, true).provisioning_problems(),
            []
        );
        for model in [M::OnDemand, M::Spot, M::FlexStart] {
            assert_eq!(
                pool(Some(model.clone()), gpu, true).provisioning_problems(),
                [P::UnusedReservationAffinity(model)]
            );
        }
        assert_eq!(
            pool(None, gpu, false).provisioning_problems(),
            [P::AcceleratorsWithoutModel]
        );
        assert_eq!(pool(None, gpu, true).provisioning_problems(), []);
        assert_eq!(
            pool(None, "n2-standard-8", false).provisioning_problems(),
            []
        );
        let unknown = M::Other("NEWER".to_owned());
        assert_eq!(
            pool(Some(unknown.clone()), gpu, true).provisioning_problems(),
            []
        );
        assert_eq!(pool(Some(unknown), gpu, false).provisioning_problems(), []);
    }

    #[test]
    fn only_flex_start_takes_a_duration() {
        let mut flex = pool(Some(ProvisioningModel::FlexStart), "a3-ultragpu-8g", false);
        flex.flex_start_max_duration = Some("3600s".to_owned());
        assert_eq!(flex.provisioning_problems(), []);
        let mut spot = flex;
        spot.provisioning_model = Some(ProvisioningModel::Spot);
        assert_eq!(
            spot.provisioning_problems(),
            [ProvisioningProblem::FlexStartDurationWithoutFlexStart]
        );
    }

    #[test]
    fn a_gpu_pool_without_a_reservation_chooses_among_the_others() {
        let names: Vec<_> = ProvisioningModel::without_reservation()
            .map(|model| model.to_string())
            .collect();
        assert_eq!(names, ["ON_DEMAND", "SPOT", "FLEX_START"]);
    }
}
