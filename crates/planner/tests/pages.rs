//! `PlanBuilder`: a plan built from List pages as they arrive is the plan of the whole live set,
//! whatever the pages, their order, and the pages never added.

use clusterform_config::Config;
use clusterform_model::{Action, LiveCluster};
use clusterform_planner::{PlanBuilder, PlanError, PlanOptions, plan};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde_json::{Value, json};

use crate::support::{STACK, cluster, config, desired, live_seed, seed, served};

/// What one cluster of the fleet is, declared and live.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Declared and live as declared.
    Unchanged,
    /// Declared with another display name than the live one.
    Changed,
    /// Declared, not live.
    Created,
    /// Live and this stack's, no longer declared.
    Deleted,
    /// Live and this stack's, named by a `removed` block.
    Released,
    /// Live, another stack's, not declared.
    Foreign,
    /// Declared while another stack owns it live: the plan fails.
    DeclaredForeign,
    /// Declared and live twice under one address, the first unchanged, the second changed.
    Duplicate,
    /// Not declared, live twice under one address: another stack's first, then this stack's.
    ForeignThenOwned,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        3 => Just(Kind::Unchanged),
        3 => Just(Kind::Changed),
        2 => Just(Kind::Created),
        2 => Just(Kind::Deleted),
        2 => Just(Kind::Released),
        2 => Just(Kind::Foreign),
        1 => Just(Kind::DeclaredForeign),
        3 => Just(Kind::Duplicate),
        2 => Just(Kind::ForeignThenOwned),
    ]
}

fn renamed() -> Value {
    let mut changed = seed();
    changed["displayName"] = json!("Renamed");
    changed
}

/// The configuration and the live set (in the order a refresh returns it) of a fleet.
fn fleet(kinds: &[Kind]) -> (Config, Vec<LiveCluster>) {
    let mut config = config(Vec::new());
    let mut live = Vec::new();
    for (index, kind) in kinds.iter().enumerate() {
        let id = format!("c{index:02}");
        let declared = match kind {
            Kind::Unchanged | Kind::Created | Kind::DeclaredForeign | Kind::Duplicate => {
                Some(seed())
            }
            Kind::Changed => Some(renamed()),
            Kind::Deleted | Kind::Released | Kind::Foreign | Kind::ForeignThenOwned => None,
        };
        config.clusters.extend(declared.map(|d| desired(&id, d)));
        match kind {
            Kind::Created => {}
            Kind::Unchanged | Kind::Changed | Kind::Deleted | Kind::Released => {
                live.push(live_seed(&id));
            }
            Kind::Foreign | Kind::DeclaredForeign => {
                live.push(cluster(served(&id, &seed(), Some("prod"), "RUNNING")));
            }
            Kind::Duplicate => {
                live.push(live_seed(&id));
                live.push(cluster(served(&id, &renamed(), Some(STACK), "RUNNING")));
            }
            Kind::ForeignThenOwned => {
                live.push(cluster(served(&id, &seed(), Some("prod"), "RUNNING")));
                live.push(live_seed(&id));
            }
        }
        if matches!(kind, Kind::Released) {
            config.removed.push(clusterform_testkit::removed(&id));
        }
    }
    (config, live)
}

/// The live set cut into pages: shuffled by `order`, cut before each of `cuts`, the pages then
/// taken in the order `page_order` gives, each kept or left out by `kept`.
fn pages(
    live: &[LiveCluster],
    order: &[Index],
    cuts: &[Index],
    page_order: &[Index],
    kept: &[bool],
) -> Vec<Vec<LiveCluster>> {
    let mut shuffled = live.to_vec();
    for (position, index) in order.iter().enumerate().take(shuffled.len()) {
        let other = index.index(shuffled.len());
        shuffled.swap(position, other);
    }
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c.index(shuffled.len() + 1)).collect();
    bounds.extend([0, shuffled.len()]);
    bounds.sort_unstable();
    let mut pages: Vec<Vec<LiveCluster>> = bounds
        .windows(2)
        .map(|w| shuffled[w[0]..w[1]].to_vec())
        .collect();
    for (position, index) in page_order.iter().enumerate().take(pages.len()) {
        let other = index.index(pages.len());
        pages.swap(position, other);
    }
    pages
        .into_iter()
        .zip(kept.iter().copied().chain(std::iter::repeat(true)))
        .filter_map(|(page, kept)| kept.then_some(page))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn pages_in_any_split_and_order_give_the_plan_of_the_whole_live_set(
        kinds in vec(kind(), 0..10),
        order in vec(any::<Index>(), 12),
        cuts in vec(any::<Index>(), 0..5),
        page_order in vec(any::<Index>(), 6),
        kept in vec(prop_oneof![4 => Just(true), 1 => Just(false)], 6),
        destroy in any::<bool>(),
        replace in proptest::option::of(select(vec!["c00", "c03", "nope"])),
        target in proptest::option::of(select(vec!["c01", "c02", "c04", "nope"])),
    ) {
        let (config, live) = fleet(&kinds);
        let options = PlanOptions {
            destroy,
            replace: replace.into_iter().map(str::to_owned).collect(),
            targets: target.into_iter().map(str::to_owned).collect(),
            ..PlanOptions::default()
        };
        let mut builder = PlanBuilder::new(&config, &options);
        for page in pages(&live, &order, &cuts, &page_order, &kept) {
            builder.add_live(&page);
        }
        prop_assert_eq!(builder.finish(&live), plan(&config, &live, &options));
    }
}

#[test]
fn an_address_read_twice_is_planned_against_its_first_reading() {
    let (config, live) = fleet(&[Kind::Duplicate]);
    let options = PlanOptions::default();
    for pages in [
        vec![&live[1..], &live[..1]],
        vec![&live[1..]],
        vec![&live[..]],
    ] {
        let mut builder = PlanBuilder::new(&config, &options);
        for page in pages {
            builder.add_live(page);
        }
        let made = builder.finish(&live).unwrap();
        assert_eq!(made.changes[0].action, Action::NoOp, "{:#?}", made.changes);
    }
}

/// A page that turns out not to be part of the whole live set (a caller breaking `add_live`'s
/// contract) does not decide the plan: the whole set does.
#[test]
fn a_page_outside_the_whole_live_set_does_not_decide_the_plan() {
    let (config, live) = fleet(&[Kind::Unchanged]);
    let options = PlanOptions::default();
    let mut builder = PlanBuilder::new(&config, &options);
    builder.add_live(&live);
    let made = builder.finish(&[]).unwrap();
    assert_eq!(made, plan(&config, &[], &options).unwrap());
    assert_eq!(made.changes[0].action, Action::Create);
}

#[test]
fn an_undeclared_address_read_twice_is_judged_by_its_first_reading() {
    let (config, live) = fleet(&[Kind::ForeignThenOwned]);
    let made = plan(&config, &live, &PlanOptions::default()).unwrap();
    assert!(
        made.changes.is_empty(),
        "another stack's: {:#?}",
        made.changes
    );
    let targeted = PlanOptions {
        targets: vec!["c00".into()],
        ..PlanOptions::default()
    };
    let error = plan(&config, &live, &targeted).unwrap_err();
    assert_eq!(
        error,
        PlanError::UnknownTarget {
            id: "c00".into(),
            closest: None
        }
    );
    let owned_first: Vec<LiveCluster> = live.iter().rev().cloned().collect();
    let made = plan(&config, &owned_first, &PlanOptions::default()).unwrap();
    let actions: Vec<_> = made.changes.iter().map(|c| c.action).collect();
    assert_eq!(actions, [Action::Delete]);
}
