//! How a bulk load holds a write budget: `put_stream` at `Rate::WriteUnitsPerSecond(500)`,
//! eight requests in flight, on the engine `SINGLETABLE_ENGINE` chooses (dynoxide by default)
//! behind the fault proxy with DynamoDB's latency (8 ms ± 2, or `SINGLETABLE_LATENCY_MS`) and
//! partition limits modelled. For a stretch in the middle the proxy leaves part of half the
//! requests unprocessed, as DynamoDB does when a table runs out of capacity; the limiter halves
//! its rate and climbs back afterwards. The write units per second are measured from the
//! `ConsumedCapacity` DynamoDB reports, over the last second, every 250 ms.
//!
//! Prints the series as CSV and draws it to `benches/plots/rate.svg`.
//!
//! ```sh
//! cargo bench --bench rate
//! ```

mod common;
#[path = "common/plot.rs"]
#[allow(dead_code)] // rate draws its own chart and takes only the legend
mod plot;

use futures::StreamExt;
use plotters::prelude::*;
use singletable::Rate;
use singletable_fault::{Fault, FaultKind, FaultPlan, PartitionLimits};
use std::time::{Duration, Instant};

const BUDGET: f64 = 500.0;
const RUN: Duration = Duration::from_secs(30);
/// When the proxy starts and stops leaving writes unprocessed.
const THROTTLED: (Duration, Duration) = (Duration::from_secs(10), Duration::from_secs(15));
const SAMPLE: Duration = Duration::from_millis(250);
const WINDOW: Duration = Duration::from_secs(1);

fn main() {
    let runtime = common::runtime();
    let series = runtime.block_on(run());
    println!("seconds,write_units_per_second,throttled");
    for (at, rate, throttled) in &series {
        println!("{at:.2},{rate:.1},{}", u8::from(*throttled));
    }
    let steady: Vec<f64> = series
        .iter()
        .filter(|(at, _, _)| *at >= 2.0 && *at < THROTTLED.0.as_secs_f64())
        .map(|(_, rate, _)| *rate)
        .collect();
    let mean = steady.iter().sum::<f64>() / steady.len().max(1) as f64;
    let peak = series.iter().map(|(_, rate, _)| *rate).fold(0.0, f64::max);
    let worst = steady
        .iter()
        .map(|rate| (rate - BUDGET).abs())
        .fold(0.0, f64::max);
    println!(
        "steady 2-10 s: mean {mean:.0} WCU/s ({:+.1} % of the budget), worst second {:.1} % off; \
         peak over any second {peak:.0} WCU/s; budget {BUDGET}",
        (mean / BUDGET - 1.0) * 100.0,
        worst / BUDGET * 100.0
    );
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/plots/rate.svg");
    plot(&series, path).expect("the plot");
    println!("plot: {path}");
}

/// Runs the load and samples it: (seconds since the start, write units per second over the
/// last second, whether the proxy was throttling).
async fn run() -> Vec<(f64, f64, bool)> {
    let plan = FaultPlan::new(500, 0.5)
        .with_kinds([Fault::before(FaultKind::Unprocessed)])
        .with_attempt_timeout(Duration::from_secs(5))
        .with_latency(common::latency())
        .with_partition_limits(PartitionLimits::DYNAMODB);
    let (_table, db, stats) = common::proxied_table(plan).await;
    stats.set_paused(true);
    let db = db.track_capacity();
    let started = Instant::now();
    let records = futures::stream::iter(0u64..).map(common::record);
    let until = started + RUN;
    let records = records.take_while(move |_| std::future::ready(Instant::now() < until));
    let load = {
        let db = db.clone();
        tokio::spawn(async move {
            db.put_stream(records)
                .concurrency(8)
                .rate(Rate::WriteUnitsPerSecond(BUDGET))
                .send()
                .await
        })
    };
    let mut consumed: Vec<(Duration, f64)> = vec![(Duration::ZERO, 0.0)];
    let mut series = Vec::new();
    let mut next = started + SAMPLE;
    while next <= until {
        tokio::time::sleep_until(next.into()).await;
        let at = next - started;
        let throttled = at >= THROTTLED.0 && at < THROTTLED.1;
        stats.set_paused(!throttled);
        let units = db
            .consumed()
            .map_or(0.0, |consumed| consumed.capacity_units);
        consumed.push((at, units));
        if let Some((then, earlier)) = consumed.iter().rev().find(|(then, _)| at - *then >= WINDOW)
        {
            let rate = (units - earlier) / (at - *then).as_secs_f64();
            series.push((at.as_secs_f64(), rate, throttled));
        }
        next += SAMPLE;
    }
    let output = load.await.expect("the load").expect("the load succeeded");
    println!(
        "{} records written in {} requests; {} faults injected, {} writes throttled by partition limits; rate held at the end {:?}",
        output.written,
        output.requests,
        stats.report().injected_total(),
        stats.report().throttled_total(),
        output.rate
    );
    series
}

fn plot(series: &[(f64, f64, bool)], path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (800, 360)).into_drawing_area();
    root.fill(&WHITE)?;
    let top = series
        .iter()
        .map(|(_, rate, _)| *rate)
        .fold(BUDGET, f64::max)
        * 1.15;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "put_stream at Rate::WriteUnitsPerSecond(500), 8 requests in flight, 8 ms ± 2 a request",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(52)
        .build_cartesian_2d(0.0..RUN.as_secs_f64(), 0.0..top)?;
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc("write units per second (last second)")
        .draw()?;
    let (from, to) = (THROTTLED.0.as_secs_f64(), THROTTLED.1.as_secs_f64());
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(from, 0.0), (to, top)],
            RGBColor(255, 225, 200).filled(),
        )))?
        .label("half the requests partly unprocessed")
        .legend(|(x, y)| {
            Rectangle::new(
                [(x, y - 5), (x + 14, y + 5)],
                RGBColor(255, 225, 200).filled(),
            )
        });
    chart
        .draw_series(LineSeries::new(
            [(0.0, BUDGET), (RUN.as_secs_f64(), BUDGET)],
            RED.stroke_width(1),
        ))?
        .label("budget")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 14, y)], RED));
    chart
        .draw_series(LineSeries::new(
            series.iter().map(|(at, rate, _)| (*at, *rate)),
            BLUE.stroke_width(2),
        ))?
        .label("measured (ConsumedCapacity)")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 14, y)], BLUE.stroke_width(2)));
    plot::legend(&mut chart)?;
    root.present()?;
    Ok(())
}
