//! The fault-injecting proxy as a process of its own, in front of the embedded engine it
//! starts, so that programs that take their endpoint from the environment (the examples, the
//! command line) run under faults unchanged:
//!
//! ```text
//! $ cargo run -p singletable-fault --bin fault-proxy -- --rate 0.05 --seed 7
//! AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:40123
//! AWS_ENDPOINT_URL_DYNAMODB_STREAMS=http://127.0.0.1:40119
//! ```
//!
//! Export both lines and run the program. DynamoDB requests go through the proxy; Streams
//! requests go to the engine directly (the proxy injects faults into DynamoDB's API only).
//! `--rate 0 --latency in-region --partition-limits` injects no faults and models DynamoDB
//! instead: a round trip's latency on every request and the throughput limit of each
//! partition key. `--index-lag-ms 500` serves global index reads and eventually consistent
//! reads up to 500 ms behind the table, as DynamoDB may. The proxy runs until interrupted
//! (SIGINT), then prints its report on stderr: the faults it injected and the partition keys
//! it throttled.

use clap::Parser;
use singletable_fault::{FaultPlan, IndexLag, Latency, PartitionLimits};
use std::time::Duration;

/// Serves a fault-injecting proxy in front of the embedded engine.
#[derive(Parser, Debug)]
#[command(name = "fault-proxy")]
struct Options {
    /// The share of requests to fail, between 0 and 1 (0: none).
    #[arg(long, default_value_t = 0.05)]
    rate: f64,
    /// The seed of the fault schedule.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Holds every request for a round trip within a region: 8 ms ± 2.
    #[arg(long, value_enum, conflicts_with = "latency_ms")]
    latency: Option<LatencyPreset>,
    /// Holds every request for this many milliseconds on average, ± a quarter of it.
    #[arg(long, value_name = "MEAN")]
    latency_ms: Option<u64>,
    /// Throttles each partition key value above DynamoDB's limits: 1,000 write units and
    /// 3,000 read units a second.
    #[arg(long)]
    partition_limits: bool,
    /// Serves global index reads and eventually consistent reads up to this many
    /// milliseconds behind the table (each write's delay drawn from 0 to it).
    #[arg(long, value_name = "LONGEST")]
    index_lag_ms: Option<u64>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum LatencyPreset {
    /// 8 ms ± 2.
    InRegion,
}

impl Options {
    fn plan(&self) -> Result<FaultPlan, String> {
        if !(0.0..=1.0).contains(&self.rate) {
            return Err(format!("--rate {} is not between 0 and 1", self.rate));
        }
        let mut plan = FaultPlan::new(self.seed, self.rate);
        let latency = match (self.latency, self.latency_ms) {
            (Some(LatencyPreset::InRegion), _) => Some(Latency::IN_REGION),
            (None, Some(millis)) => Some(Latency::with_mean(Duration::from_millis(millis))),
            (None, None) => None,
        };
        if let Some(latency) = latency {
            plan = plan.with_latency(latency);
        }
        if self.partition_limits {
            plan = plan.with_partition_limits(PartitionLimits::DYNAMODB);
        }
        if let Some(longest) = self.index_lag_ms {
            plan = plan.with_index_lag(IndexLag::up_to(Duration::from_millis(longest)));
        }
        Ok(plan)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let plan = Options::parse().plan()?;
    let (config, stats) = singletable_fault::proxy(plan).await?;
    let engine = config.endpoint_url().unwrap_or_default().to_owned();
    println!("AWS_ENDPOINT_URL_DYNAMODB={}", stats.endpoint());
    println!("AWS_ENDPOINT_URL_DYNAMODB_STREAMS={engine}");
    tokio::signal::ctrl_c().await?;
    eprintln!("{}", stats.report());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(args: &[&str]) -> Result<FaultPlan, String> {
        let options =
            Options::try_parse_from(std::iter::once("fault-proxy").chain(args.iter().copied()))
                .map_err(|error| error.to_string())?;
        options.plan()
    }

    #[test]
    fn the_model_flags_set_latency_and_partition_limits() -> Result<(), String> {
        let modelled = plan(&[
            "--rate",
            "0",
            "--latency",
            "in-region",
            "--partition-limits",
        ])?;
        assert_eq!(modelled.rate, 0.0);
        assert_eq!(modelled.latency, Some(Latency::IN_REGION));
        assert_eq!(modelled.partition_limits, Some(PartitionLimits::DYNAMODB));
        let slow = plan(&["--latency-ms", "80"])?;
        assert_eq!(
            slow.latency,
            Some(Latency::new(
                Duration::from_millis(80),
                Duration::from_millis(20)
            ))
        );
        assert_eq!(slow.partition_limits, None);
        assert_eq!(slow.index_lag, None);
        let lagging = plan(&["--rate", "0", "--index-lag-ms", "500"])?;
        assert_eq!(
            lagging.index_lag,
            Some(IndexLag::up_to(Duration::from_millis(500)))
        );
        let plain = plan(&[])?;
        assert_eq!((plain.latency, plain.rate), (None, 0.05));
        Ok(())
    }

    #[test]
    fn out_of_range_or_conflicting_flags_are_refused() {
        assert!(plan(&["--rate", "1.5"]).is_err());
        assert!(plan(&["--latency", "in-region", "--latency-ms", "8"]).is_err());
        assert!(plan(&["--latency", "far"]).is_err());
    }
}
