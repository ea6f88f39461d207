//! dynoxide served in this process: its HTTP API on a loopback port, answered by a thread
//! with its own runtime, so the server outlives the runtime of whichever test started it.

use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use dynoxide::Database;

use super::LocalError;

/// The engine's version, as it reports it in its `Server` header.
pub(super) const VERSION: &str = dynoxide::PRODUCT_VERSION;
/// Threads answering requests: the tests of one binary run in parallel on two cores.
const WORKER_THREADS: usize = 2;
/// How often expired items are deleted.
const TTL_SWEEP_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// A running server. Its thread is never joined: it serves until the process exits.
pub(super) struct Server {
    endpoint: String,
    data_file: Option<PathBuf>,
    /// Set by the server thread if it ever stops.
    stopped: Arc<Mutex<Option<String>>>,
}

impl Server {
    pub(super) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The SQLite file holding the data, or `None` when it lives in memory.
    pub(super) fn data_file(&self) -> Option<&Path> {
        self.data_file.as_deref()
    }

    pub(super) fn check_alive(&self) -> Result<(), LocalError> {
        match &*self.stopped.lock().unwrap_or_else(PoisonError::into_inner) {
            None => Ok(()),
            Some(reason) => Err(LocalError::DynoxideStopped {
                reason: reason.clone(),
            }),
        }
    }
}

/// Opens the data (a file, or memory), binds a free loopback port, and serves it.
pub(super) fn start(data_file: Option<PathBuf>) -> Result<Server, LocalError> {
    let start_error = |reason: String| LocalError::DynoxideStart { reason };
    let database = match &data_file {
        None => Database::memory().map_err(|e| start_error(format!("in-memory database: {e}")))?,
        Some(path) => {
            let text = path.to_str().ok_or_else(|| {
                start_error(format!(
                    "the data file path {} (SINGLETABLE_LOCAL_DATA) is not valid UTF-8",
                    path.display()
                ))
            })?;
            Database::new(text).map_err(|e| {
                start_error(format!(
                    "opening the data file {} (SINGLETABLE_LOCAL_DATA): {e}",
                    path.display()
                ))
            })?
        }
    };
    // Bound here, not on the server thread, so the port is known before anyone connects
    // and a failure to bind is this call's error.
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
        .map_err(|e| LocalError::io("binding a loopback port for dynoxide", e))?;
    let port = listener
        .local_addr()
        .map_err(|e| LocalError::io("reading dynoxide's port", e))?
        .port();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .thread_name("singletable-dynoxide")
        .enable_all()
        .build()
        .map_err(|e| LocalError::io("starting dynoxide's runtime", e))?;

    // DynamoDB deletes expired items in the background; the engine does when asked, so a
    // task asks once a second, as often as a test can notice.
    let sweeper = database.clone();
    let stopped = Arc::new(Mutex::new(None));
    let record_stop = Arc::clone(&stopped);
    std::thread::Builder::new()
        .name("singletable-dynoxide".into())
        .spawn(move || {
            runtime.spawn(async move {
                loop {
                    tokio::time::sleep(TTL_SWEEP_INTERVAL).await;
                    let database = sweeper.clone();
                    // A failed sweep is retried at the next tick, as DynamoDB's own would be.
                    let _ = tokio::task::spawn_blocking(move || database.sweep_ttl()).await;
                }
            });
            let outcome = runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)
                    .map_err(|e| format!("listening on port {port}: {e}"))?;
                dynoxide::server::serve_with_shutdown(listener, database, std::future::pending())
                    .await
            });
            let reason = match outcome {
                Ok(()) => "the server returned".to_string(),
                Err(reason) => reason,
            };
            *record_stop.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason);
        })
        .map_err(|e| LocalError::io("starting dynoxide's thread", e))?;

    Ok(Server {
        endpoint: format!("http://127.0.0.1:{port}"),
        data_file,
        stopped,
    })
}
