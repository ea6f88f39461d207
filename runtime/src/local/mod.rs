//! Local DynamoDB engines for tests and examples, so they need no AWS account.
//!
//! [`client`] and [`sdk_config`] pick the endpoint from the environment, in this order:
//!
//! | variable | effect |
//! |---|---|
//! | `AWS_ENDPOINT_URL_DYNAMODB=url` | that endpoint, as is (DynamoDB Local, LocalStack, a shared server, or AWS itself: a host under `amazonaws.com` is [`Engine::Aws`]); wins over the rest |
//! | `SINGLETABLE_ENGINE=aws` | Amazon DynamoDB, with the region, credentials and endpoint of the SDK's default chains (`AWS_PROFILE`, SSO, environment, instance roles) |
//! | `SINGLETABLE_ENGINE=dynoxide` (the default) | [dynoxide], an SQLite-backed engine served in this process |
//! | `SINGLETABLE_ENGINE=moto` | [moto] 5.2, a Python server, installed on first use into a virtual environment under the target directory |
//! | `SINGLETABLE_LOCAL_DATA=path` | dynoxide keeps its data in that SQLite file, so it outlives the process (one process at a time); without it, data lives in memory and dies with the process |
//!
//! Either embedded engine is started once per process, on a free loopback port, and shared
//! by every caller; the SDK reaches it over real HTTP, through the same client path as AWS.
//! dynoxide runs on a thread of its own with its own runtime, so it outlives every test's
//! runtime. moto runs as a child process that exits with this one.
//!
//! Both engines differ from DynamoDB in documented ways, listed by [`Deviation`]; tests ask
//! [`Engine::deviates`] and assert DynamoDB's behaviour wherever the engine has it.
//!
//! [dynoxide]: https://github.com/nubo-db/dynoxide
//! [moto]: https://github.com/getmoto/moto
#![cfg(feature = "local")]

mod dynoxide;
mod moto;

use std::fmt;
use std::sync::Arc;

use aws_config::environment::EnvironmentVariableRegionProvider;
use aws_config::meta::region::RegionProviderChain;
use aws_config::profile::ProfileFileRegionProvider;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::config::Credentials;
use tokio::sync::OnceCell;

/// The variable that points the SDK (and so this module) at an external endpoint.
const ENDPOINT_ENV: &str = "AWS_ENDPOINT_URL_DYNAMODB";
/// The variable that chooses the embedded engine.
const ENGINE_ENV: &str = "SINGLETABLE_ENGINE";
/// The variable that gives dynoxide a data file.
const DATA_ENV: &str = "SINGLETABLE_LOCAL_DATA";
/// Region for the embedded engines; moto keeps state per region, so it must be constant.
const REGION: &str = "us-east-1";

/// The engine behind [`client`], as the environment chooses it (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Engine {
    /// dynoxide, in this process (the default).
    Dynoxide,
    /// moto, as a child process (`SINGLETABLE_ENGINE=moto`).
    Moto,
    /// Whatever `AWS_ENDPOINT_URL_DYNAMODB` points at, other than AWS: taken to behave as
    /// DynamoDB does.
    External,
    /// Amazon DynamoDB itself: `SINGLETABLE_ENGINE=aws`, or an `AWS_ENDPOINT_URL_DYNAMODB`
    /// whose host is AWS's (`https://dynamodb.eu-west-1.amazonaws.com`). It has DynamoDB's
    /// behaviour and its timing: indexes and time to live act eventually, not within the
    /// request, which tests that wait on them must allow for.
    Aws,
}

/// A documented DynamoDB behaviour that an engine does not have.
///
/// Each is what a test checks before it asserts that behaviour, so that a test names the
/// gap it steps around and still asserts everything the engine does support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Deviation {
    /// A resent `TransactWriteItems` with the same `ClientRequestToken` is applied again;
    /// DynamoDB acknowledges it without applying it twice, for 10 minutes.
    IgnoresClientRequestTokens,
    /// A global index added by `UpdateTable` is `ACTIVE` at once, with no `CREATING` phase
    /// and no `Backfilling` flag: the engine copies the existing items in within the call.
    IndexesActiveAtOnce,
    /// `UpdateItem` reports 0.5 write units whatever the item's size and the indexes it
    /// writes; DynamoDB charges one unit per KB, plus one per index entry written.
    FlatUpdateCapacity,
    /// `ReturnConsumedCapacity: INDEXES` reports only the table's total, with no per-index
    /// breakdown.
    NoIndexCapacity,
    /// `TransactWriteItems` reports no consumed capacity; DynamoDB reports each table's units
    /// (twice those of the writes alone).
    NoTransactionCapacity,
    /// Expired items are never deleted: time to live is recorded but nothing acts on it, so
    /// the stream has no deletes by DynamoDB's service principal.
    NoTtlDeletes,
    /// The `userIdentity` of a time-to-live delete's stream record is written with the field
    /// names of Lambda's events (`type`, `principalId`), not the Streams API's (`Type`,
    /// `PrincipalId`), so the SDK reads no identity and the delete looks like a request's.
    TtlIdentityUnreadable,
    /// `DescribeContinuousBackups` and `UpdateContinuousBackups` are unknown operations:
    /// point-in-time recovery can neither be turned on nor read.
    NoContinuousBackups,
}

impl Engine {
    /// The engine the environment chooses, without starting it.
    ///
    /// # Errors
    ///
    /// [`LocalError::UnknownEngine`] when `SINGLETABLE_ENGINE` names no engine.
    pub fn from_env() -> Result<Engine, LocalError> {
        Engine::choose(
            external_endpoint().as_deref(),
            std::env::var(ENGINE_ENV).ok().as_deref(),
        )
    }

    /// The engine for an endpoint (`AWS_ENDPOINT_URL_DYNAMODB`) and an engine name
    /// (`SINGLETABLE_ENGINE`), as [`Engine::from_env`] reads them: an endpoint wins.
    fn choose(endpoint: Option<&str>, name: Option<&str>) -> Result<Engine, LocalError> {
        if let Some(endpoint) = endpoint {
            return Ok(if is_aws_endpoint(endpoint) {
                Engine::Aws
            } else {
                Engine::External
            });
        }
        match name
            .map(|value| value.trim().to_ascii_lowercase())
            .as_deref()
        {
            None | Some("" | "dynoxide") => Ok(Engine::Dynoxide),
            Some("moto") => Ok(Engine::Moto),
            Some("aws") => Ok(Engine::Aws),
            Some(_) => Err(LocalError::UnknownEngine {
                value: name.unwrap_or_default().to_owned(),
            }),
        }
    }

    /// The engine's name and version, e.g. `dynoxide 1.5.0` (the server version that the
    /// `dynoxide-rs` 3.2 crate reports) or `moto 5.2.1`.
    pub fn version(self) -> String {
        match self {
            Engine::Dynoxide => format!("dynoxide {}", dynoxide::VERSION),
            Engine::Moto => format!("moto {}", moto::VERSION),
            Engine::External => format!("the endpoint in {ENDPOINT_ENV}"),
            Engine::Aws => "Amazon DynamoDB".to_owned(),
        }
    }

    /// The documented DynamoDB behaviours this engine lacks, as far as this library's tests
    /// have found; AWS and an external endpoint are taken to have none.
    pub fn deviations(self) -> &'static [Deviation] {
        match self {
            Engine::Aws => &[],
            Engine::Dynoxide => &[
                Deviation::IndexesActiveAtOnce,
                Deviation::TtlIdentityUnreadable,
                Deviation::NoContinuousBackups,
            ],
            Engine::External => &[],
            Engine::Moto => &[
                Deviation::IgnoresClientRequestTokens,
                Deviation::IndexesActiveAtOnce,
                Deviation::FlatUpdateCapacity,
                Deviation::NoIndexCapacity,
                Deviation::NoTransactionCapacity,
                Deviation::NoTtlDeletes,
            ],
        }
    }

    /// Whether this engine lacks `deviation`'s DynamoDB behaviour.
    pub fn deviates(self, deviation: Deviation) -> bool {
        self.deviations().contains(&deviation)
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.version())
    }
}

/// Errors choosing, starting or reaching the local engine.
///
/// `Clone` so that one failed start is reported to every caller in the process instead of
/// being retried (a failing install would otherwise cost each test).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LocalError {
    /// `SINGLETABLE_ENGINE` names no engine.
    #[error(
        "SINGLETABLE_ENGINE is {value:?}, which names no engine: use `dynoxide` (the default, \
         in-process), `moto` (needs python3) or `aws` (Amazon DynamoDB, with the SDK's default \
         region and credentials), or unset it"
    )]
    UnknownEngine {
        /// The variable's value.
        value: String,
    },
    /// dynoxide could not open its data or serve it.
    #[error("the embedded DynamoDB engine (dynoxide) could not start: {reason}")]
    DynoxideStart {
        /// What went wrong, with the data file involved if any.
        reason: String,
    },
    /// dynoxide's server stopped; its in-memory tables are gone with it.
    #[error("the embedded DynamoDB engine (dynoxide) stopped: {reason}")]
    DynoxideStopped {
        /// Why it stopped.
        reason: String,
    },
    /// No `python3` on `PATH`, and moto was chosen.
    #[error(
        "python3 was not found, and SINGLETABLE_ENGINE=moto needs it: install python3 (3.10+) \
         with the venv module, e.g. `apt install python3 python3-venv`, or unset \
         SINGLETABLE_ENGINE to use the embedded engine"
    )]
    PythonMissing,
    /// `python3` is older than moto supports.
    #[error(
        "python3 is version {found}, but moto {} needs 3.10 or newer: install a newer python3 \
         with the venv module, or unset SINGLETABLE_ENGINE to use the embedded engine",
        moto::VERSION
    )]
    PythonTooOld {
        /// The version `python3` reported, e.g. `3.8`.
        found: String,
    },
    /// A step of installing moto into its virtual environment failed.
    #[error(
        "installing the local DynamoDB engine failed: could not {step}: `{command}` ended with \
         {status}\n--- its output (last lines) ---\n{output_tail}"
    )]
    Install {
        /// What was being done, e.g. "create a virtual environment (...)".
        step: &'static str,
        /// The command line that failed.
        command: String,
        /// How it ended, e.g. "exit status: 1".
        status: String,
        /// The last lines of its stdout and stderr.
        output_tail: String,
    },
    /// The moto server process did not come up.
    #[error(
        "the local DynamoDB engine (moto) did not start: {reason}\n--- {} (last lines) ---\n{log_tail}",
        .log.display()
    )]
    Start {
        /// What went wrong.
        reason: String,
        /// The server's log file.
        log: std::path::PathBuf,
        /// The last lines this process's server wrote to it.
        log_tail: String,
    },
    /// The moto server started, then died; its tables are gone with it.
    #[error("the local DynamoDB engine (moto) exited unexpectedly ({status}); see {}", .log.display())]
    Exited {
        /// How it ended.
        status: String,
        /// The server's log file.
        log: std::path::PathBuf,
    },
    /// `SINGLETABLE_ENGINE=aws`, or an AWS endpoint, and no region configured.
    #[error(
        "Amazon DynamoDB was chosen, but no region is configured: set AWS_REGION, or a region \
         in the profile that AWS_PROFILE names"
    )]
    NoRegion,
    /// A filesystem or process operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the path involved.
        context: String,
        /// The underlying error (in an `Arc` so the error can be cloned).
        #[source]
        source: Arc<std::io::Error>,
    },
}

impl LocalError {
    fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        LocalError::Io {
            context: context.into(),
            source: Arc::new(source),
        }
    }
}

/// A started embedded engine, kept for the life of the process (statics are never dropped).
enum Running {
    Dynoxide(dynoxide::Server),
    /// Boxed: the child process handle is large, and the enum lives in a static.
    Moto(Box<moto::Server>),
}

impl Running {
    fn endpoint(&self) -> &str {
        match self {
            Running::Dynoxide(server) => server.endpoint(),
            Running::Moto(server) => server.endpoint(),
        }
    }

    /// A dead server is reported as such, rather than as connection errors later.
    fn check_alive(&self) -> Result<(), LocalError> {
        match self {
            Running::Dynoxide(server) => server.check_alive(),
            Running::Moto(server) => server.check_alive(),
        }
    }
}

/// One embedded engine per process; the result (even a failure) is shared by every caller.
static RUNNING: OnceCell<Result<Running, LocalError>> = OnceCell::const_new();

/// The SDK configuration for the engine tests and examples use.
///
/// For [`Engine::Aws`], this is the SDK's default configuration: region, credentials and
/// endpoint from its default chains (environment, the profile that `AWS_PROFILE` names, SSO,
/// web identity, container and instance roles), with each attempt of a request bounded to 10
/// seconds.
///
/// For any other `AWS_ENDPOINT_URL_DYNAMODB`, it is the SDK's default configuration (the SDK
/// honours that variable itself), with the region defaulting to `us-east-1` and, when
/// `AWS_ACCESS_KEY_ID` is unset, dummy static credentials (DynamoDB Local and LocalStack
/// accept any); each attempt is bounded to 10 seconds, as on AWS.
///
/// Otherwise it starts the embedded engine that `SINGLETABLE_ENGINE` chooses (once per
/// process, shared by every caller and safe to call concurrently) and points the
/// configuration at it: endpoint `http://127.0.0.1:<port>`, region `us-east-1`, static
/// credentials. dynoxide starts in milliseconds; the first moto run in a target directory
/// installs it from PyPI, which takes about half a minute.
///
/// # Errors
///
/// [`LocalError::NoRegion`] when AWS is chosen and no region is configured; when the
/// embedded engine is needed and cannot be started, see [`LocalError`]. A failure to start
/// is remembered, so every later call in the process returns the same error at once.
pub async fn sdk_config() -> Result<SdkConfig, LocalError> {
    let engine = Engine::from_env()?;
    match engine {
        Engine::Aws => {
            let config = aws_config::defaults(BehaviorVersion::latest())
                .timeout_config(attempt_timeout())
                .load()
                .await;
            match config.region() {
                Some(_) => Ok(config),
                None => Err(LocalError::NoRegion),
            }
        }
        Engine::External => Ok(external_config().await),
        Engine::Dynoxide | Engine::Moto => {
            let running = running(engine).await?;
            Ok(aws_config::defaults(BehaviorVersion::latest())
                .endpoint_url(running.endpoint())
                .region(Region::new(REGION))
                .credentials_provider(dummy_credentials())
                .load()
                .await)
        }
    }
}

/// The configuration for an engine `AWS_ENDPOINT_URL_DYNAMODB` names; see [`sdk_config`].
async fn external_config() -> SdkConfig {
    // The SDK reads the endpoint variable itself. Region from env and profile only: the
    // default chain would also ask EC2 instance metadata, off this machine.
    let region = RegionProviderChain::first_try(EnvironmentVariableRegionProvider::new())
        .or_else(ProfileFileRegionProvider::new())
        .or_else(Region::new(REGION));
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .region(region)
        .timeout_config(attempt_timeout());
    if std::env::var_os("AWS_ACCESS_KEY_ID")
        .filter(|v| !v.is_empty())
        .is_none()
    {
        loader = loader.credentials_provider(dummy_credentials());
    }
    loader.load().await
}

/// The bound on each attempt of a request to an engine the environment names (AWS, or an
/// endpoint such as DynamoDB Local): an answer that never comes is then a lost response,
/// which the SDK sends again and the library reports as it reports any lost response,
/// rather than a wait without end. Generous, for the command line's scans and for engines
/// slower than DynamoDB; a service chooses its own (docs/production.md). The SDK's default
/// connect timeout stays.
fn attempt_timeout() -> TimeoutConfig {
    TimeoutConfig::builder()
        .operation_attempt_timeout(ATTEMPT_TIMEOUT)
        .build()
}

/// See [`attempt_timeout`].
const ATTEMPT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Convenience: a DynamoDB client for [`sdk_config`].
///
/// # Errors
///
/// As [`sdk_config`].
pub async fn client() -> Result<aws_sdk_dynamodb::Client, LocalError> {
    Ok(aws_sdk_dynamodb::Client::new(&sdk_config().await?))
}

/// A DynamoDB Streams client for the same engine as [`client`]: the embedded engine serves
/// both APIs on one endpoint. `AWS_ENDPOINT_URL_DYNAMODB_STREAMS` points it elsewhere, as the
/// SDK reads that variable. Otherwise, for an external endpoint other than AWS, the streams
/// client uses `AWS_ENDPOINT_URL_DYNAMODB` too; on AWS, the SDK resolves the region's own
/// streams endpoint (`streams.dynamodb.<region>.amazonaws.com`).
///
/// # Errors
///
/// As [`sdk_config`].
#[cfg(feature = "aws-sdk-dynamodbstreams")]
#[cfg_attr(docsrs, doc(cfg(feature = "aws-sdk-dynamodbstreams")))]
pub async fn streams_client() -> Result<aws_sdk_dynamodbstreams::Client, LocalError> {
    let config = sdk_config().await?;
    let streams_endpoint =
        std::env::var_os("AWS_ENDPOINT_URL_DYNAMODB_STREAMS").filter(|value| !value.is_empty());
    let mut builder = aws_sdk_dynamodbstreams::config::Builder::from(&config);
    if let (None, Some(endpoint)) = (streams_endpoint, external_endpoint()) {
        if !is_aws_endpoint(&endpoint) {
            builder = builder.endpoint_url(endpoint);
        }
    }
    Ok(aws_sdk_dynamodbstreams::Client::from_conf(builder.build()))
}

/// The endpoint in use, for printing: e.g. `http://127.0.0.1:41233 (dynoxide 1.5.0,
/// in-process, in memory)`, or the value of `AWS_ENDPOINT_URL_DYNAMODB`. Starts the
/// embedded engine if needed.
///
/// # Errors
///
/// As [`sdk_config`].
pub async fn endpoint_description() -> Result<String, LocalError> {
    let engine = Engine::from_env()?;
    if let Some(endpoint) = external_endpoint() {
        return Ok(format!("{endpoint} (from {ENDPOINT_ENV})"));
    }
    if engine == Engine::Aws {
        let config = sdk_config().await?;
        let region = config.region().map(ToString::to_string).unwrap_or_default();
        return Ok(format!(
            "Amazon DynamoDB in {region} (SINGLETABLE_ENGINE=aws)"
        ));
    }
    let running = running(engine).await?;
    let how = match running {
        Running::Dynoxide(server) => match server.data_file() {
            Some(path) => format!("in-process, data in {}", path.display()),
            None => "in-process, in memory".to_string(),
        },
        Running::Moto(_) => "child process".to_string(),
    };
    Ok(format!("{} ({engine}, {how})", running.endpoint()))
}

/// The external endpoint, if one is configured (an empty value counts as unset).
fn external_endpoint() -> Option<String> {
    std::env::var(ENDPOINT_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
}

/// Whether `endpoint` is one of AWS's own (a host under `amazonaws.com`, `amazonaws.com.cn`
/// or `api.aws`), which takes signed HTTPS only and has DynamoDB's timing.
fn is_aws_endpoint(endpoint: &str) -> bool {
    let rest = endpoint.trim();
    let rest = rest.split_once("://").map_or(rest, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = host
        .split(':')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let host = host.trim_end_matches('.');
    ["amazonaws.com", "amazonaws.com.cn", "api.aws"]
        .iter()
        .any(|domain| host.ends_with(&format!(".{domain}")))
}

/// Credentials for endpoints that accept any; the engines derive nothing from them that
/// matters.
fn dummy_credentials() -> Credentials {
    Credentials::new(
        "singletable",
        "singletable",
        None,
        None,
        "singletable-local",
    )
}

/// The process's embedded engine, started on first use; errors if it has since died.
async fn running(engine: Engine) -> Result<&'static Running, LocalError> {
    let start = || async move {
        match engine {
            Engine::Moto => moto::start()
                .await
                .map(|server| Running::Moto(Box::new(server))),
            // `External` and `Aws` never get here: `sdk_config` returns before.
            Engine::Dynoxide | Engine::External | Engine::Aws => {
                let data = std::env::var_os(DATA_ENV).filter(|v| !v.is_empty());
                dynoxide::start(data.map(Into::into)).map(Running::Dynoxide)
            }
        }
    };
    let running = match RUNNING.get_or_init(start).await {
        Ok(running) => running,
        Err(error) => return Err(error.clone()),
    };
    running.check_alive()?;
    Ok(running)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine the environment names gets the attempt bound, and keeps the SDK's default
    /// connect timeout beside it (the loader merges a timeout configuration with its
    /// defaults).
    #[tokio::test]
    async fn an_external_engine_bounds_each_attempt_and_keeps_the_connect_timeout() {
        let config = external_config().await;
        let timeouts = config.timeout_config();
        let attempt = timeouts.and_then(|t| t.operation_attempt_timeout());
        assert_eq!(attempt, Some(ATTEMPT_TIMEOUT));
        assert!(timeouts.and_then(|t| t.connect_timeout()).is_some());
    }

    #[test]
    fn only_moto_lacks_client_request_tokens() {
        assert!(Engine::Moto.deviates(Deviation::IgnoresClientRequestTokens));
        assert!(!Engine::Dynoxide.deviates(Deviation::IgnoresClientRequestTokens));
        assert!(Engine::External.deviations().is_empty());
        assert!(Engine::Aws.deviations().is_empty());
    }

    #[test]
    fn an_endpoint_wins_and_is_aws_when_its_host_is_aws() {
        // Inputs fixed here, not read from the network or a user.
        let choose = |endpoint, name| Engine::choose(endpoint, name).unwrap(); // ok: a unit test.
        assert_eq!(choose(None, None), Engine::Dynoxide);
        assert_eq!(choose(None, Some(" Moto ")), Engine::Moto);
        assert_eq!(choose(None, Some("aws")), Engine::Aws);
        for aws in [
            "https://dynamodb.eu-west-1.amazonaws.com",
            "https://dynamodb.eu-west-1.amazonaws.com/",
            "https://dynamodb-fips.us-gov-west-1.amazonaws.com:443",
            "https://dynamodb.cn-north-1.amazonaws.com.cn",
            "https://dynamodb.us-east-1.api.aws",
            "https://123456789012.ddb.us-east-1.amazonaws.com.",
        ] {
            assert_eq!(choose(Some(aws), Some("moto")), Engine::Aws, "{aws}");
        }
        for other in [
            "http://127.0.0.1:8000",
            "http://localhost:4566",
            "https://dynamodb.example.com",
            "https://amazonaws.com.example.org",
            "http://notamazonaws.com:8000",
        ] {
            assert_eq!(
                choose(Some(other), Some("aws")),
                Engine::External,
                "{other}"
            );
        }
        assert!(matches!(
            Engine::choose(None, Some("dynamo")),
            Err(LocalError::UnknownEngine { value }) if value == "dynamo"
        ));
    }

    #[test]
    fn versions_name_the_engine() {
        assert_eq!(
            Engine::Dynoxide.version(),
            format!("dynoxide {}", dynoxide::VERSION)
        );
        assert_eq!(Engine::Moto.version(), format!("moto {}", moto::VERSION));
    }
}
