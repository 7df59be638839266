//! What a change does to the hourly cost, at the prices the user gives: the pools it takes away
//! and brings ([`ClusterChange::pools_changed`], the same pools its GPU counts come from), each
//! priced per node ([`PriceList::nodes_cost`]) on its static nodes now (`min_node_count`) and
//! at most (`max_node_count`). A pool priced neither by its machine type nor by its
//! accelerators makes the cost unknown, naming the machine type.

use clusterform_model::pricing::{Cost, PriceList};

use crate::gpus::PoolGpus;
use crate::plan::{ClusterChange, Plan};

/// The change in cost per hour, in the price list's currency.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CostChange {
    /// On the static nodes, from the change on.
    pub now: Cost,
    /// On as many nodes as the pools may scale to.
    pub at_most: Cost,
}

impl CostChange {
    /// Whether it changes no cost that is known, and knows of no unpriced type.
    pub fn is_empty(&self) -> bool {
        self.now == Cost::Known(0.0) && self.at_most == Cost::Known(0.0)
    }

    fn plus(self, other: Self) -> Self {
        Self {
            now: self.now.plus(other.now),
            at_most: self.at_most.plus(other.at_most),
        }
    }
}

impl Plan {
    /// What every change of the plan does to the cost, together.
    pub fn cost_change(&self, prices: &PriceList) -> CostChange {
        self.changes
            .iter()
            .map(|change| change.cost_change(prices))
            .fold(CostChange::default(), CostChange::plus)
    }
}

impl ClusterChange {
    /// What the change does to the cluster's cost per hour: what the pools it brings cost,
    /// less what the pools it takes away cost.
    pub fn cost_change(&self, prices: &PriceList) -> CostChange {
        let (gone, came) = self.pools_changed();
        let (gone, came) = (priced(&gone, prices), priced(&came, prices));
        CostChange {
            now: came.now.minus(gone.now),
            at_most: came.at_most.minus(gone.at_most),
        }
    }
}

/// What `pools` cost per hour, now and at most.
fn priced(pools: &[PoolGpus], prices: &PriceList) -> CostChange {
    pools
        .iter()
        .map(|pool| {
            let (now, at_most) = pool.nodes();
            CostChange {
                now: prices.nodes_cost(&pool.machine, now),
                at_most: prices.nodes_cost(&pool.machine, at_most),
            }
        })
        .fold(CostChange::default(), CostChange::plus)
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use clusterform_config::Config;
    use clusterform_model::LiveCluster;
    use clusterform_model::pricing::HourlyPrice;
    use clusterform_testkit::{STACK, cluster, config, desired, seed, served};
    use serde_json::{Value, json};

    use super::*;
    use crate::PlanOptions;

    /// The seed cluster with a pool `gpu` of `machine_type`, 2 to `max` nodes.
    fn with_gpus(machine_type: &str, max: u32) -> Value {
        let mut cluster = seed();
        cluster["nodePools"].as_array_mut().unwrap().push(json!({
            "id": "gpu", "machineSpec": {"machineType": machine_type}, "zone": "us-central1-a",
            "scalingSpec": {"minNodeCount": 2, "maxNodeCount": max}
        }));
        cluster
    }

    fn live(cluster: &Value) -> LiveCluster {
        self::cluster(served("train01", cluster, Some(STACK), "RUNNING"))
    }

    fn declared(cluster: Value) -> Config {
        config(vec![desired("train01", cluster)])
    }

    fn planned(config: &Config, live: &[LiveCluster], prices: &PriceList) -> CostChange {
        let plan = crate::plan(config, live, &PlanOptions::default()).unwrap();
        assert_eq!(plan.changes.len(), 1);
        plan.changes[0].cost_change(prices)
    }

    /// B200s at 5.50 an hour each, the H200 machine type at 80.00 a node, the seed's CPU
    /// machine type (1 login node, 0 to 4 CPU nodes) at 0.50.
    fn prices() -> PriceList {
        let price = |p| HourlyPrice::new(p).unwrap();
        PriceList {
            currency: "USD".parse().unwrap(),
            machine_types: BTreeMap::from([
                ("a3-ultragpu-8g".to_owned(), price(80.0)),
                ("n2-standard-8".to_owned(), price(0.5)),
            ]),
            accelerators: BTreeMap::from([("NVIDIA_B200".to_owned(), price(5.5))]),
        }
    }

    fn change(now: f64, at_most: f64) -> CostChange {
        CostChange {
            now: Cost::Known(now),
            at_most: Cost::Known(at_most),
        }
    }

    #[test]
    fn a_create_costs_its_accelerators_at_their_price() {
        let cost = planned(&declared(with_gpus("a4-highgpu-8g", 4)), &[], &prices());
        // 8 B200s a node at 5.50: 44.00 a node, 2 nodes now, 4 at most; the CPU pools beside.
        assert_eq!(cost, change(88.0 + 0.5, 176.0 + 2.5));
    }

    #[test]
    fn a_machine_type_price_counts_per_node() {
        let cost = planned(&declared(with_gpus("a3-ultragpu-8g", 3)), &[], &prices());
        assert_eq!(cost, change(160.0 + 0.5, 240.0 + 2.5));
    }

    #[test]
    fn a_replacement_costs_the_new_pools_less_the_old() {
        let cost = planned(
            &declared(with_gpus("a4-highgpu-8g", 4)),
            &[live(&with_gpus("a3-ultragpu-8g", 4))],
            &prices(),
        );
        assert_eq!(cost, change(88.0 - 160.0, 176.0 - 320.0));
    }

    #[test]
    fn a_scale_up_costs_only_the_nodes_it_adds() {
        let cost = planned(
            &declared(with_gpus("a4-highgpu-8g", 6)),
            &[live(&with_gpus("a4-highgpu-8g", 4))],
            &prices(),
        );
        assert_eq!(cost, change(0.0, 88.0));
    }

    #[test]
    fn an_unpriced_machine_type_makes_the_cost_unknown_and_is_named() {
        let cost = planned(&declared(with_gpus("a3-megagpu-8g", 4)), &[], &prices());
        let unknown = Cost::Unknown(BTreeSet::from(["a3-megagpu-8g".to_owned()]));
        assert_eq!(
            cost,
            CostChange {
                now: unknown.clone(),
                at_most: unknown,
            }
        );
    }

    #[test]
    fn a_plan_adds_up_its_changes() {
        let config = config(vec![
            desired("train01", with_gpus("a4-highgpu-8g", 4)),
            desired("train02", with_gpus("a4-highgpu-8g", 2)),
        ]);
        let plan = crate::plan(&config, &[], &PlanOptions::default()).unwrap();
        assert_eq!(
            plan.cost_change(&prices()),
            change(88.5 + 88.5, 178.5 + 90.5)
        );
    }
}
