//! Rendering the text plan of 1,000 clusters (a third of them resized). Target: ≤ 50 ms.

use std::hint::black_box;

use clusterform::format::plan_text::render_text;
use clusterform_model::JobsByCluster;
use clusterform_planner::{PlanOptions, plan};
use clusterform_testkit::fleet;
use criterion::{Criterion, criterion_group, criterion_main};

fn rendering(c: &mut Criterion) {
    let (config, live) = fleet(1_000);
    let made = plan(&config, &live, &PlanOptions::default()).expect("plan");
    c.bench_function("render text of 1000 clusters", |b| {
        b.iter(|| render_text(black_box(&made), &JobsByCluster::new(), false));
    });
}

criterion_group!(benches, rendering);
criterion_main!(benches);
