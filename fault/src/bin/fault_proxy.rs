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
//! The proxy runs until interrupted (SIGINT), then prints what it injected on stderr.

use clap::Parser;
use singletable_fault::FaultPlan;

/// Serves a fault-injecting proxy in front of the embedded engine.
#[derive(Parser, Debug)]
#[command(name = "fault-proxy")]
struct Options {
    /// The share of requests to fail, between 0 and 1.
    #[arg(long, default_value_t = 0.05)]
    rate: f64,
    /// The seed of the fault schedule.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = Options::parse();
    if !(0.0..=1.0).contains(&options.rate) {
        return Err(format!("--rate {} is not between 0 and 1", options.rate).into());
    }
    let (config, stats) =
        singletable_fault::proxy(FaultPlan::new(options.seed, options.rate)).await?;
    let engine = config.endpoint_url().unwrap_or_default().to_owned();
    println!("AWS_ENDPOINT_URL_DYNAMODB={}", stats.endpoint());
    println!("AWS_ENDPOINT_URL_DYNAMODB_STREAMS={engine}");
    tokio::signal::ctrl_c().await?;
    eprintln!("{}", stats.report());
    Ok(())
}
