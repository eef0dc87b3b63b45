"""The command line: a thin layer over :class:`linter.engine.Engine`.

Exit codes: 0 no findings, 1 findings, 2 usage, configuration or internal error.
"""

from __future__ import annotations

import difflib
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from linter import __version__
from linter.audit.command import audit
from linter.config import Config, ConfigError, check_selector, load_config
from linter.registry import Registry, load_registry
from linter.report import DESCRIPTIONS, FORMATS, KEEPS_SUPPRESSED, ReportContext, get_renderer
from linter.types import Diagnostic, RunResult

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(value: str | None, registry: Registry, flag: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    out = tuple(v.strip().upper() if v.strip() != "ALL" else "ALL" for v in value.split(",") if v.strip())
    for sel in out:
        try:
            check_selector(sel, registry, f"{flag}")
        except ConfigError as exc:
            raise click.BadParameter(str(exc).split(": ", 1)[-1], param_hint=flag) from None
    return out


def _fail(message: str) -> None:
    click.echo(f"shardlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _parse_reports(values: Sequence[str], output_file: Path | None = None) -> list[tuple[str, Path]]:
    out: list[tuple[str, Path]] = []
    seen: dict[Path, str] = {}
    if output_file is not None:
        seen[output_file.resolve()] = "--output-file"
    for v in values:
        fmt, sep, path = v.partition("=")
        fmt = fmt.strip().lower()
        if not sep or fmt not in FORMATS or not path.strip():
            raise click.BadParameter(
                f"expected FORMAT=PATH with FORMAT one of {', '.join(FORMATS)}, got {v!r}",
                param_hint="--report",
            )
        target = Path(path)
        other = seen.get(target.resolve())
        if other is not None:
            raise click.BadParameter(
                f"{path!r} is already the target of {other}; give each report its own file",
                param_hint="--report",
            )
        seen[target.resolve()] = f"--report {v}"
        out.append((fmt, target))
    return out


_FORMAT_HELP = "; ".join(f"{name}: {desc}" for name, desc in DESCRIPTIONS.items())


class _Commands(click.Group):
    """The command group; a rule package that cannot be loaded (or two rules
    with one code) is a usage error on one line, exit 2."""

    def invoke(self, ctx: click.Context) -> Any:
        from linter.registry import RegistryError

        try:
            return super().invoke(ctx)
        except RegistryError as exc:
            click.echo(f"shardlint: error: {exc}", err=True)
            ctx.exit(2)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="shardlint")
def main() -> None:
    """shardlint: find the bugs in LLM inference-engine code (vLLM, SGLang and
    their forks) that only show under one mix of tensor / pipeline / data /
    expert / context parallelism and one model shape.

    \b
    Examples:
      shardlint check                     lint the current project
      shardlint check vllm/ --output-format full
      shardlint check . --fix --unsafe-fixes
      shardlint check . --report sarif=shardlint.sarif   also write SARIF
      shardlint rules                     list the rules
      shardlint explain SHD101            a rule's documentation
    """


def entry() -> None:
    """The ``shardlint`` command: :func:`main` as click runs it, then an exit
    that skips the interpreter's teardown. Freeing a big run's objects one by
    one (the project's facts, the check results) costs ~0.09 s after a
    run over vLLM, and nothing is left to finalise by then: the pools are shut
    down, the cache, the reports and the output file are written and closed.
    Only the exit status and the standard streams matter; they are flushed
    first. An exception other than an exit takes the usual way."""
    try:
        main()
    except SystemExit as exc:
        code = exc.code
        if code is None:
            status = 0
        elif isinstance(code, int):
            status = code
        else:
            print(code, file=sys.stderr)
            status = 1
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe (``| head``) or stream
                pass
        os._exit(status)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False),
              help="Read configuration from this TOML file instead of the nearest pyproject.toml.")
@click.option("--select", help="Comma-separated codes or prefixes to enable (replaces the configured set).")
@click.option("--extend-select", help="Codes or prefixes to enable in addition.")
@click.option("--ignore", help="Codes or prefixes to disable.")
@click.option("--output-format", type=click.Choice(FORMATS, case_sensitive=False), default="concise",
              show_default=True,
              help=f"Format of the findings on stdout (or in --output-file). {_FORMAT_HELP}.")
@click.option("--output-file", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the findings there instead of stdout.")
@click.option("--report", "reports", multiple=True, metavar="FORMAT=PATH",
              help="Also write the findings in FORMAT to PATH, in the same run; repeatable. "
                   "stdout keeps --output-format, e.g. human output plus "
                   "--report sarif=shardlint.sarif --report junit=junit.xml. "
                   "Not for pre-commit hooks, whose parallel batches would overwrite the file.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Print a count per rule instead of the findings.")
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, also apply unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: CPU count).")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only: no summary, no progress.")
@click.option("--stdin-filename", help="The path of the code read from '-' (for config and messages).")
@click.option("--force-exclude", is_flag=True, default=None,
              help="Apply excludes to files named on the command line too (for pre-commit).")
@click.option("--check-syntax/--no-check-syntax", default=None,
              help="Compile every checked file so that any syntax error is reported (SHD000). "
                   "Default (config 'check-syntax', false): only files shardlint parses for a "
                   "rule report one; a whole-tree compile costs more than the rest of a cold run.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Cache folder (default: .shardlint_cache at the project root).")
@click.option("--show-suppressed", is_flag=True, help="Also list findings suppressed by noqa.")
@click.option("--verbose", "-v", is_flag=True,
              help="Print run statistics on stderr: files, parsed with libcst, skipped by the prefilter, cached, time.")
@click.option("--write-baseline", type=click.Path(path_type=Path, dir_okay=False),
              help="Record today's findings in this baseline file (JSON lines) and exit 0.")
@click.option("--baseline", "baseline_file", type=click.Path(path_type=Path, dir_okay=False),
              help="Report only findings this baseline does not record; entries no finding "
                   "matches any more are listed as fixed.")
@click.option("--update-baseline", is_flag=True,
              help="With --baseline: remove the fixed entries from the file (never adds any).")
def check(
    paths: tuple[Path, ...],
    config_file: Path | None,
    select: str | None,
    extend_select: str | None,
    ignore: str | None,
    output_format: str,
    output_file: Path | None,
    reports: tuple[str, ...],
    exit_zero: bool,
    statistics: bool,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    jobs: int | None,
    quiet: bool,
    stdin_filename: str | None,
    force_exclude: bool | None,
    check_syntax: bool | None,
    no_cache: bool,
    cache_dir: Path | None,
    show_suppressed: bool,
    verbose: bool,
    write_baseline: Path | None = None,
    baseline_file: Path | None = None,
    update_baseline: bool = False,
) -> None:
    """Lint PATHS (files or folders; default: the current folder; '-' reads
    standard input). Prints findings and exits 1 if there are any.

    \b
    CI: one run can print for people and write files for machines:
      shardlint check . --report sarif=shardlint.sarif --report junit=junit.xml
      shardlint check . --output-format github     annotations in GitHub Actions
      shardlint check . --output-format gitlab --output-file gl-code-quality.json
    SARIF keeps findings suppressed by noqa (marked as suppressed); the other
    formats list them only with --show-suppressed.
    """
    from linter._lazy import defer_libcst

    defer_libcst()  # loaded only if some file is parsed: not by the scan, nor on a warm run
    from linter.engine import Engine
    from linter.registry import load_registry_fast

    started = time.perf_counter()
    registry = load_registry_fast()
    output_format = output_format.lower()
    report_targets = _parse_reports(reports, output_file)
    use_stdin = list(paths) == [Path("-")]
    targets = [Path(stdin_filename)] if use_stdin and stdin_filename else (
        [Path.cwd()] if use_stdin else (list(paths) or [Path(".")])
    )
    baseline_problem = baseline_usage_error(
        write_baseline, baseline_file, update_baseline, stdin=use_stdin, fixing=fix or diff
    )
    if baseline_problem:
        _fail(baseline_problem)
    if not use_stdin:
        missing = [str(p) for p in targets if not p.exists()]
        if missing:
            _fail(f"no such file or folder: {', '.join(missing)}")
    try:
        config = load_config(targets, registry, config_file)
    except ConfigError as exc:
        _fail(str(exc))
        return

    def configure(loaded: Config) -> Config:
        """The command line's overrides over a loaded configuration."""
        return loaded.with_overrides(
            select=_codes(select, registry, "--select"),
            extend_select=(loaded.extend_select + _codes(extend_select, registry, "--extend-select"))
            if extend_select
            else None,
            ignore=(loaded.ignore + _codes(ignore, registry, "--ignore")) if ignore else None,
            force_exclude=force_exclude,
            check_syntax=check_syntax,
        )

    config = configure(config)
    cache = None
    if not no_cache and not use_stdin:
        cache = _open_cache(config, cache_dir)

    def engine_for(cfg: Config) -> Engine:
        got = Engine(cfg, registry, jobs=jobs, cache=cache)
        got.preload_libcst = True
        if not quiet and not use_stdin:
            got.progress = _progress_bar()
        return got

    engine = engine_for(config)

    if use_stdin:
        # bytes, decoded as Python decodes a file (PEP 263 cookie, BOM):
        # --fix writes back the encoding, BOM and line endings it read
        data = sys.stdin.buffer.read()
        name = stdin_filename or "<stdin>"
        path = Path(stdin_filename) if stdin_filename else config.root / "stdin.py"
        if stdin_filename and config.force_exclude and _excluded_explicit(path, config):
            if fix:
                sys.stdout.buffer.write(data)
            sys.exit(EXIT_CLEAN)
        if fix or diff:
            from linter.fixer import fix_bytes

            text, fixed, outcome = fix_bytes(engine, data, path, unsafe_fixes)
            if diff:
                sys.stdout.write(_unified(text, outcome.text, name))
            else:
                sys.stdout.flush()
                sys.stdout.buffer.write(fixed)
            diags, errors = outcome.remaining, outcome.errors
            stream_is_stdout = False
        else:
            from linter.source import decode_source
            from linter.files import relpath_of

            text, unreadable = decode_source(data, relpath_of(path, config.root))
            if text is None:
                diags, errors = ([unreadable] if unreadable else []), []
            else:
                diags, errors = engine.lint_text(text, path)
            stream_is_stdout = True
        result = RunResult(diagnostics=list(diags), errors=list(errors))
        result.stats.files = 1
        _emit(result, config, registry, output_format, output_file, report_targets, statistics,
              quiet, unsafe_fixes, show_suppressed, to_stdout=stream_is_stdout)
        sys.exit(_exit_code(result, exit_zero))

    def run_project(cfg: Config, paths: list[Path]) -> tuple[RunResult, list[tuple[str, str, str]]]:
        one = engine if cfg == engine.config else engine_for(cfg)
        if fix or diff:
            from linter.fixer import fix_paths

            return fix_paths(one, paths, unsafe_fixes, write=not diff)
        return one.run(paths), []

    from linter.projects import run_projects

    try:
        result, changes = run_projects(config, targets, registry, configure, run_project, split=config_file is None)
        if fix or diff:
            if diff:
                for rel, before, after in changes:
                    sys.stdout.write(_unified(before, after, rel))
                if not quiet:
                    n = len(changes)
                    click.echo(f"{n} file{'s' * (n != 1)} would be changed.", err=True)
            elif not quiet and changes:
                n = len(changes)
                click.echo(f"Fixed {n} file{'s' * (n != 1)}.", err=True)
    except FileNotFoundError as exc:
        _fail(f"no such file or folder: {exc}")
        return
    except ConfigError as exc:  # a nested project's configuration
        _fail(str(exc))
        return
    except Exception as exc:  # noqa: BLE001 - a crash of the run itself (a worker killed, a bug)
        if os.environ.get("SHARDLINT_TRACEBACK"):
            raise
        from linter.check import describe

        _fail(f"internal error: {type(exc).__name__}: {describe(exc)} (SHARDLINT_TRACEBACK=1 shows where)")
        return
    for e in result.errors:
        click.echo(f"shardlint: {e.line()}", err=True)
    if write_baseline is not None or baseline_file is not None:
        from linter.baseline import BaselineError, apply_baseline

        try:
            result, done = apply_baseline(result, engine.config, targets, write_baseline, baseline_file,
                                          update_baseline, quiet)
        except BaselineError as exc:
            _fail(str(exc))
            return
        if done:
            sys.exit(EXIT_ERROR if result.errors else EXIT_CLEAN)
    if verbose:
        st = result.stats
        click.echo(
            f"shardlint: {st.files} files checked: {st.parsed} parsed with libcst, "
            f"{st.skipped} not parsed (prefilter or unparsable), {st.cached} from the cache; "
            f"{st.facts_files} files with facts; {time.perf_counter() - started:.2f}s",
            err=True,
        )
    _emit(result, config, registry, output_format, output_file, report_targets, statistics, quiet,
          unsafe_fixes, show_suppressed, to_stdout=not diff)
    if diff:
        sys.exit(EXIT_ERROR if result.errors else (EXIT_FINDINGS if changes and not exit_zero else EXIT_CLEAN))
    sys.exit(_exit_code(result, exit_zero))


def baseline_usage_error(
    write: Path | None, use: Path | None, update: bool, stdin: bool, fixing: bool
) -> str | None:
    """Why these baseline flags cannot go together, or None."""
    if write is None and use is None and not update:
        return None
    if update and use is None:
        return "--update-baseline needs --baseline FILE (the file it prunes)"
    if write is not None and use is not None:
        return "give either --write-baseline or --baseline, not both"
    if stdin:
        return "baselines work on files and folders, not on standard input"
    if fixing:
        return "baselines cannot be combined with --fix or --diff"
    return None


def _progress_bar():  # type: ignore[no-untyped-def]
    """A one-line counter on stderr for long interactive runs: only when
    stderr is a terminal, not under CI, and only for phases of 500+ files."""
    import os

    if not sys.stderr.isatty() or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return None
    state = {"shown": False}

    def show(phase: str, done: int, total: int) -> None:
        if total < 500:
            return
        if done == total or done % 50 == 0:
            sys.stderr.write(f"\rshardlint: {phase} {done}/{total} files")
            state["shown"] = True
            if done == total:
                sys.stderr.write("\r\033[K")
            sys.stderr.flush()

    return show


def _excluded_explicit(path: Path, config: Config) -> bool:
    from linter.config import path_matches
    from linter.files import relpath_of

    rel = relpath_of(path, config.root)
    return any(path_matches(rel, p) for p in config.all_excludes)


def _open_cache(config: Config, cache_dir: Path | None) -> object | None:
    try:
        from linter.cache import Cache
    except ImportError:
        return None
    where = cache_dir or (Path(config.cache_dir) if config.cache_dir else config.root / ".shardlint_cache")
    if not where.is_absolute():
        where = config.root / where
    cache = Cache(where)
    if cache.refused:
        _fail(cache.refused)
    return cache


def _exit_code(result: RunResult, exit_zero: bool) -> int:
    if result.errors:
        return EXIT_ERROR
    if exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if any(not d.suppressed for d in result.diagnostics) else EXIT_CLEAN


def _emit(
    result: RunResult,
    config: Config,
    registry: Registry,
    output_format: str,
    output_file: Path | None,
    report_targets: Sequence[tuple[str, Path]],
    statistics: bool,
    quiet: bool,
    unsafe_fixes: bool,
    show_suppressed: bool,
    to_stdout: bool = True,
) -> None:
    ctx = ReportContext(config.root, registry, result.stats, result.errors, unsafe_fixes)
    visible = [d for d in result.diagnostics if show_suppressed or not d.suppressed]
    for fmt, path in report_targets:
        keep = result.diagnostics if fmt in KEEPS_SUPPRESSED else visible
        _write(path, get_renderer(fmt)(keep, ctx))
    if statistics:
        text = _statistics(visible, registry)
    else:
        keep = result.diagnostics if output_format in KEEPS_SUPPRESSED else visible
        text = get_renderer(output_format)(keep, ctx)
    if output_file is not None:
        _write(output_file, text)
    elif to_stdout:
        sys.stdout.write(text)
    elif text:
        sys.stderr.write(text)
    sys.stdout.flush()  # findings first, then the summary on stderr
    if not quiet and output_format in ("concise", "full") and not statistics:
        shown = [d for d in result.diagnostics if not d.suppressed]
        n = len(shown)
        fixable = sum(1 for d in shown if d.fix is not None and d.fix.edits)
        if n:
            msg = f"Found {n} finding{'s' * (n != 1)} in {result.stats.files} file{'s' * (result.stats.files != 1)}."
            if fixable:
                msg += f" {fixable} fixable with --fix (--unsafe-fixes for unsafe ones)."
            click.echo(msg, err=True)
        elif not result.errors:
            n_files = result.stats.files
            click.echo(f"All checks passed ({n_files} file{'s' * (n_files != 1)}).", err=True)


def _write(path: Path, text: str) -> None:
    from linter.fixes import write_atomic

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
    except OSError as exc:
        _fail(f"cannot write {path}: {exc.strerror or exc}")


def _statistics(diags: Sequence[Diagnostic], registry: Registry) -> str:
    counts = Counter(d.code for d in diags)
    lines = []
    for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = registry.rules.get(code)
        fixable = "[*]" if rule and rule.fixable.value != "never" else "   "
        lines.append(f"{n:>6}  {code}  {fixable} {rule.name if rule else ''}")
    return "\n".join(lines) + ("\n" if lines else "")


def _unified(before: str, after: str, name: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{name}", f"b/{name}"
        )
    )


@main.command()
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--all", "show_all", is_flag=True, help="Also list built-in codes (SHD000, SHD900).")
def rules(output_format: str, show_all: bool) -> None:
    """List the rules: code, name, whether a fix exists, whether it is on by
    default, and where it comes from (shardlint, or the package whose
    ``shardlint.rules`` entry point provides it)."""
    registry = load_registry()
    items = [r for r in registry.rules.values() if show_all or not getattr(r, "builtin", False)]
    if output_format == "json":
        click.echo(json.dumps([
            {"code": r.code, "name": r.name, "summary": r.summary, "severity": r.severity.value,
             "fix": r.fixable.value, "default_enabled": r.default_enabled, "origin": r.origin}
            for r in items
        ], indent=2))
        return
    w = max(len(r.name) for r in items)
    c = max(len(r.code) for r in items)
    o = max(len(r.origin) for r in items)
    click.echo(f"{'code':<{c}} {'name':<{w}}  {'fix':<9} {'default':<7} {'from':<{o}}  summary")
    for r in items:
        on = "on" if r.default_enabled else "off"
        click.echo(f"{r.code:<{c}} {r.name:<{w}}  {r.fixable.value:<9} {on:<7} {r.origin:<{o}}  {r.summary}")


@main.command()
@click.argument("rule")
def explain(rule: str) -> None:
    """Show a rule's documentation (by code, e.g. SHD101, or by name)."""
    from linter.docs import render_text

    registry = load_registry()
    cls = registry.lookup(rule)
    if cls is None:
        names = [r.code for r in registry.rules.values()] + [r.name for r in registry.rules.values()]
        near = difflib.get_close_matches(rule, names, n=3)
        hint = f" Did you mean: {', '.join(near)}?" if near else " See 'shardlint rules'."
        _fail(f"unknown rule {rule!r}.{hint}")
        return
    click.echo(render_text(cls), nl=False)


@main.command()
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False))
def clean(path: Path | None, cache_dir: Path | None) -> None:
    """Remove the cache of the project containing PATH (default: here)."""
    import shutil

    registry = load_registry()
    try:
        config = load_config([path or Path.cwd()], registry)
    except ConfigError as exc:
        _fail(str(exc))
        return
    where = cache_dir or (Path(config.cache_dir) if config.cache_dir else Path(".shardlint_cache"))
    if not where.is_absolute():
        where = config.root / where
    if where.is_dir():
        shutil.rmtree(where)
        click.echo(f"Removed {where}", err=True)
    else:
        click.echo(f"No cache at {where}", err=True)



@main.command()
@click.option("--tcp", "tcp_port", type=click.IntRange(1, 65535), metavar="PORT",
              help="Listen on this TCP port (localhost) instead of talking over stdin/stdout.")
@click.option("--host", default="127.0.0.1", show_default=True, help="With --tcp: the address to listen on.")
def server(tcp_port: int | None, host: str) -> None:
    """Run the language server for editors (stdio by default). Needs the lsp
    extra: pip install 'shardlint[lsp]'. Setup per editor: docs/editors.md."""
    from linter.lsp import EXTRA_HINT, missing_dependency, run

    missing = missing_dependency()
    if missing is not None:
        _fail(f"{EXTRA_HINT} ({missing} is not installed)")
    run(tcp_port, host)


main.add_command(audit)
