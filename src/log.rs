//! Opt-in logging of what planning and plan builds decided, as the reference frontend's
//! `CUDNN_FRONTEND_LOG_INFO` / `CUDNN_FRONTEND_LOG_FILE` do: nothing is logged unless
//! `DNNPLAN_LOG_INFO` is on AND `DNNPLAN_LOG_FILE` names a destination (`stdout`, `stderr`, or a
//! file, appended to).
//!
//! Contract: the variables are read once, at the first event; when logging is off an event costs
//! one atomic load and its message is never formatted (callers pass a closure). Each event is
//! one line, `[dnnplan][I|W] t=<unix seconds.micros> pid=<pid> tid=<thread> <message>`, written
//! whole under a lock (lines of concurrent threads never interleave). The first line of a process
//! names the library version, and the `DNNPLAN_*` variables it does not understand follow as
//! warnings (a typo in a diagnostic would otherwise be silently ignored). A destination that
//! cannot be opened turns logging off after one line on stderr. Nothing here can fail a call.

use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// Turns logging on (with [`LOG_FILE_ENV`]).
pub const LOG_INFO_ENV: &str = "DNNPLAN_LOG_INFO";
/// Where the log goes: `stdout`, `stderr`, or a file path.
pub const LOG_FILE_ENV: &str = "DNNPLAN_LOG_FILE";

/// Where the lines go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// The process's standard output.
    Stdout,
    /// The process's standard error.
    Stderr,
    /// A file, appended to (created when missing).
    File(std::path::PathBuf),
}

/// The destination the two variables ask for, `None` when logging is off (the reference's
/// table: `LOG_INFO` on and `LOG_FILE` set, else nothing).
pub fn destination(info: Option<&str>, file: Option<&str>) -> Option<Destination> {
    let on = info.is_some_and(crate::settings::is_on);
    let file = file.map(str::trim).filter(|f| !f.is_empty())?;
    on.then(|| match file {
        "stdout" => Destination::Stdout,
        "stderr" => Destination::Stderr,
        path => Destination::File(path.into()),
    })
}

enum Sink {
    Stdout,
    Stderr,
    File(std::fs::File),
}

impl Sink {
    fn write_line(&mut self, line: &str) {
        // A failed write is dropped: logging never fails a call.
        let _ = match self {
            Sink::Stdout => std::io::stdout().lock().write_all(line.as_bytes()),
            Sink::Stderr => std::io::stderr().lock().write_all(line.as_bytes()),
            Sink::File(f) => f.write_all(line.as_bytes()),
        };
    }
}

/// The process's sink, opened at the first event (`None`: logging off).
fn sink() -> Option<&'static Mutex<Sink>> {
    static SINK: OnceLock<Option<Mutex<Sink>>> = OnceLock::new();
    SINK.get_or_init(|| {
        let info = std::env::var(LOG_INFO_ENV).ok();
        let file = std::env::var(LOG_FILE_ENV).ok();
        let mut sink = match destination(info.as_deref(), file.as_deref())? {
            Destination::Stdout => Sink::Stdout,
            Destination::Stderr => Sink::Stderr,
            Destination::File(path) => match std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
            {
                Ok(f) => Sink::File(f),
                Err(e) => {
                    eprintln!(
                        "dnnplan: {LOG_FILE_ENV}={} cannot be opened ({e}); logging is off",
                        path.display()
                    );
                    return None;
                }
            },
        };
        sink.write_line(&line(
            'I',
            &format!(
                "dnnplan {} (ABI {}) logging",
                crate::version::VERSION,
                crate::version::ABI_VERSION
            ),
        ));
        for r in crate::settings::check_process() {
            if r.verdict != crate::settings::Verdict::Understood {
                sink.write_line(&line('W', &format!("setting {}", r.to_named_json())));
            }
        }
        Some(Mutex::new(sink))
    })
    .as_ref()
}

/// Whether events are logged (opens the destination at the first call).
pub fn enabled() -> bool {
    sink().is_some()
}

/// One formatted line (with its newline).
fn line(level: char, message: &str) -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    // `ThreadId(7)` → `7` (its number is not public API, its Debug form is stable enough here).
    let tid = format!("{:?}", std::thread::current().id());
    let tid = tid.trim_start_matches("ThreadId(").trim_end_matches(')');
    format!(
        "[dnnplan][{level}] t={}.{:06} pid={} tid={tid} {}\n",
        t.as_secs(),
        t.subsec_micros(),
        std::process::id(),
        printable(message)
    )
}

/// `message` on one line of text: a line break is a space, any other control character its
/// `\u{..}` escape (messages quote user input such as tensor names).
fn printable(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for c in message.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn emit(level: char, message: impl FnOnce() -> String) {
    if let Some(sink) = sink() {
        let text = line(level, &message());
        if let Ok(mut s) = sink.lock() {
            s.write_line(&text);
        }
    }
}

/// Logs an informational event (the message is built only when logging is on).
pub fn info(message: impl FnOnce() -> String) {
    emit('I', message);
}

/// Logs a warning (the message is built only when logging is on).
pub fn warn(message: impl FnOnce() -> String) {
    emit('W', message);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_variables_are_needed() {
        assert_eq!(destination(None, Some("stderr")), None);
        assert_eq!(destination(Some("0"), Some("stderr")), None);
        assert_eq!(destination(Some("1"), None), None);
        assert_eq!(destination(Some("1"), Some("  ")), None);
        assert_eq!(
            destination(Some(" ON "), Some("stdout")),
            Some(Destination::Stdout)
        );
        assert_eq!(
            destination(Some("yes"), Some("stderr")),
            Some(Destination::Stderr)
        );
        assert_eq!(
            destination(Some("true"), Some("/tmp/x.log")),
            Some(Destination::File("/tmp/x.log".into()))
        );
    }

    #[test]
    fn a_line_is_one_line() {
        let l = line('W', "two\nlines");
        assert!(l.starts_with("[dnnplan][W] t="), "{l}");
        assert!(l.ends_with(" two lines\n"), "{l}");
        assert_eq!(l.matches('\n').count(), 1);
        assert!(l.contains(&format!(" pid={} ", std::process::id())));
        assert_eq!(
            printable("a\u{0}b\tc\u{1b}d\re"),
            "a\\u{0}b\\u{9}c\\u{1b}d e"
        );
    }
}
