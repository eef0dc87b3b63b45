"""``shardlint audit``: the click command over :func:`linter.audit.run.run_audit`."""

from __future__ import annotations

import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

import click

DEFAULT_FAIL_ON = "introduced,upgrade-induced"


def _fail_on(value: str) -> tuple[str, ...]:
    from linter.audit.report import ALL_CLASSES

    got = tuple(v.strip() for v in value.split(",") if v.strip())
    bad = [v for v in got if v not in ALL_CLASSES and v != "none"]
    if bad:
        raise click.BadParameter(
            f"unknown class(es) {', '.join(bad)}; choose from {', '.join(ALL_CLASSES)} or 'none'",
            param_hint="--fail-on",
        )
    return tuple(v for v in got if v != "none")


@click.command()
@click.option("--fork", required=True, help="The fork: a folder, or a git ref of --repo.")
@click.option("--base", required=True, help="The upstream release the fork started from: a folder or a git ref.")
@click.option("--upstream", required=True, help="The upstream release to upgrade to: a folder or a git ref.")
@click.option("--repo", type=click.Path(path_type=Path, file_okay=False, exists=True),
              help="The git repository refs are read from (default: the current folder). "
                   "Refs are extracted with git archive; the working tree is never touched.")
@click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False),
              help="shardlint configuration (TOML) used for all trees (default: the fork's own, if any).")
@click.option("--select", help="Comma-separated codes or prefixes to enable.")
@click.option("--output-format", type=click.Choice(["markdown", "json", "sarif"]), default="markdown",
              show_default=True, help="Format of the report on stdout (or in --output-file).")
@click.option("--output-file", type=click.Path(path_type=Path, dir_okay=False), help="Write the report there.")
@click.option("--report", "reports", multiple=True, metavar="FORMAT=PATH",
              help="Also write the report in FORMAT (markdown, json, sarif) to PATH; repeatable.")
@click.option("--fail-on", default=DEFAULT_FAIL_ON, show_default=True,
              help="Classes that make the exit status 1: introduced, upgrade-induced, fixed-upstream, "
                   "arrives-with-upgrade, carried, contract-drift, or 'none'.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: CPU count).")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Keep the content-addressed cache here between audits (default: a temporary one, "
                   "shared by the trees of this audit).")
@click.option("--quiet", "-q", is_flag=True, help="No progress and no summary on stderr.")
def audit(
    fork: str, base: str, upstream: str, repo: Path | None, config_file: Path | None, select: str | None,
    output_format: str, output_file: Path | None, reports: tuple[str, ...], fail_on: str, jobs: int | None,
    cache_dir: Path | None, quiet: bool,
) -> None:
    """Audit a fork before an upgrade: lint the fork (F), the upstream release
    it is based on (B) and the one to upgrade to (U), and sort every finding:

    \b
      introduced            in F, not in B
      fixed-upstream        in B and F, not in U (the upstream function is named)
      arrives-with-upgrade  in U, neither in B nor F
      carried               in all three
      upgrade-induced       in the fork's own files laid over U, neither in F nor U
    plus the contract drift of the upstream classes and functions fork code
    subclasses or calls, and the files both sides changed (manual merge).

    \b
    Example:
      shardlint audit --fork ~/nm-vllm --base ~/vllm-0.6.3 --upstream ~/vllm-0.10.2
      shardlint audit --repo . --fork HEAD --base v0.6.3 --upstream v0.10.2 \\
          --report sarif=audit.sarif --fail-on introduced,upgrade-induced
    """
    from linter.audit.report import RENDERERS, summary_table, write_text
    from linter.audit.run import run_audit
    from linter.audit.trees import TreeError, open_tree
    from linter.config import ConfigError, check_selector, load_config
    from linter.registry import load_registry

    classes = _fail_on(fail_on)
    targets: list[tuple[str, Path]] = []
    for value in reports:
        fmt, sep, path = value.partition("=")
        if not sep or fmt.strip() not in RENDERERS or not path.strip():
            raise click.BadParameter(
                f"expected FORMAT=PATH with FORMAT one of {', '.join(RENDERERS)}, got {value!r}",
                param_hint="--report",
            )
        targets.append((fmt.strip(), Path(path)))

    def say(message: str) -> None:
        if not quiet:
            click.echo(f"shardlint audit: {message}", err=True)

    def fail(message: str) -> None:
        click.echo(f"shardlint: error: {message}", err=True)
        sys.exit(2)

    registry = load_registry()
    with ExitStack() as stack:
        try:
            trees = [open_tree(label, spec, repo, stack) for label, spec in
                     (("fork", fork), ("base", base), ("upstream", upstream))]
        except TreeError as exc:
            fail(str(exc))
            return
        folders = {label: Path(spec).expanduser().is_dir() for label, spec in
                   (("fork", fork), ("base", base), ("upstream", upstream))}
        try:
            config = load_config([trees[0].root], registry, config_file)
            if select:
                codes = tuple(s.strip().upper() for s in select.split(",") if s.strip())
                for code in codes:
                    check_selector(code, registry, "--select")
                config = config.with_overrides(select=codes)
        except ConfigError as exc:
            fail(str(exc))
            return
        from linter.cache import Cache

        where = cache_dir or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="shardlint-audit-cache-"))
        )
        result = run_audit(*trees, config=config, registry=registry, stack=stack, cache=Cache(where), jobs=jobs,
                           say=say, file_progress=None if quiet else _file_progress())
        result.folders = folders
        for fmt, path in targets:
            write_text(path, RENDERERS[fmt](result, registry))
        text = RENDERERS[output_format](result, registry)
        if output_file is not None:
            write_text(output_file, text)
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    if not quiet:
        click.echo(summary_table(result, classes), err=True, nl=False)
    for e in result.errors:
        click.echo(f"shardlint: internal error: {e.path}: {e.code or ''} {e.message}", err=True)
    counts = result.counts()
    if result.errors:
        sys.exit(2)
    sys.exit(1 if any(counts.get(c, 0) for c in classes) else 0)


def _file_progress():  # type: ignore[no-untyped-def]
    """The engine's per-file counter on an interactive stderr (the phase
    lines are printed in any case)."""
    if not sys.stderr.isatty():
        return None

    def show(phase: str, done: int, total: int) -> None:
        if done == total or done % 100 == 0:
            sys.stderr.write(f"\r  {phase} {done}/{total} files" + ("\r\033[K" if done == total else ""))
            sys.stderr.flush()

    return show
