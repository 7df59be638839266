//! Planning 1,000 clusters held in memory: a mix of no-ops and in-place updates, the live
//! side shaped as the service returns it. Target: ≤ 50 ms.

use std::hint::black_box;

use clusterform_planner::{PlanOptions, plan};
use clusterform_testkit::fleet;
use criterion::{Criterion, criterion_group, criterion_main};

fn planning(c: &mut Criterion) {
    let (config, live) = fleet(1_000);
    let options = PlanOptions::default();
    c.bench_function("plan 1000 clusters", |b| {
        b.iter(|| plan(black_box(&config), black_box(&live), &options).expect("plan"));
    });
}

criterion_group!(benches, planning);
criterion_main!(benches);
