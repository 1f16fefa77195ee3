//! The `dnnplan` command-line tool: thin argument handling over library functions.
//!
//! Commands: `env` (what this machine offers dnnplan). Each prints a readable table, or JSON with
//! `--json`. Exit status: 0 on success, 1 when the command failed, 2 on a usage error.

use std::process::ExitCode;

use serde_json::{Value, json};

const USAGE: &str = "usage: dnnplan <command> [options]

commands:
  env [--json]        library version, OS, CUDA driver and GPUs, cuDNN, NVRTC, DNNPLAN_* settings,
                      compiled-plan cache and cuDNN heuristics disk cache (dir, enabled, cap,
                      what is on disk, statistics)
  eligibility [--json] [--request FILE] [--env FILE] [request and environment flags]
                      which attention backends/engines can run a request, every reason the
                      others cannot (e.g. --dtype bf16 --layout bshd --mask causal --b 2 --sq 4096
                      --hq 16 --hkv 16 --dqk 128 --training --arch 90 --cudnn 9.19.0)
  explain GRAPH.json [--json] [--arch SM] [--modes A,B,FALLBACK,OPENSOURCE]
                      why the plan list is what it is: family, facts, every engine's verdict,
                      the backend per mode, the ranked plans (--arch 90: as on an H200)
  ops [--json] [OP]   the op catalogue (every op with ports, outputs, attributes), or one op
  help                this text";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let rest = &args[1..];
    let result = match command.as_str() {
        "env" => cmd_env(rest),
        "eligibility" => cmd_eligibility(rest),
        "explain" => cmd_explain(rest),
        "ops" => cmd_ops(rest),
        "help" | "--help" | "-h" => Ok(format!("{USAGE}\n")),
        other => Err(CliError::Usage(format!("unknown command `{other}`"))),
    };
    match result.and_then(|text| write_stdout(&text)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Usage(msg)) => {
            eprintln!("dnnplan: {msg}\n\n{USAGE}");
            ExitCode::from(2)
        }
        Err(CliError::Failed(msg)) => {
            eprintln!("dnnplan: {msg}");
            ExitCode::from(1)
        }
    }
}

enum CliError {
    Usage(String),
    Failed(String),
}

/// Writes a command's whole output to stdout. A reader that closed the pipe early (`dnnplan ops |
/// head`) ends the command quietly, as for any Unix filter; any other write error is a failure.
fn write_stdout(text: &str) -> Result<(), CliError> {
    use std::io::{ErrorKind, Write};
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::Failed(format!("writing to stdout: {e}"))),
    }
}

/// `value` as pretty JSON text with a final newline.
fn pretty(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// `dnnplan ops [--json] [OP]`: the op catalogue generated from the IR tables.
fn cmd_ops(args: &[String]) -> Result<String, CliError> {
    let (as_json, positional) = parse_flags(args, 1)?;
    let name = positional.first().map(String::as_str);
    let unknown = |n: &str| CliError::Failed(format!("unknown op `{n}` (see `dnnplan ops`)"));
    if as_json {
        let value = match name {
            None => dnnplan::ir::catalogue_json(),
            Some(n) => dnnplan::ir::op_catalogue_json(n).ok_or_else(|| unknown(n))?,
        };
        Ok(pretty(&value))
    } else {
        dnnplan::ir::catalogue_text(name).ok_or_else(|| unknown(name.unwrap_or("")))
    }
}

/// Splits `--json` from the other arguments; rejects unknown flags.
fn parse_flags(
    args: &[String],
    allowed_positional: usize,
) -> Result<(bool, Vec<String>), CliError> {
    let mut json = false;
    let mut positional = Vec::new();
    for a in args {
        if a == "--json" {
            json = true;
        } else if a.starts_with("--") {
            return Err(CliError::Usage(format!("unknown option `{a}`")));
        } else {
            positional.push(a.clone());
        }
    }
    if positional.len() > allowed_positional {
        return Err(CliError::Usage(format!(
            "unexpected argument `{}`",
            positional[allowed_positional]
        )));
    }
    Ok((json, positional))
}

fn cmd_env(args: &[String]) -> Result<String, CliError> {
    let (as_json, _) = parse_flags(args, 0)?;
    let report = env_report();
    if as_json {
        Ok(pretty(&report))
    } else {
        let mut text = String::new();
        table_text(&report, "", &mut text);
        Ok(text)
    }
}

/// `dnnplan eligibility`: the attention eligibility selector as a table or JSON.
fn cmd_eligibility(args: &[String]) -> Result<String, CliError> {
    use dnnplan::select;
    let parsed = select::cli::parse_args(args).map_err(|e| CliError::Usage(e.to_string()))?;
    let run = || -> dnnplan::Result<select::Verdicts> {
        let request = parsed.request.into_request()?;
        let env = parsed.env.resolve()?;
        select::evaluate(&request, &env)
    };
    let verdicts = run().map_err(|e| CliError::Failed(e.to_string()))?;
    if parsed.json {
        Ok(pretty(&verdicts.to_json()))
    } else {
        Ok(select::cli::render_table(&verdicts))
    }
}

fn cmd_explain(args: &[String]) -> Result<String, CliError> {
    use dnnplan::dispatch::{HeurMode, PlanOptions, explain, target::Target};
    let mut json_out = false;
    let mut arch = None;
    let mut modes = Vec::new();
    let mut path = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => json_out = true,
            "--arch" => {
                let v = it
                    .next()
                    .ok_or_else(|| CliError::Usage("--arch needs a value (e.g. 90)".into()))?;
                arch = Some(v.parse::<i32>().map_err(|_| {
                    CliError::Usage(format!("--arch {v}: expected major*10+minor, e.g. 90"))
                })?);
            }
            "--modes" => {
                let v = it
                    .next()
                    .ok_or_else(|| CliError::Usage("--modes needs a list".into()))?;
                for m in v.split(',') {
                    modes.push(HeurMode::from_name(m).ok_or_else(|| {
                        CliError::Usage(format!(
                            "unknown heuristic mode `{m}` (A, B, FALLBACK, OPENSOURCE)"
                        ))
                    })?);
                }
            }
            o if o.starts_with("--") => {
                return Err(CliError::Usage(format!("unknown option `{o}`")));
            }
            p if path.is_none() => path = Some(p.to_owned()),
            p => return Err(CliError::Usage(format!("unexpected argument `{p}`"))),
        }
    }
    let path = path.ok_or_else(|| CliError::Usage("explain needs a GRAPH.json".into()))?;
    let text =
        std::fs::read_to_string(&path).map_err(|e| CliError::Failed(format!("{path}: {e}")))?;
    let graph = dnnplan::ir::Graph::from_json(&text)
        .map_err(|e| CliError::Failed(format!("{path}: {e}")))?;
    let mut opts = PlanOptions::detect_for(&graph);
    if let Some(a) = arch {
        opts.target = Target::with_arch(a);
    }
    let report = explain::explain_graph(&graph, opts, &modes)
        .map_err(|e| CliError::Failed(format!("{path}: {e}")))?;
    if json_out {
        Ok(pretty(&report))
    } else {
        Ok(explain::render_table(&report))
    }
}

/// Environment variables that change what dnnplan loads or where it looks.
const ENV_VARS: [&str; 4] = [
    dnnplan::cudnn::loader::ENV_CUDNN_LIB_DIR,
    dnnplan::cudnn::exec_path::EXEC_PATH_ENV,
    dnnplan::cuda::nvrtc::ENV_NVRTC_LIB_DIR,
    dnnplan::dispatch::manifest::ENV_ENABLE_OPT_IN_ENGINES,
];

/// What this machine offers dnnplan; every component reports `found` and, when absent, `reason`.
fn env_report() -> Value {
    use dnnplan::cuda::probe;
    use dnnplan::cudnn::loader;
    let cuda = match probe::driver() {
        Ok(d) => json!({
            "found": true,
            "driver_version": d.driver_version,
            "driver": format!("{}.{}", d.driver_version / 1000, (d.driver_version % 1000) / 10),
            "devices": d.devices.iter().map(|dev| json!({
                "ordinal": dev.ordinal,
                "name": dev.name,
                "compute_capability": format!("{}.{}", dev.compute_capability.0, dev.compute_capability.1),
                "arch": format!("sm_{}", dev.arch()),
                "sm_count": dev.sm_count,
                "l2_bytes": dev.l2_bytes,
                "total_memory": dev.total_memory,
            })).collect::<Vec<_>>(),
        }),
        Err(e) => json!({ "found": false, "reason": e.to_string() }),
    };
    let cudnn = match loader::info() {
        Ok(i) => json!({ "found": true, "path": i.origin, "version": i.version_string }),
        Err(e) => json!({ "found": false, "reason": e.to_string() }),
    };
    let nvrtc = match probe::nvrtc_version() {
        Ok((major, minor)) => json!({ "found": true, "version": format!("{major}.{minor}") }),
        Err(e) => json!({ "found": false, "reason": e.to_string() }),
    };
    let environment = env_values(&ENV_VARS);
    json!({
        "dnnplan": { "version": dnnplan::version::VERSION, "abi": dnnplan::version::ABI_VERSION },
        "os": { "os": std::env::consts::OS, "arch": std::env::consts::ARCH },
        "cuda": cuda,
        "cudnn": cudnn,
        "nvrtc": nvrtc,
        "environment": environment,
        "settings": settings_report(),
        "compiled_cache": compiled_cache_report(),
        "cudnn_heuristics_cache": heuristics_cache_report(),
    })
}

/// Every `DNNPLAN_*` variable set in this process and what the library makes of it
/// ([`dnnplan::settings::check`]): `ok`, `not understood` (a value its reader does not know: the
/// default applies, or for `DNNPLAN_CUDNN_EXEC_PATH` the plan refuses it), or `unknown` (no such
/// variable; the nearest name when one is close); an empty object when none is set.
fn settings_report() -> Value {
    dnnplan::settings::check_process()
        .into_iter()
        .map(|r| {
            let verdict = r.to_json();
            (r.name, verdict)
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// Each variable of `names` with its value in this process (`null` when unset; lossy UTF-8).
fn env_values(names: &[&str]) -> serde_json::Map<String, Value> {
    names
        .iter()
        .map(|name| {
            let value = std::env::var_os(name).map_or(Value::Null, |v| {
                Value::String(v.to_string_lossy().into_owned())
            });
            ((*name).to_owned(), value)
        })
        .collect()
}

/// The compiled-plan cache: where it lives, whether it is on, its cap, what is on disk and this
/// process's statistics.
fn compiled_cache_report() -> Value {
    use dnnplan::cuda::cache::{CompiledCache, EnvIdentity};
    let cache = CompiledCache::global();
    persistent_cache_report(
        cache.config(),
        &cache.dir(),
        json!(cache.stats()),
        EnvIdentity::for_device,
    )
}

/// The cuDNN heuristics cache's disk tier, as [`compiled_cache_report`] (statistics: this
/// process's, so zero in the CLI).
fn heuristics_cache_report() -> Value {
    use dnnplan::cudnn::heur_disk;
    let config = heur_disk::config();
    persistent_cache_report(
        &config,
        &config.root,
        json!(heur_disk::stats()),
        |ordinal| {
            heur_disk::machine_identity(ordinal).unwrap_or_else(|| {
                dnnplan::cuda::cache::EnvIdentity::with_fields(&heur_disk::FIELDS, [])
            })
        },
    )
}

/// A persistent cache: dir, switch, cap, environments and bytes on disk, statistics, the
/// environment this machine's device 0 would use (what the cache keys on), its variables.
fn persistent_cache_report(
    config: &dnnplan::cuda::cache::CacheConfig,
    dir: &std::path::Path,
    stats: Value,
    identity_of: impl Fn(i32) -> dnnplan::cuda::cache::EnvIdentity,
) -> Value {
    let on_disk = dnnplan::cuda::cache::prune::candidates(dir);
    let spec = config.spec;
    let mut names = vec![spec.root_var];
    names.extend(spec.disable_var);
    names.push(spec.max_bytes_var);
    let environment = match dnnplan::cuda::probe::driver() {
        Ok(d) if !d.devices.is_empty() => {
            let id = identity_of(d.devices[0].ordinal);
            json!({ "device": d.devices[0].ordinal, "hash": id.hash(), "complete": id.is_complete(),
                    "identity": id.to_json() })
        }
        _ => Value::Null,
    };
    json!({
        "dir": dir.display().to_string(),
        "enabled": config.enabled,
        "max_bytes": config.max_bytes,
        "environments_on_disk": on_disk.len(),
        "bytes_on_disk": on_disk.iter().map(|c| c.bytes).sum::<u64>(),
        "stats": stats,
        "environment": environment,
        "variables": env_values(&names),
    })
}

/// A JSON object as an indented `key: value` table, appended to `out`.
fn table_text(value: &Value, indent: &str, out: &mut String) {
    let Value::Object(map) = value else {
        out.push_str(&format!("{indent}{value}\n"));
        return;
    };
    for (k, v) in map {
        match v {
            Value::Object(m) if m.is_empty() => out.push_str(&format!("{indent}{k}: (none)\n")),
            Value::Object(_) => {
                out.push_str(&format!("{indent}{k}:\n"));
                table_text(v, &format!("{indent}  "), out);
            }
            Value::Array(items) if items.iter().any(Value::is_object) => {
                out.push_str(&format!("{indent}{k}:\n"));
                for (i, item) in items.iter().enumerate() {
                    out.push_str(&format!("{indent}  [{i}]\n"));
                    table_text(item, &format!("{indent}    "), out);
                }
            }
            Value::String(s) => out.push_str(&format!("{indent}{k}: {s}\n")),
            Value::Null => out.push_str(&format!("{indent}{k}: (not set)\n")),
            _ => out.push_str(&format!("{indent}{k}: {v}\n")),
        }
    }
}
