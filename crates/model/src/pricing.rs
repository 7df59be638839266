//! Prices the user gives (the provider's `pricing` block or `--prices FILE`): hourly prices per
//! machine type and per accelerator type, in one currency. clusterform ships no price list: a
//! node's cost is its machine type's price, else its accelerators times their type's price,
//! else unknown — never guessed. Costs are per hour, in the list's currency, unrounded; the
//! views round them.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::{Cluster, ClusterName, LiveCluster, MachineSpec};

/// Hours in the 30 days a monthly figure covers.
pub const HOURS_PER_30_DAYS: f64 = 720.0;

/// An ISO 4217 currency code: three capital letters (`USD`, `EUR`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Currency(String);

/// Why a currency code or a price is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PriceError {
    /// Not three capital letters.
    #[error("`{0}` is not an ISO 4217 currency code (three capital letters, e.g. USD)")]
    Currency(String),
    /// Negative, or not a finite number.
    #[error("{0} is not an hourly price (a number of at least 0)")]
    Price(f64),
}

impl FromStr for Currency {
    type Err = PriceError;

    fn from_str(text: &str) -> Result<Self, PriceError> {
        if text.len() == 3 && text.bytes().all(|b| b.is_ascii_uppercase()) {
            Ok(Self(text.to_owned()))
        } else {
            Err(PriceError::Currency(text.to_owned()))
        }
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A price per hour: finite and at least 0.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize)]
#[serde(transparent)]
pub struct HourlyPrice(f64);

impl HourlyPrice {
    /// `price`, when it is a finite number of at least 0.
    pub fn new(price: f64) -> Result<Self, PriceError> {
        if price.is_finite() && price >= 0.0 {
            Ok(Self(price))
        } else {
            Err(PriceError::Price(price))
        }
    }

    /// The price.
    pub fn get(self) -> f64 {
        self.0
    }
}

/// The prices the user gives.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceList {
    /// The currency of every price and cost.
    pub currency: Currency,
    /// One node's price per hour, by machine type (`a4-highgpu-8g`).
    pub machine_types: BTreeMap<String, HourlyPrice>,
    /// One accelerator's price per hour, by accelerator type (`NVIDIA_B200`).
    pub accelerators: BTreeMap<String, HourlyPrice>,
}

/// A cost per hour, or unknown because machine types lack prices.
#[derive(Debug, Clone, PartialEq)]
pub enum Cost {
    /// The amount per hour (negative for a saving).
    Known(f64),
    /// Unknown: these machine types have no price, themselves or through their accelerators.
    Unknown(BTreeSet<String>),
}

impl Default for Cost {
    fn default() -> Self {
        Self::Known(0.0)
    }
}

impl Cost {
    /// This cost and `other` together; unknown when either is.
    pub fn plus(self, other: Self) -> Self {
        match (self, other) {
            (Self::Known(a), Self::Known(b)) => Self::Known(a + b),
            (Self::Unknown(mut a), Self::Unknown(b)) => {
                a.extend(b);
                Self::Unknown(a)
            }
            (unknown @ Self::Unknown(_), Self::Known(_))
            | (Self::Known(_), unknown @ Self::Unknown(_)) => unknown,
        }
    }

    /// This cost less `other`.
    pub fn minus(self, other: Self) -> Self {
        self.plus(other.negated())
    }

    fn negated(self) -> Self {
        match self {
            Self::Known(amount) => Self::Known(-amount),
            unknown @ Self::Unknown(_) => unknown,
        }
    }

    /// The same rate over 30 days.
    pub fn per_30_days(&self) -> Self {
        match self {
            Self::Known(amount) => Self::Known(amount * HOURS_PER_30_DAYS),
            Self::Unknown(types) => Self::Unknown(types.clone()),
        }
    }
}

impl PriceList {
    /// What one node of `machine` costs per hour: its machine type's price if given, else its
    /// accelerators times their type's price if given, else unknown.
    pub fn node_cost(&self, machine: &MachineSpec) -> Cost {
        let machine_type = machine.machine_type.as_deref();
        if let Some(price) = machine_type.and_then(|kind| self.machine_types.get(kind)) {
            return Cost::Known(price.get());
        }
        // No accelerator prices a machine that has none: it needs a machine type price.
        let accelerator_price = machine
            .accelerators()
            .filter(|(_, count)| *count > 0)
            .and_then(|(kind, count)| {
                let price = self.accelerators.get(kind)?;
                Some(price.get() * count as f64)
            });
        match accelerator_price {
            Some(amount) => Cost::Known(amount),
            None => Cost::Unknown(BTreeSet::from([machine_type
                .unwrap_or("(no machine type)")
                .to_owned()])),
        }
    }

    /// What `nodes` nodes of `machine` cost per hour; no node costs nothing, priced or not.
    pub fn nodes_cost(&self, machine: &MachineSpec, nodes: u64) -> Cost {
        match (nodes, self.node_cost(machine)) {
            (0, _) => Cost::Known(0.0),
            (_, Cost::Known(amount)) => Cost::Known(amount * nodes as f64),
            (_, unknown) => unknown,
        }
    }

    /// What `cluster` burns per hour: each pool's nodes the service reports times their price.
    /// `None` when the service reports no nodes to count.
    pub fn burn_rate(&self, cluster: &Cluster) -> Option<Cost> {
        let mut cost = Cost::default();
        for pool in cluster.node_pools.iter().flatten() {
            let nodes = u64::try_from(cluster.nodes_reported(&pool.id)?).unwrap_or(u64::MAX);
            let machine = pool.machine_spec.clone().unwrap_or_default();
            cost = cost.plus(self.nodes_cost(&machine, nodes));
        }
        Some(cost)
    }

    /// What each of `clusters` burns per hour, and the fleet together.
    pub fn fleet_burn_rate<'c>(
        &self,
        clusters: impl IntoIterator<Item = &'c LiveCluster>,
    ) -> FleetBurnRate {
        let mut fleet = FleetBurnRate {
            currency: self.currency.clone(),
            by_cluster: Vec::new(),
            per_hour: 0.0,
            unknown_clusters: 0,
            unpriced: BTreeSet::new(),
        };
        for live in clusters {
            let rate = self.burn_rate(&live.cluster);
            match &rate {
                Some(Cost::Known(amount)) => fleet.per_hour += amount,
                Some(Cost::Unknown(types)) => {
                    fleet.unknown_clusters += 1;
                    fleet.unpriced.extend(types.iter().cloned());
                }
                None => fleet.unknown_clusters += 1,
            }
            fleet.by_cluster.push((live.address.clone(), rate));
        }
        fleet
    }
}

/// What live clusters burn per hour at the prices the user gives.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetBurnRate {
    /// The currency of every amount.
    pub currency: Currency,
    /// Each cluster's burn rate; `None` when the service reports no nodes to count.
    pub by_cluster: Vec<(ClusterName, Option<Cost>)>,
    /// The clusters whose burn rate is known, together.
    pub per_hour: f64,
    /// The clusters left out of `per_hour`: unpriced, or without nodes reported.
    pub unknown_clusters: usize,
    /// The machine types that lack prices.
    pub unpriced: BTreeSet<String>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn prices() -> PriceList {
        PriceList {
            currency: "USD".parse().unwrap(),
            machine_types: BTreeMap::from([(
                "n2-standard-8".to_owned(),
                HourlyPrice::new(0.4).unwrap(),
            )]),
            accelerators: BTreeMap::from([(
                "NVIDIA_B200".to_owned(),
                HourlyPrice::new(5.5).unwrap(),
            )]),
        }
    }

    fn machine(machine_type: &str) -> MachineSpec {
        MachineSpec {
            machine_type: Some(machine_type.to_owned()),
            ..MachineSpec::default()
        }
    }

    #[test]
    fn a_priced_machine_type_costs_its_price_per_node() {
        assert_eq!(
            prices().nodes_cost(&machine("n2-standard-8"), 3),
            Cost::Known(0.4 * 3.0)
        );
    }

    #[test]
    fn the_machine_types_price_wins_over_its_accelerators() {
        let mut prices = prices();
        prices
            .machine_types
            .insert("a4-highgpu-8g".to_owned(), HourlyPrice::new(40.0).unwrap());
        assert_eq!(
            prices.node_cost(&machine("a4-highgpu-8g")),
            Cost::Known(40.0)
        );
    }

    #[test]
    fn an_unpriced_gpu_machine_costs_its_built_in_accelerators() {
        assert_eq!(
            prices().node_cost(&machine("a4-highgpu-8g")),
            Cost::Known(8.0 * 5.5)
        );
    }

    #[test]
    fn a_machine_type_priced_neither_way_is_unknown_and_named() {
        let unknown = Cost::Unknown(BTreeSet::from(["c3-standard-4".to_owned()]));
        assert_eq!(prices().nodes_cost(&machine("c3-standard-4"), 2), unknown);
        assert_eq!(
            prices().nodes_cost(&machine("c3-standard-4"), 0),
            Cost::Known(0.0)
        );
        let total = Cost::Known(3.0)
            .plus(unknown.clone())
            .minus(Cost::Known(1.0));
        assert_eq!(total, unknown);
    }

    #[test]
    fn currencies_are_three_capital_letters_and_prices_not_negative() {
        assert!("EUR".parse::<Currency>().is_ok());
        for refused in ["usd", "US", "EURO", "U$D"] {
            assert!(refused.parse::<Currency>().is_err(), "{refused}");
        }
        assert!(HourlyPrice::new(-1.0).is_err());
        assert!(HourlyPrice::new(f64::NAN).is_err());
    }

    #[test]
    fn a_clusters_burn_rate_prices_the_nodes_the_service_reports() {
        let cluster: Cluster = serde_json::from_value(json!({
            "nodePools": [
                {"id": "gpu", "machineSpec": {"machineType": "a4-highgpu-8g"}},
                {"id": "idle", "machineSpec": {"machineType": "c3-standard-4"}}
            ],
            "clusterStatus": {"nodesStatus": [
                {"nodePoolId": "gpu", "nodeState": "RUNNING"},
                {"nodePoolId": "gpu", "nodeState": "RUNNING"}
            ]}
        }))
        .unwrap();
        assert_eq!(prices().burn_rate(&cluster), Some(Cost::Known(88.0)));
        assert_eq!(
            prices().burn_rate(&Cluster::default()),
            Some(Cost::Known(0.0))
        );
    }

    #[test]
    fn the_fleet_adds_up_the_known_burn_rates_and_counts_the_others() {
        let live = |id: &str, machine_type: &str| {
            let cluster: Cluster = serde_json::from_value(json!({
                "name": format!("projects/my-proj/locations/us-central1/modelDevelopmentClusters/{id}"),
                "nodePools": [{"id": "a", "machineSpec": {"machineType": machine_type}}],
                "clusterStatus": {"nodesStatus": [{"nodePoolId": "a"}]}
            }))
            .unwrap();
            LiveCluster::read_at(
                &crate::Location::new("my-proj", "us-central1").unwrap(),
                cluster,
            )
            .unwrap()
        };
        let fleet = prices().fleet_burn_rate(&[
            live("one", "a4-highgpu-8g"),
            live("two", "n2-standard-8"),
            live("three", "c3-standard-4"),
        ]);
        assert!((fleet.per_hour - 44.4).abs() < 1e-9, "{}", fleet.per_hour);
        assert_eq!(fleet.unknown_clusters, 1);
        assert_eq!(fleet.unpriced, BTreeSet::from(["c3-standard-4".to_owned()]));
        assert_eq!(fleet.by_cluster.len(), 3);
    }
}
