//! The words of costs at the prices the user gives ([`PriceList`]): amounts to two decimals
//! with the currency code after (`88.50 USD`), per hour (`/h`) and per 30 days (720 hours); a
//! change signed (`+88.50`, `-72.00`); an unknown cost names the machine types that lack a
//! price (for themselves or for their accelerators). JSON carries the same amounts, rounded to
//! two decimals, `null` when unknown.

use std::collections::BTreeSet;

use clusterform_model::pricing::{Cost, Currency, FleetBurnRate, HOURS_PER_30_DAYS};
use clusterform_planner::CostChange;
use serde_json::{Value, json};

use crate::format::table::{cluster_headers, cluster_row, table};

/// `value` to two decimals; never `-0.00`.
fn cents(value: f64) -> f64 {
    let rounded = (value * 100.0).round() / 100.0;
    if rounded == 0.0 { 0.0 } else { rounded }
}

/// `88.50 USD`.
pub fn amount(value: f64, currency: &Currency) -> String {
    format!("{:.2} {currency}", cents(value))
}

/// `+88.50 USD`, `-72.00 USD`, `0.00 USD`.
fn signed_amount(value: f64, currency: &Currency) -> String {
    let value = cents(value);
    let sign = if value > 0.0 { "+" } else { "" };
    format!("{sign}{value:.2} {currency}")
}

/// `no price for c3-standard-4, x9-custom`.
fn unpriced(types: &BTreeSet<String>) -> String {
    let names: Vec<&str> = types.iter().map(String::as_str).collect();
    format!("no price for {}", names.join(", "))
}

/// `+88.50 USD/h (+63720.00 USD per 30 days)`; `unknown (no price for …)`.
fn change_rate(cost: &Cost, currency: &Currency) -> String {
    per_hour_and_month(cost, currency, signed_amount)
}

/// `88.50 USD/h (63720.00 USD per 30 days)`; `unknown (no price for …)`.
fn rate(cost: &Cost, currency: &Currency) -> String {
    per_hour_and_month(cost, currency, amount)
}

/// A known cost per hour and per 30 days, each written by `write`; or why it is unknown.
fn per_hour_and_month(
    cost: &Cost,
    currency: &Currency,
    write: fn(f64, &Currency) -> String,
) -> String {
    match cost {
        Cost::Known(hourly) => format!(
            "{}/h ({} per 30 days)",
            write(*hourly, currency),
            write(hourly * HOURS_PER_30_DAYS, currency)
        ),
        Cost::Unknown(types) => format!("unknown ({})", unpriced(types)),
    }
}

/// `+88.50 USD/h (… per 30 days) now, +178.50 USD/h (… per 30 days) at most`.
fn change_words(change: &CostChange, currency: &Currency) -> String {
    format!(
        "{} now, {} at most",
        change_rate(&change.now, currency),
        change_rate(&change.at_most, currency)
    )
}

/// `Cost: …` under a cluster's header, beside its GPUs; `None` when the change costs nothing
/// more or less.
pub fn cluster_line(change: &CostChange, currency: &Currency) -> Option<String> {
    (!change.is_empty()).then(|| format!("Cost: {}", change_words(change, currency)))
}

/// `Cost in total: …` after the plan's counts; `None` when the plan costs nothing more or
/// less.
pub fn total_line(change: &CostChange, currency: &Currency) -> Option<String> {
    (!change.is_empty()).then(|| format!("Cost in total: {}", change_words(change, currency)))
}

/// A cost per hour as JSON: `{per_hour, per_30_days, unpriced_machine_types}`.
fn cost_json(cost: &Cost) -> Value {
    match cost {
        Cost::Known(hourly) => json!({
            "per_hour": cents(*hourly),
            "per_30_days": cents(hourly * HOURS_PER_30_DAYS),
            "unpriced_machine_types": [],
        }),
        Cost::Unknown(types) => json!({
            "per_hour": null,
            "per_30_days": null,
            "unpriced_machine_types": types,
        }),
    }
}

/// What a change or the plan does to the cost (`docs/plan-json.md`, "Costs").
pub fn change_json(change: &CostChange, currency: &Currency) -> Value {
    json!({
        "currency": currency,
        "now": cost_json(&change.now),
        "at_most": cost_json(&change.at_most),
    })
}

/// A burn rate's cell: `88.50 USD/h`; `?` when the service reports no nodes to count.
fn burn_cell(cost: Option<&Cost>, currency: &Currency) -> String {
    match cost {
        Some(Cost::Known(hourly)) => format!("{}/h", amount(*hourly, currency)),
        Some(Cost::Unknown(types)) => format!("unknown ({})", unpriced(types)),
        None => "? (no nodes reported)".to_owned(),
    }
}

/// The table of each cluster's burn rate, per hour and per 30 days.
pub fn burn_rate_table(fleet: &FleetBurnRate) -> String {
    let mut rows = vec![cluster_headers(&["BURN RATE", "PER 30 DAYS"])];
    for (address, cost) in &fleet.by_cluster {
        let monthly = match cost {
            Some(Cost::Known(hourly)) => amount(hourly * HOURS_PER_30_DAYS, &fleet.currency),
            _ => "?".to_owned(),
        };
        rows.push(cluster_row(
            address,
            [burn_cell(cost.as_ref(), &fleet.currency), monthly],
        ));
    }
    table(&rows)
}

/// `; burn rate: 88.50 USD/h (63720.00 USD per 30 days)`, with the clusters left out and the
/// machine types that lack a price.
pub fn fleet_words(fleet: &FleetBurnRate) -> String {
    let mut words = format!(
        "; burn rate: {}",
        rate(&Cost::Known(fleet.per_hour), &fleet.currency)
    );
    if fleet.unknown_clusters > 0 {
        let clusters = match fleet.unknown_clusters {
            1 => "1 cluster".to_owned(),
            n => format!("{n} clusters"),
        };
        words.push_str(&format!(" (unknown for {clusters}"));
        if !fleet.unpriced.is_empty() {
            words.push_str(&format!(": {}", unpriced(&fleet.unpriced)));
        }
        words.push(')');
    }
    words
}

/// The fleet's burn rate as JSON: the total of the known ones, what is left out, and each
/// cluster's.
pub fn fleet_json(fleet: &FleetBurnRate) -> Value {
    let clusters: Vec<Value> = fleet
        .by_cluster
        .iter()
        .map(|(address, cost)| {
            let mut row = cost.as_ref().map_or_else(
                || json!({"per_hour": null, "per_30_days": null, "unpriced_machine_types": []}),
                cost_json,
            );
            row["project"] = json!(address.project());
            row["region"] = json!(address.region());
            row["id"] = json!(address.id().as_str());
            row
        })
        .collect();
    json!({
        "currency": fleet.currency,
        "per_hour": cents(fleet.per_hour),
        "per_30_days": cents(fleet.per_hour * HOURS_PER_30_DAYS),
        "unknown_clusters": fleet.unknown_clusters,
        "unpriced_machine_types": fleet.unpriced,
        "clusters": clusters,
    })
}

/// What `hours` idle cost at `burn_rate`: `132.00 USD`; `?` when either is not known.
pub fn idle_cost(burn_rate: Option<&Cost>, hours: Option<f64>, currency: &Currency) -> String {
    match (burn_rate, hours) {
        (Some(Cost::Known(hourly)), Some(hours)) => amount(hourly * hours, currency),
        (Some(Cost::Unknown(types)), Some(_)) => format!("unknown ({})", unpriced(types)),
        _ => "?".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use clusterform_model::ClusterName;

    use super::*;

    fn usd() -> Currency {
        "USD".parse().unwrap()
    }

    fn unknown(kind: &str) -> Cost {
        Cost::Unknown(BTreeSet::from([kind.to_owned()]))
    }

    #[test]
    fn a_change_is_signed_per_hour_and_per_30_days_now_and_at_most() {
        let change = CostChange {
            now: Cost::Known(-72.0),
            at_most: Cost::Known(88.5),
        };
        assert_eq!(
            cluster_line(&change, &usd()).unwrap(),
            "Cost: -72.00 USD/h (-51840.00 USD per 30 days) now, +88.50 USD/h (+63720.00 USD \
             per 30 days) at most"
        );
    }

    #[test]
    fn an_unknown_cost_names_what_lacks_a_price() {
        let change = CostChange {
            now: Cost::Known(0.0),
            at_most: unknown("c3-standard-4"),
        };
        assert_eq!(
            total_line(&change, &usd()).unwrap(),
            "Cost in total: 0.00 USD/h (0.00 USD per 30 days) now, unknown (no price for \
             c3-standard-4) at most"
        );
        assert_eq!(
            change_json(&change, &usd()),
            json!({"currency": "USD",
                   "now": {"per_hour": 0.0, "per_30_days": 0.0, "unpriced_machine_types": []},
                   "at_most": {"per_hour": null, "per_30_days": null,
                               "unpriced_machine_types": ["c3-standard-4"]}})
        );
    }

    #[test]
    fn a_change_that_costs_nothing_has_no_line() {
        assert_eq!(cluster_line(&CostChange::default(), &usd()), None);
    }

    #[test]
    fn amounts_are_rounded_to_cents_and_never_negative_zero() {
        assert_eq!(amount(1.0 / 3.0, &usd()), "0.33 USD");
        assert_eq!(signed_amount(-0.001, &usd()), "0.00 USD");
    }

    #[test]
    fn the_fleet_words_say_what_is_left_out() {
        let address = ClusterName::new("my-proj", "us-central1", "train01").unwrap();
        let fleet = FleetBurnRate {
            currency: usd(),
            by_cluster: vec![
                (address.clone(), Some(Cost::Known(44.0))),
                (address, Some(unknown("c3-standard-4"))),
            ],
            per_hour: 44.0,
            unknown_clusters: 1,
            unpriced: BTreeSet::from(["c3-standard-4".to_owned()]),
        };
        assert_eq!(
            fleet_words(&fleet),
            "; burn rate: 44.00 USD/h (31680.00 USD per 30 days) (unknown for 1 cluster: no \
             price for c3-standard-4)"
        );
        assert_eq!(fleet_json(&fleet)["clusters"][0]["per_30_days"], 31680.0);
    }

    #[test]
    fn idle_hours_cost_the_burn_rate_each() {
        assert_eq!(
            idle_cost(Some(&Cost::Known(44.0)), Some(3.0), &usd()),
            "132.00 USD"
        );
        assert_eq!(idle_cost(Some(&Cost::Known(44.0)), None, &usd()), "?");
    }
}
