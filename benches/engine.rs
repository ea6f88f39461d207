//! What the local engine costs a test suite, on the engine that `SINGLETABLE_ENGINE` chooses:
//! starting it (once per process, printed before the benches) and the per-test table that
//! `#[singletable::test]` makes (a runtime, `CreateTable` with one GSI, then `DeleteTable`
//! when the test ends), with an empty test body.
//!
//! ```sh
//! cargo bench --bench engine                           # dynoxide, in-process
//! SINGLETABLE_ENGINE=moto cargo bench --bench engine   # moto, a child process
//! ```

use criterion::{criterion_group, Criterion};
use singletable::{local, testing, Table};
use std::time::{Duration, Instant};

#[derive(Table)]
#[dynamo(
    name = "bench",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK")
)]
pub struct Bench;

fn per_test_table(c: &mut Criterion) {
    let engine = local::Engine::from_env().expect("SINGLETABLE_ENGINE names an engine");
    let mut group = c.benchmark_group("singletable_test");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));
    group.bench_function(format!("empty_test/{engine}"), |b| {
        b.iter(|| testing::run::<Bench, _, _>(|_db| async {}))
    });
    group.finish();
}

/// Starts the engine, timed, so the benches that follow measure only the per-test part.
fn start_engine() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let started = Instant::now();
    let described = runtime
        .block_on(local::endpoint_description())
        .expect("the engine starts");
    println!(
        "engine start: {:.1} ms ({described})",
        started.elapsed().as_secs_f64() * 1000.0
    );
}

criterion_group!(benches, per_test_table);

fn main() {
    start_engine();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
