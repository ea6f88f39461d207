//! A migration command line for your own schema (feature `cli`): your binary builds the
//! [`Db`] and lists its entities, and [`run`] does the rest.
//!
//! ```no_run
//! # use singletable_runtime as singletable;
//! # async fn example<App: singletable::Table, Document, Comment>(db: singletable::Db<App>)
//! # -> std::process::ExitCode
//! # where Document: singletable::Entity<Table = App>, Comment: singletable::Entity<Table = App> {
//! use singletable_cli::{self as cli, Entities};
//! cli::run(db, Entities::new().with::<Document>().with::<Comment>()).await
//! # }
//! ```
//!
//! Subcommands: `plan`, `apply`, `backfill --entity X [--rate N | --write-units N | --capacity-share F]
//! [--segments N] [--resume FILE] [--dry-run]`, the same shared by many processes with
//! `backfill --entity X --distributed NAME --worker [--segments N] [--lease SECONDS]` (one
//! worker each, coordinated through lease items in the table), `status --entity X
//! --distributed NAME` (each segment's owner and progress; exit 0 once all are done),
//! `verify --entity X [--mark-complete]`, `claim --entity X [--segments N] [--rate N |
//! --write-units N | --capacity-share F]` (the sentinels of values newly declared unique; exit 1
//! while two items share one), `describe`, `iam`, `infra`, `workbench [--samples FILE]` (the
//! table as a NoSQL Workbench model) and `import-workbench MODEL --out DIR` (a model as a
//! package of its own, see [`import`]). Results go to stdout (as JSON with `--json`),
//! progress and errors to stderr. Exit codes: 0 success (for `verify`: the migration is
//! done), 1 failure (for `verify`: not done yet; for `claim`: values are shared), 2 usage
//! error, 130 interrupted (a stopped backfill, resumable from its checkpoint).

pub mod import;
mod view;
mod workbench;

use clap::builder::PossibleValuesParser;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use futures::future::{BoxFuture, Either};
use serde::Serialize;
use serde_json::{json, Value};
use singletable_runtime::error::Error;
use singletable_runtime::infra::{IamPolicy, InfraError, TableArn};
use singletable_runtime::migrate::{
    ApplyEvent, Design, DistributedStatus, MigrationError, PlanAction, StopSignal, SweepProgress,
    SweepReport, WorkerReport,
};
use singletable_runtime::op::table::CreateTable;
use singletable_runtime::schema::{Entity, EntitySchema, Table};
use singletable_runtime::unique::ClaimReport;
use singletable_runtime::{Db, Rate};
use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: the command failed (or `verify` found the migration not done).
pub const EXIT_FAILURE: u8 = 1;
/// Exit code: the command line was wrong.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: interrupted (Ctrl-C); a backfill resumes from its checkpoint.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Runs a sweep of one entity; monomorphized per entity by [`Entities::with`].
type SweepFn<T> = fn(Db<T>, SweepSettings) -> BoxFuture<'static, Result<SweepReport, Error>>;

/// The progress callback of a `backfill`: a bar on a terminal, lines otherwise.
type Progress = Arc<dyn Fn(&SweepProgress) -> ControlFlow<()> + Send + Sync>;

/// What `backfill` asks of a sweep, whichever entity it sweeps.
struct SweepSettings {
    segments: Option<u32>,
    page_size: u32,
    concurrency: usize,
    rate: Option<Rate>,
    checkpoint: PathBuf,
    dry_run: bool,
    progress: Progress,
    stop: StopSignal,
}

fn sweep_of<T: Table, E: Entity<Table = T>>(
    db: Db<T>,
    settings: SweepSettings,
) -> BoxFuture<'static, Result<SweepReport, Error>> {
    Box::pin(async move {
        let progress = settings.progress;
        let mut sweep = db
            .admin()
            .sweep::<E>()
            .page_size(settings.page_size)
            .concurrency(settings.concurrency)
            .checkpoint(settings.checkpoint)
            .on_progress(move |report| progress(report))
            .stop_signal(settings.stop);
        if let Some(segments) = settings.segments {
            sweep = sweep.segments(segments);
        }
        if let Some(rate) = settings.rate {
            sweep = sweep.rate(rate);
        }
        if settings.dry_run {
            sweep = sweep.dry_run();
        }
        sweep.send().await
    })
}

/// Runs the claim sweep of one entity's unique values; monomorphized per entity by
/// [`Entities::with`].
type ClaimFn<T> =
    fn(Db<T>, Option<u32>, Option<Rate>) -> BoxFuture<'static, Result<ClaimReport, Error>>;

fn claim_of<T: Table, E: Entity<Table = T>>(
    db: Db<T>,
    segments: Option<u32>,
    rate: Option<Rate>,
) -> BoxFuture<'static, Result<ClaimReport, Error>> {
    Box::pin(async move {
        let mut claim = db.admin().claim_unique_values::<E>();
        if let Some(segments) = segments {
            claim = claim.segments(segments);
        }
        if let Some(rate) = rate {
            claim = claim.rate(rate);
        }
        claim.send().await
    })
}

/// What a distributed sweep's worker or status command is given.
struct DistributedArgs {
    name: String,
    segments: Option<u32>,
    page_size: u32,
    concurrency: usize,
    rate: Option<Rate>,
    lease: Duration,
    worker: Option<String>,
}

/// The typed distributed sweep of one entity, as [`SweepFn`] is for a local one.
fn distributed_of<T: Table, E: Entity<Table = T>>(
    db: &Db<T>,
    args: &DistributedArgs,
) -> singletable_runtime::migrate::DistributedSweep<E> {
    let mut sweep = (db.admin().sweep::<E>())
        .page_size(args.page_size)
        .concurrency(args.concurrency);
    if let Some(segments) = args.segments {
        sweep = sweep.segments(segments);
    }
    if let Some(rate) = args.rate {
        sweep = sweep.rate(rate);
    }
    let mut distributed = sweep.distributed(args.name.clone()).lease(args.lease);
    if let Some(worker) = &args.worker {
        distributed = distributed.worker_id(worker.clone());
    }
    distributed
}

type WorkerFn<T> = fn(Db<T>, DistributedArgs) -> BoxFuture<'static, Result<WorkerReport, Error>>;
type StatusFn<T> =
    fn(Db<T>, DistributedArgs) -> BoxFuture<'static, Result<DistributedStatus, Error>>;

fn worker_of<T: Table, E: Entity<Table = T>>(
    db: Db<T>,
    args: DistributedArgs,
) -> BoxFuture<'static, Result<WorkerReport, Error>> {
    Box::pin(async move { distributed_of::<T, E>(&db, &args).worker().await })
}

fn status_of<T: Table, E: Entity<Table = T>>(
    db: Db<T>,
    args: DistributedArgs,
) -> BoxFuture<'static, Result<DistributedStatus, Error>> {
    Box::pin(async move { distributed_of::<T, E>(&db, &args).status().await })
}

/// One registered entity: its schema, and its typed backfills.
struct Registered<T> {
    schema: &'static EntitySchema,
    sweep: SweepFn<T>,
    worker: WorkerFn<T>,
    status: StatusFn<T>,
    claim: ClaimFn<T>,
    facet: workbench::FacetFn<T>,
    sample: workbench::SampleFn<T>,
}

/// The entities stored in the table, registered by type so the CLI can decode and backfill
/// them: `Entities::new().with::<Document>().with::<Comment>()`.
pub struct Entities<T> {
    entries: Vec<Registered<T>>,
}

impl<T: Table> Default for Entities<T> {
    fn default() -> Self {
        Entities {
            entries: Vec::new(),
        }
    }
}

impl<T: Table> Entities<T> {
    /// No entities yet.
    pub fn new() -> Self {
        Entities::default()
    }

    /// Registers entity `E` (once; a second registration of the same name is ignored).
    pub fn with<E: Entity<Table = T>>(mut self) -> Self {
        if self.find(E::SCHEMA.name).is_none() {
            self.entries.push(Registered {
                schema: E::SCHEMA,
                sweep: sweep_of::<T, E>,
                worker: worker_of::<T, E>,
                status: status_of::<T, E>,
                claim: claim_of::<T, E>,
                facet: workbench::facet_of::<T, E>,
                sample: workbench::sample_of::<T, E>,
            });
        }
        self
    }

    /// The registered schemas, in registration order.
    pub fn schemas(&self) -> Vec<&'static EntitySchema> {
        self.entries.iter().map(|entry| entry.schema).collect()
    }

    fn find(&self, name: &str) -> Option<&Registered<T>> {
        self.entries
            .iter()
            .find(|entry| entry.schema.name.eq_ignore_ascii_case(name))
    }
}

/// Plans, applies and verifies migrations of a DynamoDB single-table design.
#[derive(Parser, Debug)]
#[command(
    about = "Zero-downtime migrations of a DynamoDB single-table design",
    long_about = "Zero-downtime migrations of a DynamoDB single-table design.\n\n\
        Typical order: `plan`, `apply` (adds missing global indexes online), deploy the new \
        code, `backfill --entity X` (adds the new attributes to items older code wrote), \
        `verify --entity X --mark-complete`, then remove the old read path.",
    after_help = "Exit codes: 0 success (verify: done), 1 failure (verify: not done; \
        claim: values are shared), 2 usage error, 130 interrupted (resume the backfill with \
        --resume)."
)]
struct Args {
    /// Print the result as JSON on stdout (progress stays on stderr).
    #[arg(long, global = true)]
    json: bool,
    /// Show key and attribute values in errors and reports (the keys of items a sweep could
    /// not backfill, say); hidden by default, since they may be customer data.
    #[arg(long, global = true)]
    show_values: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compare the declared table and indexes with the live table; changes nothing.
    Plan {
        /// Plan the deletion of global indexes the code no longer declares.
        #[arg(long)]
        delete_unused: bool,
    },
    /// Create what is missing: the table, or each missing global index (one `UpdateTable`
    /// each), waiting until it is ACTIVE.
    Apply {
        /// Also delete global indexes the code no longer declares.
        #[arg(long)]
        delete_unused: bool,
        /// Seconds to wait for each index before giving up (it keeps building; apply again).
        #[arg(long, value_name = "SECONDS", default_value_t = 1800)]
        timeout: u64,
        /// Seconds between status polls.
        #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
        poll: f64,
        /// Change the table even when a CloudFormation stack manages it (the change then
        /// drifts from the stack's template). Without it, such a table is left as it is and
        /// the resource its template should state is printed.
        #[arg(long)]
        force: bool,
    },
    /// Add the index attributes and schema version to items an older version of an entity
    /// wrote, with conditional updates that never overwrite concurrent writes.
    Backfill(BackfillArgs),
    /// Count an entity's items below its schema version; exit 0 only when none are and a
    /// sweep covered the whole table.
    Verify(VerifyArgs),
    /// Show a distributed backfill's segments: each one's owner, lease and progress.
    Status {
        /// The entity.
        #[arg(long)]
        entity: String,
        /// The distributed backfill's name.
        #[arg(long, value_name = "NAME")]
        distributed: String,
    },
    /// Claim the unique values of an entity's existing items, after a field became
    /// `#[dynamo(unique)]` (deploy the code that keeps them first): one sentinel item per
    /// value. Values two items share are listed, not claimed; exit 0 only when none are.
    Claim(SweepArgs),
    /// Show the single-table design: each entity's keys on the table and every index.
    Describe,
    /// Print the least-privilege IAM policy of the table's operations: data on the table,
    /// reads of its indexes, and, when asked for, its stream and its administration.
    Iam(IamArgs),
    /// Print the table as infrastructure code: a CloudFormation template, or a Terraform
    /// `aws_dynamodb_table` block.
    Infra(InfraArgs),
    /// Print the table as a NoSQL Workbench data model (format 3.0), to open in its data
    /// modeler: keys, indexes, one facet per entity, and sample values encoded as a put
    /// writes them.
    Workbench(workbench::WorkbenchArgs),
    /// Write a Cargo package that declares a NoSQL Workbench model's tables and entities,
    /// with a test that writes and reads back every sample item of the model. What the model
    /// cannot settle is marked `NEEDS A DECISION` in the code and listed here.
    ImportWorkbench {
        /// The model's JSON file (NoSQL Workbench's "Export data model").
        model: PathBuf,
        /// The directory to write the package to (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Depend on the singletable checkout at PATH instead of the released version.
        #[arg(long, value_name = "PATH")]
        singletable_path: Option<PathBuf>,
    },
}

#[derive(clap::Args, Debug)]
struct IamArgs {
    /// The AWS account id (12 digits) that owns the table.
    #[arg(long, value_name = "ID")]
    account: String,
    /// The table's region [default: the client's].
    #[arg(long)]
    region: Option<String>,
    /// The ARN partition (`aws-cn`, `aws-us-gov`).
    #[arg(long, default_value = "aws")]
    partition: String,
    /// Reads only: get, batch get, query and scan.
    #[arg(long)]
    read_only: bool,
    /// Add reading the table's stream (a stream reader, or a Lambda function).
    #[arg(long)]
    streams: bool,
    /// Add the table's administration (create, plan and apply, time to live) as a statement
    /// of its own.
    #[arg(long)]
    administration: bool,
}

#[derive(clap::Args, Debug)]
struct InfraArgs {
    /// The language of the definition.
    #[arg(long, value_enum, default_value_t = InfraFormat::Cloudformation)]
    format: InfraFormat,
    /// The template's logical id, or the Terraform resource name [default: the table's
    /// Rust type name].
    #[arg(long, value_name = "NAME")]
    resource: Option<String>,
    /// A tag of the table, `KEY=VALUE` (repeat for several).
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    tags: Vec<String>,
    /// A customer-managed KMS key (ARN, id or alias) to encrypt the table with [default:
    /// AWS's managed key for DynamoDB].
    #[arg(long, value_name = "KEY")]
    kms_key: Option<String>,
    /// Leave out what protects the data (retention, deletion protection, point-in-time
    /// recovery): for a scratch table only.
    #[arg(long)]
    unprotected: bool,
    /// A Region the table is replicated to, besides its own (repeat for several): a global
    /// table.
    #[arg(long = "replica", value_name = "REGION")]
    replicas: Vec<String>,
    #[command(flatten)]
    capacity: CapacityArgs,
}

/// The table's billing: on demand, or provisioned with auto scaling.
#[derive(clap::Args, Debug)]
struct CapacityArgs {
    /// Provisioned capacity instead of on-demand billing: read and write units a second, for
    /// the table and each global index.
    #[arg(long, num_args = 2, value_names = ["READ", "WRITE"])]
    provisioned: Option<Vec<u64>>,
    /// Auto scaling of the provisioned capacity: up to MAX_READ and MAX_WRITE units a second,
    /// keeping the consumed capacity near TARGET percent of it (20 to 90).
    #[arg(long, num_args = 3, value_names = ["MAX_READ", "MAX_WRITE", "TARGET"], requires = "provisioned")]
    auto_scaling: Option<Vec<u64>>,
}

impl CapacityArgs {
    /// `definition` with the capacity asked for.
    fn apply(&self, mut definition: CreateTable) -> Result<CreateTable, InfraError> {
        if let Some([read, write]) = self.provisioned.as_deref() {
            definition = definition.provisioned(*read, *write)?;
        }
        if let Some([read, write, target]) = self.auto_scaling.as_deref() {
            let target = u8::try_from(*target).unwrap_or(u8::MAX);
            definition = definition.auto_scaling(*read, *write, target)?;
        }
        Ok(definition)
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum InfraFormat {
    /// A template with one `AWS::DynamoDB::Table` resource, as JSON.
    Cloudformation,
    /// A `resource "aws_dynamodb_table"` block, in HCL.
    Terraform,
}

/// A write budget, given one way at most.
#[derive(clap::Args, Debug)]
struct BudgetArgs {
    /// At most this many writes per second (a backfill's updates, a claim's sentinels), all
    /// segments together.
    #[arg(long, value_name = "ITEMS")]
    rate: Option<f64>,
    /// At most this many write capacity units per second (instead of --rate).
    #[arg(long, value_name = "UNITS", conflicts_with = "rate")]
    write_units: Option<f64>,
    /// At most this share (0 to 1) of the table's provisioned write capacity (instead of
    /// --rate or --write-units).
    #[arg(long, value_name = "SHARE", conflicts_with_all = ["rate", "write_units"])]
    capacity_share: Option<f64>,
}

impl BudgetArgs {
    /// The budget given, if one was.
    fn rate(&self) -> Option<Rate> {
        match (self.rate, self.write_units, self.capacity_share) {
            (Some(items), _, _) => Some(Rate::ItemsPerSecond(items)),
            (None, Some(units), _) => Some(Rate::WriteUnitsPerSecond(units)),
            (None, None, Some(share)) => Some(Rate::ShareOfCapacity(share)),
            (None, None, None) => None,
        }
    }
}

/// What a sweep over one entity's items writing at a budget is given (`claim`, and `backfill`
/// with more).
#[derive(clap::Args, Debug)]
struct SweepArgs {
    /// The entity.
    #[arg(long)]
    entity: String,
    #[command(flatten)]
    budget: BudgetArgs,
    /// Parallel scan segments (default 1; a resumed backfill keeps its own).
    #[arg(long, value_name = "N")]
    segments: Option<u32>,
}

#[derive(clap::Args, Debug)]
struct BackfillArgs {
    #[command(flatten)]
    sweep: SweepArgs,
    /// Items per Scan request.
    #[arg(long, value_name = "N", default_value_t = 100)]
    page_size: u32,
    /// Backfill writes in flight at once in each segment, within the rate (a page is
    /// checkpointed once all its writes finished).
    #[arg(long, value_name = "WRITES", default_value_t = 1)]
    concurrency: usize,
    /// Checkpoint to continue from, created if missing [default:
    /// <table>.<entity>.v<version>.sweep.json in the current directory].
    #[arg(long, value_name = "FILE")]
    resume: Option<PathBuf>,
    /// Only count the items that need a backfill; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Share the backfill with other processes under this name, coordinated through lease
    /// items in the table (with --worker).
    #[arg(long, value_name = "NAME", requires = "worker", conflicts_with_all = ["resume", "dry_run"])]
    distributed: Option<String>,
    /// Run one worker of the distributed backfill until every segment is done.
    #[arg(long, requires = "distributed")]
    worker: bool,
    /// Seconds a worker holds a segment between checkpoints (with --distributed).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    lease: f64,
    /// This worker's id in the leases [default: a random one].
    #[arg(long, value_name = "ID")]
    worker_id: Option<String>,
}

#[derive(clap::Args, Debug)]
struct VerifyArgs {
    /// The entity to check.
    #[arg(long)]
    entity: String,
    /// The backfill's checkpoint, which records whether it covered the whole table [default:
    /// the backfill's default].
    #[arg(long, value_name = "FILE")]
    checkpoint: Option<PathBuf>,
    /// Parallel scan segments.
    #[arg(long, value_name = "N", default_value_t = 1)]
    segments: u32,
    /// The distributed backfill whose state in the table records whether it covered the
    /// whole table (instead of a checkpoint file).
    #[arg(long, value_name = "NAME", conflicts_with = "checkpoint")]
    distributed: Option<String>,
    /// When done, record completion in the table (apps check it with
    /// `db.admin().migration_marker(..).is_complete()`).
    #[arg(long)]
    mark_complete: bool,
}

/// Where output goes: results to `out`, progress and errors to `err`.
struct Output {
    out: Box<dyn Write + Send>,
    err: Arc<Mutex<Box<dyn Write + Send>>>,
    json: bool,
    /// Whether `err` is a terminal (progress bars) or a log (progress lines).
    interactive: bool,
}

impl Output {
    fn result(&mut self, text: &dyn std::fmt::Display, json: impl Serialize) {
        // A closed stdout (e.g. `| head`) is not worth failing over.
        let _ = if self.json {
            match serde_json::to_string_pretty(&json) {
                Ok(json) => writeln!(self.out, "{json}"),
                // A path that is not UTF-8, say.
                Err(error) => {
                    self.error(&format_args!("the result has no JSON form: {error}"));
                    Ok(())
                }
            }
        } else {
            write!(self.out, "{text}")
        };
        let _ = self.out.flush();
    }

    fn error(&mut self, error: &dyn std::fmt::Display) {
        say(&self.err, &format!("error: {error}"));
        if self.json {
            let _ = writeln!(self.out, "{:#}", json!({ "error": error.to_string() }));
        }
    }
}

/// Writes a line to stderr without tearing the progress bar drawn there.
fn notice(bar: Option<&indicatif::ProgressBar>, err: &Mutex<Box<dyn Write + Send>>, line: &str) {
    match bar {
        Some(bar) => bar.suspend(|| say(err, line)),
        None => say(err, line),
    }
}

fn say(err: &Mutex<Box<dyn Write + Send>>, line: &str) {
    let mut err = err.lock().unwrap_or_else(|e| e.into_inner());
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}

/// Runs the command line on `std::env::args`, printing to stdout and stderr (progress bars
/// when stderr is a terminal). Call it from your binary's `main`:
/// `cli::run(db, Entities::new().with::<Document>()).await`.
pub async fn run<T: Table>(db: Db<T>, entities: Entities<T>) -> ExitCode {
    let interactive = std::io::stderr().is_terminal();
    let code = run_with(
        db,
        entities,
        std::env::args_os(),
        Box::new(std::io::stdout()),
        Box::new(std::io::stderr()),
        interactive,
    )
    .await;
    ExitCode::from(code)
}

/// [`run`] with the arguments (the first is the program name) and the output streams given,
/// for tests and embedding; returns the exit code. `interactive` draws progress bars on
/// `stderr` (which should then be the terminal) instead of progress lines.
pub async fn run_with<T, I, A>(
    db: Db<T>,
    entities: Entities<T>,
    args: I,
    stdout: Box<dyn Write + Send>,
    stderr: Box<dyn Write + Send>,
    interactive: bool,
) -> u8
where
    T: Table,
    I: IntoIterator<Item = A>,
    A: Into<OsString> + Clone,
{
    let mut output = Output {
        out: stdout,
        err: Arc::new(Mutex::new(stderr)),
        json: false,
        interactive,
    };
    let args = match parse(&entities, args) {
        Ok(args) => args,
        Err(error) => {
            let code = if error.use_stderr() {
                EXIT_USAGE
            } else {
                EXIT_OK
            };
            let text = error.render().to_string();
            if error.use_stderr() {
                say(&output.err, text.trim_end());
            } else {
                let _ = write!(output.out, "{text}");
            }
            return code;
        }
    };
    output.json = args.json;
    // For this command alone: a program that embeds the command line keeps its own choice.
    let values_were_shown = singletable_runtime::error::values_shown();
    if args.show_values {
        singletable_runtime::error::show_values(true);
    }
    let result = match args.command {
        Command::Plan { delete_unused } => plan(&db, &entities, delete_unused, &mut output).await,
        Command::Apply {
            delete_unused,
            timeout,
            poll,
            force,
        } => {
            let poll = Duration::try_from_secs_f64(poll).unwrap_or(Duration::from_secs(5));
            let timeout = Duration::from_secs(timeout);
            let options = ApplyArgs {
                delete_unused,
                timeout,
                poll,
                force,
            };
            apply(&db, &entities, options, &mut output).await
        }
        Command::Backfill(backfill_args) => {
            backfill(&db, &entities, backfill_args, &mut output).await
        }
        Command::Verify(verify_args) => verify(&db, &entities, verify_args, &mut output).await,
        Command::Claim(claim_args) => claim(&db, &entities, claim_args, &mut output).await,
        Command::Status {
            entity,
            distributed,
        } => sweep_status(&db, &entities, &entity, distributed, &mut output).await,
        Command::Describe => {
            let design = Design::new(db.table_name(), T::SCHEMA, &entities.schemas());
            output.result(&design, view::DesignView::new(&design));
            Ok(EXIT_OK)
        }
        Command::Iam(iam_args) => Ok(iam(&db, iam_args, &mut output)),
        Command::Infra(infra_args) => Ok(infra(&db, infra_args, &mut output)),
        Command::ImportWorkbench {
            model,
            out,
            singletable_path,
        } => Ok(workbench::import(
            &model,
            &out,
            singletable_path,
            &mut output,
        )),
        Command::Workbench(workbench_args) => Ok(workbench::workbench(
            &db,
            &entities,
            workbench_args,
            &mut output,
        )),
    };
    let code = match result {
        Ok(code) => code,
        Err(error) => {
            output.error(&error);
            match error {
                Error::Migration(
                    MigrationError::InvalidOption { .. }
                    | MigrationError::CheckpointMismatch { .. },
                ) => EXIT_USAGE,
                _ => EXIT_FAILURE,
            }
        }
    };
    singletable_runtime::error::show_values(values_were_shown);
    code
}

fn iam<T: Table>(db: &Db<T>, args: IamArgs, output: &mut Output) -> u8 {
    let region = args.region.or_else(|| {
        let region = db.client().config().region();
        region.map(|region| region.as_ref().to_owned())
    });
    let Some(region) = region else {
        output.error(&"the client has no region: pass --region");
        return EXIT_USAGE;
    };
    let arn = TableArn::new(region, args.account, db.table_name())
        .and_then(|arn| arn.in_partition(args.partition));
    let arn = match arn {
        Ok(arn) => arn,
        Err(error) => {
            output.error(&error);
            return EXIT_USAGE;
        }
    };
    let mut policy = IamPolicy::for_table::<T>(arn);
    if args.read_only {
        policy = policy.read_only();
    }
    if args.streams {
        policy = policy.with_streams();
    }
    if args.administration {
        policy = policy.with_administration();
    }
    // The policy is JSON either way.
    let json = serde_json::to_value(&policy).unwrap_or(Value::Null);
    output.result(&format!("{json:#}\n"), &json);
    EXIT_OK
}

fn infra<T: Table>(db: &Db<T>, args: InfraArgs, output: &mut Output) -> u8 {
    let resource = args
        .resource
        .unwrap_or_else(|| T::SCHEMA.type_name.to_owned());
    let mut definition = db.admin().create_table();
    for tag in &args.tags {
        let Some((key, value)) = tag.split_once('=') else {
            output.error(&format_args!("--tag {tag:?}: write it KEY=VALUE"));
            return EXIT_USAGE;
        };
        definition = match definition.tag(key, value) {
            Ok(definition) => definition,
            Err(error) => {
                output.error(&error);
                return EXIT_USAGE;
            }
        };
    }
    if let Some(key) = args.kms_key {
        definition = definition.kms_key(key);
    }
    if args.unprotected {
        definition = definition.unprotected();
    }
    definition = match args.capacity.apply(definition) {
        Ok(definition) => definition,
        Err(error) => {
            output.error(&error);
            return EXIT_USAGE;
        }
    };
    if !args.replicas.is_empty() {
        definition = match definition.replicas(args.replicas) {
            Ok(definition) => definition,
            Err(error) => {
                output.error(&error);
                return EXIT_USAGE;
            }
        };
    }
    match args.format {
        InfraFormat::Cloudformation => {
            if resource.is_empty() || !resource.chars().all(|c| c.is_ascii_alphanumeric()) {
                output.error(&format_args!(
                    "{resource:?} is not a CloudFormation logical id: use letters and digits"
                ));
                return EXIT_USAGE;
            }
            let mut resources = serde_json::Map::new();
            let cloudformation = definition.cloudformation();
            let table = serde_json::to_value(&cloudformation).unwrap_or(Value::Null);
            resources.extend(cloudformation.auto_scaling_resources(&resource));
            resources.insert(resource, table);
            let template = json!({
                "AWSTemplateFormatVersion": "2010-09-09",
                "Resources": resources,
            });
            output.result(&format!("{template:#}\n"), &template);
            EXIT_OK
        }
        InfraFormat::Terraform => match definition.terraform(&resource) {
            Ok(block) => {
                output.result(&block, json!({ "terraform": block }));
                EXIT_OK
            }
            Err(error) => {
                output.error(&error);
                EXIT_USAGE
            }
        },
    }
}

/// Parses the arguments, with the registered entity names as the values `--entity` takes.
fn parse<T: Table, I, A>(entities: &Entities<T>, args: I) -> Result<Args, clap::Error>
where
    I: IntoIterator<Item = A>,
    A: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let name = args
        .first()
        .map(PathBuf::from)
        .and_then(|path| {
            path.file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "singletable".to_owned());
    let names: Vec<&'static str> = entities
        .entries
        .iter()
        .map(|entry| entry.schema.name)
        .collect();
    let entity_values = |arg: clap::Arg| {
        arg.value_parser(PossibleValuesParser::new(names.clone()))
            .ignore_case(true)
    };
    let command = Args::command()
        .name(name.clone())
        .bin_name(name)
        .mut_subcommand("backfill", |sub| sub.mut_arg("entity", entity_values))
        .mut_subcommand("verify", |sub| sub.mut_arg("entity", entity_values))
        .mut_subcommand("claim", |sub| sub.mut_arg("entity", entity_values));
    let matches = command.try_get_matches_from(args)?;
    Args::from_arg_matches(&matches)
}

/// The default checkpoint file of a backfill: one per table, entity and version.
fn default_checkpoint(table: &str, schema: &EntitySchema) -> PathBuf {
    PathBuf::from(format!(
        "{table}.{}.v{}.sweep.json",
        schema.name, schema.schema_version
    ))
}

fn find<'e, T: Table>(entities: &'e Entities<T>, name: &str) -> Result<&'e Registered<T>, Error> {
    entities.find(name).ok_or_else(|| {
        MigrationError::InvalidOption {
            option: "entity",
            message: format!("{name:?} is not registered"),
        }
        .into()
    })
}

async fn plan<T: Table>(
    db: &Db<T>,
    entities: &Entities<T>,
    delete_unused: bool,
    output: &mut Output,
) -> Result<u8, Error> {
    let mut migration = db.admin().table_migration(&entities.schemas());
    if delete_unused {
        migration = migration.delete_unused();
    }
    let plan = migration.plan().await?;
    output.result(&plan, view::PlanView::new(&plan));
    Ok(if plan.is_blocked() {
        EXIT_FAILURE
    } else {
        EXIT_OK
    })
}

/// `apply`'s options.
struct ApplyArgs {
    delete_unused: bool,
    timeout: Duration,
    poll: Duration,
    force: bool,
}

async fn apply<T: Table>(
    db: &Db<T>,
    entities: &Entities<T>,
    options: ApplyArgs,
    output: &mut Output,
) -> Result<u8, Error> {
    let err = output.err.clone();
    let mut migration = db.admin().table_migration(&entities.schemas());
    if options.delete_unused {
        migration = migration.delete_unused();
    }
    if options.force {
        migration = migration.force();
    }
    let applied = migration
        .timeout(options.timeout)
        .poll_interval(options.poll)
        .on_progress(move |event| match event {
            ApplyEvent::Planned(plan) if plan.is_up_to_date() => {
                say(&err, &format!("table {}: nothing to do", plan.table))
            }
            ApplyEvent::Planned(_) => {}
            ApplyEvent::Started(action) => say(&err, &format!("{action} ...")),
            ApplyEvent::Waiting {
                resource,
                status,
                backfilling,
                item_count,
                elapsed,
            } => say(
                &err,
                &format!(
                    "  {resource}: {status}{}{} ({}s)",
                    if *backfilling { ", backfilling" } else { "" },
                    item_count
                        .map(|count| format!(", {count} items"))
                        .unwrap_or_default(),
                    elapsed.as_secs()
                ),
            ),
            ApplyEvent::Finished { action, elapsed } => {
                let done = match action {
                    PlanAction::CreateIndex(_) | PlanAction::AwaitIndex { .. } => "done, ACTIVE",
                    PlanAction::CreateTable { .. } | PlanAction::EnableStream { .. } => {
                        "done, ACTIVE"
                    }
                    _ => "done",
                };
                say(&err, &format!("  {done} in {:.1}s", elapsed.as_secs_f64()))
            }
        })
        .send()
        .await;
    let applied = match applied {
        // The stack's template is where the change belongs: the resource it should state.
        Err(error @ Error::Migration(MigrationError::StackManaged { .. })) => {
            output.error(&error);
            let resource = serde_json::to_value(db.admin().create_table().cloudformation())
                .unwrap_or(Value::Null);
            output.result(&format!("{resource:#}\n"), &resource);
            return Ok(EXIT_FAILURE);
        }
        applied => applied?,
    };
    let mut text = applied.plan.to_string();
    text.push_str(&format!(
        "applied in {:.1}s\n",
        applied.elapsed.as_secs_f64()
    ));
    output.result(
        &text,
        view::AppliedView {
            applied: view::PlanView::new(&applied.plan),
            elapsed_seconds: applied.elapsed.as_secs_f64(),
        },
    );
    Ok(EXIT_OK)
}

/// Progress of a backfill on stderr: a bar on a terminal, a line every few seconds otherwise.
fn progress_reporter(output: &Output, dry_run: bool) -> (Progress, Option<indicatif::ProgressBar>) {
    let summary = move |progress: &SweepProgress| {
        let counts = &progress.counts;
        if dry_run {
            format!("{} old {} found", counts.old, progress.entity)
        } else {
            format!(
                "backfilled {} · skipped {} · failed {} · {:.0} WCU · segments {}/{}",
                counts.backfilled,
                counts.changed_concurrently,
                counts.failed,
                counts.write_units,
                progress.segments_done,
                progress.total_segments
            )
        }
    };
    if output.interactive {
        let bar =
            indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        let style = indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} examined  {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(200));
        let shown = bar.clone();
        let callback = move |progress: &SweepProgress| {
            let examined = progress.counts.examined;
            // DynamoDB's item count is approximate: never let the bar run past its end.
            let length = progress.table_items.unwrap_or(examined).max(examined);
            shown.set_length(length);
            shown.set_position(examined);
            shown.set_message(summary(progress));
            ControlFlow::Continue(())
        };
        (Arc::new(callback), Some(bar))
    } else {
        let err = output.err.clone();
        let last = Mutex::new(None::<Instant>);
        let callback = move |progress: &SweepProgress| {
            let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_none_or(|at| at.elapsed() >= Duration::from_secs(2)) {
                *last = Some(Instant::now());
                let total = progress
                    .table_items
                    .map(|items| format!(" of about {items}"))
                    .unwrap_or_default();
                say(
                    &err,
                    &format!(
                        "[{:>4}s] {} examined{total}; {}",
                        progress.elapsed.as_secs(),
                        progress.counts.examined,
                        summary(progress)
                    ),
                );
            }
            ControlFlow::Continue(())
        };
        (Arc::new(callback), None)
    }
}

async fn claim<T: Table>(
    db: &Db<T>,
    entities: &Entities<T>,
    args: SweepArgs,
    output: &mut Output,
) -> Result<u8, Error> {
    let entity = find(entities, &args.entity)?;
    if entity.schema.unique.is_empty() {
        return Err(MigrationError::InvalidOption {
            option: "entity",
            message: format!("{} has no unique values to claim", entity.schema.name),
        }
        .into());
    }
    let report = (entity.claim)(db.clone(), args.segments, args.budget.rate()).await?;
    output.result(&view::ClaimText(&report), &report);
    Ok(if report.duplicates.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILURE
    })
}

async fn backfill<T: Table>(
    db: &Db<T>,
    entities: &Entities<T>,
    args: BackfillArgs,
    output: &mut Output,
) -> Result<u8, Error> {
    let entity = find(entities, &args.sweep.entity)?;
    let checkpoint = args
        .resume
        .clone()
        .unwrap_or_else(|| default_checkpoint(db.table_name(), entity.schema));
    let rate = args.sweep.budget.rate();
    if let Some(name) = args.distributed.clone() {
        let lease =
            Duration::try_from_secs_f64(args.lease).map_err(|_| MigrationError::InvalidOption {
                option: "lease",
                message: format!("{} is not a number of seconds", args.lease),
            })?;
        let distributed = DistributedArgs {
            name,
            segments: args.sweep.segments,
            page_size: args.page_size,
            concurrency: args.concurrency,
            rate,
            lease,
            worker: args.worker_id.clone(),
        };
        let report = (entity.worker)(db.clone(), distributed).await?;
        output.result(&view::WorkerText(&report), &report);
        return Ok(if report.counts.failed > 0 {
            EXIT_FAILURE
        } else {
            EXIT_OK
        });
    }
    let stop = StopSignal::new();
    let (progress, bar) = progress_reporter(output, args.dry_run);
    let settings = SweepSettings {
        segments: args.sweep.segments,
        page_size: args.page_size,
        concurrency: args.concurrency,
        rate,
        checkpoint: checkpoint.clone(),
        dry_run: args.dry_run,
        progress,
        stop: stop.clone(),
    };
    if checkpoint.exists() {
        say(
            &output.err,
            &format!("resuming from checkpoint {}", checkpoint.display()),
        );
    }
    let sweep = (entity.sweep)(db.clone(), settings);
    let result = match futures::future::select(sweep, Box::pin(tokio::signal::ctrl_c())).await {
        Either::Left((result, _)) => result,
        // No signal handling here (e.g. no signal driver): just let the sweep finish.
        Either::Right((Err(_), sweep)) => sweep.await,
        Either::Right((Ok(()), sweep)) => {
            stop.stop();
            notice(
                bar.as_ref(),
                &output.err,
                "interrupted: finishing the items at hand and saving the checkpoint \
                 (Ctrl-C again to quit at once)",
            );
            match futures::future::select(sweep, Box::pin(tokio::signal::ctrl_c())).await {
                Either::Left((result, _)) => result,
                Either::Right(_) => {
                    if let Some(bar) = &bar {
                        bar.abandon();
                    }
                    say(
                        &output.err,
                        &format!(
                            "quit; finished pages are in {}: resume with --resume {}",
                            checkpoint.display(),
                            checkpoint.display()
                        ),
                    );
                    return Ok(EXIT_INTERRUPTED);
                }
            }
        }
    };
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let report = result?;
    output.result(&report, &report);
    if report.complete && report.this_run.examined == 0 && !report.dry_run {
        say(
            &output.err,
            &format!(
                "{} records a finished sweep, so nothing was read; delete it to sweep again",
                checkpoint.display()
            ),
        );
    }
    if report.stopped {
        say(
            &output.err,
            &format!("stopped; resume with --resume {}", checkpoint.display()),
        );
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(if report.this_run.failed > 0 {
        EXIT_FAILURE
    } else {
        EXIT_OK
    })
}

async fn sweep_status<T: Table>(
    db: &Db<T>,
    entities: &Entities<T>,
    entity: &str,
    name: String,
    output: &mut Output,
) -> Result<u8, Error> {
    let entity = find(entities, entity)?;
    let args = DistributedArgs {
        name,
        segments: None,
        page_size: 100,
        concurrency: 1,
        rate: None,
        lease: Duration::from_secs(30),
        worker: None,
    };
    let status = (entity.status)(db.clone(), args).await?;
    let shown = view::StatusView::new(&status);
    output.result(&shown, &shown);
    Ok(if status.is_done() {
        EXIT_OK
    } else {
        EXIT_FAILURE
    })
}

async fn verify<T: Table>(
    db: &Db<T>,
    entities: &Entities<T>,
    args: VerifyArgs,
    output: &mut Output,
) -> Result<u8, Error> {
    let entity = find(entities, &args.entity)?;
    let checkpoint = args
        .checkpoint
        .unwrap_or_else(|| default_checkpoint(db.table_name(), entity.schema));
    let mut check = db.admin().coverage(entity.schema).segments(args.segments);
    check = match args.distributed {
        Some(name) => check.distributed(name),
        None => check.checkpoint(checkpoint),
    };
    let mut coverage = check.send().await?;
    let mut text = coverage.to_string();
    if args.mark_complete && coverage.is_done() {
        let record = db
            .admin()
            .migration_marker(entity.schema)
            .mark_complete(&coverage)
            .await?;
        text.push_str(&format!(
            "  marked complete at {} (db.admin().migration_marker(..).is_complete() now says so)\n",
            record.completed_at
        ));
        // The JSON gives the record just written.
        coverage.marker = Some(record);
    }
    output.result(&text, view::CoverageView::new(&coverage));
    Ok(if coverage.is_done() {
        EXIT_OK
    } else {
        EXIT_FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Args::command().debug_assert();
    }
}
