//! moto, the second engine (`SINGLETABLE_ENGINE=moto`): pinned, installed into a virtual
//! environment under the cargo target directory (once per target directory), and started on a
//! free loopback port, once per process.
//!
//! The server is moto's DynamoDB backend behind a small launcher (`launcher.py`) that
//! serializes requests, because moto's stock threaded server loses acknowledged writes under
//! concurrent transactions. It stops when this process exits, however it exits: it watches
//! its stdin, whose write end only this process holds.

use std::ffi::OsStr;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::LocalError;

/// The moto release the engine runs; pinned so behaviour does not drift between runs.
pub(super) const VERSION: &str = "5.2.1";
/// What pip installs. The `server` extra is not needed: the launcher uses only moto's
/// Flask app (flask, flask-cors) and werkzeug (a core moto dependency); skipping the
/// extra halves install time and size (no cfn-lint, sympy, ...).
const REQUIREMENTS: &[&str] = &[
    "moto[dynamodb]==5.2.1",
    "flask!=2.2.0,!=2.2.1",
    "flask-cors",
];
/// moto 5.2 declares `Requires-Python >=3.10`; checked up front for a clear message.
const MIN_PYTHON: (u32, u32) = (3, 10);
/// The launcher script, written into the virtual environment at start.
const LAUNCHER: &str = include_str!("launcher.py");
const LAUNCHER_FILE: &str = "singletable_launcher.py";
/// Written last into a finished venv, so a half-installed one is never used.
const STAMP_FILE: &str = ".singletable-complete";
/// The launcher's stderr goes here, not to the test output.
const LOG_FILE: &str = "moto-server.log";
/// The log is shared by every process using the venv; truncated past this size.
const LOG_MAX_BYTES: u64 = 8 * 1024 * 1024;
/// The line the launcher prints once it listens.
const PORT_PREFIX: &str = "SINGLETABLE_MOTO_PORT=";
/// Generous: a cold start on a loaded 2-core CI machine imports a lot of Python.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Leftovers of killed installs older than this are removed.
const STALE_AFTER: Duration = Duration::from_secs(3600);
/// How much of a failed command's output or of the log an error carries.
const TAIL_LINES: usize = 40;

#[cfg(windows)]
const SYSTEM_PYTHON: &str = "python";
#[cfg(not(windows))]
const SYSTEM_PYTHON: &str = "python3";

/// The running server, kept for the life of the process (statics are never dropped).
pub(super) struct Server {
    endpoint: String,
    log: PathBuf,
    /// Polled to report a dead server clearly instead of as connection errors.
    child: Mutex<Child>,
    /// Never written; holding it open is what keeps the server alive. When the process
    /// exits the OS closes it, the launcher sees EOF and exits.
    _stdin: ChildStdin,
}

impl Server {
    pub(super) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub(super) fn check_alive(&self) -> Result<(), LocalError> {
        let mut child = self
            .child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(LocalError::Exited {
                status: status.to_string(),
                log: self.log.clone(),
            }),
            Err(e) => Err(LocalError::io(
                "checking on the local DynamoDB engine (moto)",
                e,
            )),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Where things live

/// `<target>/singletable-local/venv-moto-<version>`.
fn venv_dir() -> PathBuf {
    let base = match target_dir() {
        Some(target) => target.join("singletable-local"),
        None => std::env::temp_dir().join("singletable-local"),
    };
    base.join(format!("venv-moto-{VERSION}"))
}

/// The cargo target directory this binary was built in, so `cargo clean` removes the
/// install and separate checkouts do not share one.
fn target_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok();
    if let Some(value) = std::env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(value);
        if dir.is_absolute() {
            return Some(dir);
        }
        // Relative to where cargo ran, which is not always our current dir (cargo runs
        // tests in the package dir): prefer the ancestor of this binary it names.
        if let Some(found) = exe
            .as_deref()
            .and_then(|exe| exe.ancestors().find(|a| a.ends_with(&dir)))
        {
            return Some(found.to_path_buf());
        }
        if let Ok(cwd) = std::env::current_dir() {
            return Some(cwd.join(dir));
        }
    }
    // Tests live in target/<profile>/deps, examples in target/<profile>/examples.
    exe?.ancestors()
        .skip(1)
        .find(|a| a.file_name() == Some(OsStr::new("target")))
        .map(Path::to_path_buf)
}

fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

/// A path as the user would like to read it: relative to the current dir when inside it.
fn shown(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}

// ---------------------------------------------------------------------------------------
// Installing

/// Makes sure a complete venv exists at `venv`, building it if needed.
///
/// Several processes may get here at once (cargo runs test binaries, nextest runs them in
/// parallel): each builds into its own temp dir and renames it into place; a loser of
/// that race discards its copy and uses the winner's.
async fn ensure_installed(venv: &Path) -> Result<(), LocalError> {
    if is_complete(venv) {
        return Ok(());
    }
    let name = venv.file_name().and_then(OsStr::to_str).unwrap_or("venv");
    let base = venv
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir);
    fs::create_dir_all(&base)
        .map_err(|e| LocalError::io(format!("creating {}", base.display()), e))?;
    remove_stale_leftovers(&base, name);

    check_python().await?;

    let pid = std::process::id();
    let building = base.join(format!(".{name}.tmp-{pid}"));
    if building.exists() {
        // A previous process with our pid died mid-install.
        fs::remove_dir_all(&building)
            .map_err(|e| LocalError::io(format!("removing {}", building.display()), e))?;
    }
    eprintln!(
        "singletable: installing moto {VERSION} into {} (first run only)",
        shown(venv)
    );
    let started = Instant::now();
    if let Err(error) = build_venv(&building).await {
        let _ = fs::remove_dir_all(&building);
        return Err(error);
    }

    let placed = match fs::rename(&building, venv) {
        Ok(()) => Ok(()),
        Err(_) if is_complete(venv) => Ok(()), // another process won the race: use its venv
        Err(_) if venv.exists() => {
            // An unusable venv (half-deleted, or its base python was removed): move it
            // aside, then retry.
            let aside = base.join(format!(".{name}.stale-{pid}"));
            let retried = fs::rename(venv, &aside).and_then(|()| fs::rename(&building, venv));
            let _ = fs::remove_dir_all(&aside);
            match retried {
                Ok(()) => Ok(()),
                Err(_) if is_complete(venv) => Ok(()),
                Err(e) => Err(LocalError::io(
                    format!("moving the new venv to {}", venv.display()),
                    e,
                )),
            }
        }
        Err(e) => Err(LocalError::io(
            format!("moving the new venv to {}", venv.display()),
            e,
        )),
    };
    if building.exists() {
        let _ = fs::remove_dir_all(&building);
    }
    placed?;
    eprintln!(
        "singletable: moto {VERSION} installed in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Finished (stamped) and still runnable (the venv's python links to a base python that
/// can be uninstalled or upgraded away).
fn is_complete(venv: &Path) -> bool {
    venv.join(STAMP_FILE).is_file() && venv_python(venv).exists()
}

/// Fails early, with a clear message, if python3 is missing or too old for moto.
async fn check_python() -> Result<(), LocalError> {
    let mut command = Command::new(SYSTEM_PYTHON);
    command.args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"]);
    let output = run("check the python3 version", command, true).await?;
    let found = String::from_utf8_lossy(&output).trim().to_string();
    let mut parts = found.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) if (major, minor) >= MIN_PYTHON => Ok(()),
        _ => Err(LocalError::PythonTooOld { found }),
    }
}

/// Creates a venv at `dir` and installs moto into it; the stamp is written last.
async fn build_venv(dir: &Path) -> Result<(), LocalError> {
    let mut venv = Command::new(SYSTEM_PYTHON);
    venv.arg("-m").arg("venv").arg(dir);
    run(
        "create a virtual environment (this needs python3's venv module: on Debian/Ubuntu \
         `apt install python3-venv`)",
        venv,
        true,
    )
    .await?;

    let mut pip = Command::new(venv_python(dir));
    pip.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "-q",
        "--no-input",
    ])
    .args(REQUIREMENTS)
    // A user-wide `--user` default makes pip refuse to install into a venv.
    .env_remove("PIP_USER")
    .env_remove("PYTHONPATH")
    .env_remove("PYTHONHOME");
    run(
        "install moto with pip (this needs access to PyPI or a configured mirror)",
        pip,
        false,
    )
    .await?;

    let stamp = dir.join(STAMP_FILE);
    fs::write(
        &stamp,
        format!("moto {VERSION}\n{}\n", REQUIREMENTS.join("\n")),
    )
    .map_err(|e| LocalError::io(format!("writing {}", stamp.display()), e))
}

/// Runs a command to completion; its stdout on success, a typed error otherwise.
/// `system_python`: a spawn failure with NotFound means python3 is missing.
async fn run(
    step: &'static str,
    mut command: Command,
    system_python: bool,
) -> Result<Vec<u8>, LocalError> {
    let std_command = command.as_std();
    let shown_command = std::iter::once(std_command.get_program())
        .chain(std_command.get_args())
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    command.stdin(Stdio::null()).kill_on_drop(true);
    let output = match command.output().await {
        Ok(output) => output,
        Err(e) if system_python && e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LocalError::PythonMissing)
        }
        Err(e) => return Err(LocalError::io(format!("running `{shown_command}`"), e)),
    };
    if output.status.success() {
        return Ok(output.stdout);
    }
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    Err(LocalError::Install {
        step,
        command: shown_command,
        status: output.status.to_string(),
        output_tail: tail(&text),
    })
}

/// Best effort: removes temp and stale dirs that killed installs left behind.
fn remove_stale_leftovers(base: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    let prefixes = [format!(".{name}.tmp-"), format!(".{name}.stale-")];
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        if !prefixes.iter().any(|p| file_name.starts_with(p.as_str())) {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| SystemTime::now().duration_since(modified).ok())
            .is_some_and(|age| age > STALE_AFTER);
        if old {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Starting

/// Installs if needed, then spawns the launcher and waits for its port.
pub(super) async fn start() -> Result<Server, LocalError> {
    let venv = venv_dir();
    ensure_installed(&venv).await?;
    let launcher = write_launcher(&venv)?;

    let log = venv.join(LOG_FILE);
    let log_file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .map_err(|e| LocalError::io(format!("opening {}", log.display()), e))?;
    let mut log_start = log_file.metadata().map(|m| m.len()).unwrap_or(0);
    if log_start > LOG_MAX_BYTES && log_file.set_len(0).is_ok() {
        log_start = 0;
    }

    let mut command = Command::new(venv_python(&venv));
    command
        .arg(&launcher)
        .current_dir(&venv)
        .env("PYTHONUNBUFFERED", "1")
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONHOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log_file))
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|e| LocalError::io(format!("starting {}", venv_python(&venv).display()), e))?;

    let start_error = |reason: String| LocalError::Start {
        reason,
        log: log.clone(),
        log_tail: read_log_tail(&log, log_start),
    };
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(start_error(
            "the server's stdin/stdout pipes were not created".into(),
        ));
    };

    match tokio::time::timeout(START_TIMEOUT, read_port(stdout)).await {
        Ok(Ok(port)) => Ok(Server {
            endpoint: format!("http://127.0.0.1:{port}"),
            log,
            child: Mutex::new(child),
            _stdin: stdin,
        }),
        Ok(Err(PortError::Io(e))) => Err(start_error(format!("reading the server's output: {e}"))),
        Ok(Err(PortError::Garbled(line))) => Err(start_error(format!(
            "the server announced an unreadable port: {line:?}"
        ))),
        Ok(Err(PortError::Eof(stray))) => {
            // Give it a moment to finish exiting so the status and log are complete.
            let status = match tokio::time::timeout(Duration::from_secs(5), child.wait()).await {
                Ok(Ok(status)) => status.to_string(),
                _ => "still running with stdout closed".to_string(),
            };
            let mut reason = format!("the server exited before announcing its port ({status})");
            if !stray.is_empty() {
                reason = format!("{reason}; it printed: {}", stray.join(" | "));
            }
            Err(start_error(reason))
        }
        Err(_) => {
            let _ = child.start_kill();
            Err(start_error(format!(
                "the server did not announce its port within {}s",
                START_TIMEOUT.as_secs()
            )))
        }
    }
}

enum PortError {
    Io(std::io::Error),
    Garbled(String),
    /// stdout closed first; carries whatever else it printed.
    Eof(Vec<String>),
}

/// Reads stdout until the launcher's port line.
///
/// Plain `poll_read` rather than `AsyncBufReadExt`, which needs tokio's `io-util` feature.
async fn read_port(mut stdout: ChildStdout) -> Result<u16, PortError> {
    let mut pending = Vec::new();
    let mut stray = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let read = std::future::poll_fn(|cx| {
            let mut buf = ReadBuf::new(&mut chunk);
            Pin::new(&mut stdout)
                .poll_read(cx, &mut buf)
                .map_ok(|()| buf.filled().len())
        })
        .await
        .map_err(PortError::Io)?;
        if read == 0 {
            if !pending.is_empty() {
                stray.push(String::from_utf8_lossy(&pending).into_owned());
            }
            return Err(PortError::Eof(stray));
        }
        pending.extend_from_slice(&chunk[..read]);
        while let Some(newline) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=newline).collect();
            let line = String::from_utf8_lossy(&line).trim().to_string();
            if let Some(port) = line.strip_prefix(PORT_PREFIX) {
                return port.parse().map_err(|_| PortError::Garbled(line.clone()));
            }
            if stray.len() < TAIL_LINES {
                stray.push(line);
            }
        }
    }
}

/// Writes the launcher into the venv, atomically and only if it changed, since other
/// processes may be starting it at the same moment.
fn write_launcher(venv: &Path) -> Result<PathBuf, LocalError> {
    let path = venv.join(LAUNCHER_FILE);
    if fs::read_to_string(&path).is_ok_and(|current| current == LAUNCHER) {
        return Ok(path);
    }
    let temp = venv.join(format!(".{LAUNCHER_FILE}.{}.tmp", std::process::id()));
    fs::write(&temp, LAUNCHER)
        .and_then(|()| fs::rename(&temp, &path))
        .map_err(|e| {
            let _ = fs::remove_file(&temp);
            LocalError::io(format!("writing {}", path.display()), e)
        })?;
    Ok(path)
}

/// What this process's server wrote to the shared log (from `start` on), last lines only.
fn read_log_tail(log: &Path, start: u64) -> String {
    let read = fs::File::open(log).and_then(|mut file| {
        let len = file.metadata()?.len();
        // A concurrent truncation can leave the file shorter than where we started.
        file.seek(SeekFrom::Start(if start <= len { start } else { 0 }))?;
        let mut bytes = Vec::new();
        file.take(1024 * 1024).read_to_end(&mut bytes)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    });
    match read {
        Ok(text) if text.trim().is_empty() => "(empty)".to_string(),
        Ok(text) => tail(&text),
        Err(e) => format!("(could not read the log: {e})"),
    }
}

/// The last lines of some output, bounded in lines and characters.
fn tail(text: &str) -> String {
    const MAX_CHARS: usize = 8000;
    let lines: Vec<&str> = text.lines().collect();
    let mut out = lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n");
    if out.chars().count() > MAX_CHARS {
        let skip = out.chars().count() - MAX_CHARS;
        out = format!("...{}", out.chars().skip(skip).collect::<String>());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_pin_the_announced_version() {
        assert_eq!(REQUIREMENTS[0], format!("moto[dynamodb]=={VERSION}"));
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let kept = tail(&text);
        assert_eq!(kept.lines().count(), TAIL_LINES);
        assert!(kept.ends_with("line 99"));
        assert!(tail("").is_empty());
    }

    #[test]
    fn launcher_announces_the_expected_prefix() {
        assert!(LAUNCHER.contains(&PORT_PREFIX.replace('=', "=%d")));
    }
}
